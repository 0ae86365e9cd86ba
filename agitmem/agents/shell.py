"""Shell shims (`.agent/hooks/*.sh`) for agents without native hooks.

They send no JSON: whatever the agent framework knows arrives in the
environment.  Output is plain text on stdout, read by the agent as is.

Environment read (all optional):

    AGENT_CONTEXT_LEN        current context size (tokens), for the 40% rule
    AGENT_EVENT_SOURCE       session start: startup | resume | clear | compact
    AGENT_EVENT              the framework's own name for the event
    AGENT_SESSION_ID         session id
    AGENT_TRANSCRIPT_PATH    transcript file, if the framework keeps one
    AGENT_CWD                working directory (default: none given)
    AGENT_TOOL_NAME          tool that ran (post-edit)
    AGENT_EDITED_PATHS       files it wrote, one per line
    AGENT_PROMPT             the user's prompt
    AGENT_STOP_HOOK_ACTIVE   1 / true when already continuing after a stop hook
"""
from __future__ import annotations

from agitmem.errors import AgitmemError

# collections.abc's names are for mypy only (the agent hooks import this module)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

VARS = (
    'AGENT_CONTEXT_LEN',
    'AGENT_EVENT_SOURCE',
    'AGENT_EVENT',
    'AGENT_SESSION_ID',
    'AGENT_TRANSCRIPT_PATH',
    'AGENT_CWD',
    'AGENT_TOOL_NAME',
    'AGENT_EDITED_PATHS',
    'AGENT_PROMPT',
    'AGENT_STOP_HOOK_ACTIVE',
)
_TRUE = frozenset(('1', 'true', 'yes', 'on'))


def get(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name)
    if value is None or value == '':
        return None
    return value


def context_len(environ: Mapping[str, str]) -> int | None:
    value = get(environ, 'AGENT_CONTEXT_LEN')
    if value is None:
        return None
    try:
        ret = int(value.strip())
    except ValueError:
        raise AgitmemError(
            f'AGENT_CONTEXT_LEN must be a whole number of tokens, '
            f'got {value!r}',
        )
    if ret < 0:
        raise AgitmemError(f'AGENT_CONTEXT_LEN must not be negative: {ret}')
    return ret


def edited_paths(environ: Mapping[str, str]) -> list[str]:
    value = get(environ, 'AGENT_EDITED_PATHS') or ''
    return [line for line in value.splitlines() if line.strip()]


def stop_hook_active(environ: Mapping[str, str]) -> bool:
    value = get(environ, 'AGENT_STOP_HOOK_ACTIVE') or ''
    return value.strip().lower() in _TRUE


def raw(environ: Mapping[str, str]) -> dict[str, object]:
    return {k: environ[k] for k in VARS if k in environ}


def envelope(
        context: str | None,
        message: str | None,
        block_reason: str | None,
) -> str:
    parts = [s for s in (context, message, block_reason) if s]
    return '\n'.join(parts)
