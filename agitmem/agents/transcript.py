"""Context sizes from an agent's transcript, and the 40% drop rule.

Recognized records (see docs/agents.md for sources):

- Claude Code JSONL: `{"type": "assistant", "message": {"id": ..., "usage":
  {"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
  "output_tokens"}}}`; the context is input + cache creation + cache read.
  One API response is written as several lines sharing `message.id`;
  `isSidechain` lines are subagent turns and do not count.
- Codex rollout JSONL: `{"type": "event_msg", "payload": {"type":
  "token_count", "info": {"last_token_usage": {"input_tokens", ...},
  "total_token_usage": {...}}}}`; OpenAI's `input_tokens` already includes
  `cached_input_tokens`.  Repeats of a token count (same cumulative total)
  are one turn.
- Gemini CLI JSONL: `{"id": ..., "type": "gemini", "tokens": {"input",
  "output", "cached", ...}}` (a message may be re-appended with the same id);
  older Gemini CLI wrote one JSON document (`*.json`) with `messages`.

Only the end of a large file is read.
"""
from __future__ import annotations

import json
import os

from agitmem.errors import AgitmemError

TAIL_BYTES = 200 * 1024


def _int(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return 0


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _record(obj: object) -> tuple[object, int] | None:
    """(dedup key, context size) of a record that carries usage, else None"""
    if not isinstance(obj, dict):
        return None
    kind = obj.get('type')
    if kind == 'assistant':  # Claude Code
        if obj.get('isSidechain') is True:
            return None
        message = _dict(obj.get('message'))
        usage = message.get('usage')
        if not isinstance(usage, dict):
            return None
        size = (
            _int(usage.get('input_tokens')) +
            _int(usage.get('cache_creation_input_tokens')) +
            _int(usage.get('cache_read_input_tokens'))
        )
        key = message.get('id') or obj.get('uuid')
        return ('claude', key if isinstance(key, str) else id(obj)), size
    elif kind == 'event_msg':  # Codex
        payload = _dict(obj.get('payload'))
        if payload.get('type') != 'token_count':
            return None
        info = payload.get('info')
        if not isinstance(info, dict):
            return None
        last = info.get('last_token_usage')
        if not isinstance(last, dict):
            return None
        total = _dict(info.get('total_token_usage')).get('total_tokens')
        if isinstance(total, int):
            return ('codex', total), _int(last.get('input_tokens'))
        return ('codex', id(obj)), _int(last.get('input_tokens'))
    elif kind == 'gemini':  # Gemini CLI
        tokens = obj.get('tokens')
        if not isinstance(tokens, dict):
            return None
        key = obj.get('id')
        size = _int(tokens.get('input'))
        return ('gemini', key if isinstance(key, str) else id(obj)), size
    else:
        return None


def _sizes(records: list[object]) -> list[int]:
    sizes: list[int] = []
    seen: dict[object, int] = {}
    for obj in records:
        found = _record(obj)
        if found is None:
            continue
        key, size = found
        if size <= 0:  # synthetic / error turns report no usage
            continue
        if key in seen:  # the same response again: keep its place
            sizes[seen[key]] = size
        else:
            seen[key] = len(sizes)
            sizes.append(size)
    return sizes


def _line_number(path: str, offset: int) -> int:
    """1-based number of the line starting at byte `offset` (slow path)."""
    count = 0
    with open(path, 'rb') as f:
        remaining = offset
        while remaining > 0:
            chunk = f.read(min(remaining, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b'\n')
            remaining -= len(chunk)
    return count + 1


def _open(path: str) -> int:
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise AgitmemError(f'{path}: transcript not found')
    except OSError as e:
        raise AgitmemError(f'{path}: cannot read transcript: {e.strerror}')


def _read_tail(path: str, window: int | None) -> tuple[bytes, int, int]:
    """(bytes, offset they start at, file size); window None: all of it.

    A tail starts one byte early so that whether its first line is whole
    can be told: it is when that byte is a newline.
    """
    fd = _open(path)
    try:
        try:
            size = os.fstat(fd).st_size
            start = 0 if window is None else max(0, size - window - 1)
            os.lseek(fd, start, os.SEEK_SET)
            chunks = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        except IsADirectoryError:
            raise AgitmemError(f'{path}: is a directory, not a transcript')
        except OSError as e:
            raise AgitmemError(
                f'{path}: cannot read transcript: {e.strerror}',
            )
    finally:
        os.close(fd)
    return b''.join(chunks), start, size


def _jsonl_records(path: str, data: bytes, start: int) -> list[object]:
    lines = data.split(b'\n')
    offset = start
    if start > 0:  # skip up to the first line start in the window
        offset += len(lines[0]) + 1
        lines = lines[1:]
    records: list[object] = []
    for i, line in enumerate(lines):
        line_offset = offset
        offset += len(line) + 1
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            if i == len(lines) - 1:
                # the agent is still writing its last line
                break
            lineno = _line_number(path, line_offset)
            raise AgitmemError(
                f'{path}:{lineno}: not a JSONL transcript '
                f'(line {lineno} is not JSON)',
            )
    return records


def _json_document(path: str) -> list[object]:
    data, _, _ = _read_tail(path, None)
    try:
        doc = json.loads(data)
    except ValueError as e:
        where = ''
        if isinstance(e, json.JSONDecodeError):
            where = f' (line {e.lineno}: {e.msg})'
        raise AgitmemError(f'{path}: not a JSON transcript{where}')
    messages = doc.get('messages') if isinstance(doc, dict) else None
    if not isinstance(messages, list):
        raise AgitmemError(f'{path}: JSON transcript without "messages"')
    return messages


def context_sizes(path: str) -> list[int]:
    """Context size of each assistant turn that carries usage, oldest first.

    Large files are read from their end: at least the last TAIL_BYTES, more
    only while fewer than two turns were found.
    """
    if path.endswith('.json'):  # legacy Gemini CLI session file
        return _sizes(_json_document(path))
    window = TAIL_BYTES
    while True:
        data, start, _ = _read_tail(path, window)
        sizes = _sizes(_jsonl_records(path, data, start))
        if len(sizes) >= 2 or start == 0:
            return sizes
        window *= 4


def dropped(
        sizes: list[int],
        threshold: float = 0.4,
        *,
        baseline: int | None = None,
) -> bool:
    """True when the context shrank by more than `threshold` (a compaction).

    Compares the last size with the one before it, or with `baseline` (for
    a caller that remembers the size it saw last time, like the seed's
    `last_context_len`).  Context only grows between compactions, so a drop
    of more than 40% between two consecutive turns is a compaction.
    """
    if not 0 < threshold < 1:
        raise ValueError(f'threshold must be between 0 and 1: {threshold}')
    if not sizes:
        return False
    if baseline is None:
        if len(sizes) < 2:
            return False
        baseline = sizes[-2]
    if baseline <= 0:
        return False
    return sizes[-1] < baseline * (1 - threshold)
