from __future__ import annotations

import json
import re
from pathlib import Path

from testing.history import REF
from testing.history import checkout
from testing.history import grow
from testing.history import heavy
from testing.util import bad
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import tip

FLAKY = 'the flaky test comes from the tz fixture in conftest'


def recall(repo: Path, *args: str) -> list[dict[str, object]]:
    hits = json.loads(ok('recall', '--json', *args, cwd=repo))
    assert isinstance(hits, list)
    return hits


def notes(*lines: str) -> str:
    return ''.join(f'- {line}\n' for line in lines)


def test_note_removed_500_commits_ago(memrepo: Path) -> None:
    kept = grow(memrepo, [{'notes.md': notes('setup done', FLAKY)}, {'notes.md': notes('setup done')}])
    grow(memrepo, ({'notes.md': notes('setup done', f'step {i} of the refactor')} for i in range(500)))
    hits = recall(memrepo, 'flaky tz fixture')
    assert hits[0]['kind'] == 'note'
    assert hits[0]['text'] == FLAKY
    assert hits[0]['current'] is False
    # dated by the newest commit that held it: the one before its removal
    assert hits[0]['commit'] == kept[0]
    assert hits[0]['file'] == 'notes.md'
    assert hits[0]['ref'] == REF
    assert hits[0]['date'] == git('log', '-1', '--format=%cI', kept[0], cwd=memrepo).strip()
    out = ok('recall', 'flaky tz fixture', cwd=memrepo)
    assert out.splitlines()[0] == f'note (removed; last in {kept[0][:12]} {hits[0]["date"][:10]} notes.md on {REF})'
    assert f'    {FLAKY}' in out


def test_a_crafted_marshal_cache_is_not_loaded(memrepo: Path) -> None:
    """The recall cache under .git/agitmem/ was read with marshal.loads
    (not safe on crafted data) and trusted: one in that format, each
    column as agitmem wrote it but its items' commit positions out of
    range, ended `recall` in a traceback (IndexError).  The cache is now
    a format of plain columns, each checked: this one is built again."""
    import array
    import marshal
    grow(memrepo, [{'notes.md': notes('epsilon')}])
    assert recall(memrepo, 'epsilon')[0]['text'] == 'epsilon'
    texts = [h['text'] for h in recall(memrepo, 'epsilon', '-n', '100')]
    n, commits = len(texts), git('rev-list', REF, cwd=memrepo).split()
    crafted = marshal.dumps({
        'version': 2, 'ref': REF, 'tip': commits[0], 'commits': ''.join(reversed(commits)),
        'times': array.array('q', [1] * len(commits)).tobytes(), 'offsets': array.array('q', [0] * len(commits)).tobytes(),
        'kinds': 'n' * n, 'fids': [''] * n, 'texts': texts, 'paths': ['notes.md'], 'files': [0] * n,
        'first': array.array('q', [10**6] * n).tobytes(), 'last': array.array('q', [10**6] * n).tobytes(),
        'current': '1' * n, 'lengths': array.array('q', [1] * n).tobytes(), 'once': array.array('d', [1.0] * n).tobytes(),
        'recency': array.array('q', range(n)).tobytes(),
        'postings': {'epsilon': array.array('I', [i for j in range(n) for i in (j, 1)]).tobytes()},
    })
    for cache in (memrepo / '.git' / 'agitmem' / 'recall').iterdir():
        cache.write_bytes(crafted)
    assert recall(memrepo, 'epsilon')[0]['text'] == 'epsilon'


def test_the_same_item_in_many_commits_is_one_hit(memrepo: Path) -> None:
    grow(memrepo, ({'notes.md': notes('keep the parser pure', f'other {i}')} for i in range(60)))
    hits = recall(memrepo, 'parser pure')
    assert [h['text'] for h in hits] == ['keep the parser pure']
    assert hits[0]['current'] is True
    assert hits[0]['commit'] == tip(memrepo)


def fragment(fid: str, goal: str, refs: list[str] | None = None) -> str:
    f: dict[str, object] = {'id': fid, 'goal': goal, 'next': 'go on'}
    if refs:
        f['refs'] = refs
    return json.dumps(f)


def test_fragment_by_id_follows_its_refs(memrepo: Path) -> None:
    old = [fragment('A-001', 'change the error codes'), fragment('A-002', 'unrelated cleanup')]
    new = [fragment('A-003', 'fix the auth module', refs=['A-001']), fragment('A-004', 'auth module again', refs=['A-003'])]
    grow(memrepo, [
        {'fragments.jsonl': '\n'.join(old) + '\n'},
        {'fragments.jsonl': '\n'.join(new) + '\n'},  # a cleanup dropped A-001
    ])
    hits = recall(memrepo, 'A-003')
    assert [(h['kind'], h['id']) for h in hits[:2]] == [('fragment', 'A-003'), ('fragment', 'A-001')]
    assert hits[0]['current'] is True
    assert hits[1]['current'] is False
    assert hits[1]['text'] == 'goal: change the error codes; next: go on'
    assert hits[0]['text'] == 'goal: fix the auth module; next: go on; refs: A-001'
    # an id is looked up, not matched word by word: `A` is in no other hit
    assert all(h['id'] in ('A-003', 'A-001') for h in hits)
    out = ok('recall', 'A-003', cwd=memrepo)
    assert out.startswith('fragment A-003 (current: ')


def test_unknown_fragment_id_finds_nothing(memrepo: Path) -> None:
    assert recall(memrepo, 'Z-999') == []
    out = ok('recall', 'Z-999', cwd=memrepo)
    assert out == f'nothing in the memory history of {REF} matches "Z-999"\n'


def test_decision_from_an_archived_snapshot(memrepo: Path) -> None:
    mem(memrepo, 'snapshot.md').write_text(
        '## Goal\nmove the loader\n## Decisions\n- TokenBucket lives in limits.ts, never in loader.ts\n',
    )
    ok('state', 'set', 'current_goal=move the loader', cwd=memrepo)
    ok('archive', cwd=memrepo)
    assert 'TokenBucket' not in mem(memrepo, 'snapshot.md').read_text()
    hits = recall(memrepo, 'where does TokenBucket live')
    kinds = {h['kind']: h for h in hits}
    assert kinds['decision']['text'] == 'TokenBucket lives in limits.ts, never in loader.ts'
    assert str(kinds['decision']['file']).startswith('archive/')
    assert kinds['decision']['current'] is True  # the archive keeps it
    assert str(kinds['snapshot']['file']).startswith('archive/')
    assert 'move the loader' in str(kinds['snapshot']['text'])
    out = ok('recall', 'TokenBucket', cwd=memrepo)
    assert '    ## Decisions' in out
    assert 'current_goal' not in out  # the front matter is not shown


def test_tattoo_history(memrepo: Path) -> None:
    grow(memrepo, [{'tattoo.md': '- never call the payments API from tests\n'}, {'tattoo.md': '- one rule\n'}])
    hits = recall(memrepo, 'payments API')
    assert (hits[0]['kind'], hits[0]['current'], hits[0]['file']) == ('tattoo', False, 'tattoo.md')


def test_all_branches_finds_the_attic(memrepo: Path) -> None:
    attic = 'refs/agitmem/attic/heads/feature@20261201T000000-abcdef0'
    grow(memrepo, [{'notes.md': notes('the feature branch used a ring buffer')}], ref=attic)
    assert recall(memrepo, 'ring buffer') == []
    hits = recall(memrepo, 'ring buffer', '--all-branches')
    assert hits[0]['ref'] == attic
    assert hits[0]['current'] is True
    assert 'on refs/agitmem/attic/heads/feature@' in ok('recall', 'ring buffer', '--all-branches', cwd=memrepo)


def test_all_branches_shows_a_shared_item_once_from_this_branch(memrepo: Path) -> None:
    grow(memrepo, [{'notes.md': notes('shared lore about caches')}])
    git('update-ref', 'refs/agitmem/heads/other', 'refs/agitmem/heads/main', cwd=memrepo)
    grow(memrepo, [{'notes.md': notes('shared lore about caches', 'more on other')}], ref='refs/agitmem/heads/other')
    hits = recall(memrepo, 'lore caches', '--all-branches')
    assert [(h['text'], h['ref']) for h in hits] == [('shared lore about caches', REF)]


def test_ranking_relevance_then_recency(memrepo: Path) -> None:
    grow(memrepo, [
        {'notes.md': notes('retry the upload with backoff')},
        {'notes.md': notes('retry the upload with backoff', 'upload once')},
        {'notes.md': notes('retry the upload with backoff', 'upload twice')},
    ])
    hits = recall(memrepo, 'upload backoff')
    assert hits[0]['text'] == 'retry the upload with backoff'  # both words
    # one word each, as long: the newer first (`upload once` is gone since)
    assert [h['text'] for h in hits[1:]] == ['upload twice', 'upload once']
    assert hits[1]['score'] == hits[2]['score']
    assert hits[0]['score'] > hits[1]['score']


def test_words_split_camel_snake_and_chinese(memrepo: Path) -> None:
    grow(memrepo, [{'notes.md': notes('loadConfig reads env first', 'user_id is a string', '重构错误处理的时候先看 auth')}])
    assert recall(memrepo, 'load config')[0]['text'] == 'loadConfig reads env first'
    assert recall(memrepo, 'load_config')[0]['text'] == 'loadConfig reads env first'
    assert recall(memrepo, 'userId')[0]['text'] == 'user_id is a string'
    assert recall(memrepo, '错误处理')[0]['text'] == '重构错误处理的时候先看 auth'


def test_limit(memrepo: Path) -> None:
    grow(memrepo, [{'notes.md': notes(*(f'widget {i}' for i in range(20)))}])
    assert len(recall(memrepo, 'widget')) == 10
    assert len(recall(memrepo, 'widget', '-n', '3')) == 3


def test_cache_is_extended_then_rebuilt_after_a_rewrite(memrepo: Path) -> None:
    first = grow(memrepo, [{'notes.md': notes('alpha')}])
    assert recall(memrepo, 'alpha')[0]['current'] is True
    cache = list((memrepo / '.git' / 'agitmem' / 'recall').iterdir())
    assert len(cache) == 1
    # the ref moved forward: the new commits are read from the cached tip
    grow(memrepo, [{'notes.md': notes('beta')}])
    assert recall(memrepo, 'beta')[0]['current'] is True
    alpha = recall(memrepo, 'alpha')[0]
    assert (alpha['current'], alpha['commit']) == (False, first[0])
    # rewritten (what a reset or a forced fetch does): beta never happened
    git('update-ref', REF, first[0], cwd=memrepo)
    assert recall(memrepo, 'beta') == []
    assert recall(memrepo, 'alpha')[0]['current'] is True


def test_rollback_is_history_too(memrepo: Path) -> None:
    ok('note', 'gamma ray', cwd=memrepo)
    assert recall(memrepo, 'gamma')[0]['current'] is True
    ok('rollback', cwd=memrepo)
    hit = recall(memrepo, 'gamma')[0]
    assert hit['current'] is False


def test_a_broken_cache_is_built_again(memrepo: Path) -> None:
    grow(memrepo, [{'notes.md': notes('delta')}])
    recall(memrepo, 'delta')
    for f in (memrepo / '.git' / 'agitmem' / 'recall').iterdir():
        f.write_bytes(b'\x00garbage')
    assert recall(memrepo, 'delta')[0]['text'] == 'delta'


def test_hostile_text_is_escaped(memrepo: Path) -> None:
    evil = 'ok\x1b[2J\x1b]0;title\x07 \u202eevil\u200b'
    grow(memrepo, [{'notes.md': notes(f'evil {evil}', 'huge ' + 'x' * 200_000)}])
    out = ok('recall', 'evil', cwd=memrepo)
    assert '\x1b' not in out and '\u202e' not in out and '\x07' not in out
    assert 'ok\\u001b[2J\\u001b]0;title\\u0007 \\u202eevil\\u200b' in out
    out = ok('recall', 'huge', cwd=memrepo)
    assert len(out) < 1000
    assert '... [199,605 more characters]' in out
    raw = ok('recall', '--json', 'evil huge', cwd=memrepo)
    assert '\x1b' not in raw and '\u202e' not in raw
    texts = {h['text'] for h in json.loads(raw)}
    assert f'evil {evil}' in texts  # JSON keeps the text whole, escaped as JSON
    assert 'huge ' + 'x' * 200_000 in texts


def test_bad_input(memrepo: Path) -> None:
    assert 'the query is empty' in bad('recall', '  ', cwd=memrepo)
    assert '-n must be at least 1' in bad('recall', 'x', '-n', '0', cwd=memrepo)
    assert 'invalid int value' in bad('recall', 'x', '-n', 'many', cwd=memrepo)


def test_no_memory_yet(repo: Path) -> None:
    assert 'agitmem init' in bad('recall', 'x', cwd=repo)


def test_json_schema(memrepo: Path) -> None:
    grow(memrepo, [{'notes.md': notes('schema check')}])
    (hit,) = recall(memrepo, 'schema check')
    assert list(hit) == ['kind', 'text', 'id', 'commit', 'date', 'file', 'ref', 'score', 'current']
    assert hit['id'] is None
    assert isinstance(hit['score'], float)


# -- the injection after a compaction: RELATED --------------------------------

def test_related_after_compaction(memrepo: Path) -> None:
    grow(memrepo, [
        {'notes.md': notes('the loader must not import index ts, a cycle')},
        {'notes.md': notes(*(f'recent {i}' for i in range(6)))},
    ])
    checkout(memrepo)
    ok('state', 'set', 'current_goal=move the loader into index ts', 'next_intent=delete the loader', cwd=memrepo)
    block = ok('load', '--after-compact', cwd=memrepo)
    assert '## RELATED (older memory matching current_goal and next_intent; more: `agitmem recall "move the loader into index ts delete"`)' in block
    assert '- note (removed since, ' in block
    assert 'notes.md): the loader must not import index ts, a cycle' in block
    assert '## RELATED' not in ok('load', cwd=memrepo)


def test_related_leaves_out_what_is_shown(memrepo: Path) -> None:
    ok('note', 'the loader reads env first', cwd=memrepo)
    ok('state', 'set', 'current_goal=the loader env', cwd=memrepo)
    block = ok('load', '--after-compact', cwd=memrepo)
    assert '## RELATED' not in block  # the one match is among the newest notes


def test_related_needs_two_words_in_common(memrepo: Path) -> None:
    grow(memrepo, [{'notes.md': notes('the cache is warm')}, {'notes.md': ''}])
    checkout(memrepo)
    ok('state', 'set', 'current_goal=warm up', cwd=memrepo)
    assert '## RELATED' not in ok('load', '--after-compact', cwd=memrepo)


def test_related_is_cut_first_when_over_budget(memrepo: Path) -> None:
    grow(memrepo, [
        {'notes.md': notes('the loader must not import index ts, a cycle')},
        {'notes.md': notes('recent')},
    ])
    checkout(memrepo)
    ok('state', 'set', 'current_goal=move the loader into index ts', cwd=memrepo)
    whole = json.loads(ok('load', '--after-compact', '--json', cwd=memrepo))
    assert '## RELATED' in whole['text']
    without = whole['text'].split('## RELATED')[0]
    # a budget the block fits only without RELATED
    budget = whole['tokens'] - 5
    with open(memrepo / '.agent' / 'config.yaml', 'a') as f:
        f.write(f'budget_tokens: {budget}\n')
    cut = json.loads(ok('load', '--after-compact', '--json', cwd=memrepo))
    assert '## RELATED' not in cut['text']
    assert '- recent' in cut['text']  # the notes stay
    assert cut['text'].startswith(without)
    assert 'left out for size' not in cut['text']  # RELATED is not memory to read again
    assert cut['cut']['related'] == 1
    assert cut['cut']['notes'] == 0


def test_unreadable_history(memrepo: Path) -> None:
    """A memory object missing (a repository that lost it): recall says
    so in one line; the injection goes out without RELATED."""
    made = grow(memrepo, [{'notes.md': notes('the loader must not import index ts')}, {'notes.md': notes('recent')}])
    blob = git('rev-parse', f'{made[0]}:notes.md', cwd=memrepo).strip()
    (memrepo / '.git' / 'objects' / blob[:2] / blob[2:]).unlink()
    line = bad('recall', 'loader', cwd=memrepo)
    assert 'is missing from the repository' in line
    checkout(memrepo)
    ok('state', 'set', 'current_goal=move the loader into index ts', cwd=memrepo)
    block = ok('load', '--after-compact', cwd=memrepo)
    assert '## RELATED' not in block
    assert 'STATE' in block
    log = (memrepo / '.agent' / 'log' / 'memory.log').read_text()
    assert 'read related: left out: memory object' in log


def test_history_that_does_not_parse(memrepo: Path) -> None:
    """A history may hold anything: a fragment line that is not JSON, a
    file removed; recall reads what it can."""
    lines = ['{"id": "A-001", "goal": "kept fragment"}', 'not json {', '{"id": "bad id"}', '[1]']
    made = grow(memrepo, [
        {'fragments.jsonl': '\n'.join(lines) + '\n', 'notes.md': notes('a note of the gone file')},
        {'notes.md': None},
    ])
    (hit,) = recall(memrepo, 'kept fragment')
    assert hit['id'] == 'A-001'
    (hit,) = recall(memrepo, 'gone file')
    assert (hit['current'], hit['commit']) == (False, made[0])


def test_related_never_reads_a_long_cold_history_in_a_hook(memrepo: Path) -> None:
    """More than 2,000 commits no cache holds yet: the injection goes out
    without RELATED rather than make the agent wait; once `recall` has
    read the history, RELATED is there."""
    grow(memrepo, [{'notes.md': notes('the loader must not import index ts')}])
    grow(memrepo, ({'notes.md': notes(f'later {i}')} for i in range(2001)))
    checkout(memrepo)
    ok('state', 'set', 'current_goal=move the loader into index ts', cwd=memrepo)
    assert '## RELATED' not in ok('load', '--after-compact', cwd=memrepo)
    assert not (memrepo / '.git' / 'agitmem' / 'recall').exists()
    ok('recall', 'loader', cwd=memrepo)
    assert 'the loader must not import index ts' in ok('load', '--after-compact', cwd=memrepo)


def _stopped(block: str) -> tuple[int, int]:
    (line,) = [ln for ln in block.splitlines() if ln.startswith('RELATED: search stopped after ')]
    m = re.search(r'\(read (\d+) of (\d+) memory commits not searched before; the next search goes on from there\)$', line)
    assert m, line
    return int(m[1]), int(m[2])


def test_related_stops_at_its_deadline_on_a_heavy_history(memrepo: Path) -> None:
    """Hundreds of memory commits each rewriting a large notes.md: RELATED
    stops at its deadline and the block goes out with what was found and
    a line saying so; the next compaction's search goes on from where it
    stopped, and once the history is read the line is gone."""
    heavy(memrepo, 200, 100, keep='the loader must not import index ts')
    checkout(memrepo)
    with open(memrepo / '.agent' / 'config.yaml', 'a') as f:
        f.write('related_seconds: 0.01\n')  # clamped to the least, 0.05 s
    ok('state', 'set', 'current_goal=move the loader into index ts', cwd=memrepo)
    block = ok('load', '--after-compact', cwd=memrepo)
    assert 'current_goal: move the loader into index ts' in block
    assert block.rstrip().endswith('===== AGENT MEMORY END =====')
    read, total = _stopped(block)
    assert 1 <= read < total == 202  # init, the 200, the state set
    again = ok('load', '--after-compact', cwd=memrepo)
    assert _stopped(again)[1] == total - read
    ok('recall', 'loader', cwd=memrepo)  # no deadline: reads the rest
    done = ok('load', '--after-compact', cwd=memrepo)
    assert 'search stopped' not in done
    assert 'notes.md): the loader must not import index ts' in done
