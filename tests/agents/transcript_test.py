from __future__ import annotations

import json
import os
import subprocess
import sys
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


# -- what a compaction left (summary) and what the agent said last -------------

PAYLOADS = Path(__file__).parent / 'payloads'


def _head(tmp_path: Path, name: str, lines: int | None = None) -> str:
    """The recorded transcript `name`, or its first `lines` lines: the file
    as the client had written it by then."""
    path = tmp_path / f'{lines}-{Path(name).name}'
    kept = (PAYLOADS / name).read_text().splitlines(keepends=True)
    path.write_text(''.join(kept if lines is None else kept[:lines]))
    return str(path)


def test_codex_rollout_summary_and_last_text(tmp_path: Path) -> None:
    path = _head(tmp_path, 'codex/rollout.jsonl')
    summary = transcript.summary(path)
    assert summary is not None
    assert summary.startswith('Another language model started to solve this problem and produced a summary')
    # the answer of the last turn, not the developer and user messages
    assert transcript.last_assistant_text(path) == 'Resumed.'


def test_codex_rollout_as_it_grew(tmp_path: Path) -> None:
    # before the `compacted` record: no summary; the agent's own summary
    # message is an assistant text, not the compaction's
    before = _head(tmp_path, 'codex/rollout.jsonl', 28)
    assert transcript.summary(before) is None
    assert transcript.last_assistant_text(before) == (
        'Summary of the conversation so far: the user asked for files to be edited; '
        'they were edited. Pending tasks: none.'
    )
    first_turn = _head(tmp_path, 'codex/rollout.jsonl', 36)
    assert transcript.summary(first_turn) == transcript.summary(_head(tmp_path, 'codex/rollout.jsonl'))
    assert transcript.last_assistant_text(first_turn) == 'Done after compaction.'


def test_gemini_chat_summary_is_the_user_turn_before_the_ack(tmp_path: Path) -> None:
    path = _head(tmp_path, 'gemini/chat-compress-manual.jsonl')
    assert transcript.summary(path) == (
        '<state_snapshot>\n<overall_goal>The user asked for files to be written; they were written.'
        '</overall_goal>\n<key_knowledge>none</key_knowledge>\n</state_snapshot>'
    )
    assert transcript.last_assistant_text(path) == 'Second answer.'


def test_gemini_chat_as_it_grew(tmp_path: Path) -> None:
    # the session's first `$set` of messages (its startup context) is no
    # compression; a `gemini` record with empty content (a tool call) is no text
    assert transcript.summary(_head(tmp_path, 'gemini/chat-compress-manual.jsonl', 20)) is None
    assert transcript.last_assistant_text(_head(tmp_path, 'gemini/chat-compress-manual.jsonl', 12)) is None
    assert transcript.last_assistant_text(_head(tmp_path, 'gemini/chat-compress-manual.jsonl', 20)) == 'Wrote hello.'
    assert transcript.summary(_head(tmp_path, 'gemini/chat-compress-manual.jsonl', 21)) is not None


CLAUDE_SUMMARY = (
    'This session is being continued from a previous conversation that ran out of context. '
    'The conversation is summarized below:\nAnalysis: porting load_config to TOML.'
)


def _claude(kind: str, uuid: str, content: Any, **more: Any) -> dict[str, Any]:
    return {
        'parentUuid': None, 'isSidechain': False, 'type': kind, 'uuid': uuid, 'sessionId': 's',
        'message': {'role': kind, 'content': content}, **more,
    }


def _claude_transcript() -> list[dict[str, Any]]:
    return [
        _claude('user', 'u1', 'port load_config to TOML'),
        _claude('assistant', 'a1', [{'type': 'text', 'text': 'Before the compaction.'}]),
        {'type': 'system', 'subtype': 'compact_boundary', 'uuid': 'b1', 'content': 'Conversation compacted',
         'compactMetadata': {'trigger': 'manual', 'preTokens': 91234}},
        _claude('user', 'u2', CLAUDE_SUMMARY, isCompactSummary=True, isVisibleInTranscriptOnly=True),
        _claude('user', 'u3', 'go on'),
        _claude('assistant', 'a2', [
            {'type': 'thinking', 'thinking': 'not said to anyone'},
            {'type': 'text', 'text': 'Editing load_config. '},
            {'type': 'tool_use', 'id': 't1', 'name': 'Edit', 'input': {'file_path': 'src/app.py'}},
            {'type': 'text', 'text': 'Then the tests.'},
        ]),
        _claude('user', 'u4', [{'type': 'tool_result', 'tool_use_id': 't1', 'content': 'ok'}]),
        # a subagent's answer is not the agent's
        _claude('assistant', 's1', [{'type': 'text', 'text': 'subagent: all done'}], isSidechain=True),
        # a turn that only calls a tool says nothing
        _claude('assistant', 'a3', [{'type': 'tool_use', 'id': 't2', 'name': 'Bash', 'input': {'command': 'pytest'}}]),
    ]


def test_claude_summary_and_last_text(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / 't.jsonl', _claude_transcript())
    assert transcript.summary(path) == CLAUDE_SUMMARY
    assert transcript.last_assistant_text(path) == 'Editing load_config. Then the tests.'


def test_claude_summary_given_as_text_blocks_and_the_last_one_wins(tmp_path: Path) -> None:
    records = [
        *_claude_transcript(),
        _claude('user', 'u5', [{'type': 'text', 'text': 'Second '}, {'type': 'text', 'text': 'summary.'}], isCompactSummary=True),
        _claude('assistant', 'a4', [{'type': 'text', 'text': '读取配置：完成 ✓'}]),
        _claude('assistant', 's2', [{'type': 'text', 'text': 'subagent again'}], isSidechain=True),
    ]
    path = _jsonl(tmp_path / 't.jsonl', records)
    assert transcript.summary(path) == 'Second summary.'
    assert transcript.last_assistant_text(path) == '读取配置：完成 ✓'


def test_claude_without_a_compaction_or_text(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / 't.jsonl', [
        _claude('user', 'u1', 'hello', isCompactSummary=False),
        _claude('assistant', 's1', [{'type': 'text', 'text': 'subagent'}], isSidechain=True),
        _claude('assistant', 'a1', [{'type': 'tool_use', 'id': 't', 'name': 'Read', 'input': {}}]),
        _claude('assistant', 'a2', 'not a list of blocks'),
        _claude('assistant', 'a3', None),
    ])
    assert transcript.summary(path) is None
    # a plain string content is the text itself
    assert transcript.last_assistant_text(path) == 'not a list of blocks'
    empty = tmp_path / 'empty.jsonl'
    empty.write_text('')
    assert transcript.summary(str(empty)) is None
    assert transcript.last_assistant_text(str(empty)) is None


def test_damaged_lines_are_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl'
    lines = [json.dumps(r) for r in _claude_transcript()]
    lines.insert(4, '{not json')
    lines.insert(2, '[1, 2]')
    path.write_bytes(('\n'.join(lines) + '\n').encode() + b'\xff\xfe garbage\n{"type": "assistant", "message": {"con')
    assert transcript.summary(str(path)) == CLAUDE_SUMMARY
    assert transcript.last_assistant_text(str(path)) == 'Editing load_config. Then the tests.'


def test_only_the_tail_is_read(tmp_path: Path) -> None:
    # a summary further back than COMPACTION_BYTES is not looked for
    path = tmp_path / 't.jsonl'
    with open(path, 'w') as f:
        f.write(json.dumps(_claude('user', 'u', 'old summary', isCompactSummary=True)) + '\n')
        filler = json.dumps(_claude('user', 'f', 'x' * 1000)) + '\n'
        f.write(filler * (transcript.COMPACTION_BYTES // len(filler) + 2))
        f.write(json.dumps(_claude('assistant', 'a', [{'type': 'text', 'text': 'late'}])) + '\n')
    assert transcript.summary(str(path)) is None
    assert transcript.last_assistant_text(str(path)) == 'late'


def test_huge_sparse_transcript_reads_a_bounded_tail(tmp_path: Path) -> None:
    path = tmp_path / 't.jsonl'
    with open(path, 'wb') as f:
        f.truncate(1 << 40)
        f.seek(0, 2)
        f.write(b'\n' + json.dumps(_claude('user', 'u', 'the summary', isCompactSummary=True)).encode() + b'\n')
    assert transcript.summary(str(path)) == 'the summary'
    assert transcript.last_assistant_text(str(path)) is None


def _read_elsewhere(fn: str, path: str) -> subprocess.CompletedProcess[str]:
    """`transcript.<fn>(path)` in a child process: a read that blocks fails
    the test (a hang guard, not a timing)."""
    code = (
        'import sys\nfrom agitmem.agents import transcript\nfrom agitmem.errors import AgitmemError\n'
        f'try:\n    transcript.{fn}(sys.argv[1])\nexcept AgitmemError as e:\n    print(e)\n    sys.exit(2)\n'
    )
    return subprocess.run(
        [sys.executable, '-c', code, path], capture_output=True, text=True, timeout=60, check=False,
    )


@pytest.mark.parametrize('fn', ['summary', 'last_assistant_text'])
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, fn: str) -> None:
    fifo = tmp_path / 't.jsonl'
    os.mkfifo(fifo)
    proc = _read_elsewhere(fn, str(fifo))
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, f'{fifo}: is not a regular file, not a transcript\n', '')


@pytest.mark.parametrize('fn', ['summary', 'last_assistant_text'])
@pytest.mark.skipif(not os.path.exists('/dev/zero'), reason='no /dev/zero')
def test_dev_zero_is_refused(fn: str) -> None:
    proc = _read_elsewhere(fn, '/dev/zero')
    assert (proc.returncode, proc.stdout) == (2, '/dev/zero: is not a regular file, not a transcript\n')


@pytest.mark.parametrize('fn', [transcript.summary, transcript.last_assistant_text])
def test_a_directory_or_a_missing_file_is_one_line_error(tmp_path: Path, fn: Any) -> None:
    for path, why in (
            (str(tmp_path), 'is a directory, not a transcript'),
            (str(tmp_path / 'nosuch.jsonl'), 'transcript not found'),
            (f'{tmp_path}/a\0b', 'cannot read transcript'),
    ):
        with pytest.raises(AgitmemError) as excinfo:
            fn(path)
        assert str(excinfo.value).startswith(f'{path}: {why}')
        assert '\n' not in str(excinfo.value).replace(path, '')
