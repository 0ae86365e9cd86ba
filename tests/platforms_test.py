"""agitmem/platforms.py: the one module that names platform-only calls, and
agitmem's commands, hooks, locks and installs run as Windows and macOS
would run them (simulated on Linux: testing/platform_sim/)."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import agitmem_argv
from testing.util import ended
from testing.util import git
from testing.util import tip

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    """`code` in an interpreter of its own that imports this checkout's
    agitmem, stdin from /dev/null (a hang guard: 60 s)."""
    return subprocess.run(
        [sys.executable, *flags, '-c', code], capture_output=True, text=True, timeout=60,
        env={**os.environ, 'PYTHONPATH': str(ROOT)}, stdin=subprocess.DEVNULL,
    )
SIM = ROOT / 'testing' / 'platform_sim'

# what only POSIX (or only Windows) has: named nowhere but agitmem/platforms.py
_MODULES = frozenset(('fcntl', 'msvcrt', '_winapi', 'termios', 'pwd', 'grp', 'resource', 'winreg'))
_ATTRIBUTES = frozenset((
    'killpg', 'getpgid', 'setpgid', 'setsid', 'posix_spawn', 'posix_spawnp', 'fork', 'WNOHANG',
    'O_NOFOLLOW', 'O_NONBLOCK', 'O_DIRECTORY', 'O_NOCTTY', 'getuid', 'geteuid', 'getgid',
    'setitimer', 'ITIMER_REAL', 'SIGALRM', 'SIGKILL', 'SIGHUP', 'SIGPIPE', 'SIGCHLD', 'alarm',
    'POSIX_SPAWN_OPEN', 'POSIX_SPAWN_DUP2', 'POSIX_SPAWN_CLOSE', 'windll', 'CREATE_NEW_PROCESS_GROUP',
))
_KEYWORDS = frozenset(('process_group', 'start_new_session', 'preexec_fn', 'creationflags'))
_PATHS = ('/proc/', '/dev/fd')


def platform_only(source: str) -> list[str]:
    """Each platform-only name `source` uses: imported modules, attributes
    and names, Popen's keywords, and /proc paths."""
    found = []
    tree = ast.parse(source)
    docstrings = {
        id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split('.')[0] in _MODULES]
        elif isinstance(node, ast.ImportFrom):
            if (node.module or '').split('.')[0] in _MODULES:
                found.append(node.module or '')
            if not (node.module or '').endswith('platforms'):
                found += [a.name for a in node.names if a.name in _ATTRIBUTES]
        elif isinstance(node, ast.Attribute) and node.attr in _ATTRIBUTES:
            # platforms.O_NOFOLLOW is the platform module's own answer
            if not (isinstance(node.value, ast.Name) and node.value.id == 'platforms'):
                found.append(node.attr)
        elif isinstance(node, ast.keyword) and node.arg in _KEYWORDS:
            found.append(f'{node.arg}=')
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found += [p for p in _PATHS if p in node.value]
    return found


def test_no_platform_only_name_outside_the_platform_module() -> None:
    found = {}
    for path in sorted((ROOT / 'agitmem').rglob('*.py')):
        if path.name == 'platforms.py' and path.parent.name == 'agitmem':
            continue
        names = platform_only(path.read_text())
        if names:
            found[str(path.relative_to(ROOT))] = names
    assert found == {}


@pytest.mark.parametrize('source', [
    'import fcntl', 'from fcntl import flock', 'import msvcrt', 'os.killpg(1, 9)',
    'from signal import SIGKILL', 'subprocess.Popen(x, process_group=0)', "os.listdir('/proc/self/fd')",
    'flags = os.O_RDONLY | os.O_NOFOLLOW', 'signal.setitimer(signal.ITIMER_REAL, 1)',
])
def test_the_check_finds_each_kind(source: str) -> None:
    assert platform_only(source)


def test_the_check_leaves_portable_code_alone() -> None:
    assert platform_only('import os\nos.open(p, os.O_RDONLY)\nsubprocess.run(x, cwd=y)\n') == []


# -- the simulation -------------------------------------------------------------

def _env(kind: str) -> dict[str, str]:
    """The environment a command runs under as platform `kind` would run it."""
    if kind == 'linux':
        return {}
    path = os.environ.get('PYTHONPATH')
    return {
        'AGITMEM_SIMULATE': kind,
        'PYTHONPATH': str(SIM) if not path else f'{SIM}{os.pathsep}{path}',
    }


def _probe(kind: str, code: str) -> str:
    proc = subprocess.run(
        [sys.executable, '-c', code], env={**os.environ, **_env(kind)},
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


KINDS = ('linux', 'windows', 'macos')


@pytest.mark.parametrize('kind', KINDS)
def test_the_simulation_is_what_agitmem_sees(kind: str) -> None:
    got = json.loads(_probe(kind, (
        'import json, os, signal\n'
        'from agitmem import platforms\n'
        'try:\n    import fcntl\n    has = True\nexcept ImportError:\n    has = False\n'
        'print(json.dumps([platforms.KIND, has, hasattr(os, "killpg"), hasattr(signal, "setitimer"), platforms.can_spawn()]))'
    )))
    posix = kind != 'windows'
    assert got == [kind, posix, posix, posix, posix]


def _sim(kind: str, *args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return agitmem(*args, cwd=cwd, input=input, env=_env(kind))


@pytest.mark.parametrize('kind', KINDS)
def test_everyday_commands_run(memrepo: Path, kind: str) -> None:
    """init's memory, then what an agent and a user do in a day: state,
    notes, save, verify (the recorded run), load, log, rollback."""
    def ok(*args: str) -> str:
        proc = _sim(kind, *args, cwd=memrepo)
        assert proc.returncode == 0 and 'Traceback' not in proc.stderr, (args, proc.stdout, proc.stderr)
        return proc.stdout

    ok('state', 'set', 'current_goal=port it', 'current_file=src/app.py')
    ok('note', 'locks differ on Windows')
    ok('save', '-m', 'first')
    first = tip(memrepo)
    assert _sim(kind, 'verify', '--', sys.executable, '-c', 'raise SystemExit(3)', cwd=memrepo).returncode == 1
    state = json.loads((memrepo / '.agent' / 'memory' / 'state.json').read_text())
    assert state['last_verification']['exit_code'] == 3
    assert 'port it' in ok('load')
    ok('save', '-m', 'second')
    assert tip(memrepo) != first
    ok('rollback')
    assert 'rollback' in ok('log', '-n', '1')
    # the audit log went through the no-follow open of each platform
    assert 'write rollback' in (memrepo / '.agent' / 'log' / 'memory.log').read_text()


@pytest.mark.parametrize('kind', KINDS)
def test_the_audit_log_is_not_written_through_a_link(memrepo: Path, kind: str, tmp_path: Path) -> None:
    outside = tmp_path / 'outside.log'
    outside.write_text('')
    log = memrepo / '.agent' / 'log' / 'memory.log'
    log.unlink()
    log.symlink_to(outside)
    proc = _sim(kind, 'note', 'x', cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    assert outside.read_text() == ''


@pytest.mark.parametrize('kind', KINDS)
def test_two_writers_at_once_lose_nothing(memrepo: Path, kind: str) -> None:
    """The memory lock of each platform (flock; msvcrt's byte lock): two
    processes saving at once both land, one after the other."""
    errors: list[str] = []

    def note(i: int) -> None:
        for j in range(3):
            proc = _sim(kind, 'note', f'writer {i} note {j}', cwd=memrepo)
            if proc.returncode != 0:
                errors.append(proc.stderr)
            proc = _sim(kind, 'save', '-m', f'w{i}.{j}', cwd=memrepo)
            if proc.returncode != 0:
                errors.append(proc.stderr)

    threads = [threading.Thread(target=note, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [], errors[0]
    notes = git('show', 'refs/agitmem/heads/main:notes.md', cwd=memrepo)
    assert all(f'writer {i} note {j}' in notes for i in range(2) for j in range(3))


@pytest.mark.parametrize('kind', KINDS)
def test_git_hooks_record_a_commit(memrepo: Path, kind: str) -> None:
    """The git shims (`install git`) run agitmem as the platform's git
    would, and the post-commit hook records the commit."""
    proc = _sim(kind, 'install', 'git', cwd=memrepo)
    assert proc.returncode == 0, proc.stderr
    (memrepo / 'src' / 'app.py').write_text('def main():\n    return 2\n')
    # an edit of memory not yet saved: the post-commit hook saves it
    notes = memrepo / '.agent' / 'memory' / 'notes.md'
    notes.write_text(notes.read_text() + '- main returns 2 now\n')
    git('add', 'src/app.py', cwd=memrepo, env=_env(kind))
    git('commit', '-q', '-m', 'two', cwd=memrepo, env=_env(kind))
    head = git('rev-parse', 'HEAD', cwd=memrepo).strip()
    message = git('log', '-1', '--format=%B', 'refs/agitmem/heads/main', cwd=memrepo)
    assert f'Code-Head: {head}' in message


@pytest.mark.parametrize('kind', KINDS)
def test_a_hook_never_crashes_the_agent(memrepo: Path, kind: str) -> None:
    payload = json.dumps({'hook_event_name': 'SessionStart', 'source': 'compact', 'session_id': 's', 'cwd': str(memrepo)})
    proc = _sim(kind, 'hook', 'session-start', '--agent', 'claude', cwd=memrepo, input=payload)
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    assert 'AGENT MEMORY BEGIN' in proc.stdout


@pytest.mark.parametrize('kind', KINDS)
def test_a_stopped_process_tree_leaves_nothing_running(kind: str, tmp_path: Path) -> None:
    """platforms.stop: a child that started a grandchild holding the pipe
    open (a test runner's worker, a daemon) is stopped whole."""
    marker = tmp_path / 'grandchild.pid'
    grandchild = tmp_path / 'grandchild.py'
    grandchild.write_text(f'import os, time\nopen({str(marker)!r}, "w").write(str(os.getpid()))\ntime.sleep(60)\n')
    child = tmp_path / 'child.py'
    child.write_text(f'import subprocess, sys, time\nsubprocess.Popen([sys.executable, {str(grandchild)!r}])\ntime.sleep(60)\n')
    code = (
        'import os, subprocess, sys, time\n'
        'from agitmem import platforms\n'
        f'p = subprocess.Popen([sys.executable, {str(child)!r}], stdout=subprocess.PIPE, **platforms.group_kwargs())\n'
        f'while not os.path.exists({str(marker)!r}) or not open({str(marker)!r}).read():\n'
        '    time.sleep(0.05)\n'
        'platforms.stop(p)\n'
        'print(p.returncode is not None)\n'
    )
    assert _probe(kind, code) == 'True'
    pid = int(marker.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        # a zombie until its parent's parent reaps it: gone from the tree
        if Path(f'/proc/{pid}/stat').exists() and Path(f'/proc/{pid}/stat').read_text().split()[2] == 'Z':
            break
        time.sleep(0.05)
    else:
        pytest.fail('the grandchild still runs')


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
@pytest.mark.parametrize('sig', ('SIGTERM', 'SIGHUP'))
@pytest.mark.parametrize('group', (True, False))
def test_a_signal_as_a_child_begins_stops_it_too(tmp_path: Path, sig: str, group: bool) -> None:
    """A signal that comes after a child has begun and before it is tracked
    (an agent's time limit right after `verify` began its command: CI saw
    it) is held until it is: this process ends as the signal says, and the
    child is stopped with it rather than left running."""
    pidfile = tmp_path / 'pid'
    code = (
        'import os, signal, subprocess, sys\n'
        f'signal.signal(signal.{sig}, signal.SIG_DFL)\n'
        'from agitmem import platforms\n'
        'def spawn():\n'
        f'    p = subprocess.Popen(["sleep", "60"], **(platforms.group_kwargs() if {group} else {{}}))\n'
        f'    open({str(pidfile)!r}, "w").write(str(p.pid))\n'
        f'    os.kill(os.getpid(), signal.{sig})  # before start() has tracked it\n'
        '    return p\n'
        f'platforms.start(spawn, group={group})\n'
        'print("ran on")\n'
    )
    proc = _python(code)
    stopped = ended(int(pidfile.read_text()), timeout=10)
    import signal
    assert (proc.returncode, proc.stdout, stopped) == (-getattr(signal, sig), '', True), proc.stderr


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX process tree')
@pytest.mark.parametrize('source', ('proc', 'ps'))
def test_descendants_are_the_whole_tree(tmp_path: Path, source: str) -> None:
    """platforms.descendants: a child's child's child is found, by /proc
    (Linux) or by `ps` (macOS: /proc hidden here)."""
    pidfile = tmp_path / 'pids'
    code = (
        'import os, subprocess, sys, time\n'
        'from agitmem import platforms\n'
        f'if {source == "ps"}:\n'
        '    real = os.path.isfile\n'
        '    os.path.isfile = lambda p: p != "/proc/self/stat" and real(p)\n'
        f'p = subprocess.Popen(["sh", "-c", "sleep 60 & sh -c \'sleep 60 & echo $! >> {pidfile}; wait\' & echo $! >> {pidfile}; wait"])\n'
        f'while len(open({str(pidfile)!r}).read().split()) < 2 if os.path.exists({str(pidfile)!r}) else True:\n'
        '    time.sleep(0.05)\n'
        'found = platforms.descendants(p.pid)\n'
        f'wanted = [int(x) for x in open({str(pidfile)!r}).read().split()]\n'
        'print(all(w in found for w in wanted), len(found) == 3, os.getpid() not in found)\n'
        'for pid in (p.pid, *found):\n'
        '    os.kill(pid, 9)\n'
    )
    proc = _python(code)
    assert proc.stdout.split() == ['True', 'True', 'True'], proc.stderr


@pytest.mark.parametrize('kind', KINDS)
def test_the_probe_runs_agitmem_the_way_hooks_do(memrepo: Path, kind: str) -> None:
    """`python -P -m agitmem`, what installed hooks run when agitmem is
    not on the client's PATH."""
    proc = subprocess.run(
        [sys.executable, '-P', '-m', 'agitmem', 'state', 'show'], cwd=memrepo,
        env={**os.environ, **_env(kind)}, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert agitmem_argv()  # the console script exists beside it


@pytest.mark.parametrize(('kind', 'named', 'unchecked'), [
    ('linux', 'Linux', 0), ('windows', 'Windows', 2), ('macos', 'macOS', 0),
])
def test_doctor_names_the_platform_and_what_it_cannot_check(
        memrepo: Path, kind: str, named: str, unchecked: int,
) -> None:
    proc = _sim(kind, 'doctor', '--json', cwd=memrepo)
    assert 'Traceback' not in proc.stderr, proc.stderr
    findings = [f for f in json.loads(proc.stdout)['findings'] if f['check'] == 'platform']
    assert findings[0]['level'] == 'ok' and named in findings[0]['message']
    gaps = [f for f in findings[1:] if f['message'].startswith('not checked on this platform')]
    assert len(gaps) == unchecked and all(f['level'] == 'warning' for f in gaps)


@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('agent', ['claude', 'codex', 'gemini'])
def test_agent_installs_run(memrepo: Path, kind: str, agent: str) -> None:
    """install and uninstall of each agent's hooks and MCP entry, as the
    platform runs them (the settings writes, the no-follow checks, the
    login shell's PATH asked with a time bound and stopped whole)."""
    proc = _sim(kind, 'install', agent, '--scope', 'project', '--mcp', cwd=memrepo)
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    settings = {
        'claude': memrepo / '.claude' / 'settings.json',
        'codex': memrepo / '.codex' / 'hooks.json',
        'gemini': memrepo / '.gemini' / 'settings.json',
    }[agent]
    assert 'agitmem' in settings.read_text()
    proc = _sim(kind, 'uninstall', agent, '--scope', 'project', cwd=memrepo)
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr


@pytest.mark.parametrize('kind', KINDS)
def test_the_hooks_program_is_written_where_it_runs(memrepo: Path, kind: str) -> None:
    """`agitmem-hook` (pip's script without an .exe launcher) is what the
    hooks call where the login shell finds it, except on Windows, where a
    client could not run it: there `agitmem hook`, as before."""
    (Path(os.environ['HOME']) / '.profile').write_text(f'PATH="{os.path.dirname(agitmem_argv()[0])}:$PATH"\nexport PATH\n')
    proc = agitmem('install', 'claude', '--scope', 'project', cwd=memrepo, env={**_env(kind), 'SHELL': '/bin/sh'})
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    text = (memrepo / '.claude' / 'settings.json').read_text()
    if kind == 'windows':
        assert '"agitmem hook session-start --agent claude"' in text and 'agitmem-hook' not in text
    else:
        assert '"agitmem-hook session-start --agent claude"' in text


@pytest.mark.parametrize('kind', KINDS)
def test_the_git_shims_look_for_the_hooks_program_where_it_runs(memrepo: Path, kind: str) -> None:
    """The git shims run `agitmem-hook` beside the `agitmem` they find,
    except on Windows, where pip gives it no launcher: there `agitmem hook`."""
    proc = _sim(kind, 'install', 'git', cwd=memrepo)
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    text = (memrepo / '.git' / 'hooks' / 'pre-commit').read_text()
    assert ('"$dir/agitmem-hook"' in text) == (kind != 'windows')
    assert 'exec agitmem hook pre-commit "$@"' in text


_SUBREAPER = '''
import sys
{before}
from agitmem import platforms
platforms.adopt_orphans()
print('ctypes' in sys.modules)
import ctypes
got = ctypes.c_int()
ctypes.CDLL(None).prctl(37, ctypes.byref(got))  # PR_GET_CHILD_SUBREAPER
print(got.value)
'''


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='Linux: PR_SET_CHILD_SUBREAPER')
@pytest.mark.parametrize('before', [
    '',
    # the private names of ctypes' C module gone (another Python): ctypes itself
    'import _ctypes; del _ctypes.call_function',
    'import _ctypes; del _ctypes.dlsym',
])
def test_adopt_orphans_makes_this_process_their_reaper(before: str) -> None:
    """verify's adoption (by ctypes' C module, without `import ctypes`
    before the command, or by ctypes where that cannot): the process is
    made the subreaper of what its children leave."""
    out = subprocess.run(
        [sys.executable, '-c', _SUBREAPER.format(before=before)],
        capture_output=True, text=True, check=True,
    ).stdout
    assert out == ('True\n1\n' if before else 'False\n1\n')


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
def test_a_sigint_held_while_verify_began_its_command_is_passed_on(tmp_path: Path) -> None:
    """A SIGINT (a ^C at the terminal, an agent's interrupt of agitmem
    alone) that comes while verify's command is begun is held off until
    agitmem is back in its directory: the command, begun meanwhile, never
    had it, and its Command was never made (verify's KeyboardInterrupt
    handler had no process to pass it on to).  It is passed on to the
    command, not left running after agitmem has ended."""
    code = (
        'import os, signal, sys\n'
        'from agitmem import platforms\n'
        'enter = platforms._enter\n'
        'def interrupted(cwd):\n'
        '    os.kill(os.getpid(), signal.SIGINT)  # held: the spawn is under way\n'
        '    return enter(cwd)\n'
        'platforms._enter = interrupted\n'
        'try:\n'
        f'    platforms.start(lambda: platforms.Command(["sleep", "20"], {str(tmp_path)!r}), group=False)\n'
        '    print("not interrupted")\n'
        'except KeyboardInterrupt:\n'
        '    print("interrupted")\n'
        '_, status = os.waitpid(-1, 0)  # the command, its only child\n'
        'print(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT)\n'
    )
    proc = _python(code)
    assert proc.stdout.split() == ['interrupted', 'True'], proc.stdout + proc.stderr


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='Linux: PR_SET_CHILD_SUBREAPER')
@pytest.mark.parametrize('before', [
    # an audit hook that refuses ctypes (a sandbox's sitecustomize): the
    # event ctypes' C module raises, and ctypes' own
    'sys.addaudithook(lambda e, a: refuse() if e.startswith("ctypes.") else None)',
    # ctypes' C module's call changed (another Python): it raises another error
    'import _ctypes; _ctypes.call_function = lambda *a: refuse()',
])
def test_adopt_orphans_refused_is_nothing(before: str) -> None:
    """The adoption is verify's best effort: refused in any way, verify
    runs its command all the same (nothing escapes adopt_orphans)."""
    code = (
        'import sys\n'
        'def refuse():\n'
        '    raise RuntimeError("refused")\n'
        f'{before}\n'
        'from agitmem import platforms\n'
        'platforms.adopt_orphans()\n'
        'print("ran on")\n'
    )
    proc = _python(code)
    assert (proc.returncode, proc.stdout) == (0, 'ran on\n'), proc.stderr


# rt_sigprocmask's number: the syscall blocks what glibc's own call leaves
# unblocked (its internal 32 and 33), as a parent that is not glibc's can
_RT_SIGPROCMASK = {'x86_64': 14, 'aarch64': 135}


@pytest.mark.skipif(
    not sys.platform.startswith('linux') or os.uname().machine not in _RT_SIGPROCMASK,
    reason='Linux: a mask set by the raw syscall',
)
def test_verify_begins_its_command_quietly_with_every_signal_blocked(tmp_path: Path) -> None:
    """agitmem begun with every signal blocked, glibc's own two as well (a
    parent that is not glibc's): its mask, as the kernel gives it, names
    signals Python will not take.  The command is begun with that mask,
    and no warning about them (an error under -W error) reaches the user."""
    code = (
        'import ctypes, os, sys\n'
        'full = (ctypes.c_uint64 * 1)(2 ** 64 - 1)\n'
        f'ctypes.CDLL(None).syscall({_RT_SIGPROCMASK[os.uname().machine]}, 0, full, None, 8)\n'
        'from agitmem import platforms\n'
        f'p = platforms.Command(["sh", "-c", "echo ran"], {str(tmp_path)!r})\n'
        'print(p.stdout.read().decode(), end="")\n'
        'p.stdout.close()\n'
        'print(p.wait())\n'
    )
    proc = _python(code, '-W', 'default')
    assert (proc.stdout, proc.stderr) == ('ran\n0\n', '')


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
@pytest.mark.parametrize('group', [True, False])
@pytest.mark.parametrize('handler', [
    '',
    # a handler of agitmem's own that ends in Python's (trees.py's, which
    # removes its index copies first): held off and run the same way
    'from agitmem import trees; trees._guard()',
])
def test_a_sigint_while_a_process_is_begun_leaves_it_tracked(group: bool, handler: str) -> None:
    """A ^C that comes while `start` begins a process (in the middle of
    Popen: its wait for the exec) is raised once the process is tracked:
    the caller's handling stops its group (cli: stop_grouped), and one in
    this process's group is passed the SIGINT.  Before, KeyboardInterrupt
    left the child untracked, running on (doctor's login shell, in CI)."""
    code = (
        'import os, signal, subprocess\n'
        'from agitmem import platforms\n'
        f'{handler}\n'
        'def spawn():\n'
        '    p = subprocess.Popen(["sleep", "30"], **(platforms.group_kwargs() if GROUP else {}))\n'
        '    print(p.pid, flush=True)\n'
        '    os.kill(os.getpid(), signal.SIGINT)  # (as in the middle of Popen)\n'
        '    return p\n'
        'try:\n'
        '    platforms.start(spawn, group=GROUP)\n'
        '    print("not interrupted")\n'
        'except KeyboardInterrupt:\n'
        '    print("interrupted")\n'
        '    platforms.stop_grouped()\n'
        'print(len(platforms._LIVE))\n'
        'pid = platforms._LIVE[0].pid if platforms._LIVE else 0\n'
        'print(os.waitpid(pid, 0)[1] != 0 if pid else "-")\n'
    ).replace('GROUP', str(group))
    proc = _python(code)
    out = proc.stdout.split()
    try:
        assert out[1:] == ['interrupted', '1', 'True'], proc.stdout + proc.stderr
    finally:
        if out and out[0].isdigit():
            try:
                os.kill(int(out[0]), 9)  # (were it left running)
            except ProcessLookupError:
                pass


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
def test_a_sigint_as_start_gives_its_handler_back_leaves_no_held_one_behind() -> None:
    """Two ^Cs: one held while the process began, one that comes as the
    handler is put back (raised there, before what was held is read).  The
    next start, with no SIGINT at all, is not interrupted by the one held
    before."""
    code = (
        'import os, signal, subprocess\n'
        'from agitmem import platforms\n'
        'put = platforms.set_signal\n'
        'def putting(sig, handler):\n'
        '    put(sig, handler)\n'
        '    if sig == signal.SIGINT and handler is not platforms._record_interrupt:\n'
        '        os.kill(os.getpid(), signal.SIGINT)  # (as the handler is put back)\n'
        'def spawn():\n'
        '    os.kill(os.getpid(), signal.SIGINT)  # held\n'
        '    return subprocess.Popen(["true"])\n'
        'platforms.set_signal = putting\n'
        'try:\n'
        '    platforms.start(spawn).wait()\n'
        'except KeyboardInterrupt:\n'
        '    print("interrupted")\n'
        'platforms.set_signal = put\n'
        'try:\n'
        '    platforms.start(lambda: subprocess.Popen(["true"])).wait()\n'
        '    print("begun")\n'
        'except KeyboardInterrupt:\n'
        '    print("interrupted again")\n'
    )
    proc = _python(code)
    assert proc.stdout.split() == ['interrupted', 'begun'], proc.stdout + proc.stderr


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
def test_a_sigint_while_a_held_sigterm_is_acted_on_does_not_stop_it() -> None:
    """A SIGTERM held while the process began ends this process once it is
    tracked (its group stopped first); a ^C that comes meanwhile does not
    cut that short with KeyboardInterrupt (the group left running, the
    exit 130 rather than SIGTERM's)."""
    code = (
        'import os, signal, subprocess\n'
        'from agitmem import platforms\n'
        'stop = platforms.stop_grouped\n'
        'def stopping():\n'
        '    os.kill(os.getpid(), signal.SIGINT)  # (as the group is stopped)\n'
        '    stop()\n'
        'platforms.stop_grouped = stopping\n'
        'def spawn():\n'
        '    p = subprocess.Popen(["sleep", "30"], **platforms.group_kwargs())\n'
        '    print(p.pid, flush=True)\n'
        '    os.kill(os.getpid(), signal.SIGTERM)  # held\n'
        '    return p\n'
        'try:\n'
        '    platforms.start(spawn)\n'
        'except KeyboardInterrupt:\n'
        '    print("interrupted")\n'
    )
    proc = _python(code)
    out = proc.stdout.split()
    try:
        assert (proc.returncode, out[1:]) == (-15, []), proc.stdout + proc.stderr
        assert ended(int(out[0]))
    finally:
        if out and out[0].isdigit():
            try:
                os.kill(int(out[0]), 9)  # (were it left running)
            except ProcessLookupError:
                pass


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
def test_a_held_sigint_handler_is_given_the_frame_it_came_in() -> None:
    """A user's SIGINT handler held off while a process began is run once,
    given a frame, as Python gives one (not None: a handler that reads
    `frame.f_code` failed with AttributeError instead)."""
    code = (
        'import os, signal, subprocess\n'
        'from agitmem import platforms\n'
        'seen = []\n'
        'signal.signal(signal.SIGINT, lambda sig, frame: seen.append(frame.f_code.co_name))\n'
        'def spawn():\n'
        '    os.kill(os.getpid(), signal.SIGINT)  # held\n'
        '    return subprocess.Popen(["true"])\n'
        'platforms.start(spawn).wait()\n'
        'print(len(seen), seen[0])\n'
    )
    proc = _python(code)
    assert proc.stdout.split() == ['1', 'spawn'], proc.stdout + proc.stderr


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
def test_a_sigint_as_start_gives_its_handler_back_is_passed_on(tmp_path: Path) -> None:
    """A SIGINT sent to agitmem alone (an agent's interrupt) just as start
    puts SIGINT's handler back, once verify's command is begun: raised
    there, before start returns the command, so verify has none to pass
    it on to (and cli's stop_grouped leaves one in this process's group
    alone).  It is passed on by start, not left running."""
    code = (
        'import os, signal, sys\n'
        'from agitmem import platforms\n'
        'put = platforms.set_signal\n'
        'def putting(sig, handler):\n'
        '    put(sig, handler)\n'
        '    if sig == signal.SIGINT and handler is not platforms._record_interrupt:\n'
        '        os.kill(os.getpid(), signal.SIGINT)  # (as the handler is put back)\n'
        'platforms.set_signal = putting\n'
        'try:\n'
        f'    platforms.start(lambda: platforms.Command(["sleep", "20"], {str(tmp_path)!r}), group=False)\n'
        '    print("not interrupted")\n'
        'except KeyboardInterrupt:\n'
        '    print("interrupted")\n'
        '    platforms.stop_grouped()  # (as cli does)\n'
        'platforms.set_signal = put\n'
        '_, status = os.waitpid(-1, 0)  # the command, its only child\n'
        'print(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT)\n'
    )
    proc = _python(code)
    assert proc.stdout.split() == ['interrupted', 'True'], proc.stdout + proc.stderr
