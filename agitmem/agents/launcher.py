"""How agent hooks call agitmem, and whether a hook command read from a
settings file reaches a working agitmem: decided by parsing the command and
reading the files it names, never by running a program a file names
(DESIGN.md section 12).  The only program run is this agitmem itself.

The PATH that counts is the one an agent client gives its hooks when it was
started outside the shell that ran `install` (another terminal, an IDE, a
desktop launcher): the user's login shell's.  It is read by running the
user's own login shell ($SHELL, from the user's environment, not from any
file of the project) with a clean environment; when that fails, it is the
current PATH without an activated virtual environment."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agitmem import platforms

LOGIN_TIMEOUT = 5  # seconds: a login shell that waits for input is not waited for
_MARK = '__agitmem_path__'
# the login shell's environment: who the user is, nothing of this shell's
_LOGIN_ENV = ('HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TMPDIR')
_PYTHON = re.compile(r'python(\d+(\.\d+)?)?$')
# the import every console script of agitmem makes (pip, pipx, uv): its
# entry point is agitmem.__main__ (which begins git reads before the rest
# imports); installs made before that name agitmem.cli
_ENTRY = re.compile(r'^from agitmem\.(?:__main__|cli) import main$', re.MULTILINE)
# the agent hooks' program (scripts/agitmem-hook): `agitmem hook` started
# without the console script's wrapper; its one line beyond _ENTRY's
HOOK_PROGRAM = 'agitmem-hook'
_HOOK_ENTRY = re.compile(r"^    sys\.argv\[1:1\] = \['hook'\]$", re.MULTILINE)
# pip's launcher for an interpreter path too long or odd for a #! line
_EXEC_SHEBANG = re.compile(r"^'''exec' (.+?) \"\$0\" \"\$@\"$", re.MULTILINE)
_SCRIPT_MAX = 4096  # console scripts are a few hundred bytes


# -- the PATH an agent client gives its hooks ---------------------------------

def start_login(environ: Mapping[str, str]) -> subprocess.Popen[str] | None:
    """Start the user's login shell printing its PATH (None when $SHELL
    cannot be run); doctor reads the answer after its other checks."""
    shell = environ.get('SHELL', '')
    if not os.path.isabs(shell) or not os.access(shell, os.X_OK):
        return None
    env = {k: environ[k] for k in _LOGIN_ENV if k in environ}
    env.update(SHELL=shell, PATH=os.defpath)  # what login(1) starts it with
    home = environ.get('HOME', '')
    try:
        # tracked: doctor ended by a signal while the shell runs stops its
        # group (no signal to doctor reaches it: it ran on)
        return platforms.start(lambda: subprocess.Popen(
            [shell, '-l', '-c', f'printf "%s%s" {_MARK} "$PATH"'],
            env=env, cwd=home if os.path.isdir(home) else '/',
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, errors='replace',
            # a group of its own: what the profile starts is stopped with it
            **platforms.group_kwargs(),
        ))
    except OSError:
        return None


def _login_path(proc: subprocess.Popen[str] | None) -> str | None:
    if proc is None:
        return None
    try:
        out, _ = proc.communicate(timeout=LOGIN_TIMEOUT)
    except subprocess.TimeoutExpired:
        # the whole group: a child the profile started (`sleep`, an agent
        # daemon) holds the pipe open, and communicate would wait for it
        platforms.stop(proc)
        return None
    # what a profile prints before it is not the PATH
    _, mark, path = out.rpartition(_MARK)
    return path.strip() if mark and path.strip() else None


def _without_venv(environ: Mapping[str, str]) -> str:
    """The current PATH without the activated virtual environment (and
    this interpreter's, when it is one), then the system default."""
    gone = {os.path.join(environ['VIRTUAL_ENV'], 'bin')} if environ.get('VIRTUAL_ENV') else set()
    if sys.prefix != sys.base_prefix:
        gone.add(os.path.dirname(sys.executable))
    gone = {os.path.normpath(d) for d in gone}
    kept = [
        d for d in environ.get('PATH', '').split(os.pathsep)
        if d and os.path.normpath(d) not in gone
    ]
    return os.pathsep.join([*kept, os.defpath])


def client_path(
        environ: Mapping[str, str],
        login: subprocess.Popen[str] | None = None,
) -> list[str]:
    """The directories a client searches for a hook's program (`login`: a
    login shell start_login started already).  Relative entries are
    dropped: they would name a directory of the project the hook runs in."""
    if login is None:
        login = start_login(environ)
    path = _login_path(login) or _without_venv(environ)
    ret: list[str] = []
    for d in path.split(os.pathsep):
        if os.path.isabs(d) and d not in ret:
            ret.append(d)
    return ret


# -- what the hooks call ---------------------------------------------------------

def this_python() -> str:
    return sys.executable


def _same_env(python: str) -> bool:
    """Whether `python` is this interpreter's environment (a venv's python,
    python3 and python3.X are one), compared by directory: a venv's
    interpreter is a symlink to the base one, which lacks agitmem."""
    here = this_python()
    return (
        bool(_PYTHON.match(os.path.basename(python))) and
        os.path.realpath(os.path.dirname(python)) == os.path.realpath(os.path.dirname(here))
    )


def interpreter_command(python: str | None = None) -> list[str]:
    """`python -P -m agitmem`: -P keeps the directory the hook runs in (the
    project, which may hold an `agitmem/` of its own) off sys.path."""
    return [python or this_python(), '-P', '-m', 'agitmem']


def script_python(path: str, *, hook: bool = False) -> str | None:
    """The interpreter of an agitmem console script (`hook`: of the hooks'
    program, scripts/agitmem-hook), read from the file (None when it is
    not one).  Only a regular file is opened: a FIFO named by a hostile
    settings file would block the read."""
    if not os.path.isfile(path):
        return None
    try:
        with open(path, 'rb') as f:
            text = f.read(_SCRIPT_MAX).decode('utf-8', 'replace')
    except OSError:
        return None
    first, _, rest = text.partition('\n')
    if not first.startswith('#!') or not _ENTRY.search(rest):
        return None
    if hook != bool(_HOOK_ENTRY.search(rest)):
        return None
    exec_line = _EXEC_SHEBANG.search(rest)
    if first.strip() == '#!/bin/sh' and exec_line:
        argv = _split(exec_line[1])
    else:
        argv = _split(first[2:])
    python = argv[0] if argv else ''
    return python if os.path.isabs(python) and _PYTHON.match(os.path.basename(python)) else None


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return []


def which(name: str, path: list[str]) -> str | None:
    return shutil.which(name, path=os.pathsep.join(path)) if path else None


def hook_program(path: list[str]) -> str | None:
    """`agitmem-hook` when the one a client finds on `path` is this
    agitmem's (pip installs it beside the console script), else None: the
    hooks then call `agitmem hook`.  Not on Windows, where pip installs it
    without the .exe launcher a client needs to run it."""
    if platforms.WINDOWS:
        return None
    found = which(HOOK_PROGRAM, path)
    python = script_python(found, hook=True) if found is not None else None
    ok = python is not None and _same_env(python) and _shebang_runs(python)
    return HOOK_PROGRAM if ok else None


# pip writes a script's `#!python` as the interpreter's path, as it is:
# over 127 bytes (what older kernels read of the line), or with a space,
# the kernel cannot run it (pip's console scripts go through /bin/sh then)
_SHEBANG_MAX = 127


def _shebang_runs(python: str) -> bool:
    return ' ' not in python and len(f'#!{python}'.encode('utf-8', 'surrogateescape')) <= _SHEBANG_MAX


def names_hook_program(command: str) -> bool:
    """Whether a command line runs the hooks' program."""
    argv = _split(command)
    return bool(argv) and os.path.basename(argv[0]) == HOOK_PROGRAM


def hook_command(path: list[str]) -> tuple[str, str | None]:
    """(how hooks call agitmem, why it is not plain `agitmem` or None).
    Plain `agitmem` when the one a client finds on `path` is this one, else
    this interpreter by its absolute path, so the hooks work when the shell
    that ran `install` and its activated environment are gone."""
    found = which('agitmem', path)
    if found is not None:
        python = script_python(found)
        if python is not None and _same_env(python):
            return 'agitmem', None
        why = f'`agitmem` on the PATH an agent client gets (your login shell\'s) is {found}, another install'
    else:
        why = '`agitmem` is not on the PATH an agent client gets (your login shell\'s)'
    return shlex.join(interpreter_command()), why


# -- is a hook command agitmem? ---------------------------------------------------

def launcher(argv: list[str]) -> list[str] | None:
    """The part of a hook's argv before `hook EVENT ...` (None without
    one); `agitmem-hook EVENT ...`'s is its program."""
    if len(argv) > 1 and os.path.basename(argv[0]) == HOOK_PROGRAM:
        return argv[:1]
    for i in range(len(argv) - 1, 0, -1):
        if argv[i] == 'hook':
            return argv[:i]
    return None


def _resolve(program: str, path: list[str]) -> tuple[str | None, str | None]:
    """(the file a client runs for `program`, what is wrong)."""
    if os.sep not in program:
        found = which(program, path)
        if found is None:
            return None, f'`{program}` is not on the PATH an agent client gets (your login shell\'s)'
        return found, None
    if not os.path.isabs(program):
        return None, (
            f'`{program}` is a relative path: it names a file of whatever '
            f'directory the client runs the hook in (a cloned project\'s)'
        )
    if not (os.path.isfile(program) and os.access(program, os.X_OK)):
        return None, f'`{program}` is not found (or not executable)'
    return program, None


def _python_has_agitmem(python: str) -> str | None:
    """What is wrong with `python` as agitmem's interpreter, read from
    disk: it exists, and a virtual environment has agitmem installed."""
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        return f'its interpreter {python} is gone'
    prefix = Path(python).parent.parent
    if (prefix / 'pyvenv.cfg').is_file():
        lib = prefix / ('Lib' if os.name == 'nt' else 'lib')
        if not any(lib.glob('python*/site-packages/agitmem-*.dist-info')):
            return f'agitmem is not installed in {prefix}'
    return None


def check(command: str, path: list[str], root: Path | None = None) -> tuple[str | None, str | None]:
    """(what is wrong with hook `command`, the interpreter it runs when it
    is this agitmem).  Parsed, resolved on `path`, its files read: nothing
    the command names is run."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return 'cannot be parsed', None
    # a command that is not exactly its words as shlex quotes them has
    # shell syntax: `;`, `&&`, `$(...)`, redirections, globs, double quotes
    if shlex.join(argv) != command:
        return (
            'is not a plain command line (it has shell syntax: more than one '
            'program, expansions, redirections or quoting agitmem does not write)'
        ), None
    head = launcher(argv)
    if not head:
        return 'does not run `... hook EVENT`', None
    return check_head(head, path, root)


# -- what an entry's environment may set ---------------------------------------
#
# An `env` in a hook or MCP entry of a cloned file can make the client run
# the project's code: PYTHONPATH=. beats -P, PATH finds a `python3` of the
# repository, LD_PRELOAD loads a library, NODE_OPTIONS --require, BASH_ENV
# a script, GIT_* an ssh command, OPENSSL_CONF an engine, HOME another
# ~/.agent/config.yaml.  Which variables can do that cannot be listed
# once for all programs, so the few that cannot are: any other is untrusted.
_HARMLESS_ENV = re.compile(
    r'^(?:LANG|LANGUAGE|LC_[A-Z_]+|TZ|TERM|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|'
    r'PYTHONUNBUFFERED|PYTHONIOENCODING|PYTHONUTF8|PYTHONDONTWRITEBYTECODE)$',
)


# What a settings file's session-wide `env` (every tool and hook inherits
# it, not only agitmem's) must not set: whatever chooses a program, a
# module, a library, a config or a home that python, git, a shell or
# agitmem reads (names by class: *PATH, *_HOME, *_OPTIONS, *_CONFIG,
# *_DIR, *RC ...; Windows' names fold case).  agitmem's own entries need
# no env at all: there only _HARMLESS_ENV passes.
_CHANGES_WHAT_RUNS = re.compile(
    r'^(?:PYTHON(?!UNBUFFERED$|IOENCODING$|UTF8$|DONTWRITEBYTECODE$)\w*|LD_\w+|DYLD_\w+|GIT_\w+|'
    r'AGITMEM_\w+|NODE_\w+|NPM_CONFIG_\w+|PERL\w*|RUBY\w*|GEM_\w+|BUNDLE_\w+|\w*JAVA\w*_OPTIONS|'
    r'HOME|USERPROFILE|APPDATA|LOCALAPPDATA|XDG_\w+|SHELL|COMSPEC|BASH_ENV|ENV|ZDOTDIR|IFS|PS4|'
    r'PROMPT_COMMAND|OPENSSL_\w+|SSL_\w+|GCONV_PATH|TMPDIR|TEMP|TMP|PRE_COMMIT_\w+|VIRTUAL_ENV|'
    r'CONDA_\w+|UV_\w+|PIP_\w+|PIPX_\w+|EDITOR|VISUAL|PAGER|BROWSER)$'
    r'|^\w*(?:PATH|_HOME|_OPTIONS|OPTS|_PRELOAD|_CONFIG|_CONF|_DIR|RC|_FLAGS)$',
    re.I,
)


def env_problem(env: object, *, session: bool = False) -> str | None:
    """What is wrong with an `env` (None when it is absent or sets
    nothing that changes what runs): an entry's may set only harmless
    variables; a session-wide one (`session`) nothing _CHANGES_WHAT_RUNS
    names."""
    if env is None:
        return None
    if not isinstance(env, dict):
        return 'has an `env` agitmem cannot read'
    if session:
        bad = sorted(str(k) for k in env if not isinstance(k, str) or _CHANGES_WHAT_RUNS.match(k))
    else:
        bad = sorted(str(k) for k in env if not (isinstance(k, str) and _HARMLESS_ENV.match(k)))
    if not bad:
        return None
    more = f' (and {len(bad) - 3} more)' if len(bad) > 3 else ''
    return (
        f'sets {", ".join(bad[:3])}{more} in its env, which can change what '
        f'program or module runs (a cloned file\'s code)'
    )


_ENV_FILE_KEYS = ('envfile', 'envfiles', 'envpath', 'dotenv')


def entry_problem(entry: object) -> str | None:
    """What makes a hook or MCP entry of a project's file untrusted beyond
    its command line: an `env` that changes what runs, a working directory
    it picks (`cwd`)."""
    if not isinstance(entry, dict):
        return None
    for key in ('env', 'environment'):
        why = env_problem(entry.get(key))
        if why is not None:
            return why
    for key in ('cwd', 'workingDirectory', 'working_directory'):
        if key in entry:
            return f'sets a working directory (`{key}`), which agitmem never writes'
    for key in entry:
        # envFile (VS Code's and Cursor's form of it), env_file, ...: the
        # file's variables are an `env` agitmem cannot see from here
        if isinstance(key, str) and re.sub(r'[-_]', '', key).lower() in _ENV_FILE_KEYS:
            return 'reads its env from a file, which can change what program or module runs (a cloned file\'s code)'
    return None


def inside(path: str, root: Path | None) -> bool:
    """Whether `path` (resolved) is a file of the repository at `root`."""
    if root is None:
        return False
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def check_mcp(argv: list[str], path: list[str], root: Path | None = None) -> tuple[str | None, str | None]:
    """`check` for an MCP server entry's command line (`... mcp`)."""
    if argv[-1:] != ['mcp'] or len(argv) < 2:
        return 'does not run `... mcp`', None
    return check_head(argv[:-1], path, root, mcp=True)


def check_head(
        head: list[str], path: list[str], root: Path | None = None, *, mcp: bool = False,
) -> tuple[str | None, str | None]:
    """(what is wrong with the launcher part of a command line, the
    interpreter it runs when it is this agitmem).  `mcp`: an MCP entry's,
    which the hooks' program does not run."""
    program, flags = head[0], head[1:]
    name = os.path.basename(program)
    if flags and flags not in (['-m', 'agitmem'], ['-P', '-m', 'agitmem']):
        return f'runs `{shlex.join(head)}`, not agitmem', None
    if flags and not _PYTHON.match(name):
        return f'runs `{program}`, which is not a Python interpreter', None
    hook = name == HOOK_PROGRAM and not mcp
    if not flags and not hook and name not in ('agitmem', 'agitmem.exe'):
        return f'runs `{program}`, not agitmem', None
    found, why = _resolve(program, path)
    if found is None:
        return why, None
    if inside(found, root):
        # a console script is Python a clone can append to; an interpreter
        # of the repository is the repository's program
        return f'runs {found}, a file of the repository (a clone\'s), not an installed agitmem', None
    if flags:
        if flags[0] != '-P':
            return (
                f'runs `{program} -m agitmem` without -P: an `agitmem` directory '
                f'in the project would be imported instead'
            ), None
        python = found
    else:
        script = script_python(found, hook=hook)
        if script is None:
            what = 'the agitmem hooks\' program' if hook else 'an agitmem console script'
            return f'runs {found}, which is not {what}', None
        if hook and not _shebang_runs(script):
            return (
                f'runs {found}, whose first line the kernel cannot run (its interpreter\'s path '
                f'has a space, or the line is over {_SHEBANG_MAX} bytes)'
            ), None
        python = script
    wrong = _python_has_agitmem(python)
    if wrong is not None:
        return f'runs {found}, but {wrong}', None
    return None, python if _same_env(python) else None


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'PYTHONHOME', 'PYTHONSTARTUP')}


def start_here() -> subprocess.Popen[str] | None:
    """Start this agitmem as the hooks call it (its interpreter with -P,
    away from any project directory) asking its version: the one program
    doctor runs."""
    env = _clean_env()
    try:
        return subprocess.Popen(
            [*interpreter_command(), '--version'], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
            errors='replace', env=env, cwd=os.path.dirname(this_python()) or '/',
        )
    except OSError:
        return None


def runs_here(proc: subprocess.Popen[str] | None, timeout: float = 30) -> str | None:
    """None when start_here's agitmem answered with its version; else what
    is wrong."""
    if proc is None:
        return 'does not run (its interpreter cannot be started)'
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return f'does not answer within {timeout:.0f}s'
    if proc.returncode != 0 or 'agitmem' not in out:
        return f'does not run agitmem (exit {proc.returncode})'
    return None


_HANDSHAKE = ''.join(json.dumps(m) + '\n' for m in (
    {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': {
        'protocolVersion': '2025-06-18', 'capabilities': {},
        'clientInfo': {'name': 'agitmem-doctor', 'version': '1'},
    }},
    {'jsonrpc': '2.0', 'method': 'notifications/initialized'},
    {'jsonrpc': '2.0', 'id': 2, 'method': 'tools/list'},
))


def mcp_tools_here(timeout: float = 30) -> tuple[list[str] | None, str | None]:
    """(the tools this agitmem's MCP server lists, what is wrong): it is
    started as an entry of ours starts it (its interpreter with -P, away
    from any project directory), asked `initialize` then `tools/list`,
    and given no more than `timeout` seconds.  Its stdin stays open until
    the answers are in: a server may end at EOF before answering."""
    import select
    import time
    try:
        proc = subprocess.Popen(
            [*interpreter_command(), 'mcp'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=_clean_env(),
            cwd=os.path.dirname(this_python()) or '/',
        )
    except OSError as e:
        return None, f'does not start ({e.strerror})'
    assert proc.stdin is not None and proc.stdout is not None
    answers: dict[int, Any] = {}
    deadline = time.monotonic() + timeout
    buf = b''
    try:
        proc.stdin.write(_HANDSHAKE.encode())
        proc.stdin.flush()
        while 2 not in answers:
            left = deadline - time.monotonic()
            if left <= 0:
                return None, f'does not answer initialize and tools/list within {timeout:.0f}s'
            ready, _, _ = select.select([proc.stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                return None, f'does not answer the MCP handshake (exit {proc.wait()})'
            buf += chunk
            *lines, buf = buf.split(b'\n')
            for line in lines:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, dict) and msg.get('id') in (1, 2):
                    answers[msg['id']] = msg
    except OSError as e:
        return None, f'does not answer the MCP handshake ({e.strerror})'
    finally:
        proc.kill()
        proc.wait()
    tools = answers[2].get('result', {}).get('tools')
    if 'result' not in answers.get(1, {}) or not isinstance(tools, list):
        return None, 'does not answer the MCP handshake with its tools'
    return [str(t.get('name')) for t in tools if isinstance(t, dict)], None
