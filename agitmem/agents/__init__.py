"""Agent hook adapters: payload in, envelope out, settings install.

On the hot path of `agitmem hook post-edit` / `hook prompt`: standard
library only, and nothing heavy imported at module level.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agitmem.agents import claude
from agitmem.agents import codex
from agitmem.agents import gemini
from agitmem.agents import shell
from agitmem.errors import AgitmemError
from agitmem.repo import atomic_write

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Protocol

    class _Native(Protocol):
        SETTINGS: tuple[str, str]
        EVENT_NAMES: dict[str, str]
        MATCHERS: dict[str, str | None]
        CONTEXT_EVENTS: frozenset[str]
        NATIVE_EVENTS: frozenset[str]

        def hook_entry(self, event: str, command: str) -> dict[str, object]:
            ...

        def edited_paths(self, tool_input: dict[str, object]) -> list[str]:
            ...

        BLOCK_DECISION: str

EVENTS = ('session-start', 'pre-compact', 'post-edit', 'prompt', 'stop')
AGENTS = ('claude', 'codex', 'gemini', 'shell')

_NATIVE: dict[str, _Native] = {
    'claude': claude,
    'codex': codex,
    'gemini': gemini,
}


@dataclass(frozen=True)
class Payload:
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


def _check_agent(agent: str) -> None:
    if agent not in AGENTS:
        raise AgitmemError(
            f'unknown agent {agent!r}: expected one of {", ".join(AGENTS)}',
        )


def _check_event(event: str) -> None:
    if event not in EVENTS:
        raise AgitmemError(
            f'unknown hook event {event!r}: expected one of '
            f'{", ".join(EVENTS)}',
        )


def _native(agent: str) -> _Native:
    _check_agent(agent)
    try:
        return _NATIVE[agent]
    except KeyError:
        raise AgitmemError(
            f'{agent} has no native hooks to install: its shims live in '
            f'.agent/hooks/ (agitmem init puts them there)',
        )


def native_event(agent: str, event: str) -> str | None:
    """The agent's own name for agitmem `event` (None for shell shims)."""
    _check_agent(agent)
    _check_event(event)
    if agent == 'shell':
        return None
    return _NATIVE[agent].EVENT_NAMES[event]


def agitmem_event(agent: str, native: str) -> str | None:
    """The agitmem event an agent's hook event maps onto, if any."""
    _check_agent(agent)
    if agent == 'shell':
        return None
    for event, name in _NATIVE[agent].EVENT_NAMES.items():
        if name == native:
            return event
    return None


def supports_context(agent: str, event: str) -> bool:
    """Whether `envelope(agent, event, context=...)` can reach the model."""
    _check_agent(agent)
    _check_event(event)
    return agent == 'shell' or event in _NATIVE[agent].CONTEXT_EVENTS


def settings_path(agent: str, root: Path) -> Path:
    return root.joinpath(*_native(agent).SETTINGS)


# --- parse -------------------------------------------------------------------

def _load(text: str) -> dict[str, object]:
    if not text.strip():
        raise AgitmemError(
            "hook input is empty: expected the agent's JSON payload on stdin",
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise AgitmemError(
            f'hook input is not JSON: {e.msg} '
            f'(line {e.lineno}, column {e.colno})',
        )
    if not isinstance(data, dict):
        raise AgitmemError(
            f'hook input is a JSON {_kind(data)}, expected an object',
        )
    return data


def _kind(value: object) -> str:
    if isinstance(value, list):
        return 'array'
    elif isinstance(value, str):
        return 'string'
    elif isinstance(value, bool):
        return 'boolean'
    elif isinstance(value, (int, float)):
        return 'number'
    elif value is None:
        return 'null'
    else:
        return 'object'


def detect(data: dict[str, object], environ: Mapping[str, str]) -> str:
    """Which agent sent this payload, from its shape (env as tie-breaker)."""
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


def _parse_native(agent: str, data: dict[str, object]) -> Payload:
    mod = _NATIVE[agent]
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
        prompt=_str(data, 'prompt'),
        stop_hook_active=data.get('stop_hook_active') is True,
        context_len=None,
        raw=data,
        trigger=_str(data, 'trigger'),
    )


def _parse_shell(environ: Mapping[str, str]) -> Payload:
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
) -> Payload:
    """Read a hook's input: the agent's JSON on stdin, or the environment.

    `agent=None` detects claude / codex / gemini from the payload's shape.
    Shell shims send no JSON: pass `agent='shell'`.
    """
    if agent is not None:
        _check_agent(agent)
    if agent == 'shell':
        return _parse_shell(environ)
    data = _load(text)
    if agent is None:
        agent = detect(data, environ)
    return _parse_native(agent, data)


# --- envelope ----------------------------------------------------------------

def _envelope(
        mod: _Native,
        event: str,
        context: str | None,
        message: str | None,
        block_reason: str | None,
) -> dict[str, object]:
    out: dict[str, object] = {}
    if block_reason is not None:
        # Gemini's AfterAgent says "deny": `reason` becomes the next prompt
        out['decision'] = mod.BLOCK_DECISION
        out['reason'] = block_reason
    if context is not None:
        out['hookSpecificOutput'] = {
            'hookEventName': mod.EVENT_NAMES[event],
            'additionalContext': context,
        }
    if message is not None:
        out['systemMessage'] = message
    return out


def envelope(
        agent: str,
        event: str,
        *,
        context: str | None = None,
        message: str | None = None,
        block_reason: str | None = None,
) -> str:
    """What to print on stdout for agitmem `event`, in `agent`'s format.

    '' means print nothing.  `context` is only allowed where
    `supports_context(agent, event)`; `block_reason` only on `stop`.
    """
    _check_agent(agent)
    _check_event(event)
    if block_reason is not None and event != 'stop':
        raise ValueError(f'block_reason is only for stop, not {event}')
    if agent == 'shell':
        return shell.envelope(context, message, block_reason)
    mod = _NATIVE[agent]
    if context is not None and event not in mod.CONTEXT_EVENTS:
        raise ValueError(
            f'{agent} {mod.EVENT_NAMES[event]} hooks cannot add context '
            f'for the model',
        )
    out = _envelope(mod, event, context, message, block_reason)
    if not out:
        # Gemini wants JSON on stdout, always
        return '{}' if agent == 'gemini' else ''
    # not ensure_ascii: escaped CJK would count six times against the
    # agents' hook output limits
    return json.dumps(out, ensure_ascii=False)


# --- install / uninstall -----------------------------------------------------

_OURS = re.compile(r'''(?:^|[\s/\\"'])agitmem(?:\.exe)?["']?\s+hook\s''')


def _is_ours(hook: object) -> bool:
    if not isinstance(hook, dict):
        return False
    command = hook.get('command')
    return isinstance(command, str) and bool(_OURS.search(command))


def _strip_ours(group: object) -> tuple[object | None, int]:
    """(the group without our hooks or None if that empties it, removed)"""
    if not isinstance(group, dict):
        return group, 0
    hooks = group.get('hooks')
    if not isinstance(hooks, list):
        return group, 0
    kept = [h for h in hooks if not _is_ours(h)]
    removed = len(hooks) - len(kept)
    if not removed:
        return group, 0
    elif not kept:
        return None, removed
    else:
        return {**group, 'hooks': kept}, removed


def _only_ours(group: object) -> bool:
    if not isinstance(group, dict):
        return False
    hooks = group.get('hooks')
    return (
        isinstance(hooks, list) and
        bool(hooks) and
        all(_is_ours(h) for h in hooks)
    )


def _json_error(path: str, text: str, e: json.JSONDecodeError) -> str:
    lines = text.splitlines()
    line = lines[e.lineno - 1] if 0 < e.lineno <= len(lines) else ''
    if len(line) > 80:
        line = f'{line[:77]}...'
    return (
        f'{path}: not valid JSON: {e.msg} at line {e.lineno} column '
        f'{e.colno}: {line.strip()!r}; nothing was changed'
    )


def _read_settings(path: Path) -> tuple[dict[str, object], bool]:
    """(settings, existed).  A missing or blank file reads as {}."""
    try:
        with open(path, 'rb') as f:
            contents = f.read()
    except FileNotFoundError:
        return {}, False
    except IsADirectoryError:
        raise AgitmemError(f'{path}: is a directory, expected a JSON file')
    try:
        text = contents.decode('utf-8-sig')
    except UnicodeDecodeError as e:
        raise AgitmemError(
            f'{path}: not UTF-8 text (byte {e.start}); nothing was changed',
        )
    if not text.strip():
        return {}, True
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise AgitmemError(_json_error(str(path), text, e))
    if not isinstance(data, dict):
        raise AgitmemError(
            f'{path}: expected a JSON object, found a JSON {_kind(data)}; '
            f'nothing was changed',
        )
    return data, True


def _hooks_table(
        settings: dict[str, object],
        path: Path,
) -> dict[str, object]:
    hooks = settings.get('hooks', {})
    if not isinstance(hooks, dict):
        raise AgitmemError(
            f'{path}: "hooks" is a JSON {_kind(hooks)}, expected an object; '
            f'nothing was changed',
        )
    return hooks


def _dump(settings: dict[str, object]) -> bytes:
    text = json.dumps(settings, indent=2, ensure_ascii=False) + '\n'
    return text.encode()


def _command(command: str, event: str, agent: str) -> str:
    return f'{command} hook {event} --agent {agent}'


def _group(mod: _Native, event: str, cmd: str) -> dict[str, object]:
    group: dict[str, object] = {}
    matcher = mod.MATCHERS[event]
    if matcher is not None:
        group['matcher'] = matcher
    group['hooks'] = [mod.hook_entry(event, cmd)]
    return group


def _merge_event(
        groups: list[object],
        want: dict[str, object],
) -> tuple[list[object], str | None]:
    """Make `groups` hold `want` once and no other hook of ours."""
    keep = next((i for i, g in enumerate(groups) if g == want), None)
    if keep is None:
        replace = next((i for i, g in enumerate(groups) if _only_ours(g)), -1)
    else:
        replace = keep
    new: list[object] = []
    removed = 0
    for i, group in enumerate(groups):
        if i == replace:
            new.append(want)
        else:
            stripped, n = _strip_ours(group)
            removed += n
            if stripped is not None:
                new.append(stripped)
    if keep is not None:
        action = 'removed a duplicate of' if removed else None
    elif replace >= 0:
        action = 'updated'
    else:
        new.append(want)
        action = 'added'
    return new, action


def install(agent: str, root: Path, *, command: str = 'agitmem') -> list[str]:
    """Merge agitmem's hooks into the agent's project settings file.

    Returns what changed, one human line each; [] when already installed.
    Every other key and hook is kept; an unreadable file changes nothing.
    """
    mod = _native(agent)
    path = root.joinpath(*mod.SETTINGS)
    rel = '/'.join(mod.SETTINGS)
    settings, _ = _read_settings(path)
    hooks = _hooks_table(settings, path)

    changes = []
    wanted = {}
    for event in EVENTS:
        name = mod.EVENT_NAMES[event]
        cmd = _command(command, event, agent)
        wanted[name] = cmd
        groups = hooks.get(name, [])
        if not isinstance(groups, list):
            raise AgitmemError(
                f'{path}: "hooks.{name}" is a JSON {_kind(groups)}, '
                f'expected an array; nothing was changed',
            )
        new, action = _merge_event(groups, _group(mod, event, cmd))
        if action is not None:
            hooks[name] = new
            changes.append(f'{rel}: {action} {name} hook: {cmd}')
    for name, groups in list(hooks.items()):
        if name in wanted or not isinstance(groups, list):
            continue
        new, removed = _strip_groups(groups)
        if removed:
            _set_or_drop(hooks, name, new)
            changes.append(f'{rel}: removed a stale agitmem hook from {name}')

    if not changes:
        return []
    settings['hooks'] = hooks
    atomic_write(path, _dump(settings))
    if agent == 'codex':
        changes.append(codex.TRUST_NOTE)
    elif agent == 'gemini':
        changes.append(gemini.HOOKS_NOTE)
    return changes


def _strip_groups(groups: list[object]) -> tuple[list[object], int]:
    new: list[object] = []
    removed = 0
    for group in groups:
        stripped, n = _strip_ours(group)
        removed += n
        if stripped is not None:
            new.append(stripped)
    return new, removed


def _set_or_drop(hooks: dict[str, object], name: str, new: list[object]) -> None:
    if new:
        hooks[name] = new
    else:
        del hooks[name]


def uninstall(agent: str, root: Path) -> list[str]:
    """Remove agitmem's hooks (and only them) from the agent's settings.

    Groups, events, `hooks` and the file itself go when removing ours
    empties them.  Returns what changed; [] when nothing of ours was there.
    """
    mod = _native(agent)
    path = root.joinpath(*mod.SETTINGS)
    rel = '/'.join(mod.SETTINGS)
    settings, existed = _read_settings(path)
    if not existed:
        return []
    hooks = settings.get('hooks')
    if not isinstance(hooks, dict):
        return []

    changes = []
    for name, groups in list(hooks.items()):
        if not isinstance(groups, list):
            continue
        new, removed = _strip_groups(groups)
        if removed:
            _set_or_drop(hooks, name, new)
            changes.append(f'{rel}: removed agitmem {name} hook')
    if not changes:
        return []
    if not hooks:
        del settings['hooks']
    if settings:
        atomic_write(path, _dump(settings))
    else:
        os.remove(path)
        changes.append(f'{rel}: removed the file, nothing else was in it')
        try:
            os.rmdir(path.parent)
        except OSError:  # not empty: other files live there
            pass
    return changes
