from __future__ import annotations

import json

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agitmem import merge
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import state as state_mod

TATTOO = (
    b'# Tattoo\n\n'
    b'- indent: 4 spaces\n'
    b'- never use `eval`\n'
    b'- run the tests\n'
    b'- language: Python 3.11\n'
)
NOTES_HEADER = '# Notes\n\nScratch notes.\n'


def _frag(fid: str, at: str, goal: str = 'g') -> str:
    return fragments_mod.render_one({
        'id': fid, 'at': at, 'goal': goal, 'basis': '', 'action': '',
        'result': '', 'next': 'n', 'refs': [],
    })


def _frags(*lines: str) -> bytes:
    return ''.join(f'{x}\n' for x in lines).encode()


def _notes(*notes: str) -> bytes:
    return (NOTES_HEADER + ''.join(f'- {n}\n' for n in notes)).encode()


def _one(path: str, base: bytes, ours: bytes, theirs: bytes) -> merge.Result:
    return merge.merge({path: base}, {path: ours}, {path: theirs})


def test_the_side_that_did_not_change_yields() -> None:
    base = {'tattoo.md': b'a\n', 'snapshot.md': b's\n'}
    ours = {'tattoo.md': b'a\nb\n', 'snapshot.md': b's\n'}
    theirs = {'tattoo.md': b'a\n', 'snapshot.md': b's2\n', 'new.md': b'n\n'}
    result = merge.merge(base, ours, theirs)
    assert result.files == {
        'tattoo.md': b'a\nb\n', 'snapshot.md': b's2\n', 'new.md': b'n\n',
    }
    assert result.conflicts == ()


def test_a_delete_on_one_side_is_kept() -> None:
    result = merge.merge({'x.md': b'x\n'}, {}, {'x.md': b'x\n'})
    assert result.files == {}


def test_a_change_beats_a_delete() -> None:
    result = merge.merge({'x.md': b'x\n'}, {}, {'x.md': b'x2\n'})
    assert result.files == {'x.md': b'x2\n'}
    assert result.conflicts == ()
    assert 'kept the changed file' in result.notices[0]


def test_fragments_union_in_time_order() -> None:
    a1 = _frag('A-001', '2026-11-30T10:00:00Z')
    a2 = _frag('A-002', '2026-11-30T10:05:00Z')
    b1 = _frag('B-001', '2026-11-30T10:03:00Z')
    a3 = _frag('A-003', '2026-11-30T10:07:00Z')
    result = _one(
        'fragments.jsonl', _frags(a1), _frags(a1, a2, a3), _frags(a1, b1),
    )
    assert result.files['fragments.jsonl'] == _frags(a1, b1, a2, a3)
    assert result.conflicts == ()


def test_fragments_no_duplicates() -> None:
    a1 = _frag('A-001', '2026-11-30T10:00:00Z')
    b1 = _frag('B-001', '2026-11-30T10:03:00Z')
    a2 = _frag('A-002', '2026-11-30T10:05:00Z')
    result = _one('fragments.jsonl', _frags(a1), _frags(a1, b1, a2), _frags(a1, b1))
    assert result.files['fragments.jsonl'] == _frags(a1, b1, a2)


def test_fragments_deleted_on_one_side_stay_deleted() -> None:
    a1 = _frag('A-001', '2026-11-30T10:00:00Z')
    a2 = _frag('A-002', '2026-11-30T10:05:00Z')
    b1 = _frag('B-001', '2026-11-30T10:03:00Z')
    result = _one('fragments.jsonl', _frags(a1, a2), _frags(a2), _frags(a1, a2, b1))
    assert result.files['fragments.jsonl'] == _frags(b1, a2)


def test_fragments_one_side_edits_the_other_adds() -> None:
    a1 = _frag('A-001', '2026-11-30T10:00:00Z')
    a1_edited = _frag('A-001', '2026-11-30T10:00:00Z', goal='better goal')
    b1 = _frag('B-001', '2026-11-30T10:03:00Z')
    result = _one('fragments.jsonl', _frags(a1), _frags(a1_edited), _frags(a1, b1))
    assert result.files['fragments.jsonl'] == _frags(a1_edited, b1)


def test_fragments_two_agents_with_one_id_keep_both() -> None:
    # both clones ran with the default $AGITMEM_AGENT: A-002 twice
    a1 = _frag('A-001', '2026-11-30T10:00:00Z')
    ours = _frag('A-002', '2026-11-30T10:05:00Z', goal='ours')
    theirs = _frag('A-002', '2026-11-30T10:06:00Z', goal='theirs')
    result = _one('fragments.jsonl', _frags(a1), _frags(a1, ours), _frags(a1, theirs))
    merged = fragments_mod.parse(result.files['fragments.jsonl'].decode())
    assert [(f['id'], f['goal']) for f in merged] == [
        ('A-001', 'g'), ('A-002', 'ours'), ('A-003', 'theirs'),
    ]
    assert result.conflicts == ()
    assert 'now A-003' in result.notices[0]


def test_fragments_not_jsonl_fall_back_to_a_line_merge() -> None:
    result = _one('fragments.jsonl', b'x\n', b'x\ny\n', b'z\nx\n')
    assert result.files['fragments.jsonl'] == b'z\nx\ny\n'


def test_notes_union_in_time_order_header_kept() -> None:
    base = _notes('2026-11-30 10:00 first')
    ours = _notes('2026-11-30 10:00 first', '2026-11-30 10:09 ours later')
    theirs = _notes('2026-11-30 10:00 first', '2026-11-30 10:05 theirs')
    result = _one('notes.md', base, ours, theirs)
    assert result.files['notes.md'] == _notes(
        '2026-11-30 10:00 first', '2026-11-30 10:05 theirs',
        '2026-11-30 10:09 ours later',
    )
    assert result.conflicts == ()


def test_notes_no_duplicates_and_deletes_stay() -> None:
    base = _notes('2026-11-30 10:00 stale', '2026-11-30 10:01 keep')
    ours = _notes('2026-11-30 10:01 keep', '2026-11-30 10:02 same')
    theirs = _notes(
        '2026-11-30 10:00 stale', '2026-11-30 10:01 keep',
        '2026-11-30 10:02 same', '2026-11-30 10:03 new',
    )
    result = _one('notes.md', base, ours, theirs)
    assert result.files['notes.md'] == _notes(
        '2026-11-30 10:01 keep', '2026-11-30 10:02 same', '2026-11-30 10:03 new',
    )


def test_notes_without_stamps_stay_under_their_neighbour() -> None:
    base = _notes('2026-11-30 10:00 a')
    ours = _notes('2026-11-30 10:00 a', '2026-11-30 10:05 b', 'hand-written')
    theirs = _notes('2026-11-30 10:00 a', '2026-11-30 10:07 c')
    result = _one('notes.md', base, ours, theirs)
    assert result.files['notes.md'] == _notes(
        '2026-11-30 10:00 a', '2026-11-30 10:05 b', 'hand-written',
        '2026-11-30 10:07 c',
    )


def test_notes_headers_changed_on_both_sides_merge_by_line() -> None:
    base = b'# Notes\n\n- 2026-11-30 10:00 a\n'
    ours = b'# Notes (ours)\n\n- 2026-11-30 10:00 a\n- 2026-11-30 10:01 o\n'
    theirs = b'# Notes\n\nintro\n- 2026-11-30 10:00 a\n- 2026-11-30 10:02 t\n'
    result = _one('notes.md', base, ours, theirs)
    assert result.files['notes.md'] == (
        b'# Notes (ours)\n\nintro\n'
        b'- 2026-11-30 10:00 a\n- 2026-11-30 10:01 o\n- 2026-11-30 10:02 t\n'
    )


def test_archive_union() -> None:
    base = {'archive/2026/11/29-100000-a.md': b'a\n'}
    ours = {'archive/2026/11/30-100000-b.md': b'b\n'}
    theirs = {
        'archive/2026/11/29-100000-a.md': b'a\n',
        'archive/2026/11/30-110000-c.md': b'c\n',
    }
    result = merge.merge(base, ours, theirs)
    assert sorted(result.files) == [
        'archive/2026/11/29-100000-a.md', 'archive/2026/11/30-100000-b.md',
        'archive/2026/11/30-110000-c.md',
    ]


def test_tattoo_different_lines_merge_cleanly() -> None:
    ours = TATTOO.replace(b'indent: 4 spaces', b'indent: 2 spaces')
    theirs = TATTOO.replace(b'Python 3.11', b'Python 3.12')
    result = _one('tattoo.md', TATTOO, ours, theirs)
    assert result.files['tattoo.md'] == TATTOO.replace(
        b'indent: 4 spaces', b'indent: 2 spaces',
    ).replace(b'Python 3.11', b'Python 3.12')
    assert result.conflicts == ()


def test_tattoo_same_line_conflicts_with_markers() -> None:
    ours = TATTOO.replace(b'never use `eval`', b'never use `exec`')
    theirs = TATTOO.replace(b'never use `eval`', b'never use `pickle`')
    result = merge.merge(
        {'tattoo.md': TATTOO}, {'tattoo.md': ours}, {'tattoo.md': theirs},
        merge.Labels('main', 'merge base', 'feature'),
    )
    text = result.files['tattoo.md'].decode()
    assert '<<<<<<< main\n- never use `exec`\n' in text
    assert '||||||| merge base\n- never use `eval`\n' in text
    assert '=======\n- never use `pickle`\n>>>>>>> feature\n' in text
    assert [str(c) for c in result.conflicts] == [
        'tattoo.md: 1 conflict(s) marked in the file',
    ]
    assert merge.unresolved(result.files) == list(result.conflicts)


def test_tattoo_rules_added_at_the_same_place_are_both_kept() -> None:
    ours = TATTOO + b'- no network calls in tests\n'
    theirs = TATTOO + b'- use `ruff`\n'
    result = _one('tattoo.md', TATTOO, ours, theirs)
    assert result.files['tattoo.md'] == (
        TATTOO + b'- no network calls in tests\n- use `ruff`\n'
    )
    assert result.conflicts == ()


def test_snapshot_additions_at_the_same_place_conflict() -> None:
    base = b'## Goal\n\n## Done\n'
    result = _one('snapshot.md', base, base + b'- ours\n', base + b'- theirs\n')
    assert b'<<<<<<< ours\n- ours\n' in result.files['snapshot.md']
    assert len(result.conflicts) == 1


def _state(**kw: object) -> bytes:
    return state_mod.render(dict(kw)).encode()


def test_state_keywise_different_keys_merge() -> None:
    base = _state(current_goal='g', next_intent='n', step=3)
    ours = _state(current_goal='g2', next_intent='n', step=4)
    theirs = _state(current_goal='g', next_intent='n2', step=5, custom=1)
    result = _one('state.json', base, ours, theirs)
    assert json.loads(result.files['state.json']) == {
        'current_goal': 'g2', 'next_intent': 'n2', 'step': 5, 'custom': 1,
    }
    assert result.conflicts == ()


def test_state_same_key_keeps_ours_and_records_it_as_valid_json() -> None:
    base = _state(current_goal='g', step=1)
    ours = _state(current_goal='ours', step=2)
    theirs = _state(current_goal='theirs', step=2)
    result = _one('state.json', base, ours, theirs)
    state = state_mod.parse(result.files['state.json'].decode())
    assert state['current_goal'] == 'ours'
    assert state['merge_conflicts'] == {
        'current_goal': {'ours': 'ours', 'theirs': 'theirs'},
    }
    assert [str(c) for c in result.conflicts] == ['state.json: key "current_goal"']
    assert [str(c) for c in merge.unresolved(result.files)] == [
        'state.json: key "current_goal"',
    ]


def test_state_bookkeeping_takes_the_newer_side() -> None:
    base = _state(step=1, updated_at='2026-11-30T10:00:00Z', tree='t0')
    ours = _state(
        step=4, updated_at='2026-11-30T10:10:00Z', tree='t1',
        last_verification={'result': 'failed', 'at': '2026-11-30T10:09:00Z'},
    )
    theirs = _state(
        step=3, updated_at='2026-11-30T10:20:00Z', tree='t2',
        last_verification={'result': 'passed', 'at': '2026-11-30T10:19:00Z'},
    )
    result = _one('state.json', base, ours, theirs)
    state = json.loads(result.files['state.json'])
    assert state == {
        'step': 4, 'updated_at': '2026-11-30T10:20:00Z', 'tree': 't2',
        'last_verification': {'result': 'passed', 'at': '2026-11-30T10:19:00Z'},
    }
    assert result.conflicts == ()


def test_state_not_json_falls_back_to_a_line_merge() -> None:
    result = _one('state.json', b'{\n', b'{\n"a": 1\n', b'{\n"b": 2\n')
    assert b'<<<<<<<' in result.files['state.json']
    assert len(result.conflicts) == 1


def test_unresolved_ignores_a_heading_underline() -> None:
    files = {'snapshot.md': b'Title\n=======\n', 'notes.md': b'- ok\n'}
    assert merge.unresolved(files) == []


# -- union is order-independent --------------------------------------------------

_STAMPS = st.sampled_from([f'2026-11-30T10:{m:02d}:00Z' for m in range(0, 60, 7)])


@st.composite
def _fragment_sides(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    base_n = draw(st.integers(0, 4))
    base = [_frag(f'C-{i:03d}', draw(_STAMPS)) for i in range(1, base_n + 1)]

    def side(agent: str) -> list[str]:
        kept = [x for x in base if draw(st.booleans())]
        new = [
            _frag(f'{agent}-{i:03d}', draw(_STAMPS), goal=draw(st.sampled_from('xyz')))
            for i in range(1, draw(st.integers(0, 3)) + 1)
        ]
        return kept + new

    return _frags(*base), _frags(*side('A')), _frags(*side('B'))


@given(_fragment_sides())
@settings(max_examples=200, deadline=None)
def test_fragment_union_is_order_independent(sides: tuple[bytes, bytes, bytes]) -> None:
    base, a, b = sides
    ab = _one('fragments.jsonl', base, a, b).files.get('fragments.jsonl', b'')
    ba = _one('fragments.jsonl', base, b, a).files.get('fragments.jsonl', b'')
    assert ab == ba
    ids = [f['id'] for f in fragments_mod.parse(ab.decode())]
    assert len(ids) == len(set(ids))
    base_ids = {f['id'] for f in fragments_mod.parse(base.decode())}
    for side in (a, b):
        for f in fragments_mod.parse(side.decode()):
            if f['id'] not in base_ids:
                assert f['id'] in ids


_NOTE_TEXTS = st.sampled_from(['alpha', 'beta', 'gamma', 'delta', 'eps'])
_NOTE_STAMPS = st.sampled_from(['2026-11-30 10:00', '2026-11-30 10:05', '2026-12-01 09:00'])


@st.composite
def _note_sides(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    base = sorted({
        f'{draw(_NOTE_STAMPS)} {draw(_NOTE_TEXTS)}'
        for _ in range(draw(st.integers(0, 4)))
    })

    def side() -> list[str]:
        kept = [x for x in base if draw(st.booleans())]
        new = [
            f'{draw(_NOTE_STAMPS)} {draw(_NOTE_TEXTS)} new'
            for _ in range(draw(st.integers(0, 3)))
        ]
        return sorted(set(kept + new))

    return _notes(*base), _notes(*side()), _notes(*side())


@given(_note_sides())
@settings(max_examples=200, deadline=None)
def test_note_union_is_order_independent(sides: tuple[bytes, bytes, bytes]) -> None:
    base, a, b = sides
    ab = _one('notes.md', base, a, b).files['notes.md']
    ba = _one('notes.md', base, b, a).files['notes.md']
    assert ab == ba
    assert ab.startswith(NOTES_HEADER.encode())
    lines = [x for x in ab.decode().splitlines() if x.startswith('- ')]
    assert len(lines) == len(set(lines))
    base_lines = set(base.decode().splitlines())
    for side in (a, b):
        for line in side.decode().splitlines():
            if line.startswith('- ') and line not in base_lines:
                assert line in lines


def test_a_fetched_memory_nested_too_deeply_is_a_conflict_not_a_crash() -> None:
    # a RecursionError from json, not only a ValueError: the side is not merged
    deep = b'[' * 100_000 + b']' * 100_000
    ok = b'{"id": "A-001", "at": "2026-01-01T00:00:00Z"}\n'
    assert merge.merge_fragments(ok, ok, ok.replace(b'}\n', b', "x": ' + deep + b'}\n')) is None
    assert merge.merge_state(b'{}', b'{"a": 1}', b'{"a": ' + deep + b'}') is None


def test_fragments_with_an_id_past_ints_digit_limit_merge() -> None:
    """A fetched memory's fragment `Z-999...9` (5,000 digits): the merge
    ordered fragments by int() of the number, a ValueError (`agitmem pull`
    ended on a traceback); two different fragments under it keep both."""
    huge = 'Z-' + '9' * 5000
    a1 = _frag('A-001', '2026-11-30T10:00:00Z')
    ours = _frag(huge, '2026-11-30T10:05:00Z', goal='ours')
    theirs = _frag(huge, '2026-11-30T10:06:00Z', goal='theirs')
    result = _one('fragments.jsonl', _frags(a1), _frags(a1, ours), _frags(a1, theirs, _frag('A-002', '2026-11-30T10:07:00Z')))
    merged = fragments_mod.parse(result.files['fragments.jsonl'].decode())
    assert [f['goal'] for f in merged] == ['g', 'ours', 'theirs', 'g']
    assert merged[1]['id'] == huge and merged[2]['id'] != huge and result.conflicts == ()
