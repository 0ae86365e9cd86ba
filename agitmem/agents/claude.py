"""Claude Code: `.claude/settings.json` hooks, payloads and output envelopes.

Formats from https://code.claude.com/docs/en/hooks (see docs/agents.md).
"""
from __future__ import annotations

SETTINGS = ('.claude', 'settings.json')

# agitmem event -> Claude Code hook event
EVENT_NAMES = {
    'session-start': 'SessionStart',
    'pre-compact': 'PreCompact',
    'post-edit': 'PostToolUse',
    'prompt': 'UserPromptSubmit',
    'stop': 'Stop',
}
# matcher of each hook group we install (None: no matcher, runs always)
MATCHERS: dict[str, str | None] = {
    'session-start': 'startup|resume|clear|compact',
    'pre-compact': None,
    'post-edit': 'Write|Edit|MultiEdit|NotebookEdit|Bash',
    'prompt': None,
    'stop': None,
}
# seconds
TIMEOUTS = {
    'session-start': 30,
    'pre-compact': 60,
    'post-edit': 15,
    'prompt': 15,
    'stop': 30,
}
# what a stop hook that refuses to stop answers in `decision`
BLOCK_DECISION = 'block'
# events whose output may carry hookSpecificOutput.additionalContext
CONTEXT_EVENTS = frozenset(('session-start', 'post-edit', 'prompt'))
# every hook event Claude Code documents (used to recognize its payloads)
NATIVE_EVENTS = frozenset((
    'SessionStart', 'SessionEnd', 'Setup', 'UserPromptSubmit', 'PreToolUse',
    'PermissionRequest', 'PostToolUse', 'PostToolUseFailure', 'Notification',
    'SubagentStart', 'SubagentStop', 'Stop', 'PreCompact', 'PostCompact',
))
# more of Claude Code's events that feed an agitmem event: native name ->
# (agitmem event, matcher).  A failed Bash fires PostToolUseFailure only.
# PostCompact carries the client's summary, for the recovery log.
EXTRA_EVENTS: dict[str, tuple[str, str | None]] = {
    'PostToolUseFailure': ('post-edit', 'Bash'),
    'PostCompact': ('pre-compact', None),
}


def hook_entry(event: str, command: str) -> dict[str, object]:
    return {
        'type': 'command',
        'command': command,
        'timeout': TIMEOUTS[event],
    }


def edited_paths(tool_input: dict[str, object]) -> list[str]:
    """Write / Edit / MultiEdit name `file_path`, NotebookEdit `notebook_path`."""
    ret = []
    for key in ('file_path', 'notebook_path'):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            ret.append(value)
    return ret
