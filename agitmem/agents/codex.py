"""Codex CLI: `.codex/hooks.json`, payloads and output envelopes.

Formats from https://developers.openai.com/codex/hooks and the JSON schemas
Codex generates in codex-rs/hooks/schema/generated/ (see docs/agents.md).
Codex validates hook output strictly (`additionalProperties: false`), so each
event only gets the keys its schema lists.
"""
from __future__ import annotations

SETTINGS = ('.codex', 'hooks.json')

EVENT_NAMES = {
    'session-start': 'SessionStart',
    'pre-compact': 'PreCompact',
    'post-edit': 'PostToolUse',
    'prompt': 'UserPromptSubmit',
    'stop': 'Stop',
}
# apply_patch is Codex's edit tool; it also answers to the matcher aliases
# Write and Edit.  Bash: a shell command may write memory too (post-edit
# saves when it names .agent/memory).  UserPromptSubmit and Stop ignore
# matchers.
MATCHERS: dict[str, str | None] = {
    'session-start': 'startup|resume|clear|compact',
    'pre-compact': None,
    'post-edit': 'apply_patch|Edit|Write|Bash',
    'prompt': None,
    'stop': None,
}
# seconds (Codex default: 600)
TIMEOUTS = {
    'session-start': 30,
    'pre-compact': 60,
    'post-edit': 15,
    'prompt': 15,
    'stop': 30,
}
# what a stop hook that refuses to stop answers in `decision`
BLOCK_DECISION = 'block'
CONTEXT_EVENTS = frozenset(('session-start', 'post-edit', 'prompt'))
NATIVE_EVENTS = frozenset((
    'SessionStart', 'SessionEnd', 'PreToolUse', 'PermissionRequest',
    'PostToolUse', 'PreCompact', 'PostCompact', 'UserPromptSubmit',
    'SubagentStart', 'SubagentStop', 'Stop', 'StopFailure', 'Interrupt',
))
# another of Codex's events into an agitmem hook: native name -> (agitmem
# event, matcher).  PostCompact marks the end of a compaction, whose summary
# the rollout's `compacted` record holds (for the recovery log).
EXTRA_EVENTS: dict[str, tuple[str, str | None]] = {
    'PostCompact': ('pre-compact', None),
}

TRUST_NOTE = (
    'codex: Codex skips hooks it does not trust WITHOUT A WORD (even with '
    '--json): trust them once in the interactive client with /hooks (the '
    'project must be trusted too); for `codex exec`, pass `--trust` (the '
    'project) and `--dangerously-bypass-hook-trust` (the hooks); both are '
    'needed.  Check with `agitmem doctor`'
)

_PATCH_HEADERS = (
    '*** Add File: ',
    '*** Update File: ',
    '*** Delete File: ',
    '*** Move to: ',
)


def hook_entry(event: str, command: str) -> dict[str, object]:
    return {
        'type': 'command',
        'command': command,
        'timeout': TIMEOUTS[event],
    }


def patch_paths(patch: str) -> list[str]:
    """Files named by an apply_patch envelope, in order, once each."""
    import re  # the patch's header lines, found at C speed (a 30 MB patch: 4 s a line at a time)
    ret: list[str] = []
    for line in re.findall(r'(?m)^\*\*\* .*$', patch):
        for header in _PATCH_HEADERS:
            if line.startswith(header):
                path = line[len(header):].strip()
                if path and path not in ret:
                    ret.append(path)
    return ret


def edited_paths(tool_input: dict[str, object]) -> list[str]:
    """apply_patch sends the patch text as `tool_input.command`."""
    ret = []
    command = tool_input.get('command')
    if isinstance(command, str):
        ret.extend(patch_paths(command))
    for key in ('file_path', 'path'):
        value = tool_input.get(key)
        if isinstance(value, str) and value and value not in ret:
            ret.append(value)
    return ret
