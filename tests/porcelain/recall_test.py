from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from agitmem.porcelain import context
from agitmem.porcelain import recall
from testing.history import REF
from testing.history import grow
from testing.util import git


def notes(*lines: str) -> str:
    return ''.join(f'- {line}\n' for line in lines)


@pytest.mark.parametrize(('text', 'words'), [
    ('loadConfig', ['load', 'config', 'loadconfig']),
    ('load_config', ['load', 'config', 'load_config']),
    ('HTTPServer2', ['http', 'server', '2', 'httpserver2']),
    ('plain', ['plain']),
    ('错误处理', ['错误', '误处', '处理']),
    ('改 auth模块', ['改', 'auth', '模块']),
    ('A-014: ok!', ['a', '014', 'ok']),
    ('', []),
])
def test_tokens(text: str, words: list[str]) -> None:
    assert recall.tokens(text) == words


def test_fragment_ids() -> None:
    assert recall.fragment_ids('see A-014 and B-2, not x-y or A-014') == ['A-014', 'B-2']


def test_search_returns_hits(memrepo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = grow(memrepo, [{'notes.md': notes('the index is keyed by tip')}])
    monkeypatch.chdir(memrepo)
    (hit,) = recall.search(context.get(), 'keyed tip')
    assert isinstance(hit, recall.Hit)
    assert dataclasses.replace(hit, score=0.0) == recall.Hit(
        kind='note', text='the index is keyed by tip', id=None, commit=made[0],
        date=git('log', '-1', '--format=%cI', made[0], cwd=memrepo).strip(),
        file='notes.md', ref=REF, score=0.0, current=True,
    )
    assert hit.score > 0


def test_related_excludes_and_needs_two_words(memrepo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grow(memrepo, [
        {'notes.md': notes('split the parser module', 'parser tables are generated')},
        {'fragments.jsonl': json.dumps({'id': 'A-001', 'goal': 'split the parser module first'}) + '\n'},
    ])
    monkeypatch.chdir(memrepo)
    ctx = context.get()
    got = recall.related(ctx, 'split the parser module', exclude=())
    assert [h.text for h in got][:2] == ['split the parser module', 'goal: split the parser module first']
    got = recall.related(ctx, 'split the parser module', exclude={'A-001', 'split the parser module'})
    # `parser tables are generated` has one word in common: not related
    assert got == []
    assert recall.related(ctx, '...', exclude=()) == []


def test_cache_is_reused_while_the_tip_stays(memrepo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grow(memrepo, [{'notes.md': notes('epsilon')}])
    monkeypatch.chdir(memrepo)
    ctx = context.get()
    recall.search(ctx, 'epsilon')
    (cache,) = (memrepo / '.git' / 'agitmem' / 'recall').iterdir()
    os.utime(cache, (1, 1))
    assert recall.search(ctx, 'epsilon')[0].text == 'epsilon'
    assert cache.stat().st_mtime == 1  # read, not written again
    grow(memrepo, [{'notes.md': notes('epsilon', 'zeta')}])
    assert recall.search(ctx, 'zeta')[0].text == 'zeta'
    assert cache.stat().st_mtime != 1


def _with_column(cache: bytes, name: str, value: bytes) -> bytes:
    """A recall cache with one column replaced, its header's sizes made
    to match: a cache whose every byte is where agitmem puts it."""
    head, _, body = cache[len(recall._MAGIC):].partition(b'\n')
    meta = json.loads(head)
    columns, pos = {}, 0
    for column, size in zip(recall._COLUMNS, meta['sizes']):
        columns[column], pos = body[pos:pos + size], pos + size
    columns[name] = value
    meta['sizes'] = [len(columns[c]) for c in recall._COLUMNS]
    return recall._MAGIC + json.dumps(meta).encode() + b'\n' + b''.join(columns[c] for c in recall._COLUMNS)


def test_a_crafted_cache_is_built_again(memrepo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache was read with marshal.loads, which is not safe on crafted
    data, and trusted: its items' commit positions out of range ended
    `recall` in a traceback (IndexError).  Now a cache that is not what
    agitmem writes, in any column, is built again: a marshal one, each
    byte of one changed in turn, one cut anywhere, one with an item's
    commit, file, length or posting out of range."""
    import array
    import marshal
    grow(memrepo, [{'notes.md': notes('epsilon', 'zeta')}])
    monkeypatch.chdir(memrepo)
    ctx = context.get()
    assert recall.search(ctx, 'epsilon')[0].text == 'epsilon'
    (cache,) = (memrepo / '.git' / 'agitmem' / 'recall').iterdir()
    good = cache.read_bytes()
    n = len(recall.Index.load(good, REF).texts)  # type: ignore[union-attr]
    crafted = [marshal.dumps({
        'version': 2, 'ref': REF, 'tip': 'x', 'commits': '', 'times': b'', 'offsets': b'', 'kinds': '',
        'fids': [], 'texts': [], 'paths': [], 'files': [], 'first': b'', 'last': array.array('q', [10**6]).tobytes(),
    })]
    crafted += [good[:i] for i in range(0, len(good), max(1, len(good) // 100))]
    crafted += [good[:i] + bytes([good[i] ^ 0xff]) + good[i + 1:] for i in range(0, len(good), max(1, len(good) // 150))]
    ncommits = len(recall.Index.load(good, REF).times)  # type: ignore[union-attr]
    for column, value in (
            ('last', [10**6] * n), ('first', [-1] * n), ('files', [7] * n), ('lengths', [-1] * n),
            ('times', [2**62] * ncommits), ('offsets', [2**40] * ncommits),
    ):
        crafted.append(_with_column(good, column, recall._ints(value)))
    # each item's posting out of range, cut, or its sizes past the column
    words = recall._strings(['epsilon', 'zeta'])
    for posting in (array.array('I', [n, 1]).tobytes(), b'\1\0\0\0\1', b''):
        sizes = recall._ints([len(posting), len(posting)])
        crafted.append(_with_column(_with_column(good, 'words', words), 'postings', sizes + posting * 2))
    crafted.append(_with_column(good, 'postings', recall._ints([10**6] * 3)))
    for data in crafted:
        cache.write_bytes(data)
        got = recall.search(ctx, 'epsilon')
        assert got and got[0].text == 'epsilon', data[:200]
        assert [h.text for h in recall.search(ctx, 'zeta')][:1] == ['zeta']


def test_extended_cache_equals_a_fresh_build(memrepo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index extended commit batch by commit batch finds what one built
    in one go finds, dated the same."""
    monkeypatch.chdir(memrepo)
    ctx = context.get()
    batches = [
        [{'notes.md': notes('a one', 'b two')}, {'notes.md': notes('b two')}],
        [{'fragments.jsonl': json.dumps({'id': 'A-001', 'goal': 'one goal'}) + '\n'}],
        [{'notes.md': notes('b two', 'a one')}, {'tattoo.md': '- a rule one\n'}],
        [{'fragments.jsonl': json.dumps({'id': 'A-001', 'goal': 'one goal, edited'}) + '\n'}, {'notes.md': ''}],
    ]
    for steps in batches:
        grow(memrepo, steps, start=1_790_000_000 + 10_000 * batches.index(steps))
        recall.search(ctx, 'one')
    extended = recall.search(ctx, 'one two', limit=50)
    for f in (memrepo / '.git' / 'agitmem' / 'recall').iterdir():
        f.unlink()
    fresh = recall.search(ctx, 'one two', limit=50)
    assert extended == fresh
    texts = {h.text: h for h in fresh}
    assert texts['goal: one goal, edited'].id == 'A-001'  # the newest text of an id
    assert texts['a one'].current is False
    assert texts['a rule one'].kind == 'tattoo'


def test_a_ref_without_memory(memrepo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(memrepo)
    ctx = context.get(ref='refs/agitmem/heads/none')
    assert recall.search(ctx, 'anything') == []


def test_merged_histories(memrepo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A note from a merged branch's memory is found on the branch it was
    merged into, through the merge commit's second parent."""
    grow(memrepo, [{'notes.md': notes('side note about retries')}], ref='refs/agitmem/heads/side')
    git('branch', 'side', cwd=memrepo)
    monkeypatch.chdir(memrepo)
    from testing.util import ok
    ok('merge', 'side', cwd=memrepo)
    ctx = context.get()
    (hit,) = recall.search(ctx, 'retries')
    assert (hit.text, hit.current) == ('side note about retries', True)


def test_summary_of_an_archived_snapshot() -> None:
    hit = recall.Hit(
        kind='snapshot', text='---\ncurrent_goal: x\n---\n\n## Goal\nship it\n## Decisions\n- a\n- b\n',
        id=None, commit='0' * 40, date='', file='archive/x.md', ref=REF, score=1.0, current=True,
    )
    assert recall.summary(hit) == 'Goal: ship it; Decisions: - a / - b'
    note = dataclasses.replace(hit, kind='note', text='n')
    assert recall.summary(note) == 'n'


@pytest.mark.parametrize('offset', [0, -330, 60, 345])
def test_dates_as_datetime_writes_them(offset: int) -> None:
    import datetime
    tz = datetime.timezone(datetime.timedelta(minutes=offset))
    assert recall._iso(1_790_000_000, offset) == datetime.datetime.fromtimestamp(1_790_000_000, tz).isoformat()
