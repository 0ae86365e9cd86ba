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


# BeforeModel can rewrite the next model request: after a compression in
# the middle of a prompt, agitmem's `prompt` hook puts memory back there
EXTRA_EVENTS: dict[str, tuple[str, str | None]] = {
    'BeforeModel': ('prompt', None),
}


def with_context(messages: list[object], context: str) -> dict[str, object]:
    """BeforeModel's output: the request's messages with `context` put
    before the text of the last user message (appended as a user message
    when there is none).  The rewrite is for that one request only: the
    history and the chat file keep the original (docs/clients-gemini.md)."""
    out = [dict(m) if isinstance(m, dict) else m for m in messages]
    for message in reversed(out):
        if isinstance(message, dict) and message.get('role') == 'user' and isinstance(message.get('content'), str):
            message['content'] = f'{context}\n\n{message["content"]}'
            break
    else:
        out.append({'role': 'user', 'content': context})
    return {'hookSpecificOutput': {'hookEventName': 'BeforeModel', 'llm_request': {'messages': out}}}


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
