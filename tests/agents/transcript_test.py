from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agitmem.agents import transcript
from agitmem.agents.transcript import context_sizes
from agitmem.agents.transcript import dropped
from agitmem.errors import AgitmemError


def _claude_turn(
        n: int,
        inp: int,
        created: int,
        read: int,
        *,
        sidechain: bool = False,
) -> dict[str, object]:
    return {
        'parentUuid': f'u{n - 1}',
        'isSidechain': sidechain,
        'type': 'assistant',
        'uuid': f'u{n}',
        'sessionId': 's',
        'message': {
            'id': f'msg_{n}',
            'type': 'message',
            'role': 'assistant',
            'model': 'claude-sonnet-4-20250514',
            'content': [{'type': 'text', 'text': 'ok'}],
            'usage': {
                'input_tokens': inp,
                'cache_creation_input_tokens': created,
                'cache_read_input_tokens': read,
                'output_tokens': 50,
            },
        },
    }


def _user(n: int) -> dict[str, object]:
    return {
        'type': 'user', 'uuid': f'q{n}', 'isSidechain': False,
        'message': {'role': 'user', 'content': 'go on'},
    }


def _jsonl(path: Path, records: list[Any]) -> str:
    path.write_text(''.join(json.dumps(r) + '\n' for r in records))
    return str(path)


def test_claude_sizes_add_input_and_cache(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / 't.jsonl', [
        {'type': 'summary', 'summary': 'x'},
        _user(1),
        _claude_turn(1, 10, 2000, 0),
        _user(2),
        _claude_turn(2, 5, 300, 2000),
    ])
    assert context_sizes(path) == [2010, 2305]


def test_claude_lines_of_one_response_count_once(tmp_path: Path) -> None:
    # one API response with two content blocks is written as two lines
    path = _jsonl(tmp_path / 't.jsonl', [
        _claude_turn(1, 10, 90000, 0),
        _claude_turn(2, 4, 100, 20000),
        _claude_turn(2, 4, 100, 20000),
    ])
    assert context_sizes(path) == [90010, 20104]
    assert dropped(context_sizes(path))


def test_claude_sidechain_and_empty_usage_skipped(tmp_path: Path) -> None:
    synthetic = _claude_turn(3, 0, 0, 0)
    path = _jsonl(tmp_path / 't.jsonl', [
        _claude_turn(1, 10, 50000, 0),
        _claude_turn(2, 3, 1000, 0, sidechain=True),
        synthetic,
        {'type': 'assistant', 'message': {'id': 'm', 'content': []}},
    ])
    assert context_sizes(path) == [50010]


def test_codex_rollout(tmp_path: Path) -> None:
    def count(inp: int, total: int) -> dict[str, object]:
        return {
            'timestamp': '2026-05-14T10:00:00Z',
            'type': 'event_msg',
            'payload': {
                'type': 'token_count',
                'info': {
                    'total_token_usage': {
                        'input_tokens': total, 'cached_input_tokens': 0,
                        'output_tokens': 0, 'reasoning_output_tokens': 0,
                        'total_tokens': total,
                    },
                    'last_token_usage': {
                        'input_tokens': inp, 'cached_input_tokens': inp // 2,
                        'output_tokens': 100, 'reasoning_output_tokens': 0,
                        'total_tokens': inp + 100,
                    },
                    'model_context_window': 272000,
                },
            },
        }
    path = _jsonl(tmp_path / 'rollout-x.jsonl', [
        {'timestamp': 't', 'type': 'session_meta', 'payload': {'id': 's'}},
        {
            'timestamp': 't', 'type': 'event_msg',
            'payload': {'type': 'token_count', 'info': None},
        },
        count(120000, 120100),
        count(120000, 120100),  # the same count again
        {'timestamp': 't', 'type': 'compacted', 'payload': {'message': ''}},
        count(30000, 150200),
    ])
    assert context_sizes(path) == [120000, 30000]
    assert dropped(context_sizes(path))


def test_gemini_jsonl_and_legacy_json(tmp_path: Path) -> None:
    def msg(mid: str, inp: int) -> dict[str, object]:
        return {
            'id': mid, 'timestamp': 't', 'type': 'gemini', 'content': 'ok',
            'tokens': {
                'input': inp, 'output': 10, 'cached': 0, 'thoughts': 0,
                'tool': 0, 'total': inp + 10,
            },
        }
    records = [
        {'sessionId': 's', 'projectHash': 'h', 'startTime': 't'},
        {'id': 'a', 'timestamp': 't', 'type': 'user', 'content': 'hi'},
        msg('b', 80000),
        {'$set': {'lastUpdated': 't'}},
        msg('c', 20000),
        msg('c', 21000),  # re-appended with updated tokens
    ]
    assert context_sizes(_jsonl(tmp_path / 's.jsonl', records)) == [
        80000, 21000,
    ]
    legacy = tmp_path / 'session-1.json'
    legacy.write_text(json.dumps({
        'sessionId': 's', 'projectHash': 'h',
        'messages': [records[1], msg('b', 80000), msg('c', 20000)],
    }, indent=2))
    assert context_sizes(str(legacy)) == [80000, 20000]


def test_empty_transcript(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl'
    path.write_text('')
    assert context_sizes(str(path)) == []


def test_missing_transcript(tmp_path: Path) -> None:
    path = str(tmp_path / 'nope.jsonl')
    with pytest.raises(AgitmemError) as excinfo:
        context_sizes(path)
    assert str(excinfo.value) == f'{path}: transcript not found'


def test_directory_is_not_a_transcript(tmp_path: Path) -> None:
    with pytest.raises(AgitmemError, match='transcript'):
        context_sizes(str(tmp_path))


def test_not_jsonl_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl'
    path.write_text(
        json.dumps(_claude_turn(1, 1, 1, 1)) + '\n'
        '\n'
        'this is not json\n' +
        json.dumps(_claude_turn(2, 1, 1, 1)) + '\n',
    )
    with pytest.raises(AgitmemError) as excinfo:
        context_sizes(str(path))
    assert str(excinfo.value) == (
        f'{path}:3: not a JSONL transcript (line 3 is not JSON)'
    )


def test_legacy_json_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / 'session.json'
    path.write_text('{"messages": [\n')
    with pytest.raises(AgitmemError, match='not a JSON transcript'):
        context_sizes(str(path))


def test_a_half_written_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl'
    whole = json.dumps(_claude_turn(2, 1, 500, 0))
    path.write_text(
        json.dumps(_claude_turn(1, 1, 1000, 0)) + '\n' + whole[:40],
    )
    assert context_sizes(str(path)) == [1001]


def test_large_file_is_read_from_its_end(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl'
    filler = json.dumps(_user(0) | {'pad': 'x' * 1000})
    lines = ['garbage that is not json']  # never read
    lines += [filler] * 400
    lines += [json.dumps(_claude_turn(n, 1, 1000 * n, 0)) for n in (1, 2)]
    lines += [filler] * 20
    lines += [json.dumps(_claude_turn(3, 1, 500, 0))]
    path.write_text('\n'.join(lines) + '\n')
    assert path.stat().st_size > 2 * transcript.TAIL_BYTES
    assert context_sizes(str(path)) == [1001, 2001, 501]


def test_tail_grows_until_two_turns_are_found(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl'
    filler = json.dumps(_user(0) | {'pad': 'x' * 1000})
    lines = [json.dumps(_claude_turn(1, 1, 9000, 0))]
    lines += [filler] * 400
    lines += [json.dumps(_claude_turn(2, 1, 3000, 0))]
    path.write_text('\n'.join(lines) + '\n')
    assert context_sizes(str(path)) == [9001, 3001]


def test_bad_line_in_the_tail_of_a_large_file(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl'
    filler = json.dumps(_user(0) | {'pad': 'x' * 1000})
    lines = [filler] * 400 + ['{broken'] + [filler] * 3
    path.write_text('\n'.join(lines) + '\n')
    with pytest.raises(AgitmemError) as excinfo:
        context_sizes(str(path))
    assert str(excinfo.value).startswith(f'{path}:401: ')


def test_window_boundary_on_a_line_start(
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
) -> None:
    a = json.dumps(_claude_turn(1, 1, 100, 0)) + '\n'
    b = json.dumps(_claude_turn(2, 1, 200, 0)) + '\n'
    path = tmp_path / 't.jsonl'
    path.write_text(a + b)
    # a window of exactly the last line still sees that whole line
    monkeypatch.setattr(transcript, 'TAIL_BYTES', len(b))
    assert context_sizes(str(path)) == [101, 201]


@pytest.mark.parametrize(
    ('sizes', 'expected'),
    (
        ([], False),
        ([100000], False),
        ([100000, 100000], False),
        ([100000, 120000], False),
        ([100000, 61000], False),   # 39% down
        ([100000, 60000], False),   # exactly 40% down is not more than 40%
        ([100000, 59999], True),
        ([100000, 150000, 40000], True),
        ([150000, 40000, 45000], False),  # the drop was a turn ago
        ([0, 0], False),
    ),
)
def test_forty_percent_rule(sizes: list[int], expected: bool) -> None:
    assert dropped(sizes) is expected


def test_drop_against_a_remembered_size() -> None:
    # the drop happened between two checks: compare with what was seen
    assert dropped([150000, 40000, 45000], baseline=150000)
    assert not dropped([150000, 40000, 45000], baseline=50000)
    assert not dropped([], baseline=150000)
    assert dropped([1000], baseline=10000)


def test_threshold() -> None:
    assert dropped([100, 80], threshold=0.1)
    assert not dropped([100, 80], threshold=0.5)
    with pytest.raises(ValueError):
        dropped([100, 10], threshold=40)


def test_synthetic_compaction_end_to_end(tmp_path: Path) -> None:
    records: list[dict[str, object]] = []
    for n in range(1, 30):  # context grows turn after turn
        records += [_user(n), _claude_turn(n, 3, 500, 4000 * n)]
    records.append({
        'type': 'system', 'subtype': 'compact_boundary',
        'content': 'Conversation compacted',
        'compactMetadata': {'trigger': 'auto', 'preTokens': 116503},
    })
    records.append(_user(30) | {'isCompactSummary': True})
    path = _jsonl(tmp_path / 't.jsonl', records)
    sizes = context_sizes(path)
    assert len(sizes) == 29
    assert not dropped(sizes)
    records += [_user(31), _claude_turn(31, 3, 9000, 12000)]
    sizes = context_sizes(_jsonl(tmp_path / 't.jsonl', records))
    assert sizes[-1] == 21003
    assert dropped(sizes)
