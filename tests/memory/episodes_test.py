"""The recovery verdicts against a set labelled blind (tests/memory/episodes/,
README there): each episode played through the real hooks in its client's
payloads (testing/episodes.py), `agitmem recovery --json` read back, and
the verdicts compared with the labels: agreement, Cohen's kappa, per-class
recall and precision and the confusion matrix, printed (`pytest -s`) and
written to the test's temporary directory as report.txt.  The floors are
issue 21's: agreement >= 0.85, every verdict's recall >= 0.7."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from testing import episodes

HERE = Path(__file__).parent / 'episodes'
# another set (the labeller's working copy, say): AGITMEM_EPISODES=dir
SOURCE = Path(os.environ.get('AGITMEM_EPISODES') or HERE)
PATHS = sorted(SOURCE.glob('*.yaml'))
# the agreement measured after issue 21's work (see the README there)
FLOOR = 1.0


@pytest.fixture(scope='module')
def played(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    ret = []
    for path in PATHS:
        ep = episodes.load(path)
        row = episodes.play(ep, tmp_path_factory.mktemp(ep['id']))
        ret.append((ep, row))
    return ret


def test_the_set_is_large_and_spans_the_clients_and_verdicts() -> None:
    eps = [episodes.load(p) for p in PATHS]
    assert len(eps) >= 50
    assert {e['client'] for e in eps} == {'claude', 'codex', 'gemini'}
    assert {episodes.VERDICTS[e['label']] for e in eps} == set(episodes.CLASSES)
    assert {e['language'] for e in eps} == {'en', 'zh'}


def _report(played: list[tuple[dict[str, Any], dict[str, Any]]], tmp_path: Path) -> dict[str, Any]:
    pairs = [(episodes.VERDICTS[ep['label']], row['verdict'] or 'pending') for ep, row in played]
    text = episodes.report(pairs, 'recovery verdicts vs the blind labels')
    wrong = [
        f'{ep["id"]}: labelled {ep["label"]}, judged {row["verdict"]}: {"; ".join(row.get("evidence") or ())}'
        for ep, row in played if episodes.VERDICTS[ep['label']] != row['verdict']
    ]
    text += '\n\ndisagreements:\n' + '\n'.join(wrong or ['none']) + '\n'
    print('\n' + text)
    (tmp_path / 'report.txt').write_text(text)
    return {**episodes.scores(pairs), 'text': text}


def test_verdicts_do_not_fall_below_what_was_measured(played: list[tuple[dict[str, Any], dict[str, Any]]], tmp_path: Path) -> None:
    """A guard against regressions: the agreement measured on this set
    (0.50 before issue 21's work, 0.83 after its first round, 1.00 after
    the second; not held out, see the README)."""
    s = _report(played, tmp_path)
    assert s['agreement'] >= FLOOR, s['text']
    for c, v in s['classes'].items():
        assert v['recall'] >= 0.7, (c, s['text'])


def test_verdicts_agree_with_the_labels(played: list[tuple[dict[str, Any], dict[str, Any]]], tmp_path: Path) -> None:
    s = _report(played, tmp_path)
    assert s['agreement'] >= 0.85, s['text']
    for c, v in s['classes'].items():
        assert v['recall'] >= 0.7, (c, s['text'])


def test_every_verdict_says_which_event_decided(played: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    for ep, row in played:
        assert row['evidence'], ep['id']
        assert row['first_action'] or not ep['turn'], ep['id']


def test_the_user_prompt_after_the_compaction_is_shown(played: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    prompted = [(ep, row) for ep, row in played if ep.get('user_prompt')]
    assert prompted
    for ep, row in prompted:
        first_line = ' '.join(ep['user_prompt'].split())[:60]
        assert first_line in ' '.join(row['shown'].split()), ep['id']


def test_scores_on_a_known_matrix() -> None:
    pairs = [('recovered', 'recovered')] * 3 + [('drift', 'location'), ('drift', 'drift'), ('reset', 'unknown')]
    s = episodes.scores(pairs)
    assert s['agreement'] == pytest.approx(4 / 6)
    assert s['classes']['drift'] == {'n': 2, 'recall': 0.5, 'precision': 1.0}
    assert s['classes']['location']['precision'] == 0.0
    # p_e = (3/6)(3/6) + (2/6)(1/6) = 0.25 + 1/18
    p_e = 0.25 + 1 / 18
    assert s['kappa'] == pytest.approx((4 / 6 - p_e) / (1 - p_e))
    text = episodes.report(pairs, 't')
    assert 'unknown' in text.splitlines()[2]  # a verdict no label has is a column
