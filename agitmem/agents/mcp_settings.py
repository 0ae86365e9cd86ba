"""agitmem's MCP server in each client's own MCP configuration, at the
hooks' scopes, and out of it again: one entry named `agitmem`, everything
else in the file kept.

- Claude Code: project `.mcp.json` `mcpServers`; local `~/.claude.json`
  `projects["<root>"].mcpServers`; user `~/.claude.json` `mcpServers`.
- Codex CLI: `[mcp_servers.agitmem]` in `.codex/config.toml` (local and
  project) or `$CODEX_HOME/config.toml` (user), edited as text so that the
  rest of the file keeps its formatting and comments.
- Gemini CLI: `mcpServers` in `.gemini/settings.json` (local and project)
  or `~/.gemini/settings.json` (user).

An entry is ours when its command line is `agitmem mcp` or `PYTHON -P -m
agitmem mcp` (launcher.py's forms); another server named agitmem is
foreign, and never replaced or removed."""
from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import NamedTuple

from agitmem.agents import clients
from agitmem.errors import AgitmemError
from agitmem.repo import NotRegularFile
from agitmem.repo import TooLarge
from agitmem.repo import atomic_write
from agitmem.repo import read_regular

NAME = 'agitmem'
SCOPES = ('local', 'project', 'user')


class Place(NamedTuple):
    """Where a client's MCP servers live at a scope."""
    path: Path  # the file
    base: Path  # what it must stay inside
    shown: str  # as a user names it
    keys: tuple[str, ...]  # JSON: the object holding `mcpServers`


def place(
        agent: str,
        scope: str,
        root: Path,
        home: Path | None = None,
        environ: Mapping[str, str] | None = None,
) -> Place:
    if scope not in SCOPES:
        raise AgitmemError(f'unknown scope "{scope}": expected one of {", ".join(SCOPES)}')
    clients.native(agent)
    home = home or Path.home()
    environ = os.environ if environ is None else environ
    if agent == 'claude':
        if scope == 'project':
            return Place(root / '.mcp.json', root, '.mcp.json', ())
        keys = ('projects', str(root)) if scope == 'local' else ()
        return Place(home / '.claude.json', home, '~/.claude.json', keys)
    if agent == 'codex':
        if scope == 'user':
            configured = environ.get('CODEX_HOME')
            codex_home = Path(configured) if configured else home / '.codex'
            shown = '$CODEX_HOME/config.toml' if configured else '~/.codex/config.toml'
            return Place(codex_home / 'config.toml', codex_home if configured else home, shown, ())
        return Place(root / '.codex' / 'config.toml', root, '.codex/config.toml', ())
    if scope == 'user':
        return Place(home / '.gemini' / 'settings.json', home, '~/.gemini/settings.json', ())
    return Place(root / '.gemini' / 'settings.json', root, '.gemini/settings.json', ())


def _within(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def _target(where: Place, root: Path) -> Path:
    """The file to write: through symlinks only while they stay inside
    its base (the working tree, not its git dir; the home directory)."""
    real = os.path.realpath(where.path)
    inside = _within(real, os.path.realpath(where.base))
    if inside and where.base == root:
        inside = not _within(real, os.path.realpath(root / '.git'))
    if not inside:
        raise AgitmemError(
            f'{where.shown} leads to {real} through a symlink, outside the '
            f'{"repository" if where.base == root else "home directory"}: '
            f'agitmem does not write there; nothing was changed',
        )
    return Path(real)


# -- is it ours? -------------------------------------------------------------------

def entry(command: str) -> tuple[str, list[str]]:
    """(command, args) of our server, from how the hooks call agitmem."""
    argv = shlex.split(command)
    if not argv:
        raise AgitmemError('--command is empty')
    return argv[0], [*argv[1:], 'mcp']


def argv_of(server: object) -> list[str] | None:
    """A server entry's command line (None when it has none we can read)."""
    if not isinstance(server, dict):
        return None
    command, args = server.get('command'), server.get('args', [])
    if not isinstance(command, str) or not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        return None
    return [command, *args]


def is_ours(server: object) -> bool:
    argv = argv_of(server)
    return argv is not None and argv[-1:] == ['mcp'] and _our_head(argv[:-1])


def _our_head(head: list[str]) -> bool:
    """agitmem, python -m agitmem, or what `install --command` was given
    for it: a launcher before the package (`uvx agitmem`, `uvx
    agitmem@latest`, `pipx run agitmem==1.2`), which doctor says it cannot
    vouch for."""
    if not head:
        return False
    name = os.path.basename(head[0])
    if len(head) == 1:
        return name in ('agitmem', 'agitmem.exe')
    return head[1:] in (['-m', 'agitmem'], ['-P', '-m', 'agitmem']) or bool(
        re.fullmatch(f'agitmem|{clients.PACKAGE_SPEC}', head[-1]),
    )


# -- JSON files ------------------------------------------------------------------------

def _read(path: Path, shown: str) -> bytes | None:
    """The file's bytes (None when there is none), bounded: only a regular
    file is read (a FIFO a hostile checkout put there would block the
    read, a link to /dev/zero would never end)."""
    from agitmem.agents.settings import MAX_BYTES
    try:
        return read_regular(path, MAX_BYTES)
    except FileNotFoundError:
        return None
    except NotRegularFile:
        raise AgitmemError(f'{shown}: not a regular file; nothing was changed')
    except TooLarge as e:
        raise AgitmemError(f'{shown}: {e}; nothing was changed')
    except OSError as e:
        raise AgitmemError(f'{shown}: cannot be read ({e.strerror}); nothing was changed')


# a comment outside a string, as Gemini CLI strips them from its settings
# before parsing (a string token always matches, to its end or its line's:
# one pass, whatever the quotes)
_COMMENT = re.compile(r'("(?:[^"\\\n]|\\.)*(?:"|$))|//[^\n]*|/\*(?:.*?\*/|.*)', re.DOTALL | re.MULTILINE)


def without_comments(text: str) -> str:
    return _COMMENT.sub(lambda m: m.group(1) or ' ', text)


def _read_json(path: Path, shown: str, *, comments: bool = False) -> dict[str, Any]:
    """The file's object; with `comments`, read as the client reads it
    (JSON with comments), for what it will run, never to edit."""
    raw = _read(path, shown)
    if raw is None:
        return {}
    try:
        text = raw.decode('utf-8-sig')
        if comments and '/' in text:
            try:
                json.loads(text)
            except (ValueError, RecursionError):
                text = without_comments(text)
        data = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError, JSONDecodeError, an int past the digit limit
        raise AgitmemError(f'{shown}: not valid JSON ({type(e).__name__}); nothing was changed')
    if not isinstance(data, dict):
        raise AgitmemError(f'{shown}: expected a JSON object, found a JSON {clients.json_kind(data)}; nothing was changed')
    return data


def _servers_json(data: dict[str, Any], where: Place, create: bool) -> dict[str, Any] | None:
    """The `mcpServers` object at where.keys (made when `create`)."""
    obj: Any = data
    for key in (*where.keys, 'mcpServers'):
        nxt = obj.get(key)
        if nxt is None:
            if not create:
                return None
            nxt = obj[key] = {}
        if not isinstance(nxt, dict):
            raise AgitmemError(
                f'{where.shown}: "{key}" is a JSON {clients.json_kind(nxt)}, expected an object; nothing was changed',
            )
        obj = nxt
    return obj  # type: ignore[no-any-return]


def _dump(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + '\n').encode()


# -- Codex's TOML, edited as text -------------------------------------------------------

_HEADER = re.compile(r'^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(?:#.*)?$')
_OUR_TABLE = re.compile(r'^mcp_servers\s*\.\s*(?:agitmem|"agitmem"|\'agitmem\')(?:\s*\..*)?$')


def _read_toml(path: Path, shown: str) -> tuple[str, dict[str, Any]]:
    raw = _read(path, shown)
    if raw is None:
        return '', {}
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as e:
        raise AgitmemError(f'{shown}: cannot be read ({e}); nothing was changed')
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise AgitmemError(f'{shown}: not valid TOML ({e}); nothing was changed')


def _without_ours(text: str) -> str:
    """The text without the [mcp_servers.agitmem] table and its sub-tables."""
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        m = _HEADER.match(line)
        if m:
            skipping = bool(_OUR_TABLE.match(m[1]))
        if not skipping:
            out.append(line)
    return ''.join(out)


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)  # a JSON string is a TOML basic string


def _toml_table(command: str, args: list[str]) -> str:
    return (
        f'[mcp_servers.{NAME}]\n'
        f'command = {_toml_str(command)}\n'
        f'args = [{", ".join(_toml_str(a) for a in args)}]\n'
    )


def _toml_servers(data: dict[str, Any], shown: str) -> dict[str, Any]:
    servers = data.get('mcp_servers', {})
    if not isinstance(servers, dict):
        raise AgitmemError(f'{shown}: "mcp_servers" is not a table; nothing was changed')
    return servers


# -- install, uninstall, read -----------------------------------------------------------

def installed(
        agent: str, scope: str, root: Path, home: Path | None = None,
        environ: Mapping[str, str] | None = None,
) -> object | None:
    """The server entry named agitmem at the scope (None when there is
    none, or the file cannot be read)."""
    where = place(agent, scope, root, home, environ)
    try:
        if where.path.suffix == '.toml':
            _, data = _read_toml(where.path, where.shown)
            return _toml_servers(data, where.shown).get(NAME)
        # read as the client reads it: a project's file with comments is
        # still run by Gemini CLI, and doctor must see its entry
        servers = _servers_json(_read_json(where.path, where.shown, comments=True), where, create=False)
    except AgitmemError:
        return None
    return None if servers is None else servers.get(NAME)


def install(
        agent: str, scope: str, root: Path, command: str, *,
        home: Path | None = None, environ: Mapping[str, str] | None = None,
        write: bool = True,
) -> list[str]:
    """Register agitmem's server; what changed ([] when it was there).
    `write=False` refuses what it would refuse and writes nothing (so the
    hooks are not written when the server entry will be refused)."""
    where = place(agent, scope, root, home, environ)
    path = _target(where, root)
    cmd, args = entry(command)
    want = {'command': cmd, 'args': args}
    said = f'{where.shown}: MCP server {NAME}: {shlex.join([cmd, *args])}'
    if path.suffix == '.toml':
        text, data = _read_toml(path, where.shown)
        current = _toml_servers(data, where.shown).get(NAME)
        if current is not None and not is_ours(current):
            raise _foreign(where)
        why = _untrusted(current, where, root)
        if isinstance(current, dict) and {k: current.get(k) for k in want} == want and set(current) <= {'command', 'args'}:
            return []
        kept = _without_ours(text)
        if kept and not kept.endswith('\n'):
            kept += '\n'
        new = f'{kept}{chr(10) if kept.strip() else ""}{_toml_table(cmd, args)}'
        # the edit must be exactly ours: a file that names the table
        # another way (inline, dotted keys) is not edited by guesswork
        try:
            parsed = tomllib.loads(new)
        except tomllib.TOMLDecodeError:
            parsed = {}
        rest_before = {k: v for k, v in data.items() if k != 'mcp_servers'}
        rest_after = {k: v for k, v in parsed.items() if k != 'mcp_servers'}
        others = {k: v for k, v in _toml_servers(data, where.shown).items() if k != NAME}
        if (
                parsed.get('mcp_servers', {}).get(NAME) != want or rest_after != rest_before or
                {k: v for k, v in parsed.get('mcp_servers', {}).items() if k != NAME} != others
        ):
            raise AgitmemError(
                f'{where.shown}: names mcp_servers.{NAME} in a form agitmem does not '
                f'edit (an inline table or dotted keys): make it a [mcp_servers.{NAME}] '
                f'table, or remove it; nothing was changed',
            )
        if write:
            atomic_write(path, new.encode())
        return [f'{said} ({_action(current, why)})']
    data = _read_json(path, where.shown)
    servers = _servers_json(data, where, create=True)
    assert servers is not None
    current = servers.get(NAME)
    if current is not None and not is_ours(current):
        raise _foreign(where)
    why = _untrusted(current, where, root)
    # an entry of a project's file whose env or cwd changes what runs is
    # replaced whole: kept, it would run the project's code as agitmem
    new_entry: dict[str, Any] = dict(current) if isinstance(current, dict) and why is None else {}
    if agent == 'claude':
        new_entry['type'] = 'stdio'
    new_entry.update(want)
    if new_entry == current:
        return []
    servers[NAME] = new_entry
    if write:
        atomic_write(path, _dump(data))
    return [f'{said} ({_action(current, why)})']


def _untrusted(current: object, where: Place, root: Path) -> str | None:
    """Why an entry of ours in a project's file is not kept as it is (None
    when it may be; the user's own files are theirs to set an env in)."""
    from agitmem.agents import launcher
    if current is None or where.base != root:
        return None
    return launcher.entry_problem(current)


def _action(current: object, why: str | None) -> str:
    from agitmem import render
    if why is not None:
        return f'replaced: the entry there {render.line(why)}'
    return 'updated' if current is not None else 'added'


def _foreign(where: Place) -> AgitmemError:
    return AgitmemError(
        f'{where.shown}: an MCP server named {NAME} is there already and it '
        f'is not agitmem\'s: rename or remove it; nothing was changed',
    )


def uninstall(
        agent: str, scope: str, root: Path, *,
        home: Path | None = None, environ: Mapping[str, str] | None = None,
) -> list[str]:
    """Take our entry out (a foreign one stays); what changed."""
    where = place(agent, scope, root, home, environ)
    if not where.path.exists():
        return []
    path = _target(where, root)
    if path.suffix == '.toml':
        text, data = _read_toml(path, where.shown)
        current = _toml_servers(data, where.shown).get(NAME)
        if current is None or not is_ours(current):
            return []
        new = _without_ours(text)
        if _toml_servers(tomllib.loads(new), where.shown).get(NAME) is not None:
            raise AgitmemError(
                f'{where.shown}: mcp_servers.{NAME} is not a [mcp_servers.{NAME}] table: '
                f'remove it by hand; nothing was changed',
            )
        if not new.strip() and where.base == root and not os.path.islink(where.path):
            return _remove(path, where)
        atomic_write(path, new.rstrip('\n').encode() + (b'\n' if new.strip() else b''))
        return [f'{where.shown}: removed MCP server {NAME}']
    data = _read_json(path, where.shown)
    servers = _servers_json(data, where, create=False)
    if servers is None or not is_ours(servers.get(NAME)):
        return []
    del servers[NAME]
    if not servers and not where.keys:
        del data['mcpServers']
    if not data and where.base == root and not os.path.islink(where.path):
        return _remove(path, where)
    atomic_write(path, _dump(data))
    return [f'{where.shown}: removed MCP server {NAME}']


def _remove(path: Path, where: Place) -> list[str]:
    """A file in the repository that held only our entry goes, and its
    directory when that empties it (.codex/, .gemini/)."""
    os.remove(path)
    if path.parent != where.base and not os.path.islink(where.path.parent):
        try:
            os.rmdir(path.parent)
        except OSError:  # other files live there
            pass
    return [f'{where.shown}: removed MCP server {NAME}, and the file (nothing else was in it)']
