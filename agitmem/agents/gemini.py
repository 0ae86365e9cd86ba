"""Gemini CLI: `.gemini/settings.json` hooks, payloads and output envelopes.

Formats from https://geminicli.com/docs/hooks/reference and the CLI's source
(packages/core/src/hooks/, see docs/agents.md).  Stdout must be pure JSON.
Matchers of lifecycle events (SessionStart, PreCompress) are compared as
exact strings, not regexes, so those groups carry no matcher at all.
"""
from __future__ import annotations

SETTINGS = ('.gemini', 'settings.json')

EVENT_NAMES = {
    'session-start': 'SessionStart',
    'pre-compact': 'PreCompress',
    'post-edit': 'AfterTool',
    'prompt': 'BeforeAgent',
    'stop': 'AfterAgent',
}
MATCHERS: dict[str, str | None] = {
    'session-start': None,
    'pre-compact': None,
    'post-edit': '^(write_file|replace|run_shell_command)$',
    'prompt': None,
    'stop': None,
}
# milliseconds (Gemini default: 60000)
TIMEOUTS = {
    'session-start': 30000,
    'pre-compact': 60000,
    'post-edit': 15000,
    'prompt': 15000,
    'stop': 30000,
}
# what a stop hook that refuses to stop answers in `decision`
BLOCK_DECISION = 'deny'
CONTEXT_EVENTS = frozenset(('session-start', 'post-edit', 'prompt'))
NATIVE_EVENTS = frozenset((
    'SessionStart', 'SessionEnd', 'BeforeAgent', 'AfterAgent', 'BeforeModel',
    'AfterModel', 'BeforeToolSelection', 'BeforeTool', 'AfterTool',
    'PreCompress', 'Notification',
))
# events only Gemini CLI has: a payload naming one is Gemini's
OWN_EVENTS = NATIVE_EVENTS - {'SessionStart', 'SessionEnd', 'Notification'}

HOOKS_NOTE = (
    'gemini: hooks are on by default; Gemini CLI reads project settings '
    '(and so these hooks) only in a trusted folder: trust it when asked, or '
    'add it to ~/.gemini/trustedFolders.json (headless in an untrusted '
    'folder exits 55; --skip-trust ignores project settings, hooks '
    'included)'
)


def hook_entry(event: str, command: str) -> dict[str, object]:
    return {
        'name': f'agitmem-{event}',
        'type': 'command',
        'command': command,
        'timeout': TIMEOUTS[event],
    }


def edited_paths(tool_input: dict[str, object]) -> list[str]:
    """write_file and replace both name the file `file_path`."""
    ret = []
    for key in ('file_path', 'absolute_path'):
        value = tool_input.get(key)
        if isinstance(value, str) and value and value not in ret:
            ret.append(value)
    return ret
