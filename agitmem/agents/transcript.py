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

Only the end of a large file is read, and only a regular file: the path
comes from the agent's payload, and a FIFO would block the hook forever,
/dev/zero would fill its memory.
"""
from __future__ import annotations

import os

from agitmem import jsontext
from agitmem.errors import AgitmemError

# collections.abc's names are for mypy only: the prompt hook and every
# Gemini model call import this module (mypy takes any name TYPE_CHECKING
# as true)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

TAIL_BYTES = 200 * 1024
# never read more of a transcript than this (a JSON document, or the window
# grown looking for two turns): a hook has milliseconds, not gigabytes
MAX_BYTES = 32 * 1024 * 1024


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


def _line_number(path: str, offset: int) -> int | None:
    """1-based number of the line starting at byte `offset` (slow path);
    None past MAX_BYTES, not worth reading that far to count."""
    if offset > MAX_BYTES:
        return None
    count = 0
    fd, _ = _open(path)
    try:
        remaining = offset
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b'\n')
            remaining -= len(chunk)
    finally:
        os.close(fd)
    return count + 1


def _open(path: str) -> tuple[int, int]:
    """(fd, size) of the transcript, a regular file (never a FIFO to wait
    on, nor a device)."""
    from agitmem import repo as repo_mod
    try:
        fd, st = repo_mod.open_regular(path)
    except FileNotFoundError:
        raise AgitmemError(f'{path}: transcript not found')
    except repo_mod.NotRegularFile as e:
        raise AgitmemError(f'{path}: is {e.kind}, not a transcript')
    except (OSError, ValueError) as e:  # ValueError: a NUL in the path
        detail = e.strerror if isinstance(e, OSError) else str(e)
        raise AgitmemError(f'{path}: cannot read transcript: {detail}')
    return fd, st.st_size


def _read_tail(path: str, window: int | None) -> tuple[bytes, int, int]:
    """(bytes, offset they start at, file size); window None: all of it,
    up to MAX_BYTES.

    A tail starts one byte early so that whether its first line is whole
    can be told: it is when that byte is a newline.  Only the bytes the file
    held when opened are read: a file still growing does not keep us.
    """
    fd, size = _open(path)
    try:
        if window is None and size > MAX_BYTES:
            raise AgitmemError(
                f'{path}: transcript of {size >> 20} MB is too large to read '
                f'(over {MAX_BYTES >> 20} MB)',
            )
        start = 0 if window is None else max(0, size - window - 1)
        chunks = []
        try:
            os.lseek(fd, start, os.SEEK_SET)
            left = size - start
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
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
            records.append(jsontext.loads(line))
        except (ValueError, RecursionError):
            if i == len(lines) - 1:
                # the agent is still writing its last line
                break
            lineno = _line_number(path, line_offset)
            if lineno is None:
                raise AgitmemError(
                    f'{path}: not a JSONL transcript (the line at byte '
                    f'{line_offset} is not JSON)',
                )
            raise AgitmemError(
                f'{path}:{lineno}: not a JSONL transcript '
                f'(line {lineno} is not JSON)',
            )
    return records


def _json_document(path: str) -> list[object]:
    data, _, _ = _read_tail(path, None)
    try:
        doc = jsontext.loads(data)
    except (ValueError, RecursionError) as e:
        at = jsontext.where(e)  # None: bytes that are not UTF-8, nested too deeply
        where = f' (line {at[1]}: {at[0]})' if at else ''
        raise AgitmemError(f'{path}: not a JSON transcript{where}')
    messages = doc.get('messages') if isinstance(doc, dict) else None
    if not isinstance(messages, list):
        raise AgitmemError(f'{path}: JSON transcript without "messages"')
    return messages


def context_sizes(path: str) -> list[int]:
    """Context size of each assistant turn that carries usage, oldest first.

    Large files are read from their end: at least the last TAIL_BYTES, more
    only while fewer than two turns were found, never over MAX_BYTES.
    """
    if path.endswith('.json'):  # legacy Gemini CLI session file
        return _sizes(_json_document(path))
    window = TAIL_BYTES
    while True:
        data, start, _ = _read_tail(path, window)
        sizes = _sizes(_jsonl_records(path, data, start))
        if len(sizes) >= 2 or start == 0 or window >= MAX_BYTES:
            return sizes
        window = min(window * 4, MAX_BYTES)


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


# -- compactions --------------------------------------------------------------
# What each client writes when it compacts (docs/clients-*.md):
# - Claude Code: {"type": "system", "subtype": "compact_boundary", "uuid": ...}
# - Codex: {"type": "compacted", "payload": {"message": <summary>, ...}}
# - Gemini CLI: {"$set": {"messages": [...]}} whose messages hold the summary
#   as a user turn answered by GEMINI_ACK.  Gemini rewrites `messages` at
#   every start and resume as well, so only a summary not seen before is a
#   compression.

GEMINI_ACK = 'Got it. Thanks for the additional context!'
COMPACTION_BYTES = 4 << 20
_MARKERS = (b'compact_boundary', b'"compacted"', GEMINI_ACK.encode())


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return ''.join(
            str(p.get('text', '')) for p in content if isinstance(p, dict)
        )
    return ''


def _key(text: str) -> str:
    # (repo, and the subprocess and pathlib it imports, are not on the
    # path of a Gemini model call with no summary in its request)
    from agitmem import repo as repo_mod
    # surrogatepass: a payload's JSON may hold any lone surrogate (a chat
    # cut in the middle of an emoji), not only surrogateescape's bytes
    return repo_mod.sha1(text.encode('utf-8', 'surrogatepass'))[:16]


def _compaction_keys(obj: object) -> list[str]:
    if not isinstance(obj, dict):
        return []
    if obj.get('type') == 'system' and obj.get('subtype') == 'compact_boundary':
        uid = obj.get('uuid')
        return [f'claude:{uid if isinstance(uid, str) else _key(jsontext.dumps(obj, sort_keys=True))}']
    if obj.get('type') == 'compacted':
        return [f'codex:{_key(jsontext.dumps(obj, sort_keys=True))}']
    return [f'gemini:{_key(text)}' for text in _gemini_summaries(obj)]


def _gemini_summaries(obj: dict[str, object]) -> list[str]:
    """The summaries a Gemini `$set` of `messages` holds: each user turn
    that GEMINI_ACK answers."""
    messages = _dict(obj.get('$set')).get('messages')
    if not isinstance(messages, list):
        return []
    return [
        _text_of(before.get('content'))
        for before, after in zip(messages, messages[1:])
        if isinstance(before, dict) and isinstance(after, dict) and
        before.get('type') == 'user' and after.get('type') == 'gemini' and
        _text_of(after.get('content')).strip() == GEMINI_ACK
    ]


def request_compactions(messages: object) -> list[str]:
    """The compaction keys of the summaries a Gemini BeforeModel request
    holds (its `llm_request.messages`: `{role, content}`, text parts only),
    the same keys `compactions` reads from the chat file."""
    if not isinstance(messages, list):
        return []
    return [
        f'gemini:{_key(_text_of(before.get("content")))}'
        for before, after in zip(messages, messages[1:])
        if isinstance(before, dict) and isinstance(after, dict) and
        before.get('role') == 'user' and after.get('role') == 'model' and
        _text_of(after.get('content')).strip() == GEMINI_ACK
    ]


def compactions(path: str) -> list[str]:
    """A key for each compaction the transcript records (its last
    COMPACTION_BYTES), oldest first, each once."""
    data, start, _ = _read_tail(path, COMPACTION_BYTES)
    if not any(m in data for m in _MARKERS):
        return []
    ret: list[str] = []
    lines = data.split(b'\n')
    if start > 0:
        lines = lines[1:]
    for line in lines:
        if not any(m in line for m in _MARKERS):
            continue
        try:
            obj = jsontext.loads(line)
        except (ValueError, RecursionError):
            continue
        for key in _compaction_keys(obj):
            if key not in ret:
                ret.append(key)
    return ret


# -- what a compaction left, and what the agent said --------------------------
# - the summary: Claude Code's user record with `isCompactSummary`, Codex's
#   `compacted` record's `payload.message`, Gemini's user turn before
#   GEMINI_ACK;
# - the agent's text: Claude Code `assistant` records' text blocks, Codex
#   `response_item` messages of role assistant, Gemini `gemini` records.

def _summary_of(obj: object) -> str | None:
    if not isinstance(obj, dict):
        return None
    if obj.get('isCompactSummary') is True:
        return _text_of(_dict(obj.get('message')).get('content')) or None
    if obj.get('type') == 'compacted':
        message = _dict(obj.get('payload')).get('message')
        return message if isinstance(message, str) and message else None
    found = _gemini_summaries(obj)
    return (found[-1] or None) if found else None


def _assistant_text(obj: object) -> str | None:
    if not isinstance(obj, dict):
        return None
    kind = obj.get('type')
    if kind == 'assistant' and obj.get('isSidechain') is not True:
        content = _dict(obj.get('message')).get('content')
        if isinstance(content, list):
            content = [p for p in content if isinstance(p, dict) and p.get('type') == 'text']
        return _text_of(content) or None
    if kind == 'response_item':
        payload = _dict(obj.get('payload'))
        if payload.get('type') == 'message' and payload.get('role') == 'assistant':
            return _text_of(payload.get('content')) or None
    if kind == 'gemini':
        return _text_of(obj.get('content')) or None
    return None


def _last(path: str, pick: Callable[[object], str | None]) -> str | None:
    data, start, _ = _read_tail(path, COMPACTION_BYTES)
    lines = data.split(b'\n')
    if start > 0:
        lines = lines[1:]
    for line in reversed(lines):
        try:
            obj = jsontext.loads(line)
        except (ValueError, RecursionError):
            continue
        found = pick(obj)
        if found:
            return found
    return None


def summary(path: str) -> str | None:
    """The summary of the last compaction the transcript records."""
    return _last(path, _summary_of)


def last_assistant_text(path: str) -> str | None:
    """The agent's last text in the transcript (its last turn's answer)."""
    return _last(path, _assistant_text)


def _turn_start(obj: object) -> bool:
    """A record the agent's turn cannot reach back past: the user's own
    prompt (not a tool result carried as a user message) or a compaction."""
    if not isinstance(obj, dict):
        return False
    if _compaction_keys(obj) or obj.get('isCompactSummary') is True:
        return True
    kind = obj.get('type')
    if kind == 'user':
        content = _dict(obj.get('message')).get('content') if 'message' in obj else obj.get('content')
        if isinstance(content, str):
            return bool(content.strip())
        return isinstance(content, list) and any(
            isinstance(p, dict) and p.get('type', 'text') == 'text' and 'text' in p for p in content
        )
    if kind == 'response_item':
        payload = _dict(obj.get('payload'))
        return payload.get('type') == 'message' and payload.get('role') == 'user'
    return False


def turn_texts(path: str) -> list[str]:
    """The agent's texts of its last turn, oldest first: what it said
    between its tools as well as its closing message."""
    data, start, _ = _read_tail(path, COMPACTION_BYTES)
    lines = data.split(b'\n')
    if start > 0:
        lines = lines[1:]
    ret: list[str] = []
    for line in reversed(lines):
        try:
            obj = jsontext.loads(line)
        except (ValueError, RecursionError):
            continue
        if _turn_start(obj):
            break
        found = _assistant_text(obj)
        if found and (not ret or ret[-1] != found):  # Gemini re-appends a message
            ret.append(found)
    return ret[::-1]
