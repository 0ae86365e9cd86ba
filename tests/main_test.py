"""agitmem/__main__.py: the commands that end without the interpreter's
teardown (quick_exit) still say all they print, exit with their code, and
run what atexit holds."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from testing.util import agitmem_argv
from testing.util import git
from testing.util import mem
from testing.util import ok


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # through a pipe, as a hook's or an agent's output goes: block-buffered
    return subprocess.run([*agitmem_argv(), *args], cwd=repo, capture_output=True, text=True)


def test_verify_that_fails_says_so_and_exits_1(memrepo: Path) -> None:
    proc = _run(memrepo, 'verify', '--', 'sh', '-c', 'echo out; exit 3')
    assert proc.returncode == 1
    assert 'verification failed (exit 3)' in proc.stdout + proc.stderr
    assert '"exit_code": 3' in mem(memrepo, 'state.json').read_text()


def test_state_set_prints_and_saves(memrepo: Path) -> None:
    proc = _run(memrepo, 'state', 'set', 'next_intent=ship it')
    assert proc.returncode == 0, proc.stderr
    assert 'ship it' in git('show', 'refs/agitmem/heads/main:state.json', cwd=memrepo)


def test_a_refusing_pre_commit_hook_prints_every_finding(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text('require_progress_update: true\n')
    ok('save', cwd=memrepo)
    (memrepo / 'code.py').write_text('x = 1\n')
    git('add', 'code.py', cwd=memrepo)
    proc = _run(memrepo, 'hook', 'pre-commit')
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith('error progress-not-updated ')
    assert lines[-1].startswith('agitmem: 1 error(s)')


# an atexit function the command registers (ahead.begin's, wrapped), and
# an object only the interpreter's teardown would free
_PROBE = '''
import atexit, sys
from agitmem import __main__ as entry, ahead
class Freed:
    def __del__(self):
        print('torn down', flush=True)
kept = Freed()
print('under coverage' if 'coverage' in sys.modules else 'plain', flush=True)
def begin_and_register(argv):
    begin(argv)
    atexit.register(print, 'atexit ran', flush=True)
# with globals of its own: a function of __main__ held by ahead would keep
# `kept` alive through the teardown
import types
ahead.begin = types.FunctionType(
    begin_and_register.__code__, dict(begin=ahead.begin, atexit=atexit, print=print),
)
del begin_and_register
{stub}
sys.exit(entry.main())
'''


def test_quick_exit_runs_the_atexit_functions_and_skips_the_teardown(memrepo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, '-c', _PROBE.format(stub=''), 'state', 'set', 'next_intent=a'],
        cwd=memrepo, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    if lines[0] == 'under coverage':  # CI: coverage's atexit saves its data
        assert lines[-2:] == ['atexit ran', 'torn down']
    else:
        assert lines[-1] == 'atexit ran'
        assert 'torn down' not in proc.stdout
    # the other side: the ordinary exit (under coverage, whose own atexit
    # function was registered first) tears down
    stub = "sys.modules.setdefault('coverage', sys)"
    proc = subprocess.run(
        [sys.executable, '-c', _PROBE.format(stub=stub), 'state', 'set', 'next_intent=b'],
        cwd=memrepo, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-2:] == ['atexit ran', 'torn down']


def test_quick_exit_keeps_the_exit_code_of_a_failed_verification(memrepo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, '-c', _PROBE.format(stub=''), 'verify', '--', 'false'],
        cwd=memrepo, capture_output=True, text=True,
    )
    assert proc.returncode == 1
    assert 'atexit ran' in proc.stdout
    assert ('torn down' in proc.stdout) == proc.stdout.startswith('under coverage')


def _ended_quickly(stdout: str) -> list[str]:
    """What the command printed, between the probe's lines, once they say
    that what atexit holds ran and the teardown did not (under coverage, CI,
    the ordinary exit, which tears down)."""
    lines = stdout.splitlines()
    if lines[0] == 'under coverage':
        assert lines[-2:] == ['atexit ran', 'torn down']
        return lines[1:-2]
    assert lines[-1] == 'atexit ran'
    assert 'torn down' not in stdout
    return lines[1:-1]


def test_an_agent_hook_runs_the_atexit_functions_and_skips_the_teardown(memrepo: Path) -> None:
    """The agent hooks (every prompt, every edit) end as the commit hooks
    do: what atexit holds runs, the teardown does not."""
    payload = json.dumps({
        'session_id': 's', 'cwd': str(memrepo), 'hook_event_name': 'PostToolUse',
        'tool_name': 'Edit', 'tool_input': {'file_path': str(memrepo / 'code.py')},
    })
    (memrepo / 'code.py').write_text('x = 1\n')
    proc = subprocess.run(
        [sys.executable, '-c', _PROBE.format(stub=''), 'hook', 'post-edit', '--agent', 'claude'],
        cwd=memrepo, input=payload, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ''
    _ended_quickly(proc.stdout)
    # the edit was seen: the hook did its work before it ended
    assert 'code.py' in (memrepo / '.git' / 'agitmem' / 'observed.json').read_text()


def test_load_and_session_start_say_all_and_skip_the_teardown(memrepo: Path) -> None:
    """load (what an agent without hooks runs at each start) and the
    session-start hook end as the agent hooks do: all of the block said,
    through a pipe, what atexit holds run, the teardown not."""
    ok('note', 'a note to reach the agent', cwd=memrepo)
    payload = json.dumps({
        'session_id': 's', 'cwd': str(memrepo), 'hook_event_name': 'SessionStart', 'source': 'compact',
    })
    for args, stdin in ((('load',), ''), (('hook', 'session-start', '--agent', 'claude'), payload)):
        proc = subprocess.run(
            [sys.executable, '-c', _PROBE.format(stub=''), *args],
            cwd=memrepo, input=stdin, capture_output=True, text=True,
        )
        assert proc.returncode == 0, proc.stderr
        said = '\n'.join(_ended_quickly(proc.stdout))
        block = said if args == ('load',) else json.loads(said)['hookSpecificOutput']['additionalContext']
        assert 'a note to reach the agent' in block and block.rstrip().endswith('===== AGENT MEMORY END =====')
        assert (memrepo / '.agent' / 'injected_context.txt').read_text().strip() == block.strip()


def test_a_command_started_with_stdout_closed_ends_without_a_traceback(memrepo: Path) -> None:
    """Started with its stdout closed (`>&-`: a hook runner's, a cron
    job's), Python has no sys.stdout: the quick exit flushes what there is,
    and the command and an agent hook end with their code and no traceback."""
    payload = json.dumps({
        'session_id': 's', 'cwd': str(memrepo), 'hook_event_name': 'PostToolUse',
        'tool_name': 'Edit', 'tool_input': {'file_path': str(memrepo / 'code.py')},
    })
    for args, stdin in (
            (('state', 'set', 'next_intent=closed'), ''),
            (('hook', 'post-edit', '--agent', 'claude'), payload),
    ):
        proc = subprocess.run(
            ['sh', '-c', 'exec "$0" "$@" >&-', *agitmem_argv(), *args],
            cwd=memrepo, input=stdin, capture_output=True, text=True,
        )
        assert (proc.returncode, proc.stderr) == (0, ''), args
    assert 'closed' in git('show', 'refs/agitmem/heads/main:state.json', cwd=memrepo)


def test_output_that_cannot_be_written_is_one_line(memrepo: Path) -> None:
    """stdout a device that fails every write (a full disk: /dev/full):
    a command says so in one line and exits 2; an agent hook says so and
    exits 0; with stdout closed, load still writes what the agent was given."""
    import os

    import pytest
    if not os.path.exists('/dev/full'):
        pytest.skip('no /dev/full here (Linux has it)')
    for args in (('load',), ('status',), ('log', '-n', '2'), ('load', '--json')):
        proc = subprocess.run(
            ['sh', '-c', 'exec "$0" "$@" > /dev/full', *agitmem_argv(), *args],
            cwd=memrepo, capture_output=True, text=True,
        )
        assert (proc.returncode, proc.stderr) == (2, 'agitmem: cannot write the output: No space left on device\n'), args
    payload = json.dumps({'session_id': 's', 'cwd': str(memrepo), 'hook_event_name': 'SessionStart', 'source': 'compact'})
    proc = subprocess.run(
        ['sh', '-c', 'exec "$0" "$@" > /dev/full', *agitmem_argv(), 'hook', 'session-start', '--agent', 'claude'],
        cwd=memrepo, input=payload, capture_output=True, text=True,
    )
    assert (proc.returncode, proc.stderr) == (0, 'agitmem hook session-start: cannot write the output: No space left on device\n')
    injected = memrepo / '.agent' / 'injected_context.txt'
    injected.unlink()
    proc = subprocess.run(['sh', '-c', 'exec "$0" "$@" >&-', *agitmem_argv(), 'load'], cwd=memrepo, capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (0, '')
    assert injected.read_text().startswith('===== AGENT MEMORY BEGIN =====')
