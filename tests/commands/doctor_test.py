"""`agitmem doctor` on real repositories and real settings files (HOME is
a temp dir): each problem found with the command that fixes it, and that
command run."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import agitmem_argv
from testing.util import ended
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import pid_from
from testing.util import run


def _home() -> Path:
    return Path(os.environ['HOME'])


def _doctor(repo: Path, env: dict[str, str] | None = None) -> tuple[int, list[dict[str, str]]]:
    proc = agitmem('doctor', '--json', cwd=repo, env=env)
    assert 'Traceback' not in proc.stderr, proc.stderr
    data = json.loads(proc.stdout)
    assert data['ok'] is (proc.returncode == 0)
    return proc.returncode, data['findings']


def _problems(findings: list[dict[str, str]], check: str) -> list[dict[str, str]]:
    return [f for f in findings if f['check'] == check and f['level'] != 'ok']


@pytest.fixture
def wired(memrepo: Path) -> Path:
    """memrepo with git hooks and Claude Code hooks: doctor is clean."""
    ok('install', 'git', cwd=memrepo)
    ok('install', 'claude', cwd=memrepo)
    return memrepo


def test_clean_setup(wired: Path) -> None:
    proc = agitmem('doctor', cwd=wired)
    assert proc.returncode == 0, proc.stdout
    assert 'claude: 7 hooks in .claude/settings.local.json' in proc.stdout
    assert 'git hooks: all 7 in place' in proc.stdout
    assert proc.stdout.endswith('doctor: all good (0 warning(s))\n')


def test_missing_git_hooks_and_the_fix(memrepo: Path) -> None:
    proc = agitmem('doctor', cwd=memrepo)
    assert proc.returncode == 1
    assert 'git hooks missing: pre-commit, commit-msg, post-commit, pre-push, post-checkout, post-merge, post-rewrite' in proc.stdout
    assert 'fix: agitmem install git' in proc.stdout
    assert 'no agent has agitmem hooks' in proc.stdout  # a warning
    ok('install', 'git', cwd=memrepo)
    code, findings = _doctor(memrepo)
    assert code == 0
    assert _problems(findings, 'git-hooks') == []


@pytest.mark.parametrize('hook', ('post-merge', 'post-rewrite'))
def test_one_git_hook_gone(wired: Path, hook: str) -> None:
    # post-rewrite: the shims of an agitmem from before it had one
    (wired / '.git' / 'hooks' / hook).unlink()
    code, findings = _doctor(wired)
    assert code == 1
    assert [(f['message'], f['fix']) for f in _problems(findings, 'git-hooks')] == [
        (f'git hooks missing: {hook}', 'agitmem install git'),
    ]


def test_pre_commit_needs_every_hook_type(memrepo: Path) -> None:
    config = memrepo / '.pre-commit-config.yaml'
    hooks = ''.join(
        f'    -   id: {i}\n' for i in (
            'agitmem-check', 'agitmem-commit-msg', 'agitmem-record',
            'agitmem-push', 'agitmem-branch', 'agitmem-merge', 'agitmem-rewrite',
        )
    )
    body = f'repos:\n-   repo: https://example.com/agitmem\n    rev: v0.1.0\n    hooks:\n{hooks}'
    config.write_text(body)
    assert run(sys.executable, '-m', 'pre_commit', 'install', cwd=memrepo).returncode == 0
    code, findings = _doctor(memrepo)
    assert code == 1
    [problem] = _problems(findings, 'git-hooks')
    assert problem['message'] == 'git hooks missing: commit-msg, post-commit, pre-push, post-checkout, post-merge, post-rewrite'
    assert 'default_install_hook_types' in problem['fix']
    config.write_text(
        'default_install_hook_types: [pre-commit, commit-msg, post-commit, '
        'pre-push, post-checkout, post-merge, post-rewrite]\n' + body,
    )
    assert run(sys.executable, '-m', 'pre_commit', 'install', cwd=memrepo).returncode == 0
    code, findings = _doctor(memrepo)
    assert _problems(findings, 'git-hooks') == []


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _venv_without_agitmem(tmp_path: Path) -> Path:
    """A virtual environment's layout whose python exists, without agitmem."""
    venv = tmp_path / 'empty-venv'
    (venv / 'bin').mkdir(parents=True)
    (venv / 'lib' / 'python3.11' / 'site-packages').mkdir(parents=True)
    (venv / 'pyvenv.cfg').write_text('home = /usr/bin\n')
    (venv / 'bin' / 'python').symlink_to(sys.executable)
    return venv / 'bin' / 'python'


@pytest.mark.parametrize(
    ('command', 'why'),
    (
        ('/nonexistent/bin/agitmem', '`/nonexistent/bin/agitmem` is not found'),
        # a stale launcher, a shell script: read, never run
        ('{tmp}/stale/agitmem', 'which is not an agitmem console script'),
        # a console script whose venv was deleted
        ('{tmp}/gone/agitmem', 'but its interpreter {tmp}/venv-gone/bin/python is gone'),
        ('{empty} -P -m agitmem', 'but agitmem is not installed in {tmp}/empty-venv'),
        ('{python} -m agitmem', 'without -P: an `agitmem` directory in the project would be imported'),
        ('./bin/agitmem', 'is a relative path'),
        ('agitmem', '`agitmem` is not on the PATH an agent client gets (your login shell\'s)'),
        ('{python} -c pass agitmem', 'not agitmem'),
    ),
)
def test_agent_hooks_that_cannot_reach_agitmem(
        wired: Path, tmp_path: Path, command: str, why: str,
) -> None:
    ran = tmp_path / 'ran'
    _script(tmp_path / 'stale' / 'agitmem', f'#!/bin/sh\ntouch {ran}\nexec {tmp_path}/gone/python -m agitmem "$@"\n')
    _script(
        tmp_path / 'gone' / 'agitmem',
        f'#!{tmp_path}/venv-gone/bin/python\nimport sys\nfrom agitmem.cli import main\nsys.exit(main())\n',
    )
    fill = {'tmp': tmp_path, 'empty': _venv_without_agitmem(tmp_path), 'python': sys.executable}
    command, why = command.format(**fill), why.format(**fill)
    ok('install', 'claude', '--command', command, cwd=wired)
    code, findings = _doctor(wired)
    assert code == 1
    [problem] = _problems(findings, 'agent-hooks')
    assert problem['message'].startswith(f'claude: the hook command `{command} hook ')
    assert '(and 4 more like it) in .claude/settings.local.json: ' in problem['message']
    assert why in problem['message']
    assert problem['fix'].startswith('agitmem install claude --scope local')
    assert not ran.exists()
    ok('install', 'claude', '--scope', 'local', cwd=wired)
    assert _doctor(wired)[0] == 0


def test_a_cloned_projects_hook_commands_are_never_run(wired: Path, tmp_path: Path) -> None:
    """Settings a clone brings name programs: doctor reads them, runs none."""
    pwned = tmp_path / 'pwned'
    evil = _script(wired / 'tools' / 'agitmem', f'#!/bin/sh\ntouch {pwned}.script\n')
    # looks like a console script to a careless reader, but its #! is sh
    fake = _script(wired / 'tools' / 'fake' / 'agitmem', f'#!/bin/sh\nfrom agitmem.cli import main\ntouch {pwned}.fake\n')
    commands = {
        'SessionStart': f'touch {pwned}.semicolon; agitmem hook session-start --agent claude',
        'PreCompact': f'$(touch {pwned}.subst) agitmem hook pre-compact --agent claude',
        'PostToolUse': f'{evil} hook post-edit --agent claude',
        'UserPromptSubmit': f'sh -c "touch {pwned}.sh" agitmem hook prompt --agent claude',
        'Stop': f'{fake} hook stop --agent claude',
        'PostCompact': 'tools/agitmem hook pre-compact --agent claude',
    }
    settings = {'hooks': {
        name: [{'hooks': [{'type': 'command', 'command': c}]}] for name, c in commands.items()
    }}
    (wired / '.claude' / 'settings.json').write_text(json.dumps(settings))
    code, findings = _doctor(wired)
    assert code == 1
    messages = [f['message'] for f in _problems(findings, 'agent-hooks') if '.claude/settings.json' in f['message']]
    # `;`, `$(...)` and a shell's -c: one finding, the first of them shown
    [syntax] = [m for m in messages if 'is not a plain command line' in m]
    assert '(and 2 more like it)' in syntax and 'pwned.s' in syntax
    # a program inside the repository is a clone's, whatever it looks like
    assert any(f'runs {evil}, a file of the repository' in m for m in messages)
    assert any(f'runs {fake}, a file of the repository' in m for m in messages)
    assert any('`tools/agitmem` is a relative path' in m for m in messages)
    assert list(tmp_path.glob('pwned*')) == []


def test_hook_commands_are_shown_escaped(wired: Path) -> None:
    path = wired / '.claude' / 'settings.json'
    path.write_text(json.dumps({'hooks': {'Stop': [{'hooks': [
        {'type': 'command', 'command': 'agitmem hook stop --agent claude\x1b[2J\u202e'},
    ]}]}}))
    proc = agitmem('doctor', cwd=wired)
    assert proc.returncode == 1
    assert '\x1b' not in proc.stdout and '\u202e' not in proc.stdout
    assert '`agitmem hook stop --agent claude\\u001b[2J\\u202e`' in proc.stdout


def test_agent_hooks_missing_an_event(wired: Path) -> None:
    path = wired / '.claude' / 'settings.local.json'
    data = json.loads(path.read_text())
    del data['hooks']['Stop']
    path.write_text(json.dumps(data))
    code, findings = _doctor(wired)
    assert code == 1
    [problem] = _problems(findings, 'agent-hooks')
    assert problem['message'] == "claude: .claude/settings.local.json lacks agitmem's Stop hook(s)"
    ok('install', 'claude', cwd=wired)
    assert _doctor(wired)[0] == 0


def test_codex_trust(wired: Path) -> None:
    ok('install', 'codex', cwd=wired)
    code, findings = _doctor(wired)
    assert code == 1
    levels = {f['level']: f for f in _problems(findings, 'codex-trust')}
    assert '/hooks' in levels['warning']['fix']
    assert '--dangerously-bypass-hook-trust' in levels['warning']['fix']
    assert 'not trusted' in levels['error']['message']
    config = _home() / '.codex' / 'config.toml'
    config.parent.mkdir(exist_ok=True)
    config.write_text(f'[projects."{wired}"]\ntrust_level = "trusted"\n')
    code, findings = _doctor(wired)
    assert code == 0
    # hook trust cannot be read: it stays a warning
    assert [f['level'] for f in _problems(findings, 'codex-trust')] == ['warning']


def test_gemini_folder_trust(wired: Path) -> None:
    ok('install', 'gemini', cwd=wired)
    code, findings = _doctor(wired)
    assert code == 1
    [problem] = _problems(findings, 'gemini-trust')
    assert 'trustedFolders.json' in problem['fix']
    folders = _home() / '.gemini' / 'trustedFolders.json'
    folders.parent.mkdir(exist_ok=True)
    # the longest rule wins: the parent is trusted, this folder is not
    folders.write_text(json.dumps({str(wired.parent): 'TRUST_FOLDER', str(wired): 'DO_NOT_TRUST'}))
    assert _doctor(wired)[0] == 1
    assert _doctor(wired, env={'GEMINI_CLI_TRUST_WORKSPACE': 'true'})[0] == 0
    folders.write_text(json.dumps({str(wired / 'README'): 'TRUST_PARENT'}))
    assert _doctor(wired)[0] == 0


def test_gemini_before_model_hook_missing(wired: Path) -> None:
    """An install from before BeforeModel was wired: memory would not come
    back until the next prompt after a compression in the middle of one."""
    ok('install', 'gemini', cwd=wired)
    env = {'GEMINI_CLI_TRUST_WORKSPACE': 'true'}
    assert _doctor(wired, env=env)[0] == 0
    path = wired / '.gemini' / 'settings.json'
    data = json.loads(path.read_text())
    del data['hooks']['BeforeModel']
    path.write_text(json.dumps(data))
    code, findings = _doctor(wired, env=env)
    assert code == 1
    [problem] = _problems(findings, 'agent-hooks')
    assert problem['message'] == "gemini: .gemini/settings.json lacks agitmem's BeforeModel hook(s)"
    ok('install', 'gemini', cwd=wired)
    assert _doctor(wired, env=env)[0] == 0


def test_memory_of_another_branch(wired: Path) -> None:
    ok('uninstall', 'git', cwd=wired)  # a switch no hook sees
    git('checkout', '-q', '-b', 'feature', cwd=wired)
    ok('install', 'git', cwd=wired)
    code, findings = _doctor(wired)
    assert code == 1
    messages = [f['message'] for f in _problems(findings, 'memory-ref')]
    assert 'refs/agitmem/heads/feature does not exist' in messages[0]
    assert '.agent/memory holds the memory of main (refs/agitmem/heads/main)' in messages[1]
    ok('save', cwd=wired)
    assert _doctor(wired)[0] == 0


def test_unsaved_memory_warns_and_conflicts_fail(wired: Path) -> None:
    tattoo = mem(wired, 'tattoo.md')
    original = tattoo.read_text()
    tattoo.write_text(original + '- one more rule\n')
    code, findings = _doctor(wired)
    assert code == 0
    [unsaved] = _problems(findings, 'unsaved')
    assert (unsaved['level'], unsaved['message'], unsaved['fix']) == (
        'warning', 'unsaved memory: tattoo.md', 'agitmem save',
    )
    tattoo.write_text(original)
    git('checkout', '-q', '-b', 'feature', cwd=wired)
    tattoo.write_text(original.replace('- Never commit secrets', '- Never push secrets'))
    ok('save', cwd=wired)
    git('checkout', '-q', 'main', cwd=wired)
    tattoo.write_text(original.replace('- Never commit secrets', '- Never print secrets'))
    ok('save', cwd=wired)
    assert agitmem('merge', 'feature', cwd=wired).returncode == 1
    code, findings = _doctor(wired)
    assert code == 1
    [conflict] = _problems(findings, 'conflicts')
    assert conflict['message'] == '1 unresolved memory conflict(s): tattoo.md: 1 conflict(s) marked in the file'
    tattoo.write_text(original.replace('- Never commit secrets', '- Never print or push secrets'))
    ok('save', cwd=wired)
    assert _doctor(wired)[0] == 0


def test_fetch_refspec_and_remote_memory(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / 'remote.git'
    git('init', '-q', '--bare', str(bare), cwd=tmp_path)
    git('push', '-q', str(bare), 'main', cwd=repo)
    clone = tmp_path / 'clone'
    git('clone', '-q', str(bare), str(clone), cwd=tmp_path)
    ok('init', cwd=clone)
    ok('install', 'git', cwd=clone)
    ok('install', 'claude', cwd=clone)
    code, findings = _doctor(clone)
    assert code == 0
    [remote] = _problems(findings, 'remote-memory')
    assert remote['message'].startswith('origin has no memory of main')
    assert remote['fix'] == 'agitmem push origin'
    ok('push', 'origin', cwd=clone)
    code, findings = _doctor(clone)
    assert _problems(findings, 'remote-memory') == []

    git('config', '--unset-all', 'remote.origin.fetch', 'agitmem', cwd=clone)
    code, findings = _doctor(clone)
    assert code == 1
    [problem] = _problems(findings, 'fetch-refspec')
    assert problem['fix'] == "git config --add remote.origin.fetch '+refs/agitmem/heads/*:refs/agitmem/remotes/origin/*'"
    subprocess.run(problem['fix'], shell=True, cwd=clone, check=True)
    assert _doctor(clone)[0] == 0


def test_injection_over_budget_and_codex_cap(wired: Path) -> None:
    (wired / '.agent' / 'config.yaml').write_text('budget_tokens: 60\n')
    tattoo = mem(wired, 'tattoo.md')
    tattoo.write_text(tattoo.read_text() + ''.join(f'- rule number {i} is long enough\n' for i in range(20)))
    ok('save', cwd=wired)
    code, findings = _doctor(wired)
    assert code == 1
    over = [f for f in _problems(findings, 'injection') if f['level'] == 'error']
    assert over[0]['message'].startswith('injection over budget: ')
    assert 'budget_tokens' in over[0]['fix']

    (wired / '.agent' / 'config.yaml').write_text('budget_tokens: 3000\n')
    ok('save', cwd=wired)
    ok('install', 'codex', '--scope', 'user', cwd=wired)
    code, findings = _doctor(wired)
    [cap] = _problems(findings, 'injection')
    assert cap['level'] == 'warning' and 'Codex' in cap['message']
    assert cap['fix'] == 'set budget_tokens to 2500 or less in .agent/config.yaml'


def test_tattoo_over_its_share_of_the_injection_warns(wired: Path) -> None:
    code, findings = _doctor(wired)
    assert [f['level'] for f in findings if f['check'] == 'tattoo-size'] == ['ok']
    mem(wired, 'tattoo.md').write_text(f'- keep it short\n- {"x" * 12_000}\n')
    ok('state', 'set', 'current_goal=ship it', cwd=wired)
    code, findings = _doctor(wired)
    [tattoo] = _problems(findings, 'tattoo-size')
    assert tattoo['level'] == 'warning'
    assert tattoo['message'].startswith('the tattoo takes 12,019 characters of the injection, over its 6,000')
    assert 'left out of the injection' in tattoo['message']
    assert 'tattoo.md' in tattoo['fix']
    assert any('tattoo rule(s) left out' in f['message'] for f in _problems(findings, 'injection'))
    assert code == 0  # warnings inform


def test_unreadable_tattoo_is_the_injection_check_s_to_report(wired: Path) -> None:
    mem(wired, 'tattoo.md').write_bytes(b'- rule\0\n')
    code, findings = _doctor(wired)
    assert code == 1
    assert [f for f in findings if f['check'] == 'tattoo-size'] == []
    [injection] = _problems(findings, 'injection')
    assert 'tattoo.md' in injection['message'] and 'NUL byte' in injection['message']


def test_without_agitmem_init(repo: Path) -> None:
    proc = agitmem('doctor', cwd=repo)
    assert proc.returncode == 1
    assert 'Traceback' not in proc.stderr
    assert 'fix: agitmem init' in proc.stdout


def test_git_shims_whose_interpreter_is_gone(wired: Path) -> None:
    """The shims run `agitmem` from PATH, else the python that installed
    them: with that venv deleted and agitmem on no login PATH, every git
    hook fails."""
    env = {'SHELL': '/bin/sh'}
    assert _problems(_doctor(wired, env=env)[1], 'git-hooks') == []
    for name in ('pre-commit', 'post-commit'):
        shim = wired / '.git' / 'hooks' / name
        # the python the shim names: the one agitmem ran under when it
        # wrote it (the console script's, not always this test's)
        text, n = re.subn(r'\[ -x /\S+ \]', '[ -x /gone/venv/bin/python ]', shim.read_text())
        assert n == 1, text
        shim.write_text(text)
    code, findings = _doctor(wired, env=env)
    assert code == 1
    [problem] = _problems(findings, 'git-hooks')
    assert problem['message'] == (
        "the git hooks fall back to /gone/venv/bin/python, which is gone, and "
        "`agitmem` is not on your login shell's PATH: every hook fails"
    )
    assert problem['fix'] == 'agitmem install git'
    # a login shell that finds agitmem: the shims run it
    venv_bin = os.path.dirname(agitmem_argv()[0])
    (_home() / '.profile').write_text(f'PATH="{venv_bin}:$PATH"\n')
    assert _problems(_doctor(wired, env=env)[1], 'git-hooks') == []
    ok('install', 'git', cwd=wired)
    (_home() / '.profile').unlink()
    assert _problems(_doctor(wired, env=env)[1], 'git-hooks') == []


def test_git_shims_an_older_agitmem_wrote(wired: Path) -> None:
    """Older shims still run, without what agitmem learned since (v4: no
    relative PATH entry searched; v5: post-commit's skip): a warning, until
    `install git`."""
    from agitmem import githooks
    mark = f'# agitmem-shim v{githooks.VERSION}'
    for name in ('pre-commit', 'post-merge'):
        shim = wired / '.git' / 'hooks' / name
        assert mark in shim.read_text()
        shim.write_text(shim.read_text().replace(mark, f'# agitmem-shim v{githooks.VERSION - 1}'))
    code, findings = _doctor(wired)
    assert code == 0
    [problem] = _problems(findings, 'git-hooks')
    assert problem == {
        'check': 'git-hooks', 'level': 'warning',
        'message': 'git hooks written by an older agitmem: pre-commit, post-merge', 'fix': 'agitmem install git',
    }
    ok('install', 'git', cwd=wired)
    assert _problems(_doctor(wired)[1], 'git-hooks') == []


def test_a_settings_file_that_cannot_be_read_is_said(memrepo: Path) -> None:
    """Not taken for "no hooks": a cloned file doctor cannot read (not
    JSON, or JSON Python cannot hold) is an error naming the file."""
    (memrepo / '.claude').mkdir()
    (memrepo / '.claude' / 'settings.json').write_text('{"hooks": {"Stop": [' + '[' * 100_000 + '}\n')
    proc = agitmem('doctor', '--json', cwd=memrepo)
    assert proc.returncode == 1 and 'Traceback' not in proc.stderr, proc.stderr
    [bad] = [f for f in json.loads(proc.stdout)['findings'] if f['level'] == 'error' and 'cannot be checked' in f['message']]
    assert bad['message'].startswith('claude: ') and '.claude/settings.json: not valid JSON' in bad['message']
    assert bad['fix'] == 'fix or remove .claude/settings.json, then `agitmem install claude --scope project`'


@pytest.mark.skipif(sys.platform == 'win32', reason='POSIX signals')
@pytest.mark.parametrize('sig', ['SIGTERM', 'SIGINT'])
def test_doctor_killed_stops_the_login_shell_it_began(memrepo: Path, tmp_path: Path, sig: str) -> None:
    """doctor begins the user's login shell (in a group of its own, so a
    profile's children stop with it) and reads its PATH later: doctor
    ended by SIGTERM while it waits (`timeout`, an agent's time limit), or
    by ^C, left the shell running, since no signal to doctor reaches its
    group."""
    import signal
    pidfile = tmp_path / 'pid'
    shell = tmp_path / 'slowsh'
    shell.write_text(f'#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n')
    shell.chmod(0o755)
    proc = subprocess.Popen(
        [*agitmem_argv(), 'doctor'], cwd=memrepo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, 'SHELL': str(shell)},
        # the default actions (a background job ignores SIGINT)
        preexec_fn=lambda: (
            signal.signal(signal.SIGTERM, signal.SIG_DFL),
            signal.signal(signal.SIGINT, signal.default_int_handler),
        ),
    )
    child = pid_from(pidfile)
    proc.send_signal(getattr(signal, sig))
    assert proc.wait(timeout=30) == (130 if sig == 'SIGINT' else -signal.SIGTERM)
    assert ended(child), 'the login shell ran on after doctor was killed'
