from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import agitmem_argv
from testing.util import bad
from testing.util import git
from testing.util import ok

_CLAUDE = {'SessionStart', 'PreCompact', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'PostToolUseFailure', 'PostCompact'}
_CODEX = {'SessionStart', 'PreCompact', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'PostCompact'}
_GEMINI = {'SessionStart', 'PreCompress', 'AfterTool', 'BeforeAgent', 'AfterAgent', 'BeforeModel'}


def _home() -> Path:
    return Path(os.environ['HOME'])


@pytest.mark.parametrize(
    ('agent', 'scope', 'path', 'events'),
    (
        ('claude', 'local', '.claude/settings.local.json', _CLAUDE),
        ('claude', 'project', '.claude/settings.json', _CLAUDE),
        ('claude', 'user', '~/.claude/settings.json', _CLAUDE),
        ('codex', 'project', '.codex/hooks.json', _CODEX),
        ('codex', 'user', '~/.codex/hooks.json', _CODEX),
        ('gemini', 'local', '.gemini/settings.json', _GEMINI),
        ('gemini', 'user', '~/.gemini/settings.json', _GEMINI),
    ),
)
def test_install_uninstall_round_trip(
        memrepo: Path, agent: str, scope: str, path: str, events: set[str],
) -> None:
    if path.startswith('~/'):
        settings = _home() / path[2:]
    else:
        settings = memrepo / path
    settings.parent.mkdir(exist_ok=True)
    original = {
        'model': 'x',
        'hooks': {'Stop' if agent != 'gemini' else 'AfterAgent': [
            {'hooks': [{'type': 'command', 'command': 'echo mine'}]},
        ]},
    }
    settings.write_text(json.dumps(original, indent=2) + '\n')
    out = ok('install', agent, '--scope', scope, cwd=memrepo)
    assert f'{path}: added' in out
    data = json.loads(settings.read_text())
    assert data['model'] == 'x'
    assert set(data['hooks']) == events
    commands = [h['command'] for groups in data['hooks'].values() for g in groups for h in g['hooks']]
    assert 'echo mine' in commands
    assert sum('hook ' in c and 'agitmem' in c for c in commands) == len(events)
    if agent == 'claude':
        assert data['hooks']['SessionStart'][0]['matcher'] == 'startup|resume|clear|compact'
    if agent == 'codex':
        assert '/hooks' in out
    once = settings.read_bytes()
    assert 'nothing changed' in ok('install', agent, '--scope', scope, cwd=memrepo)
    assert settings.read_bytes() == once
    ok('uninstall', agent, '--scope', scope, cwd=memrepo)
    assert json.loads(settings.read_text()) == original


def test_install_refuses_non_json_settings(memrepo: Path) -> None:
    settings = memrepo / '.claude' / 'settings.json'
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}}\n')
    line = bad('install', 'claude', '--scope', 'project', cwd=memrepo)
    assert '.claude/settings.json: not valid JSON' in line and 'line 1' in line
    assert settings.read_text() == '{"hooks": {,}}\n'


@pytest.mark.parametrize(
    ('agent', 'path'),
    (
        ('claude', '.claude/settings.local.json'),
        ('codex', '.codex/hooks.json'),
        ('gemini', '.gemini/settings.json'),
    ),
)
def test_default_scope_stays_out_of_git(memrepo: Path, agent: str, path: str) -> None:
    """The default never puts hooks that need agitmem into a teammate's
    checkout: the file is written, and git does not see it."""
    out = ok('install', agent, cwd=memrepo)
    assert f'{path} added to .git/info/exclude' in out
    assert 'agitmem' in (memrepo / path).read_text()
    assert git('status', '--porcelain', '--untracked-files=all', cwd=memrepo) == ''
    git('add', '.', cwd=memrepo)
    assert git('diff', '--cached', '--name-only', cwd=memrepo) == ''
    assert not (memrepo / '.claude' / 'settings.json').exists()

    out = ok('uninstall', agent, cwd=memrepo)
    assert f'{path} taken out of .git/info/exclude' in out
    assert not (memrepo / path).exists()
    exclude = (memrepo / '.git' / 'info' / 'exclude').read_text()
    assert path not in exclude and '/.agent/' in exclude


def test_local_scope_refuses_a_tracked_file(memrepo: Path) -> None:
    hooks = memrepo / '.codex' / 'hooks.json'
    hooks.parent.mkdir()
    hooks.write_text('{"hooks": {}}\n')
    git('add', '.codex/hooks.json', cwd=memrepo)
    git('commit', '-q', '-m', 'team codex hooks', cwd=memrepo)
    line = bad('install', 'codex', cwd=memrepo)
    assert '.codex/hooks.json is tracked' in line and '--scope project' in line
    assert hooks.read_text() == '{"hooks": {}}\n'
    assert '/.codex/hooks.json' not in (memrepo / '.git' / 'info' / 'exclude').read_text()
    # sharing them is a choice the user makes by name
    ok('install', 'codex', '--scope', 'project', cwd=memrepo)
    assert git('status', '--porcelain', cwd=memrepo) == ' M .codex/hooks.json\n'


def test_user_scope_leaves_the_project_alone(memrepo: Path) -> None:
    out = ok('install', 'claude', '--scope', 'user', cwd=memrepo)
    assert '~/.claude/settings.json: added SessionStart hook' in out
    data = json.loads((_home() / '.claude' / 'settings.json').read_text())
    assert set(data['hooks']) == _CLAUDE  # PostToolUseFailure too: a failed Bash
    assert not (memrepo / '.claude').exists()
    assert '.claude' not in (memrepo / '.git' / 'info' / 'exclude').read_text()


def test_uninstall_names_the_scope_the_hooks_are_in(memrepo: Path) -> None:
    ok('install', 'gemini', '--scope', 'user', cwd=memrepo)
    out = ok('uninstall', 'gemini', cwd=memrepo)
    assert 'already uninstalled (.gemini/settings.json): nothing changed' in out
    assert '`agitmem uninstall gemini --scope user`' in out
    assert (_home() / '.gemini' / 'settings.json').exists()
    ok('uninstall', 'gemini', '--scope', 'user', cwd=memrepo)
    assert not (_home() / '.gemini' / 'settings.json').exists()


def test_scope_is_for_agents_only(memrepo: Path) -> None:
    assert '--scope is for agents' in bad('install', 'git', '--scope', 'user', cwd=memrepo)
    assert 'invalid choice' in bad('install', 'claude', '--scope', 'team', cwd=memrepo)


def test_command_is_for_installing_agents_only(memrepo: Path) -> None:
    """`install git --command X` and `uninstall claude --command X` took
    the option and dropped it without a word: refused, nothing written."""
    assert '--command is for agents' in bad('install', 'git', '--command', '/opt/agitmem', cwd=memrepo)
    assert not (memrepo / '.git' / 'hooks' / 'pre-commit').exists()
    assert '--command is for install' in bad('uninstall', 'claude', '--command', 'x', cwd=memrepo)
    assert '--command is for install' in bad('uninstall', 'git', '--command', 'x', cwd=memrepo)


def test_install_unknown_target(memrepo: Path) -> None:
    assert 'unknown target "vim"' in bad('install', 'vim', cwd=memrepo)


# -- the command the hooks call (they outlive the shell that ran install) ------

def _venv_bin() -> str:
    return os.path.dirname(agitmem_argv()[0])


def _commands(settings: Path) -> set[str]:
    data = json.loads(settings.read_text())
    return {h['command'] for groups in data['hooks'].values() for g in groups for h in g['hooks']}


def _elsewhere_env() -> dict[str, str]:
    """Another terminal or an IDE: the environment is not activated."""
    env = {k: v for k, v in os.environ.items() if k not in ('VIRTUAL_ENV', 'PYTHONPATH')}
    env['PATH'] = '/usr/bin:/bin'
    return env


def test_hooks_installed_from_an_activated_venv_work_elsewhere(memrepo: Path, tmp_path: Path) -> None:
    venv_bin = _venv_bin()
    activated = {
        'PATH': f'{venv_bin}:/usr/bin:/bin', 'VIRTUAL_ENV': os.path.dirname(venv_bin),
        'SHELL': '/bin/sh',
    }
    out = ok('install', 'claude', cwd=memrepo, env=activated)
    assert 'by absolute path: `agitmem` is not on the PATH an agent client gets' in out
    commands = _commands(memrepo / '.claude' / 'settings.local.json')
    for c in commands:
        argv = shlex.split(c)
        assert os.path.isabs(argv[0]) and argv[1:5] == ['-P', '-m', 'agitmem', 'hook'], c
    # the project holds an `agitmem` package of its own: never imported
    marker = tmp_path / 'imported'
    (memrepo / 'agitmem').mkdir()
    (memrepo / 'agitmem' / '__init__.py').write_text(f'open({str(marker)!r}, "w").close()\n')
    (memrepo / 'agitmem' / '__main__.py').write_text('')
    [start] = [c for c in commands if ' session-start ' in c]
    payload = json.dumps({
        'session_id': 's1', 'transcript_path': None, 'cwd': str(memrepo),
        'hook_event_name': 'SessionStart', 'source': 'startup',
    })
    proc = subprocess.run(
        ['/bin/sh', '-c', start], cwd=memrepo, input=payload, capture_output=True,
        text=True, env=_elsewhere_env(),
    )
    assert proc.returncode == 0, proc.stderr
    assert 'AGENT MEMORY BEGIN' in proc.stdout
    assert not marker.exists()
    proc = agitmem('doctor', '--json', cwd=memrepo, env=activated)
    [hooks] = [f for f in json.loads(proc.stdout)['findings'] if f['check'] == 'agent-hooks']
    assert hooks['level'] == 'ok', hooks


def test_plain_agitmem_when_the_login_shell_finds_this_one(memrepo: Path) -> None:
    profile = _home() / '.profile'
    # a profile that talks: only the PATH after agitmem's marker counts
    profile.write_text(f'echo welcome\nPATH="{_venv_bin()}:$PATH"\nexport PATH\n')
    env = {'SHELL': '/bin/sh'}
    out = ok('install', 'claude', cwd=memrepo, env=env)
    assert 'by absolute path' not in out
    settings = memrepo / '.claude' / 'settings.local.json'
    # the hooks' own program, pip's beside the console script
    assert all(re.fullmatch(r'agitmem-hook [a-z-]+ --agent claude', c) for c in _commands(settings))
    assert agitmem('doctor', cwd=memrepo, env=env).stdout.startswith(
        'ok       agent-hooks    claude: 7 hooks in .claude/settings.local.json, `agitmem-hook` reaches agitmem',
    )
    # the login shell no longer finds it: the hooks would exit 127
    profile.unlink()
    proc = agitmem('doctor', '--json', cwd=memrepo, env=env)
    assert proc.returncode == 1
    [problem] = [f for f in json.loads(proc.stdout)['findings'] if f['check'] == 'agent-hooks']
    assert problem['message'].endswith(
        "`agitmem-hook` is not on the PATH an agent client gets (your login shell's)",
    )


def _login_finds(*programs: str) -> Path:
    """A login shell whose PATH has only `programs` of this venv (linked)."""
    only = _home() / 'only-bin'
    only.mkdir(exist_ok=True)
    for name in programs:
        (only / name).symlink_to(Path(_venv_bin()) / name)
    (_home() / '.profile').write_text(f'PATH="{only}:$PATH"\nexport PATH\n')
    return only


def test_without_the_hook_program_the_hooks_call_agitmem_hook(memrepo: Path) -> None:
    _login_finds('agitmem')  # (an install made without scripts/agitmem-hook)
    env = {'SHELL': '/bin/sh'}
    out = ok('install', 'gemini', '--scope', 'project', cwd=memrepo, env=env)
    assert 'by absolute path' not in out
    commands = _commands(memrepo / '.gemini' / 'settings.json')
    assert all(re.fullmatch(r'agitmem hook [a-z-]+ --agent gemini', c) for c in commands), commands


def test_the_hooks_run_through_the_hook_program_and_old_entries_are_updated(memrepo: Path) -> None:
    only = _login_finds('agitmem', 'agitmem-hook')
    env = {'SHELL': '/bin/sh'}
    settings = memrepo / '.claude' / 'settings.local.json'
    ok('install', 'claude', '--command', 'agitmem', cwd=memrepo, env=env)  # an older install's entries
    assert all(c.startswith('agitmem hook ') for c in _commands(settings))
    [slow] = [f for f in json.loads(agitmem('doctor', '--json', cwd=memrepo, env=env).stdout)['findings']
              if f['check'] == 'agent-hooks' and f['level'] == 'warning']
    assert 'start through agitmem\'s console script' in slow['message']
    assert slow['fix'] == 'agitmem install claude --scope local'
    out = ok('install', 'claude', cwd=memrepo, env=env)
    assert 'updated SessionStart hook: agitmem-hook session-start --agent claude' in out
    commands = _commands(settings)
    assert all(c.startswith('agitmem-hook ') for c in commands) and len(commands) == 5, commands
    findings = json.loads(agitmem('doctor', '--json', cwd=memrepo, env=env).stdout)['findings']
    assert [f['level'] for f in findings if f['check'] == 'agent-hooks'] == ['ok']
    [start] = [c for c in commands if ' session-start ' in c]
    payload = json.dumps({
        'session_id': 's1', 'transcript_path': None, 'cwd': str(memrepo),
        'hook_event_name': 'SessionStart', 'source': 'startup',
    })
    elsewhere = {**_elsewhere_env(), 'PATH': f'{only}:/usr/bin:/bin'}
    proc = subprocess.run(['/bin/sh', '-c', start], cwd=memrepo, input=payload, capture_output=True, text=True, env=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert 'AGENT MEMORY BEGIN' in proc.stdout
    # uninstall knows the new form
    assert 'removed' in ok('uninstall', 'claude', cwd=memrepo, env=env)
    assert not settings.exists() or not _commands(settings)


def test_command_cannot_name_the_hook_program(memrepo: Path) -> None:
    line = bad('install', 'claude', '--command', f'{_venv_bin()}/agitmem-hook', cwd=memrepo)
    assert line.startswith('agitmem: --command is how to run agitmem itself (its MCP server too); agitmem-hook is')
    assert not (memrepo / '.claude').exists()


def test_without_a_login_shell_the_path_is_this_one_without_the_venv(memrepo: Path) -> None:
    venv_bin = _venv_bin()
    env = {'SHELL': '/nonexistent/sh', 'PATH': f'{venv_bin}:/usr/bin:/bin'}
    out = ok('install', 'gemini', cwd=memrepo, env=env)
    assert 'by absolute path' in out
    assert all(shlex.split(c)[1:3] == ['-P', '-m'] for c in _commands(memrepo / '.gemini' / 'settings.json'))


# -- where install writes: never through a symlink that leaves ------------------

def test_a_codex_dir_linked_outside_is_refused(memrepo: Path, tmp_path: Path) -> None:
    outside = tmp_path / 'outside'
    outside.mkdir()
    (memrepo / '.codex').symlink_to(outside)
    for scope in ('local', 'project'):
        line = bad('install', 'codex', '--scope', scope, cwd=memrepo)
        assert line == (
            f'agitmem: .codex/hooks.json leads to {outside}/hooks.json through a '
            f'symlink, outside the repository: agitmem does not write there; nothing was changed'
        )
    assert list(outside.iterdir()) == []
    assert '.codex' not in (memrepo / '.git' / 'info' / 'exclude').read_text()


def test_a_settings_file_linked_outside_is_refused(memrepo: Path, tmp_path: Path) -> None:
    theirs = tmp_path / 'theirs.json'
    theirs.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "agitmem hook stop"}]}]}}\n')
    before = theirs.read_text()
    (memrepo / '.claude').mkdir()
    (memrepo / '.claude' / 'settings.json').symlink_to(theirs)
    assert 'outside the repository' in bad('install', 'claude', '--scope', 'project', cwd=memrepo)
    assert 'outside the repository' in bad('uninstall', 'claude', '--scope', 'project', cwd=memrepo)
    assert theirs.read_text() == before
    assert (memrepo / '.claude' / 'settings.json').is_symlink()


def test_a_settings_file_linked_into_git_dir_is_refused(memrepo: Path) -> None:
    (memrepo / '.gemini').mkdir()
    (memrepo / '.gemini' / 'settings.json').symlink_to('../.git/hooks/post-checkout')
    assert 'outside the repository' in bad('install', 'gemini', '--scope', 'project', cwd=memrepo)
    assert not (memrepo / '.git' / 'hooks' / 'post-checkout').exists()


def test_a_settings_file_linked_inside_stays_a_link(memrepo: Path) -> None:
    shared = memrepo / 'conf' / 'claude.json'
    shared.parent.mkdir()
    shared.write_text('{"model": "x"}\n')
    link = memrepo / '.claude' / 'settings.json'
    link.parent.mkdir()
    link.symlink_to('../conf/claude.json')
    ok('install', 'claude', '--scope', 'project', cwd=memrepo)
    assert link.is_symlink() and os.readlink(link) == '../conf/claude.json'
    assert json.loads(shared.read_text())['model'] == 'x'
    assert 'SessionStart' in json.loads(shared.read_text())['hooks']
    ok('uninstall', 'claude', '--scope', 'project', cwd=memrepo)
    assert link.is_symlink()
    assert json.loads(shared.read_text()) == {'model': 'x'}
    # emptied: the link and its target stay, holding an empty object
    shared.write_text('{}\n')
    ok('install', 'claude', '--scope', 'project', cwd=memrepo)
    ok('uninstall', 'claude', '--scope', 'project', cwd=memrepo)
    assert link.is_symlink() and json.loads(shared.read_text()) == {}


def test_local_scope_through_a_symlink_is_refused(memrepo: Path) -> None:
    (memrepo / 'conf').mkdir()
    (memrepo / '.claude').symlink_to('conf')
    line = bad('install', 'claude', cwd=memrepo)
    assert 'leads to' in line and 'use --scope project' in line
    assert list((memrepo / 'conf').iterdir()) == []


def test_user_scope_stays_in_the_home_directory(memrepo: Path, tmp_path: Path) -> None:
    dotfiles = _home() / 'dotfiles' / 'claude'
    dotfiles.mkdir(parents=True)
    (_home() / '.claude').symlink_to(dotfiles)
    ok('install', 'claude', '--scope', 'user', cwd=memrepo)
    assert 'SessionStart' in json.loads((dotfiles / 'settings.json').read_text())['hooks']
    ok('uninstall', 'claude', '--scope', 'user', cwd=memrepo)
    assert (_home() / '.claude').is_symlink()
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    (_home() / '.gemini').symlink_to(elsewhere)
    line = bad('install', 'gemini', '--scope', 'user', cwd=memrepo)
    assert 'outside the home directory' in line
    assert list(elsewhere.iterdir()) == []


def test_a_settings_symlink_loop_is_one_line(memrepo: Path) -> None:
    (memrepo / '.claude').mkdir()
    (memrepo / '.claude' / 'settings.json').symlink_to('settings.json')
    line = bad('install', 'claude', '--scope', 'project', cwd=memrepo)
    assert line.startswith('agitmem: ') and 'settings.json' in line


def test_another_agitmem_on_the_login_path_is_named(memrepo: Path, tmp_path: Path) -> None:
    other = tmp_path / 'other' / 'bin' / 'agitmem'
    other.parent.mkdir(parents=True)
    other.write_text('#!/usr/bin/python3\nimport sys\nfrom agitmem.cli import main\nsys.exit(main())\n')
    other.chmod(0o755)
    (_home() / '.profile').write_text(f'PATH="{other.parent}:$PATH"\n')
    out = ok('install', 'codex', '--scope', 'project', cwd=memrepo, env={'SHELL': '/bin/sh'})
    assert f'by absolute path: `agitmem` on the PATH an agent client gets (your login shell\'s) is {other}, another install' in out
