"""Installing agitmem's hooks into an agent's settings file, and taking
them out again, leaving everything else in the file as it was."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from agitmem.agents import clients
from agitmem.agents import codex
from agitmem.agents import gemini
from agitmem.errors import AgitmemError
from agitmem.repo import NotRegularFile
from agitmem.repo import TooLarge
from agitmem.repo import atomic_write
from agitmem.repo import read_regular

if TYPE_CHECKING:
    from agitmem.agents.clients import Native


SCOPES = ('local', 'project', 'user')
# bytes of a settings file read (a user's ~/.claude.json grows with its history)
MAX_BYTES = 64 * 1024 * 1024
# local for every agent: a file in the project that git ignores, so hooks
# that need agitmem never reach a teammate's checkout without their choice
DEFAULT_SCOPE = 'local'
# Claude Code keeps settings.local.json out of git itself; Codex and Gemini
# CLI have no such file, so their local scope is the project file, kept out
# of git by .git/info/exclude (agitmem adds it)
_FILES: dict[str, dict[str, tuple[str, str]]] = {
    'claude': {
        'local': ('.claude', 'settings.local.json'),
        'project': ('.claude', 'settings.json'),
        'user': ('.claude', 'settings.json'),
    },
    'codex': {
        'local': ('.codex', 'hooks.json'),
        'project': ('.codex', 'hooks.json'),
        'user': ('.codex', 'hooks.json'),
    },
    'gemini': {
        'local': ('.gemini', 'settings.json'),
        'project': ('.gemini', 'settings.json'),
        'user': ('.gemini', 'settings.json'),
    },
}


def check_scope(scope: str) -> None:
    if scope not in SCOPES:
        raise AgitmemError(
            f'unknown scope "{scope}": expected one of {", ".join(SCOPES)}',
        )


def relative(agent: str, scope: str) -> str:
    """The settings file of `agent` at `scope`, as a user names it."""
    check_scope(scope)
    clients.native(agent)
    rel = '/'.join(_FILES[agent][scope])
    return f'~/{rel}' if scope == 'user' else rel


def settings_file(agent: str, scope: str, root: Path, home: Path | None = None) -> Path:
    """The settings file of `agent` at `scope`: under the project root, or
    under the home directory for `user`."""
    check_scope(scope)
    clients.native(agent)
    base = (home or Path.home()) if scope == 'user' else root
    return base.joinpath(*_FILES[agent][scope])


def _within(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def target(agent: str, scope: str, root: Path, home: Path | None = None) -> Path:
    """The file install and uninstall write for `agent` at `scope`: the
    settings file, or the file it leads to through symlinks (a symlinked
    file stays a symlink, its target edited) when that stays inside the
    repository's working tree (the home directory for `user`).  One that
    leaves it, or leads into the git directory, is refused."""
    path = settings_file(agent, scope, root, home)
    base = (home or Path.home()) if scope == 'user' else root
    real = os.path.realpath(path)
    inside = _within(real, os.path.realpath(base))
    if inside and scope != 'user':
        inside = not _within(real, os.path.realpath(root / '.git'))
    if not inside:
        where = 'home directory' if scope == 'user' else 'repository'
        raise AgitmemError(
            f'{relative(agent, scope)} leads to {real} through a symlink, '
            f'outside the {where}: agitmem does not write there; nothing was changed',
        )
    return Path(real)


def _ours_in(hooks: object) -> dict[str, list[str]]:
    """{event name: our commands} in a settings file's `hooks` table."""
    ret: dict[str, list[str]] = {}
    if not isinstance(hooks, dict):
        return ret
    for name, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for group in groups:
            inner = group.get('hooks') if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else ():
                if _is_ours(hook):
                    ret.setdefault(name, []).append(hook['command'])
    return ret


def read_installed(agent: str, path: Path) -> tuple[dict[str, list[str]], str | None]:
    """(agitmem's hook commands in a settings file, by the agent's event
    name; why the file, being there, cannot be read: its hooks cannot be
    known).  ({}, None) when it is missing."""
    try:
        settings, _ = _read_settings(path, comments=True)
    except AgitmemError as e:
        return {}, str(e).removesuffix('; nothing was changed')
    return _ours_in(settings.get('hooks')), None


def installed(agent: str, path: Path) -> dict[str, list[str]]:
    """agitmem's hook commands in a settings file, by the agent's event
    name ({} when there are none, or the file is missing or unreadable)."""
    return read_installed(agent, path)[0]


def entry_problems(agent: str, path: Path) -> list[str]:
    """What makes the hooks of a project's settings file run other code
    than agitmem's: an agitmem hook entry whose `env` (or working
    directory) changes what runs, or (Claude Code) the file's own `env`,
    which its hooks inherit.  [] when nothing does, or it cannot be read."""
    from agitmem.agents import launcher
    try:
        data, _ = _read_settings(path, comments=True)
    except AgitmemError:
        return []
    ret = []
    hooks = data.get('hooks')
    for name, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else ():
            inner = group.get('hooks') if isinstance(group, dict) else None
            for hook in inner if isinstance(inner, list) else ():
                why = launcher.entry_problem(hook) if _is_ours(hook) else None
                if why is not None:
                    ret.append(f'its agitmem {render_name(name)} hook {why}')
    return ret


def inherited_env(agent: str, root: Path) -> list[str]:
    """Claude Code gives every hook the `env` of each settings file it
    reads: one of the project's (.claude/settings.json, settings.local.json)
    that sets a variable changing what runs reaches agitmem's hooks at any
    scope.  What each such file sets, one line each."""
    from agitmem.agents import launcher
    if agent != 'claude':
        return []
    ret = []
    for scope in ('project', 'local'):
        try:
            data, _ = _read_settings(settings_file(agent, scope, root), comments=True)
        except AgitmemError:
            continue
        why = launcher.env_problem(data.get('env'), session=True)
        if why is not None:
            ret.append(f'{relative(agent, scope)} {why}, and every hook inherits it')
    return ret


def render_name(name: object) -> str:
    from agitmem import render
    return render.line(str(name))


def missing_events(agent: str, found: dict[str, list[str]]) -> list[str]:
    """The agent's event names agitmem installs that `found` lacks."""
    mod = clients.native(agent)
    names = [mod.EVENT_NAMES[e] for e in clients.EVENTS]
    names += getattr(mod, 'EXTRA_EVENTS', {})
    return [name for name in names if name not in found]


# `agitmem hook EVENT`, `python -m agitmem hook EVENT`, `agitmem-hook EVENT`:
# the program as a word of the command (a path to it, quoted, after
# `timeout 5` or `cd x &&`), then one of its events, or any event with
# the `--agent A` agitmem always writes after it (one no longer used is
# ours too: stale).  A user's own `logger -t agitmem-hook done` or
# `echo agitmem hook ran` stays theirs.
_OURS = re.compile(r'agitmem(?:\.exe|[@=<>~!\[][^\s"\']*)?["\']?\s+hook\s|agitmem-hook')
_PROGRAMS = ('agitmem', 'agitmem.exe')
# the package with a version or extras, a launcher's argument (`uvx
# agitmem@latest`, `pipx run agitmem==1.2`, `uvx agitmem[yaml]`): ours
# with the `--agent A` agitmem writes after its event
_PACKAGE = re.compile(clients.PACKAGE_SPEC)
_EVENT_WORDS = [[e] for e in clients.EVENTS]


def _is_ours(hook: object) -> bool:
    if not isinstance(hook, dict):
        return False
    command = hook.get('command')
    return isinstance(command, str) and bool(_OURS.search(command)) and _runs_ours(command)


def _runs_ours(command: str) -> bool:
    """The words of `command` as a POSIX shell splits them, or, with a
    backslash in it, as Windows does (`C:\\v\\agitmem.exe hook ...`
    unquoted: a POSIX shell would take the backslashes for escapes, and
    the apostrophe of `C:\\Users\\O'Brien` for a quote)."""
    return any(_runs_ours_in(argv) for argv in _words(command))


def _words(command: str) -> list[list[str]]:
    import shlex
    ret = []
    for escape in ('\\', '') if '\\' in command else ('\\',):
        lexer = shlex.shlex(command, posix=True)
        lexer.whitespace_split, lexer.commenters, lexer.escape = True, '', escape
        if not escape:
            lexer.quotes = '"'  # Windows': double quotes only
        try:
            ret.append(list(lexer))
        except ValueError:
            pass  # not a command line a shell runs as one
    return ret


# programs that run the command their words name (`timeout 5 agitmem
# hook ...`); any other first word takes `agitmem hook stop` as its text
# (echo, logger, git commit -m)
_WRAPPERS = ('timeout', 'env', 'nice', 'nohup', 'exec', 'command', 'time', 'stdbuf', 'setsid')
_SEPARATORS = ('&&', '||', ';', '|', '&')
# shells whose `-c STRING` runs STRING as a command line (`sh -c '...'`,
# `bash -lc`, `cmd /c`): agitmem's words in it are ours as they are outside
_SHELLS = ('sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'sh.exe', 'bash.exe', 'cmd', 'cmd.exe')


def _runs_ours_in(argv: list[str]) -> bool:
    """agitmem's program, then its event and `--agent A` as agitmem writes
    them (`_command`), anywhere: a launcher given by `install --command`
    (`uvx agitmem`, `pipx run agitmem`) comes before it.  Without
    `--agent` (an older or hand-written entry), only where a command
    begins, after python's `-m`, or after a wrapper."""
    names = [re.split(r'[\\/]', word)[-1] for word in argv]
    first = 0  # where the command each word is in begins
    for i, name in enumerate(names[:-1]):
        if i > 0 and (argv[i - 1] in _SEPARATORS or argv[i - 1].endswith(';')):
            first = i
        if name in _SHELLS and re.fullmatch(r'-[a-z]*c|/[cC]', argv[i + 1]) and i + 2 < len(argv):
            if _runs_ours(argv[i + 2]):
                return True
        if name == 'agitmem-hook':
            event = argv[i + 1:i + 2]
        elif (name in _PROGRAMS or _PACKAGE.fullmatch(name)) and argv[i + 1] == 'hook':
            event = argv[i + 2:i + 3]
        else:
            continue
        written = argv[i + len(event) + (1 if name == 'agitmem-hook' else 2):][:1] == ['--agent']
        if written and event:
            return True
        if _PACKAGE.fullmatch(name):
            continue  # a launcher's argument: not a program where a command begins
        if event in _EVENT_WORDS and (first == i or argv[i - 1] == '-m' or names[first] in _WRAPPERS):
            return True
    return False


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


def _json_error(path: str, text: str, e: ValueError | RecursionError) -> str:
    if isinstance(e, RecursionError):
        return f'{path}: not valid JSON: nested too deeply to read; nothing was changed'
    if not isinstance(e, json.JSONDecodeError):  # a number past int's digit limit
        return f'{path}: not valid JSON: {e}; nothing was changed'
    lines = text.splitlines()
    line = lines[e.lineno - 1] if 0 < e.lineno <= len(lines) else ''
    if len(line) > 80:
        line = f'{line[:77]}...'
    return (
        f'{path}: not valid JSON: {e.msg} at line {e.lineno} column '
        f'{e.colno}: {line.strip()!r}; nothing was changed'
    )


def _read_settings(path: Path, *, comments: bool = False) -> tuple[dict[str, object], bool]:
    """(settings, existed).  A missing or blank file reads as {}.  With
    `comments`, read as Gemini CLI reads it (JSON with comments): for what
    a client will run, never to edit."""
    try:
        contents = read_regular(path, MAX_BYTES)
    except FileNotFoundError:
        return {}, False
    except NotRegularFile as e:
        if e.kind == 'a directory':
            raise AgitmemError(f'{path}: is a directory, expected a JSON file')
        raise AgitmemError(f'{path}: not a regular file (a device or a pipe?); nothing was changed')
    except TooLarge as e:
        raise AgitmemError(f'{path}: {e}; nothing was changed')
    except OSError as e:  # a symlink loop, a permission
        raise AgitmemError(f'{path}: cannot be read ({e.strerror}); nothing was changed')
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
    except (ValueError, RecursionError) as e:  # not only JSONDecodeError: a cloned file's
        from agitmem.agents import mcp_settings
        try:
            if not (comments and '/' in text and isinstance(e, json.JSONDecodeError)):
                raise
            data = json.loads(mcp_settings.without_comments(text))
        except (ValueError, RecursionError):
            raise AgitmemError(_json_error(str(path), text, e))
    if not isinstance(data, dict):
        raise AgitmemError(
            f'{path}: expected a JSON object, found a JSON {clients.json_kind(data)}; '
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
            f'{path}: "hooks" is a JSON {clients.json_kind(hooks)}, expected an object; '
            f'nothing was changed',
        )
    return hooks


def _dump(settings: dict[str, object]) -> bytes:
    text = json.dumps(settings, indent=2, ensure_ascii=False) + '\n'
    return text.encode()


def _command(command: str, event: str, agent: str) -> str:
    """The hook's command line: `command` runs agitmem (`agitmem`,
    `python -P -m agitmem`), or is the hooks' own program, which takes
    the event first (agents/launcher.py HOOK_PROGRAM)."""
    from agitmem.agents import launcher
    if command == launcher.HOOK_PROGRAM:
        return f'{command} {event} --agent {agent}'
    return f'{command} hook {event} --agent {agent}'


def _group(mod: Native, event: str, cmd: str) -> dict[str, object]:
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


def install(
        agent: str,
        root: Path,
        *,
        command: str = 'agitmem',
        scope: str = 'project',
        home: Path | None = None,
) -> list[str]:
    """Merge agitmem's hooks into the agent's settings file at `scope`.

    Returns what changed, one human line each; [] when already installed.
    Every other key and hook is kept; an unreadable file changes nothing.
    """
    mod = clients.native(agent)
    path = target(agent, scope, root, home)
    rel = relative(agent, scope)
    settings, _ = _read_settings(path)
    hooks = _hooks_table(settings, path)
    inherited = inherited_env(agent, root)
    if inherited:
        from agitmem import render
        raise AgitmemError(
            f'{render.line(inherited[0])}: agitmem\'s hooks would run the '
            f'project\'s code; remove that env, then install; nothing was changed',
        )

    changes = []
    wanted = {}
    for event in clients.EVENTS:
        name = mod.EVENT_NAMES[event]
        cmd = _command(command, event, agent)
        wanted[name] = cmd
        groups = hooks.get(name, [])
        if not isinstance(groups, list):
            raise AgitmemError(
                f'{path}: "hooks.{name}" is a JSON {clients.json_kind(groups)}, '
                f'expected an array; nothing was changed',
            )
        new, action = _merge_event(groups, _group(mod, event, cmd))
        if action is not None:
            hooks[name] = new
            changes.append(f'{rel}: {action} {name} hook: {cmd}')
    for name, (event, matcher) in getattr(mod, 'EXTRA_EVENTS', {}).items():
        # a second native event into the same agitmem hook (Claude Code's
        # PostToolUseFailure: a failed Bash)
        cmd = _command(command, event, agent)
        wanted[name] = cmd
        want: dict[str, object] = {'matcher': matcher} if matcher else {}
        want['hooks'] = [mod.hook_entry(event, cmd)]
        groups = hooks.get(name, [])
        new, action = _merge_event(groups if isinstance(groups, list) else [], want)
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


def uninstall(
        agent: str,
        root: Path,
        *,
        scope: str = 'project',
        home: Path | None = None,
) -> list[str]:
    """Remove agitmem's hooks (and only them) from the agent's settings.

    Groups, events, `hooks` and the file itself go when removing ours
    empties them.  Returns what changed; [] when nothing of ours was there.
    """
    link = settings_file(agent, scope, root, home)
    path = target(agent, scope, root, home)
    rel = relative(agent, scope)
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
            changes.append(f'{rel}: removed agitmem {name} hook{"s" if removed > 1 else ""}'
                           f'{f" ({removed})" if removed > 1 else ""}')
    if not changes:
        return []
    if not hooks:
        del settings['hooks']
    if settings or os.path.islink(link):  # a symlink stays, and so its target
        atomic_write(path, _dump(settings))
    else:
        os.remove(path)
        changes.append(f'{rel}: removed the file, nothing else was in it')
        if not os.path.islink(link.parent):
            try:
                os.rmdir(link.parent)
            except OSError:  # not empty: other files live there
                pass
    return changes
