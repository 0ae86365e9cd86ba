from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.util import agitmem_argv
from testing.util import bad
from testing.util import ended
from testing.util import git
from testing.util import mem
from testing.util import message
from testing.util import ok
from testing.util import pid_from
from testing.util import tip


def _state(repo: Path) -> dict[str, object]:
    return json.loads(mem(repo, 'state.json').read_text())  # type: ignore[no-any-return]


def test_state_set_bumps_step_and_stamps(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=move loadConfig', 'current_file=src/app.py', cwd=memrepo)
    state = _state(memrepo)
    assert state['current_goal'] == 'move loadConfig'
    assert state['current_file'] == 'src/app.py'
    assert state['step'] == 1
    assert isinstance(state['updated_at'], str) and state['updated_at'].endswith('Z')
    # the tree of the working tree, .agent/ excluded: here, HEAD's tree
    assert state['tree'] == git('rev-parse', 'HEAD^{tree}', cwd=memrepo).strip()
    ok('state', 'set', 'next_intent=delete the original', cwd=memrepo)
    assert _state(memrepo)['step'] == 2
    assert message(memrepo).startswith('state: next_intent\n')


def test_state_tree_follows_worktree_edits(memrepo: Path) -> None:
    (memrepo / 'src' / 'app.py').write_text('edited\n')
    ok('state', 'set', 'last_action=edited app', cwd=memrepo)
    assert _state(memrepo)['tree'] != git('rev-parse', 'HEAD^{tree}', cwd=memrepo).strip()


def test_state_set_json_and_nested(memrepo: Path) -> None:
    ok('state', 'set', 'custom:={"a": [1, 2]}', 'last_verification.result=passed', cwd=memrepo)
    state = _state(memrepo)
    assert state['custom'] == {'a': [1, 2]}
    assert state['last_verification'] == {'result': 'passed'}


def test_state_keeps_unknown_keys(memrepo: Path) -> None:
    data = _state(memrepo)
    data['my_key'] = {'kept': True}
    mem(memrepo, 'state.json').write_text(json.dumps(data))
    ok('state', 'set', 'current_goal=x', cwd=memrepo)
    assert _state(memrepo)['my_key'] == {'kept': True}


def test_state_show(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=ship', cwd=memrepo)
    assert 'current_goal: ship' in ok('state', 'show', cwd=memrepo)
    assert json.loads(ok('state', 'show', '--json', cwd=memrepo))['current_goal'] == 'ship'


def test_state_set_bad_input(memrepo: Path) -> None:
    before = tip(memrepo)
    content = mem(memrepo, 'state.json').read_bytes()
    assert 'expected KEY=VALUE' in bad('state', 'set', 'nothing', cwd=memrepo)
    assert 'managed by agitmem' in bad('state', 'set', 'step=9', cwd=memrepo)
    assert 'not valid JSON' in bad('state', 'set', 'x:={', cwd=memrepo)
    assert '"last_verification.result" must be' in bad(
        'state', 'set', 'last_verification.result=maybe', cwd=memrepo,
    )
    assert mem(memrepo, 'state.json').read_bytes() == content
    mem(memrepo, 'state.json').write_text('{not json')
    assert 'state.json:1: not valid JSON' in bad('state', 'set', 'a=b', cwd=memrepo)
    assert 'state.json:1: not valid JSON' in bad('state', 'show', cwd=memrepo)
    assert mem(memrepo, 'state.json').read_text() == '{not json'
    assert tip(memrepo) == before


def test_verify_records_specific_failure(memrepo: Path) -> None:
    script = (
        "import sys\n"
        "print('tests/config_test.py::test_load PASSED')\n"
        "print('E       ImportError: cannot import name ConfigError')\n"
        "print('FAILED tests/config_test.py::test_index - ImportError: cannot import name ConfigError')\n"
        "print('1 failed, 1 passed in 0.02s')\n"
        "sys.exit(1)\n"
    )
    (memrepo / 'fake_tests.py').write_text(script)
    proc_out = bad_out = None
    from testing.util import agitmem
    proc = agitmem('verify', '--', sys.executable, 'fake_tests.py', cwd=memrepo)
    proc_out, bad_out = proc.stdout, proc.stderr
    assert proc.returncode == 1, bad_out
    assert '1 failed, 1 passed' in proc_out  # the command's output is shown
    lv = _state(memrepo)['last_verification']
    assert isinstance(lv, dict)
    assert lv['result'] == 'failed'
    assert lv['exit_code'] == 1
    assert lv['reason'] == 'tests/config_test.py::test_index - ImportError: cannot import name ConfigError'
    assert lv['tree'] == _state(memrepo)['tree']
    assert lv['command'].endswith('fake_tests.py')
    assert message(memrepo).startswith('verify: last_verification\n')


def test_verify_passed(memrepo: Path) -> None:
    ok('verify', '--', sys.executable, '-c', 'print("5 passed in 0.1s")', cwd=memrepo)
    lv = _state(memrepo)['last_verification']
    assert isinstance(lv, dict)
    assert lv['result'] == 'passed'
    assert lv['reason'] == '5 passed in 0.1s'


@pytest.mark.parametrize('sig', ('SIGTERM', 'SIGHUP'))
def test_verify_killed_alone_stops_its_command(memrepo: Path, tmp_path: Path, sig: str) -> None:
    """An agent's tool time limit kills `agitmem verify` alone: its command,
    in the terminal's group so that ^C reaches it, gets the signal too,
    rather than running on; nothing is recorded."""
    import signal
    import subprocess
    pidfile = tmp_path / 'pid'
    before = mem(memrepo, 'state.json').read_bytes()
    proc = subprocess.Popen(
        [*agitmem_argv(), 'verify', '--', 'sh', '-c', f'echo $$ > {pidfile}; exec sleep 60'],
        cwd=memrepo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        # the signal's default action, as an agent's shell gives it (under
        # `nohup`, as CI may run, SIGHUP is ignored, and agitmem keeps that)
        preexec_fn=lambda: signal.signal(getattr(signal, sig), signal.SIG_DFL),
    )
    child = pid_from(pidfile)
    proc.send_signal(getattr(signal, sig))
    assert proc.wait(timeout=30) == -getattr(signal, sig)
    assert ended(child), 'the command ran on after verify was killed'
    assert mem(memrepo, 'state.json').read_bytes() == before


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
def test_verify_killed_alone_stops_its_commands_children(memrepo: Path, tmp_path: Path) -> None:
    """The command's own children (a test runner's workers) get the
    signal too: ended with their parent, they would run on orphaned."""
    import signal
    import subprocess
    pidfile = tmp_path / 'pid'
    proc = subprocess.Popen(
        [*agitmem_argv(), 'verify', '--', 'sh', '-c', f'sleep 60 & echo $! > {pidfile}; wait'],
        cwd=memrepo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )
    worker = pid_from(pidfile)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == -signal.SIGTERM
    assert ended(worker), "the command's child ran on after verify was killed"


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='Linux: a subreaper adopts the orphans')
@pytest.mark.parametrize('sig', ('SIGTERM', 'SIGHUP', 'SIGINT'))
def test_verify_killed_alone_stops_what_its_ended_command_left(memrepo: Path, tmp_path: Path, sig: str) -> None:
    """A child the command left (`setsid -f`, a daemon: an orphan in a
    session of its own, its parent gone) while the command runs on.
    verify killed alone signals it too: it was found by no parent link
    and ran on.  (The command runs on so that the kill comes before verify
    ends: once the command has ended, verify waits GRACE for its output.)"""
    import signal
    import subprocess
    pidfile = tmp_path / 'pid'
    before = mem(memrepo, 'state.json').read_bytes()
    proc = subprocess.Popen(
        [*agitmem_argv(), 'verify', '--', 'sh', '-c',
         f'setsid -f sh -c "echo \\$\\$ > {pidfile}; exec sleep 60"; exec sleep 30'],
        cwd=memrepo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(
            getattr(signal, sig), signal.default_int_handler if sig == 'SIGINT' else signal.SIG_DFL,
        ),
    )
    daemon = pid_from(pidfile)
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == ((130, 'agitmem: interrupted\n') if sig == 'SIGINT' else (-getattr(signal, sig), ''))
    assert ended(daemon), 'what the command left ran on after verify was killed'
    assert mem(memrepo, 'state.json').read_bytes() == before


@pytest.mark.skipif(sys.platform == 'win32', reason="POSIX sh's pids (Windows' reader: the test below)")
def test_verify_ends_when_its_command_ends_though_what_it_left_holds_the_output(memrepo: Path, tmp_path: Path) -> None:
    """The command ended, but what it left running (`srv &`, a daemon that
    keeps its stdout) holds the output open: verify records the run once
    the command has ended (it read on until that child ended: forever,
    for a server), says why it stopped reading, and leaves the child
    running, as the command meant."""
    import subprocess
    import time
    pidfile = tmp_path / 'pid'
    began = time.monotonic()
    proc = subprocess.run(
        [*agitmem_argv(), 'verify', '--', 'sh', '-c', f'sh -c "echo \\$\\$ > {pidfile}; exec sleep 20" & echo ran'],
        cwd=memrepo, capture_output=True, text=True, timeout=50,
    )
    child = pid_from(pidfile)
    try:
        assert time.monotonic() - began < 10, 'verify waited for what its command left'
        assert proc.returncode == 0, proc.stderr
        assert 'ran\n' in proc.stdout
        assert 'still open' in proc.stderr
        assert _state(memrepo)['last_verification']['result'] == 'passed'  # type: ignore[index]
        assert not ended(child, 0.5), 'what the command left running was stopped'
    finally:
        ended(child, 0)  # (killed)


@pytest.mark.parametrize('windows', [False, True])
def test_verify_reads_output_that_what_its_command_left_holds_for_a_grace_only(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, windows: bool,
) -> None:
    """Where select cannot wait on a pipe (Windows), a thread reads the
    output: the command's own output is taken, and once it has ended what
    it left holding the pipe is waited for GRACE seconds, not until it ends
    (before, verify there read until the pipe closed: a server left
    running hung it).  Run here with the Windows branch forced on."""
    import time
    from agitmem import platforms
    from agitmem.porcelain import verifying
    monkeypatch.setattr(platforms, 'WINDOWS', windows)
    pidfile = tmp_path / 'pid'
    proc = subprocess.Popen(
        ['sh', '-c', f'sh -c "echo \\$\\$ > {pidfile}; exec sleep 30" & echo ran'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    taken: list[bytes] = []
    began = time.monotonic()
    try:
        held = verifying._read(proc, taken.append)
        child = pid_from(pidfile)
        assert time.monotonic() - began < 20, 'read until what the command left ended'
        assert held
        assert b''.join(taken) == b'ran\n'
        assert proc.poll() == 0
        assert not ended(child, 0.2), 'what the command left running was stopped'
    finally:
        ended(pid_from(pidfile), 0)
        assert proc.stdout is not None
        proc.stdout.close()
    # a command whose output closes with it: all of it, not held
    proc = subprocess.Popen(
        ['sh', '-c', 'for i in 1 2 3; do echo line $i; sleep 0.2; done'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    taken.clear()
    assert not verifying._read(proc, taken.append)
    assert b''.join(taken) == b'line 1\nline 2\nline 3\n'
    assert proc.returncode == 0


_HELD_AND_WRITTEN = r"""
import os, sys, threading, time, tracemalloc
from agitmem.porcelain import verifying
verifying._selected = verifying._threaded
pidfile, go = sys.argv[1], sys.argv[2]
daemon = (
    'import os, sys, time; os.setsid(); open(sys.argv[1], "w").write(str(os.getpid())); '
    'exec("while not os.path.exists(sys.argv[2]): time.sleep(0.05)"); '
    'exec("for _ in range(1024): os.write(1, bytes(65536))")'
)
ran = verifying.run_bounded(['sh', '-c', f'{sys.executable} -c \'{daemon}\' {pidfile} {go} & echo ran'], '.', 60)
assert ran.output == b'ran\n', ran
tracemalloc.start()
open(go, 'w').close()
while any(t.name == 'agitmem verify output' for t in threading.enumerate()):
    time.sleep(0.05)
print(tracemalloc.get_traced_memory()[1] >> 20)  # (its peak, MiB)
"""


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX: a daemon by setsid')
def test_what_a_daemon_writes_after_a_bounded_run_is_not_kept(tmp_path: Path) -> None:
    """The thread's reader (Windows') left on a pipe a daemon holds reads
    on until it closes: what it reads then is no one's, and was queued
    for no one, without bound (the MCP server grew by all a server left
    running logged).  Here 64 MiB written after the run: not kept."""
    pidfile, go = tmp_path / 'pid', tmp_path / 'go'
    proc = subprocess.run(
        [sys.executable, '-c', _HELD_AND_WRITTEN, str(pidfile), str(go)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    try:
        assert proc.returncode == 0, proc.stderr
        assert int(proc.stdout) < 32, f'{proc.stdout.strip()} MiB kept of what the daemon wrote'
    finally:
        ended(pid_from(pidfile), 0)


@pytest.mark.parametrize('windows', [False, True])
def test_verify_keeps_what_its_ended_command_wrote_however_slow_its_echo(
        monkeypatch: pytest.MonkeyPatch, windows: bool,
) -> None:
    """The GRACE after the command ended is the pipe's, not the time its
    output takes to be shown: the thread's reader (Windows') reads ahead
    of the echo, so a command that ended with more to show than a GRACE
    of echoing (a console slow to scroll, a reader of agitmem's own
    output that lags) lost the rest of what it wrote, from the record
    too, and was said to have left its output held by what it left
    running.  select's reader, whose echo a GRACE long each time made it
    say so too, and the thread's (forced on)."""
    import time
    from agitmem import platforms
    from agitmem.porcelain import verifying
    monkeypatch.setattr(platforms, 'WINDOWS', windows)
    # several pipes' worth: the thread's reader is well ahead of its echo
    size = 600_000 if windows else 200_000
    proc = subprocess.Popen(
        [sys.executable, '-c', f'import sys; sys.stdout.write("x" * {size - 3} + "end")'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    taken: list[bytes] = []

    def slow(chunk: bytes) -> None:
        taken.append(chunk)
        time.sleep(verifying.GRACE * (0.4 if windows else 1.5))
    try:
        assert not verifying._read(proc, slow), 'said to be held by what the command left'
    finally:
        proc.wait()
        assert proc.stdout is not None
        if not windows:
            proc.stdout.close()
    assert b''.join(taken) == b'x' * (size - 3) + b'end'


@pytest.mark.parametrize('threaded', [False, True])
def test_a_bounded_run_ends_at_its_bound_or_a_grace_after_its_program(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, threaded: bool,
) -> None:
    """The MCP tool's run (run_bounded), with select's reader and with
    the thread's (Windows', which before waited for the pipe to close:
    the bound, for a program that left a server running): a program that
    ends leaving a child holding its output is answered a GRACE later;
    one that runs past its bound is stopped there; the output kept is
    its last OUTPUT_MAX bytes."""
    import time
    from agitmem.porcelain import verifying
    if threaded:
        monkeypatch.setattr(verifying, '_selected', verifying._threaded)
    began = time.monotonic()
    ran = verifying.run_bounded(['sh', '-c', 'sleep 60 & echo ran; exit 3'], str(tmp_path), 30)
    assert time.monotonic() - began < 10, 'waited for what the program left'
    assert ran == verifying.Ran(3, b'ran\n', False)
    ran = verifying.run_bounded(['sh', '-c', 'echo a; exec sleep 60'], str(tmp_path), 0.5)
    assert time.monotonic() - began < 20, 'ran past its bound'
    assert ran == verifying.Ran(None, b'a\n', True)
    code = 'import sys; sys.stdout.write("x" * 3_000_000 + "end")'
    ran = verifying.run_bounded([sys.executable, '-c', code], str(tmp_path), 60)
    assert ran.code == 0 and not ran.timed_out
    assert ran.output == b'x' * (verifying.OUTPUT_MAX - 3) + b'end'


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX: a daemon by setsid, pipes reused by number')
def test_a_bounded_runs_output_held_by_a_daemon_is_left_to_its_reader_thread(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    """The thread's reader (Windows'), past the GRACE after its program
    ended, is left blocked on a pipe a daemon (out of the command's group,
    so not stopped with it) still holds: that pipe is its own until it
    ends, not closed under it (on Windows, a close waits on the read's
    lock: the MCP server hung until the daemon ended, as the file's
    collection closed it even when run_bounded did not; here, its number
    was reused by the next pipe opened, which the stale reader then read).
    Once the daemon ends, the reader ends, and nothing it read is lost to
    another pipe."""
    import threading
    from agitmem.porcelain import verifying
    monkeypatch.setattr(verifying, '_selected', verifying._threaded)
    pidfile, go = tmp_path / 'pid', tmp_path / 'go'
    daemon = (
        'import os, sys, time; os.setsid(); open(sys.argv[1], "w").write(str(os.getpid())); '
        'exec("while not os.path.exists(sys.argv[2]): time.sleep(0.05)"); print("late")'
    )
    script = f'{shlex.quote(sys.executable)} -c {shlex.quote(daemon)} {pidfile} {go} & echo ran'
    r, w = os.pipe()  # another pipe of this process's, read by this test
    others = set(threading.enumerate())
    ran = verifying.run_bounded(['sh', '-c', script], str(tmp_path), 60)
    assert ran == verifying.Ran(0, b'ran\n', False)
    daemon_pid = pid_from(pidfile)
    # the lowest numbers free: the held pipe's among them, were it closed
    readers = [os.dup(r) for _ in range(20)]
    try:
        go.touch()
        assert ended(daemon_pid), 'the daemon did not end'
        import time
        deadline = time.monotonic() + 30
        while set(threading.enumerate()) - others:
            assert time.monotonic() < deadline, 'the reader was left on another pipe (its own closed under it)'
            time.sleep(0.05)
        os.write(w, b'mine')
        assert os.read(r, 10) == b'mine'
    finally:
        os.close(w)  # (a reader left on it ends)
        for fd in (r, *readers):
            os.close(fd)


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='Linux: a subreaper adopts the orphans')
def test_verify_reaps_what_its_command_left_that_ended(memrepo: Path) -> None:
    """verify adopts what its command leaves running (adopt_orphans); each
    that ends is reaped while the command runs (they were zombies until
    verify ended: a suite that forks its servers away filled the process
    table, where init would have reaped them)."""
    count = (
        'z=0; for f in /proc/[0-9]*/stat; do set -- $(cat $f 2>/dev/null | sed "s/.*) //"); '
        '[ "$1 $2" = "Z $PPID" ] && z=$((z+1)); done; echo zombies=$z; [ $z -lt 20 ]'
    )
    ok('verify', '--', 'sh', '-c', f'for i in $(seq 100); do (true &); done; sleep 1; {count}', cwd=memrepo)


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='Linux: a subreaper adopts the orphans')
def test_verify_reaps_what_its_command_left_after_it_closed_its_output(memrepo: Path, tmp_path: Path) -> None:
    """A command that sends its output elsewhere (`exec >log 2>&1`, a
    script that keeps its own log) and runs on: what it leaves and ends is
    reaped while it runs, as when it writes to verify (verify waited for
    it without reaping once the output was closed: 100 zombies)."""
    log = tmp_path / 'log'
    count = (
        'z=0; for f in /proc/[0-9]*/stat; do set -- $(cat $f 2>/dev/null | sed "s/.*) //"); '
        '[ "$1 $2" = "Z $PPID" ] && z=$((z+1)); done; echo zombies=$z; [ $z -lt 20 ]'
    )
    ok('verify', '--', 'sh', '-c', f'exec >{log} 2>&1; for i in $(seq 100); do (true &); done; sleep 2; {count}',
       cwd=memrepo)


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
def test_verify_interrupted_alone_stops_its_command(memrepo: Path, tmp_path: Path) -> None:
    """A SIGINT sent to `agitmem verify` alone (an agent's interrupt, `kill
    -INT`), not to the terminal's group: verify ends as interrupted (130)
    and its command, which no ^C reached, gets the SIGINT passed on, as
    SIGTERM's and SIGHUP's are, rather than running on; nothing is
    recorded."""
    import signal
    import subprocess
    pidfile = tmp_path / 'pid'
    before = mem(memrepo, 'state.json').read_bytes()
    proc = subprocess.Popen(
        [*agitmem_argv(), 'verify', '--', 'sh', '-c', f'echo $$ > {pidfile}; exec sleep 60'],
        cwd=memrepo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        # SIGINT's default action (a background job's is to ignore it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.default_int_handler),
    )
    child = pid_from(pidfile)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (130, 'agitmem: interrupted\n')
    assert ended(child), 'the command ran on after verify was interrupted'
    assert mem(memrepo, 'state.json').read_bytes() == before


def test_verify_records_the_tree_its_command_left(memrepo: Path) -> None:
    # a command that writes a file (a build, a formatter): the verification
    # is of what it leaves, so load does not call it stale straight after
    ok('verify', '--', sys.executable, '-c', 'open("built.txt", "w").write("x")', cwd=memrepo)
    lv = _state(memrepo)['last_verification']
    assert isinstance(lv, dict)
    assert (memrepo / 'built.txt').exists()
    assert lv['tree'] == _state(memrepo)['tree']
    assert lv['tree'] != git('rev-parse', 'HEAD^{tree}', cwd=memrepo).strip()
    assert 'STALE' not in ok('load', cwd=memrepo)


def test_state_set_stamps_the_working_tree_not_head(memrepo: Path) -> None:
    (memrepo / 'new.py').write_text('x = 1\n')
    ok('state', 'set', 'next_intent=test new.py', cwd=memrepo)
    git('add', 'new.py', cwd=memrepo)
    staged = git('write-tree', cwd=memrepo).strip()
    assert _state(memrepo)['tree'] == staged
    assert 'STALE' not in ok('load', cwd=memrepo)
    (memrepo / 'new.py').write_text('x = 2\n')
    assert 'STALE: the working tree changed since this state was written: new.py' in ok('load', cwd=memrepo)


def _index_copies(repo: Path) -> list[str]:
    return [p.name for p in (repo / '.git').iterdir() if p.name.startswith('agitmem-index-')]


def test_state_set_from_a_subdirectory_stamps_the_whole_tree(memrepo: Path) -> None:
    # the tree is begun before the repository is known, from the cwd: it
    # must still be the whole working tree's, not the subdirectory's
    (memrepo / 'top.py').write_text('outside src/\n')
    ok('state', 'set', 'next_intent=x', cwd=memrepo / 'src')
    git('add', 'top.py', cwd=memrepo)
    assert _state(memrepo)['tree'] == git('write-tree', cwd=memrepo).strip()
    assert 'STALE' not in ok('load', cwd=memrepo / 'src')
    assert _index_copies(memrepo) == []


def test_the_trees_index_copies_are_removed_when_a_command_fails(memrepo: Path) -> None:
    # the tree is begun before the arguments are checked, and stopped at
    # any point of its way when the command fails
    for _ in range(10):
        assert 'expected KEY=VALUE' in bad('state', 'set', 'no-equals-sign', cwd=memrepo)
    mem(memrepo, 'state.json').write_text('{broken')
    bad('load', cwd=memrepo)
    bad('state', 'set', 'next_intent=x', cwd=memrepo)
    assert _index_copies(memrepo) == []
    assert git('status', '--porcelain', cwd=memrepo) == ''  # the user's index untouched


def test_state_set_without_sh_says_so_in_one_line(memrepo: Path, tmp_path: Path) -> None:
    only_git = tmp_path / 'only-git'
    only_git.mkdir()
    (only_git / 'git').symlink_to(shutil.which('git') or 'git')
    # the tree from `git status` needs git alone
    ok('state', 'set', 'next_intent=x', cwd=memrepo, env={'PATH': str(only_git)})
    # an intent-to-add entry is the index-copy chain's, a shell chain of git commands
    (memrepo / 'later.txt').write_text('later\n')
    git('add', '-N', 'later.txt', cwd=memrepo)
    before = tip(memrepo)
    line = bad('state', 'set', 'next_intent=y', cwd=memrepo, env={'PATH': str(only_git)})
    assert line.startswith('agitmem: cannot run sh in ')
    assert tip(memrepo) == before
    assert _index_copies(memrepo) == []


def test_verify_runs_its_command_as_popen_did(memrepo: Path) -> None:
    """The command is begun by posix_spawn (platforms.Command) where it
    can be: as subprocess.Popen began it, in the top of the working tree
    from a subdirectory (a relative command found there), its stderr in
    its output, nothing on stdin, SIGPIPE at its default, and no
    descriptor agitmem was given held open in it."""
    sub = memrepo / 'src'
    sub.mkdir(exist_ok=True)
    probe = memrepo / 'probe.py'
    probe.write_text(
        'import os, signal, sys\n'
        'print("cwd", os.getcwd())\n'
        'print("stdin", repr(sys.stdin.read()))\n'
        'print("fds", sorted(int(f) for f in os.listdir("/proc/self/fd") if int(f) > 2)'
        ' if os.path.isdir("/proc/self/fd") else "-")\n'
        'print("to stderr", file=sys.stderr)\n',
    )
    # (what is ignored, read by a program that is not Python, which
    # ignores SIGPIPE itself)
    (memrepo / 'run.sh').write_text(
        f'#!/bin/sh\n[ -r /proc/self/status ] && grep SigIgn /proc/self/status\nexec {sys.executable} probe.py\n',
    )
    (memrepo / 'run.sh').chmod(0o755)
    r, w = os.pipe()
    os.set_inheritable(w, True)
    try:
        proc = subprocess.run(
            [*agitmem_argv(), 'verify', '--', './run.sh'], cwd=sub, capture_output=True, text=True,
            pass_fds=(w,), stdin=subprocess.DEVNULL,
        )
    finally:
        os.close(r)
        os.close(w)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f'cwd {os.path.realpath(memrepo)}\n' in out
    assert "stdin ''\n" in out and 'to stderr\n' in out
    ignored = [line.split()[1] for line in out.splitlines() if line.startswith('SigIgn:')]
    assert all(not int(mask, 16) & (1 << 12) for mask in ignored), out  # (13, SIGPIPE)

    fds = out.split('fds ', 1)[1].split('\n', 1)[0]
    assert fds == '-' or str(w) not in fds.strip('[]').replace(' ', '').split(','), out
    assert os.getcwd() != str(sub)  # (this process never moved)


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signal masks')
def test_verify_gives_its_command_the_signal_mask_it_had(memrepo: Path) -> None:
    """agitmem holds SIGINT, SIGTERM and SIGHUP off while it is in the
    command's directory for the spawn: the command begins with none of
    them blocked (read by Python: a shell unblocks all as it starts)."""
    code = 'import signal; print("blocked", sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))'
    proc = subprocess.run(
        [*agitmem_argv(), 'verify', '--', sys.executable, '-c', code],
        cwd=memrepo / 'src' if (memrepo / 'src').is_dir() else memrepo,
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'blocked []\n' in proc.stdout, proc.stdout


def test_verify_bad_input(memrepo: Path) -> None:
    before = tip(memrepo)
    assert 'verify needs a command' in bad('verify', cwd=memrepo)
    assert 'cannot run no-such-command-xyz' in bad('verify', '--', 'no-such-command-xyz', cwd=memrepo)
    # an empty name (posix_spawn refuses it where Popen tried it), and a
    # script without a `#!` line (neither begins it): one line, no traceback
    assert bad('verify', '--', '', cwd=memrepo).startswith('agitmem: cannot run : ')
    (memrepo / 'no-shebang').write_text('echo ran\n')
    (memrepo / 'no-shebang').chmod(0o755)
    assert 'cannot run ./no-shebang: Exec format error' in bad('verify', '--', './no-shebang', cwd=memrepo)
    (memrepo / 'loop').symlink_to('loop')
    assert 'cannot run ./loop: Too many levels of symbolic links' in bad('verify', '--', './loop', cwd=memrepo)
    assert tip(memrepo) == before


def test_verify_and_state_set_with_a_nameless_environment_variable(memrepo: Path) -> None:
    # `env '=x' agitmem ...`: an entry with an empty name, which git and
    # Popen pass on and posix_spawn refuses (ValueError: illegal
    # environment variable name, a traceback from every command)
    env = {**os.environ, '': 'nameless'}
    for args in (('state', 'set', 'next_intent=x'), ('verify', '--', 'sh', '-c', 'echo ran')):
        proc = subprocess.run(
            [*agitmem_argv(), *args], cwd=memrepo, capture_output=True, text=True,
            stdin=subprocess.DEVNULL, env=env,
        )
        assert proc.returncode == 0 and 'Traceback' not in proc.stderr, (args, proc.stderr)
    assert 'ran\n' in proc.stdout
    lv = _state(memrepo)['last_verification']
    assert isinstance(lv, dict) and lv['result'] == 'passed'


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
def test_verify_begun_with_sigchld_ignored_records_how_its_command_ended(memrepo: Path) -> None:
    # a parent that ignores SIGCHLD (a supervisor, a harness in Python that
    # does not want zombies) leaves it ignored across exec: the kernel then
    # reaps every child as it ends, and each wait of agitmem's (git's
    # reads, the command's) was ChildProcessError, a traceback
    import signal

    def ignoring() -> None:
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    proc = subprocess.run(
        [*agitmem_argv(), 'verify', '--', 'sh', '-c', 'echo failing; exit 3'], cwd=memrepo,
        capture_output=True, text=True, stdin=subprocess.DEVNULL, preexec_fn=ignoring,
    )
    assert 'Traceback' not in proc.stderr, proc.stderr
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lv = _state(memrepo)['last_verification']
    assert isinstance(lv, dict) and lv['result'] == 'failed' and lv['exit_code'] == 3


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX shell redirections')
def test_verify_runs_with_its_stdin_and_stderr_closed(memrepo: Path) -> None:
    # the output pipe then takes descriptor 2, which posix_spawn's dup2 onto
    # itself would leave close-on-exec: Popen, which moves it, ran the
    # command (an agent's harness that starts its tools with them closed)
    proc = subprocess.run(
        ['sh', '-c', 'exec "$@" <&- 2>&-', 'sh', *agitmem_argv(), 'verify', '--', 'sh', '-c', 'echo ran'],
        cwd=memrepo, capture_output=True, text=True,
    )
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert 'ran\n' in proc.stdout
    lv = _state(memrepo)['last_verification']
    assert isinstance(lv, dict) and lv['result'] == 'passed'


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX modes')
@pytest.mark.parametrize('mode', [0o000, 0o100, 0o400])
def test_verify_runs_from_a_directory_it_cannot_open(memrepo: Path, mode: int) -> None:
    # posix_spawn has no directory to begin in: agitmem moves to the top for
    # it and back by a descriptor of where it was, which a directory it may
    # not read or search does not give; Popen's child moved instead, and
    # the command ran (from the top) all the same
    wrap: list[str] = []
    if os.geteuid() == 0:  # (root reads any directory: without the capabilities that let it)
        if not shutil.which('setpriv'):
            pytest.skip('root, and no setpriv to drop the reading of any directory')
        caps = '-dac_override,-dac_read_search'
        wrap = ['setpriv', f'--inh-caps={caps}', f'--bounding-set={caps}']
    sub = memrepo / 'locked'
    sub.mkdir()
    sub.chmod(mode)
    try:
        proc = subprocess.run(
            [*wrap, *agitmem_argv(), 'verify', '--', 'sh', '-c', 'pwd'], cwd=sub,
            capture_output=True, text=True, stdin=subprocess.DEVNULL,
        )
    finally:
        sub.chmod(0o755)
    assert proc.returncode == 0, proc.stderr
    assert f'{os.path.realpath(memrepo)}\n' in proc.stdout
    lv = _state(memrepo)['last_verification']
    assert isinstance(lv, dict) and lv['result'] == 'passed'


def test_note_and_fragment(memrepo: Path) -> None:
    ok('note', 'the', 'config', 'loader', 'is', 'cached', cwd=memrepo)
    notes = mem(memrepo, 'notes.md').read_text().splitlines()
    assert notes[-1].endswith(' the config loader is cached')
    assert notes[-1].startswith('- 20')
    ok('fragment', 'add', '--goal', 'split loader', '--next', 'update imports', cwd=memrepo)
    ok('fragment', 'add', '--goal', 'g2', '--next', 'n2', '--refs', 'A-001', cwd=memrepo,
       env={'AGITMEM_AGENT': 'A'})
    ok('fragment', 'add', '--goal', 'g3', '--next', 'n3', cwd=memrepo, env={'AGITMEM_AGENT': 'B'})
    lines = [json.loads(ln) for ln in mem(memrepo, 'fragments.jsonl').read_text().splitlines()]
    assert [f['id'] for f in lines] == ['A-001', 'A-002', 'B-001']
    assert lines[1]['refs'] == ['A-001']
    assert lines[0]['goal'] == 'split loader' and lines[0]['next'] == 'update imports'
    assert message(memrepo).startswith('fragment: B-001 g3\n')


def test_note_fragment_bad_input(memrepo: Path) -> None:
    before = tip(memrepo)
    assert 'no fragment A-404' in bad('fragment', 'add', '--goal', 'g', '--next', 'n', '--refs', 'A-404', cwd=memrepo)
    assert 'the following arguments are required: --next' in bad('fragment', 'add', '--goal', 'g', cwd=memrepo)
    assert 'note needs some text' in bad('note', ' ', cwd=memrepo)
    assert 'AGITMEM_AGENT' in bad('fragment', 'add', '--goal', 'g', '--next', 'n', cwd=memrepo,
                                  env={'AGITMEM_AGENT': 'a b'})
    assert tip(memrepo) == before


def test_no_save_writes_file_only(memrepo: Path) -> None:
    before = tip(memrepo)
    ok('note', 'draft', '--no-save', cwd=memrepo)
    assert 'draft' in mem(memrepo, 'notes.md').read_text()
    assert tip(memrepo) == before
