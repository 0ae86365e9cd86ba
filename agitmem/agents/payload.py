"""An agent's hook payload, parsed: which agent sent it, which event, the
fields agitmem uses (Claude Code, Codex, Gemini CLI JSON on stdin; shell
shims through the environment)."""
from __future__ import annotations

from agitmem import jsontext
from agitmem.agents import clients
from agitmem.errors import AgitmemError

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple


class Payload(NamedTuple):
    agent: str                 # one of AGENTS
    event: str | None          # the agent's own event name as sent
    source: str | None         # session start: startup|resume|clear|compact
    session_id: str | None
    transcript_path: str | None
    cwd: str | None
    tool_name: str | None
    edited_paths: tuple[str, ...]  # files the tool call wrote, as given
    prompt: str | None
    stop_hook_active: bool
    context_len: int | None    # shell shims: from $AGENT_CONTEXT_LEN
    raw: dict[str, object]
    trigger: str | None = None  # pre-compact: manual|auto


def _load(text: str) -> dict[str, object]:
    if not text.strip():
        raise AgitmemError(
            "hook input is empty: expected the agent's JSON payload on stdin",
        )
    try:
        data = jsontext.loads(text)
    except ValueError as e:
        at = jsontext.where(e)
        if at is None:  # a number past int's digit limit
            raise AgitmemError(f'hook input cannot be read: {e}')
        raise AgitmemError(f'hook input is not JSON: {at[0]} (line {at[1]}, column {at[2]})')
    except RecursionError:
        raise AgitmemError('hook input is nested too deep to read')
    if not isinstance(data, dict):
        raise AgitmemError(
            f'hook input is a JSON {clients.json_kind(data)}, expected an object',
        )
    return data


def detect(data: dict[str, object], environ: Mapping[str, str]) -> str:
    """Which agent sent this payload, from its shape (env as tie-breaker)."""
    from agitmem.agents import claude
    from agitmem.agents import codex
    from agitmem.agents import gemini
    event = data.get('hook_event_name')
    if not isinstance(event, str) or not event:
        raise AgitmemError(
            'hook input has no hook_event_name: not a payload from '
            'claude, codex or gemini (pass --agent)',
        )
    known = (
        claude.NATIVE_EVENTS | codex.NATIVE_EVENTS | gemini.NATIVE_EVENTS
    )
    if event not in known:
        raise AgitmemError(
            f'hook event {event!r} is from no known agent '
            f'(claude, codex, gemini)',
        )
    # Gemini: its own event names, and a `timestamp` in every payload
    if event in gemini.OWN_EVENTS:
        return 'gemini'
    if 'timestamp' in data and event in gemini.NATIVE_EVENTS:
        return 'gemini'
    # Codex: `turn_id` on every turn-scoped event; the transcript may be null
    if 'turn_id' in data or 'codex_hook_capabilities' in data:
        return 'codex'
    transcript = data.get('transcript_path', '')
    if transcript is None:
        return 'codex'
    if isinstance(transcript, str) and transcript:
        path = transcript.replace('\\', '/')
        if '/.codex/' in path or path.rpartition('/')[2].startswith(
                'rollout-',
        ):
            return 'codex'
        if '/.claude/' in path:
            return 'claude'
    if environ.get('GEMINI_PROJECT_DIR') and event in gemini.NATIVE_EVENTS:
        return 'gemini'
    if environ.get('CLAUDE_PROJECT_DIR') and event in claude.NATIVE_EVENTS:
        return 'claude'
    if event in claude.NATIVE_EVENTS:
        return 'claude'
    else:
        return 'codex'


def _str(data: dict[str, object], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _prompt(agent: str, text: str | None) -> str | None:
    """What the user typed.  Gemini CLI's BeforeAgent `prompt` carries the
    hooks' earlier additionalContext (agitmem's own memory block) in
    `<hook_context>` elements before it: that is not the user's request."""
    if agent != 'gemini' or text is None:
        return text
    while (start := text.find('<hook_context>')) >= 0:
        end = text.find('</hook_context>', start)
        if end < 0:
            break
        text = text[:start] + text[end + len('</hook_context>'):]
    return text.strip()


def _parse_native(agent: str, data: dict[str, object]) -> Payload:
    mod = clients.module(agent)
    tool_input = data.get('tool_input')
    paths: list[str] = []
    if isinstance(tool_input, dict):
        paths = mod.edited_paths(tool_input)
    tool_response = data.get('tool_response')
    if not paths and isinstance(tool_response, dict):
        file_path = tool_response.get('filePath')
        if isinstance(file_path, str) and file_path:
            paths = [file_path]
    return Payload(
        agent=agent,
        event=_str(data, 'hook_event_name'),
        source=_str(data, 'source'),
        session_id=_str(data, 'session_id'),
        transcript_path=_str(data, 'transcript_path') or None,
        cwd=_str(data, 'cwd'),
        tool_name=_str(data, 'tool_name'),
        edited_paths=tuple(paths),
        prompt=_prompt(agent, _str(data, 'prompt')),
        stop_hook_active=data.get('stop_hook_active') is True,
        context_len=None,
        raw=data,
        trigger=_str(data, 'trigger'),
    )


def _parse_shell(environ: Mapping[str, str]) -> Payload:
    from agitmem.agents import shell
    return Payload(
        agent='shell',
        event=shell.get(environ, 'AGENT_EVENT'),
        source=shell.get(environ, 'AGENT_EVENT_SOURCE'),
        session_id=shell.get(environ, 'AGENT_SESSION_ID'),
        transcript_path=shell.get(environ, 'AGENT_TRANSCRIPT_PATH'),
        cwd=shell.get(environ, 'AGENT_CWD'),
        tool_name=shell.get(environ, 'AGENT_TOOL_NAME'),
        edited_paths=tuple(shell.edited_paths(environ)),
        prompt=shell.get(environ, 'AGENT_PROMPT'),
        stop_hook_active=shell.stop_hook_active(environ),
        context_len=shell.context_len(environ),
        raw=shell.raw(environ),
    )


def parse(
        text: str,
        *,
        agent: str | None = None,
        environ: Mapping[str, str],
        data: dict[str, object] | None = None,
) -> Payload:
    """Read a hook's input: the agent's JSON on stdin, or the environment.

    `agent=None` detects claude / codex / gemini from the payload's shape.
    Shell shims send no JSON: pass `agent='shell'`.  `data`: the JSON
    object `text` holds, parsed already.
    """
    if agent is not None:
        clients.check_agent(agent)
    if agent == 'shell':
        return _parse_shell(environ)
    if data is None:
        data = _load(text)
    if agent is None:
        agent = detect(data, environ)
    return _parse_native(agent, data)
