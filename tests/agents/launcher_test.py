"""agents/launcher: what a hook command runs, found by reading, never by
running it (the CLI's side is in tests/commands/doctor_test.py and
install_test.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agitmem.agents import launcher

_BODY = '# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom agitmem.cli import main\nif __name__ == "__main__":\n    sys.exit(main())\n'


def _file(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize(
    ('head', 'python'),
    (
        ('#!/opt/venv/bin/python3\n', '/opt/venv/bin/python3'),
        # pip's launcher for an interpreter path a #! line cannot hold
        ('#!/bin/sh\n\'\'\'exec\' "/opt/my venv/bin/python" "$0" "$@"\n\' \'\'\'\n', '/opt/my venv/bin/python'),
        ('#!/bin/sh\n', None),  # a shell script that mentions the import
        ('#!/usr/bin/env python3\n', None),  # not a path: depends on PATH
        ('#!"/opt/venv/bin/python\n', None),  # cannot be split
        ('', None),
    ),
)
def test_script_python(tmp_path: Path, head: str, python: str | None) -> None:
    assert launcher.script_python(_file(tmp_path / 'agitmem', head + _BODY)) == python


@pytest.mark.parametrize('module', ('agitmem.__main__', 'agitmem.cli', 'agitmem.other'))
def test_script_python_knows_both_entry_points(tmp_path: Path, module: str) -> None:
    body = _BODY.replace('from agitmem.cli import', f'from {module} import')
    got = launcher.script_python(_file(tmp_path / 'agitmem', '#!/opt/venv/bin/python3\n' + body))
    assert got == (None if module == 'agitmem.other' else '/opt/venv/bin/python3')


def test_the_installed_console_script_is_agitmem() -> None:
    # the one pip wrote for this checkout, whatever its entry point is today
    script = Path(sys.executable).parent / 'agitmem'
    assert launcher.script_python(str(script)) is not None, script.read_text()


def test_script_python_reads_only_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / 'agitmem'
    os.mkfifo(fifo)  # a read would block: it is never opened
    assert launcher.script_python(str(fifo)) is None
    assert launcher.script_python(str(tmp_path)) is None
    assert launcher.script_python(str(tmp_path / 'missing')) is None


def test_without_a_login_shell_relative_and_venv_entries_go(tmp_path: Path) -> None:
    venv = tmp_path / 'venv'
    path = launcher.client_path({
        'SHELL': 'sh',  # not absolute: not run
        'PATH': os.pathsep.join(['.', 'bin', str(venv / 'bin'), '/usr/bin', '']),
        'VIRTUAL_ENV': str(venv),
    })
    assert path[0] == '/usr/bin'
    assert str(venv / 'bin') not in path and '.' not in path and 'bin' not in path
    if sys.prefix != sys.base_prefix:
        assert os.path.dirname(sys.executable) not in path


def test_the_login_shells_path(tmp_path: Path) -> None:
    home = tmp_path / 'home'
    home.mkdir()
    (home / '.profile').write_text('echo hello\nPATH="/opt/login/bin:$PATH"\n')
    path = launcher.client_path({'SHELL': '/bin/sh', 'HOME': str(home), 'PATH': '/not/this/one'})
    assert path[0] == '/opt/login/bin' and '/not/this/one' not in path


@pytest.mark.parametrize(
    ('command', 'why'),
    (
        ('agitmem hook stop; touch x', 'not a plain command line'),
        ("'agitmem' hook stop", 'not a plain command line'),  # quotes agitmem never writes
        ('agitmem "hook', 'cannot be parsed'),
        ('agitmem stop', 'does not run `... hook EVENT`'),
        ('/usr/bin/env -m agitmem hook stop', 'not a Python interpreter'),
        ('/usr/bin/mytool hook stop', 'runs `/usr/bin/mytool`, not agitmem'),
    ),
)
def test_check_refuses(command: str, why: str) -> None:
    wrong, python = launcher.check(command, ['/usr/bin', '/bin'])
    assert wrong is not None and why in wrong and python is None


def test_check_this_agitmem() -> None:
    command = ' '.join(launcher.interpreter_command()) + ' hook stop --agent claude'
    assert launcher.check(command, []) == (None, sys.executable)


def test_a_shell_that_cannot_be_run_falls_back(tmp_path: Path) -> None:
    shell = tmp_path / 'sh'
    shell.write_bytes(b'\x7fELF garbage')
    shell.chmod(0o755)
    path = launcher.client_path({'SHELL': str(shell), 'PATH': '/opt/here/bin'})
    assert path[0] == '/opt/here/bin'


def _popen(*code: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, '-c', *code], stdout=subprocess.PIPE, text=True)


def test_runs_here_answers() -> None:
    assert launcher.runs_here(launcher.start_here()) is None
    assert launcher.runs_here(None) == 'does not run (its interpreter cannot be started)'
    assert launcher.runs_here(_popen('print("something else")')) == 'does not run agitmem (exit 0)'
    assert launcher.runs_here(_popen('import time; time.sleep(30)'), timeout=0.2) == 'does not answer within 0s'


# -- the hooks' own program (scripts/agitmem-hook) ------------------------------

_HOOK_BODY = (
    '"""agitmem hook"""\nimport sys\n\nfrom agitmem.__main__ import main\n\n'
    "if __name__ == '__main__':\n    sys.argv[1:1] = ['hook']\n    sys.exit(main())\n"
)


def test_the_installed_hook_program_is_agitmems() -> None:
    # the one pip wrote beside this interpreter's console script
    here = os.path.dirname(sys.executable)
    script = Path(here) / launcher.HOOK_PROGRAM
    assert launcher.script_python(str(script), hook=True) is not None, script.read_text()
    assert launcher.hook_program([here]) == launcher.HOOK_PROGRAM
    assert launcher.check(f'{launcher.HOOK_PROGRAM} stop --agent claude', [here])[0] is None


def test_the_hook_program_and_the_console_script_are_told_apart(tmp_path: Path) -> None:
    hook = _file(tmp_path / 'a' / launcher.HOOK_PROGRAM, '#!/opt/venv/bin/python3\n' + _HOOK_BODY)
    console = _file(tmp_path / 'b' / launcher.HOOK_PROGRAM, '#!/opt/venv/bin/python3\n' + _BODY)
    assert launcher.script_python(hook, hook=True) == '/opt/venv/bin/python3'
    assert launcher.script_python(hook) is None  # `agitmem X` through it would be `agitmem hook X`
    assert launcher.script_python(console, hook=True) is None
    # named agitmem-hook, but agitmem's console script: `agitmem stop` is no hook
    why, _ = launcher.check(f'{launcher.HOOK_PROGRAM} stop --agent claude', [str(tmp_path / 'b')])
    assert why == f'runs {console}, which is not the agitmem hooks\' program'


def test_another_installs_hook_program_is_not_chosen(tmp_path: Path) -> None:
    _file(tmp_path / launcher.HOOK_PROGRAM, '#!/opt/elsewhere/bin/python3\n' + _HOOK_BODY)
    assert launcher.hook_program([str(tmp_path)]) is None
    assert launcher.hook_program([]) is None


@pytest.mark.parametrize(
    ('command', 'why'),
    (
        ('./agitmem-hook stop --agent claude', 'is a relative path'),
        ('agitmem-hook stop; touch x', 'not a plain command line'),
        ('/nowhere/agitmem-hook stop', 'is not found'),
    ),
)
def test_check_refuses_a_hook_program(command: str, why: str) -> None:
    wrong, python = launcher.check(command, [os.path.dirname(sys.executable)])
    assert wrong is not None and why in wrong and python is None


def test_a_hook_program_in_the_repository_is_refused(tmp_path: Path) -> None:
    script = _file(tmp_path / 'bin' / launcher.HOOK_PROGRAM, f'#!{sys.executable}\n' + _HOOK_BODY)
    why, _ = launcher.check(f'{script} stop --agent claude', [], root=tmp_path)
    assert why == f'runs {script}, a file of the repository (a clone\'s), not an installed agitmem'


def test_an_mcp_entry_never_runs_the_hook_program() -> None:
    here = os.path.dirname(sys.executable)
    why, _ = launcher.check_mcp([launcher.HOOK_PROGRAM, 'mcp'], [here])
    assert why == f'runs `{launcher.HOOK_PROGRAM}`, not agitmem'
    assert launcher.check_mcp(['agitmem', 'mcp'], [here])[0] is None


def test_the_launcher_of_each_form() -> None:
    assert launcher.launcher(['agitmem-hook', 'stop', '--agent', 'claude']) == ['agitmem-hook']
    assert launcher.launcher(['/opt/v/bin/agitmem-hook', 'stop']) == ['/opt/v/bin/agitmem-hook']
    assert launcher.launcher(['agitmem-hook']) is None
    assert launcher.launcher(['agitmem', 'hook', 'stop']) == ['agitmem']
    assert launcher.names_hook_program('/opt/v/bin/agitmem-hook') and not launcher.names_hook_program('agitmem')
    assert not launcher.names_hook_program('"unterminated')


def test_a_hook_program_the_kernel_cannot_start_is_not_chosen(tmp_path: Path) -> None:
    # pip writes `#!<interpreter>` as it is: past 127 bytes the kernel may
    # not read all of it (pip's console scripts start through /bin/sh then)
    deep = tmp_path / ('v' * 120) / 'bin'
    python = deep / 'python3'
    _file(python, '')
    script = _file(deep / launcher.HOOK_PROGRAM, f'#!{python}\n' + _HOOK_BODY)
    assert launcher.script_python(script, hook=True) == str(python)
    assert launcher._shebang_runs(str(python)) is False
    assert launcher._shebang_runs(sys.executable) is (len(sys.executable) < 120)
    why, _ = launcher.check(f'{script} stop --agent claude', [])
    assert why == (
        f'runs {script}, whose first line the kernel cannot run (its interpreter\'s path '
        f'has a space, or the line is over 127 bytes)'
    )
