"""secret_words.may_hold: the gate before the secret scanner's import (the
prompt hook redacts every request it keeps).  It may say True where no
rule finds anything; it must never say False where one could."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from agitmem import secret_words
from agitmem import secrets

CORPUS = Path(__file__).parent / 'corpus' / 'secrets'


def test_its_names_are_the_scanners() -> None:
    short = {k for rule in secrets.RULES if not rule.long for k in rule.keywords}
    assert set(secret_words.KEYWORDS) == short
    assert secret_words.DENSE_CHARS == secrets.DENSE_CHARS
    assert secret_words.RUN == secrets._RUN
    # a rule without keywords is one the long runs decide (never a word)
    assert all(rule.long for rule in secrets.RULES if not rule.keywords)


def _texts() -> list[str]:
    texts = []
    for path in sorted(CORPUS.glob('*.jsonl')):
        texts += [json.loads(line)['text'] for line in path.read_text().splitlines() if line.strip()]
    return texts


def test_no_text_of_the_corpus_it_lets_by_holds_a_finding() -> None:
    let_by = 0
    for text in _texts():
        for variant in (text, text.upper(), f'see {text} here', text[: len(text) // 2]):
            if not secret_words.may_hold(variant):
                let_by += 1
                assert secrets.spans(variant) == [], variant
                assert secrets.redact(variant) == variant
    assert let_by > 100  # the gate does let ordinary text by


@pytest.mark.parametrize('text', [
    'go on', 'fix the loader', 'run the tests again', 'déjà vu: añadir el módulo', '移动加载器',
])
def test_a_plain_request_is_let_by(text: str) -> None:
    assert not secret_words.may_hold(text)
    assert secrets.redact(text) == text


@pytest.mark.parametrize('text', [
    'my password is hunter2',
    'use ghp_' '0123456789abcdefghijABCDEFGHIJ012345 for it',  # a long run (split: this file holds no key)
    'PASSWORD=x',  # a keyword in another case
    'the key is in \\u0070assword',  # an escape: unescaped before the rules look
    'AKIA' + 'Q' * 16,
    'https://user:pw@example.com',
    'ＡＫＩＡ but K\u212aEY',  # the Kelvin sign: str.lower makes it a k
])
def test_what_a_rule_could_match_goes_to_the_scanner(text: str) -> None:
    assert secret_words.may_hold(text)
