from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agitmem.agents import install
from agitmem.agents import settings_path
from agitmem.agents import uninstall
from agitmem.errors import AgitmemError

# settings that already hold other keys and other hooks, per agent
EXISTING: dict[str, dict[str, Any]] = {
    'claude': {
        'permissions': {'allow': ['Bash(npm test:*)']},
        'env': {'KEEP': '1'},
        'hooks': {
            'PostToolUse': [
                {
                    'matcher': 'Write|Edit',
                    'hooks': [{'type': 'command', 'command': 'prettier -w'}],
                },
            ],
            'Notification': [
                {'hooks': [{'type': 'command', 'command': 'notify-send hi'}]},
            ],
        },
    },
    'codex': {
        'hooks': {
            'PreToolUse': [
                {
                    'matcher': 'Bash',
                    'hooks': [
                        {
                            'type': 'command',
                            'command': 'python3 guard.py',
                            'statusMessage': 'checking',
                        },
                    ],
                },
            ],
            'Stop': [
                {'hooks': [{'type': 'command', 'command': 'say done'}]},
            ],
        },
    },
    'gemini': {
        'general': {'vimMode': True},
        'tools': {'enableHooks': True},
        'hooks': {
            'enabled': True,
            'disabled': ['slow-linter'],
            'BeforeTool': [
                {
                    'matcher': 'run_shell_command',
                    'hooks': [
                        {
                            'name': 'guard',
                            'type': 'command',
                            'command': './guard.sh',
                            'timeout': 5000,
                        },
                    ],
                },
            ],
        },
    },
}
NATIVE = {
    'claude': {
        'SessionStart': 'session-start',
        'PreCompact': 'pre-compact',
        'PostToolUse': 'post-edit',
        'UserPromptSubmit': 'prompt',
        'Stop': 'stop',
    },
    'codex': {
        'SessionStart': 'session-start',
        'PreCompact': 'pre-compact',
        'PostToolUse': 'post-edit',
        'UserPromptSubmit': 'prompt',
        'Stop': 'stop',
    },
    'gemini': {
        'SessionStart': 'session-start',
        'PreCompress': 'pre-compact',
        'AfterTool': 'post-edit',
        'BeforeAgent': 'prompt',
        'AfterAgent': 'stop',
    },
}


def _write(path: Path, obj: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=4) + '\n')


def _load(path: Path) -> Any:
    ret = json.loads(path.read_text())
    assert isinstance(ret, dict)
    return ret


def _ours(settings: Any, name: str) -> list[Any]:
    hooks = settings['hooks']
    assert isinstance(hooks, dict)
    return [
        group for group in hooks[name]
        if any('agitmem hook' in h['command'] for h in group['hooks'])
    ]


@pytest.mark.parametrize('agent', ('claude', 'codex', 'gemini'))
def test_round_trip_keeps_everything_else(tmp_path: Path, agent: str) -> None:
    path = settings_path(agent, tmp_path)
    _write(path, EXISTING[agent])

    changes = install(agent, tmp_path)
    assert changes
    settings = _load(path)
    for key, value in EXISTING[agent].items():
        if key != 'hooks':
            assert settings[key] == value
    hooks = settings['hooks']
    assert isinstance(hooks, dict)
    for name, groups in EXISTING[agent]['hooks'].items():
        if isinstance(groups, list):
            for group in groups:
                assert group in hooks[name]
        else:
            assert hooks[name] == groups
    for name, event in NATIVE[agent].items():
        (group,) = _ours(settings, name)
        (hook,) = group['hooks']
        assert hook['command'] == f'agitmem hook {event} --agent {agent}'
        assert hook['type'] == 'command'

    before = path.read_bytes()
    assert install(agent, tmp_path) == []
    assert path.read_bytes() == before

    assert uninstall(agent, tmp_path)
    assert _load(path) == EXISTING[agent]
    assert uninstall(agent, tmp_path) == []


def test_claude_layout(tmp_path: Path) -> None:
    install('claude', tmp_path)
    text = (tmp_path / '.claude' / 'settings.json').read_text()
    assert text.endswith('}\n')
    assert text.startswith('{\n  "hooks": {\n    "SessionStart": [\n')
    settings = _load(tmp_path / '.claude' / 'settings.json')
    assert settings == {
        'hooks': {
            'SessionStart': [
                {
                    'matcher': 'startup|resume|clear|compact',
                    'hooks': [{
                        'type': 'command',
                        'command': 'agitmem hook session-start --agent claude',
                        'timeout': 30,
                    }],
                },
            ],
            'PreCompact': [
                {'hooks': [{
                    'type': 'command',
                    'command': 'agitmem hook pre-compact --agent claude',
                    'timeout': 60,
                }]},
            ],
            'PostToolUse': [
                {
                    'matcher': 'Write|Edit|MultiEdit|NotebookEdit|Bash',
                    'hooks': [{
                        'type': 'command',
                        'command': 'agitmem hook post-edit --agent claude',
                        'timeout': 15,
                    }],
                },
            ],
            'UserPromptSubmit': [
                {'hooks': [{
                    'type': 'command',
                    'command': 'agitmem hook prompt --agent claude',
                    'timeout': 15,
                }]},
            ],
            'Stop': [
                {'hooks': [{
                    'type': 'command',
                    'command': 'agitmem hook stop --agent claude',
                    'timeout': 30,
                }]},
            ],
            # a failed Bash fires this one only: its exit code is observed
            'PostToolUseFailure': [
                {
                    'matcher': 'Bash',
                    'hooks': [{
                        'type': 'command',
                        'command': 'agitmem hook post-edit --agent claude',
                        'timeout': 15,
                    }],
                },
            ],
            # the client's summary of a compaction, for the recovery log
            'PostCompact': [
                {'hooks': [{
                    'type': 'command',
                    'command': 'agitmem hook pre-compact --agent claude',
                    'timeout': 60,
                }]},
            ],
        },
    }


def test_codex_matchers_and_trust_line(tmp_path: Path) -> None:
    changes = install('codex', tmp_path)
    assert any('/hooks' in line and 'trust' in line for line in changes)
    settings = _load(tmp_path / '.codex' / 'hooks.json')
    (start,) = _ours(settings, 'SessionStart')
    assert start['matcher'] == 'startup|resume|clear|compact'
    (post,) = _ours(settings, 'PostToolUse')
    assert post['matcher'] == 'apply_patch|Edit|Write|Bash'
    assert post['hooks'][0]['timeout'] == 15
    (stop,) = _ours(settings, 'Stop')
    assert 'matcher' not in stop
    assert install('codex', tmp_path) == []


def test_gemini_layout(tmp_path: Path) -> None:
    changes = install('gemini', tmp_path)
    assert any('trusted folder' in line for line in changes)
    settings = _load(tmp_path / '.gemini' / 'settings.json')
    # lifecycle matchers are exact strings in Gemini CLI: none at all
    (start,) = _ours(settings, 'SessionStart')
    assert 'matcher' not in start
    (compress,) = _ours(settings, 'PreCompress')
    assert 'matcher' not in compress
    (after,) = _ours(settings, 'AfterTool')
    assert after['matcher'] == '^(write_file|replace|run_shell_command)$'
    assert after['hooks'] == [{
        'name': 'agitmem-post-edit',
        'type': 'command',
        'command': 'agitmem hook post-edit --agent gemini',
        'timeout': 15000,
    }]


def test_custom_command(tmp_path: Path) -> None:
    install('claude', tmp_path, command='/opt/venv/bin/agitmem')
    settings = _load(tmp_path / '.claude' / 'settings.json')
    (group,) = _ours(settings, 'Stop')
    assert group['hooks'][0]['command'] == (
        '/opt/venv/bin/agitmem hook stop --agent claude'
    )
    # switching back replaces ours, it does not add a second one
    changes = install('claude', tmp_path)
    assert any('updated Stop' in line for line in changes)
    settings = _load(tmp_path / '.claude' / 'settings.json')
    (group,) = _ours(settings, 'Stop')
    assert group['hooks'][0]['command'] == 'agitmem hook stop --agent claude'


@pytest.mark.parametrize('command', (
    'uvx agitmem@latest', 'uvx agitmem@0.4.1', 'uvx agitmem==0.4.1', 'pipx run agitmem==0.4.1',
    'uvx agitmem[yaml]', 'uvx "agitmem>=0.4"',
))
def test_custom_command_naming_a_version(tmp_path: Path, command: str) -> None:
    """`install --command` with a launcher that takes a package's version
    (uv's `uvx agitmem@latest`, a pinned `==`, an extra): the entries it
    wrote are agitmem's, as `uvx agitmem`'s are.  They were taken for the
    user's: left by uninstall, and a second install added its own beside
    them (every hook ran twice)."""
    path = tmp_path / '.claude' / 'settings.json'
    install('claude', tmp_path, command=command)
    assert install('claude', tmp_path, command=command) == []
    install('claude', tmp_path)
    stop = _load(path)['hooks']['Stop']
    assert [h['command'] for g in stop for h in g['hooks']] == ['agitmem hook stop --agent claude']
    install('claude', tmp_path, command=command)
    assert uninstall('claude', tmp_path)[-1] == '.claude/settings.json: removed the file, nothing else was in it'
    assert not path.exists()


def test_update_keeps_the_position(tmp_path: Path) -> None:
    path = tmp_path / '.claude' / 'settings.json'
    old = {'hooks': [{
        'type': 'command',
        'command': 'agitmem hook post-edit --agent claude',
        'timeout': 5,
    }], 'matcher': 'Write|Edit'}
    mine = {'hooks': [{'type': 'command', 'command': 'make lint'}]}
    _write(path, {'hooks': {'PostToolUse': [old, mine]}})
    changes = install('claude', tmp_path)
    assert any('updated PostToolUse' in line for line in changes)
    hooks = _load(path)['hooks']
    assert isinstance(hooks, dict)
    first, second = hooks['PostToolUse']
    assert first['matcher'] == 'Write|Edit|MultiEdit|NotebookEdit|Bash'
    assert first['hooks'][0]['timeout'] == 15
    assert second == mine


def test_duplicates_of_ours_are_removed(tmp_path: Path) -> None:
    install('claude', tmp_path)
    path = tmp_path / '.claude' / 'settings.json'
    settings = _load(path)
    hooks = settings['hooks']
    assert isinstance(hooks, dict)
    hooks['Stop'].append(hooks['Stop'][0])
    # and one of ours sharing a group with a user's hook
    hooks['UserPromptSubmit'][0]['hooks'].append(
        {'type': 'command', 'command': 'log-prompt'},
    )
    _write(path, settings)
    changes = install('claude', tmp_path)
    assert any('duplicate of Stop' in line for line in changes)
    hooks = _load(path)['hooks']
    assert isinstance(hooks, dict)
    assert len(hooks['Stop']) == 1
    assert len(_ours(_load(path), 'UserPromptSubmit')) == 1
    commands = [
        h['command'] for g in hooks['UserPromptSubmit'] for h in g['hooks']
    ]
    # the user's hook stays where it was, ours moves to a group of its own
    assert commands == ['log-prompt', 'agitmem hook prompt --agent claude']


def test_stale_event_of_ours_is_removed(tmp_path: Path) -> None:
    # an event agitmem no longer uses, as agitmem writes every event (with
    # --agent: a bare `agitmem hook WORD` is ours only for its own events)
    path = tmp_path / '.claude' / 'settings.json'
    _write(path, {'hooks': {'SessionEnd': [{'hooks': [
        {'type': 'command', 'command': 'agitmem hook session-end --agent claude'},
    ]}]}})
    changes = install('claude', tmp_path)
    assert any('stale' in line and 'SessionEnd' in line for line in changes)
    hooks = _load(path)['hooks']
    assert isinstance(hooks, dict)
    assert 'SessionEnd' not in hooks


@pytest.mark.parametrize('agent', ('claude', 'codex', 'gemini'))
def test_uninstall_drops_what_it_emptied(tmp_path: Path, agent: str) -> None:
    install(agent, tmp_path)
    path = settings_path(agent, tmp_path)
    changes = uninstall(agent, tmp_path)
    assert any('removed the file' in line for line in changes)
    assert not path.exists()
    assert not path.parent.exists()


def test_uninstall_keeps_a_directory_with_other_files(tmp_path: Path) -> None:
    install('claude', tmp_path)
    other = tmp_path / '.claude' / 'settings.local.json'
    other.write_text('{}\n')
    uninstall('claude', tmp_path)
    assert not (tmp_path / '.claude' / 'settings.json').exists()
    assert other.read_text() == '{}\n'


def test_uninstall_keeps_groups_it_did_not_empty(tmp_path: Path) -> None:
    path = tmp_path / '.claude' / 'settings.json'
    _write(path, {'hooks': {'Stop': [{'hooks': [
        {'type': 'command', 'command': 'agitmem hook stop --agent claude'},
        {'type': 'command', 'command': 'say done'},
    ]}], 'SubagentStop': []}})
    uninstall('claude', tmp_path)
    assert _load(path) == {'hooks': {
        'Stop': [{'hooks': [{'type': 'command', 'command': 'say done'}]}],
        'SubagentStop': [],
    }}


def test_uninstall_takes_the_hook_programs_entries_and_only_them(tmp_path: Path) -> None:
    path = tmp_path / '.claude' / 'settings.json'
    ours = [
        'agitmem-hook stop --agent claude',
        '/opt/v/bin/agitmem-hook stop --agent claude',
        '"/opt/my venv/bin/agitmem-hook" stop --agent claude',
        'timeout 5 agitmem-hook stop',
        'agitmem hook stop --agent claude',
        '/opt/v/bin/python -P -m agitmem hook stop --agent claude',
        '"C:\\Program Files\\v\\Scripts\\agitmem.exe" hook stop --agent claude',
        'cd /srv/app && agitmem hook stop',
    ]
    # a user's own hooks that name it, or a look-alike, without an event
    theirs = [
        'logger -t agitmem-hook stopped', 'notify-send "agitmem-hook done"',
        'my-agitmem-hook stop', 'xagitmem-hook stop', 'agitmem-hooks stop',
        '~/bin/agitmem-hook.sh stop',
        "echo 'agitmem hook ran'", 'notify-send "agitmem hook stop done"',
        'myagitmem hook stop', 'agitmem hooks stop', 'agitmem hook',
        "printf '%s' \"unbalanced agitmem hook stop",
    ]
    _write(path, {'hooks': {'Stop': [{'hooks': [
        {'type': 'command', 'command': c} for c in [*ours, *theirs]
    ]}]}})
    assert uninstall('claude', tmp_path) == ['.claude/settings.json: removed agitmem Stop hooks (8)']
    assert [h['command'] for h in _load(path)['hooks']['Stop'][0]['hooks']] == theirs


def test_uninstall_reads_words_as_a_shell_and_as_windows_does(tmp_path: Path) -> None:
    """`agitmem hook` takes one of its events next, as agitmem writes it: a
    user's `echo agitmem hook ran` (unquoted) stays theirs.  A Windows path
    unquoted (`C:\\v\\agitmem.exe`: backslashes a POSIX shell would eat)
    is still agitmem's, as it was before the words were split."""
    path = tmp_path / '.claude' / 'settings.json'
    ours = [
        'C:\\Users\\me\\.venv\\Scripts\\agitmem.exe hook stop --agent claude',
        'C:\\Users\\me\\.venv\\Scripts\\agitmem hook stop --agent claude',
        'C:\\Users\\me\\.venv\\Scripts\\agitmem-hook stop --agent claude',
        'C:\\Python312\\python.exe -P -m agitmem hook stop --agent claude',
        # an apostrophe is no quote to Windows (it was an unclosed one: theirs)
        "C:\\Users\\O'Brien\\.venv\\Scripts\\agitmem.exe hook stop --agent claude",
        "C:\\Users\\O'Brien\\.venv\\Scripts\\python.exe -P -m agitmem hook stop --agent claude",
    ]
    theirs = [
        'echo agitmem hook ran >> /tmp/hooks.log', 'logger -t agitmem hook fired',
        'notify-send agitmem hook finished', 'git commit -qam agitmem hook done',
        'C:\\tools\\myagitmem.exe hook stop',
    ]
    _write(path, {'hooks': {'Stop': [{'hooks': [
        {'type': 'command', 'command': c} for c in [*ours, *theirs]
    ]}]}})
    assert uninstall('claude', tmp_path) == [f'.claude/settings.json: removed agitmem Stop hooks ({len(ours)})']
    assert [h['command'] for h in _load(path)['hooks']['Stop'][0]['hooks']] == theirs


def test_uninstall_leaves_a_hook_that_names_an_event_in_its_text(tmp_path: Path) -> None:
    """`agitmem hook stop` as words another program prints or passes on
    (echo, logger, git commit -m) is not agitmem run: the program is ours
    where a command begins, run by python -m, or after a wrapper (timeout,
    env, nice).  These were removed: a word `agitmem`, `hook`, an event."""
    path = tmp_path / '.claude' / 'settings.json'
    ours = [
        'agitmem hook stop --agent claude',
        'timeout 5 agitmem hook stop --agent claude',
        'env A=1 agitmem-hook stop --agent claude',
        'cd /srv && agitmem hook stop --agent claude',
        'true; agitmem hook stop --agent claude',
        '/opt/v/bin/python3 -P -m agitmem hook stop --agent claude',
        # what `install --command` writes: its launcher, then agitmem's words
        'uvx agitmem hook stop --agent claude', 'pipx run agitmem hook stop --agent claude',
        'uv run --with agitmem agitmem-hook stop --agent claude',
        'agitmem hook stop',  # an older entry, where a command begins
        # a shell's -c string is a command line: ours in it as outside
        "sh -c 'agitmem hook stop --agent claude'", 'bash -lc "cd /srv && agitmem hook stop --agent claude"',
    ]
    theirs = [
        "sh -c 'echo agitmem hook stop >> /tmp/hooks.log'",
        'echo agitmem hook stop >> /tmp/hooks.log', 'logger -t agitmem hook stop',
        'notify-send agitmem hook stop', 'echo agitmem-hook stop', 'echo C:\\agitmem hook stop',
    ]
    _write(path, {'hooks': {'Stop': [{'hooks': [
        {'type': 'command', 'command': c} for c in [*ours, *theirs]
    ]}]}})
    assert uninstall('claude', tmp_path) == [f'.claude/settings.json: removed agitmem Stop hooks ({len(ours)})']
    assert [h['command'] for h in _load(path)['hooks']['Stop'][0]['hooks']] == theirs


def test_uninstall_without_a_file(tmp_path: Path) -> None:
    assert uninstall('gemini', tmp_path) == []
    assert not (tmp_path / '.gemini').exists()


@pytest.mark.parametrize('agent', ('claude', 'codex', 'gemini'))
@pytest.mark.parametrize(
    ('contents', 'words'),
    (
        ('{\n  "hooks": {\n    "Stop": [,]\n  }\n}\n', 'line 3'),
        ('{"a": 1,}', 'line 1'),
        ('// comment\n{}', 'line 1'),
        ('[]\n', 'JSON array'),
        ('"hooks"', 'JSON string'),
        ('{"hooks": []}', '"hooks" is a JSON array'),
        ('{"hooks": {"Stop": {}}}', 'expected an array'),
    ),
)
def test_bad_settings_are_refused_unchanged(
        tmp_path: Path,
        agent: str,
        contents: str,
        words: str,
) -> None:
    path = settings_path(agent, tmp_path)
    path.parent.mkdir()
    path.write_text(contents)
    # a native-named event is needed for the last case
    if '"Stop"' in contents and agent == 'gemini':
        contents = contents.replace('"Stop"', '"AfterAgent"')
        path.write_text(contents)
    with pytest.raises(AgitmemError) as excinfo:
        install(agent, tmp_path)
    msg = str(excinfo.value)
    assert str(path) in msg
    assert words in msg
    assert '\n' not in msg
    assert path.read_text() == contents
    assert os.listdir(path.parent) == [path.name]


def test_bad_settings_error_quotes_the_line(tmp_path: Path) -> None:
    path = tmp_path / '.claude' / 'settings.json'
    path.parent.mkdir()
    path.write_text('{\n  "env": {"A": 1}\n  "hooks": {}\n}\n')
    with pytest.raises(AgitmemError) as excinfo:
        install('claude', tmp_path)
    assert str(excinfo.value) == (
        f"{path}: not valid JSON: Expecting ',' delimiter at line 3 "
        f"column 3: '\"hooks\": {{}}'; nothing was changed"
    )


def test_uninstall_refuses_bad_settings_too(tmp_path: Path) -> None:
    path = tmp_path / '.codex' / 'hooks.json'
    path.parent.mkdir()
    path.write_bytes(b'{oops')
    with pytest.raises(AgitmemError, match='not valid JSON'):
        uninstall('codex', tmp_path)
    assert path.read_bytes() == b'{oops'


def test_blank_settings_file_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / '.claude' / 'settings.json'
    path.parent.mkdir()
    path.write_text('\n')
    assert install('claude', tmp_path)
    hooks = _load(path)['hooks']
    assert isinstance(hooks, dict)
    assert 'Stop' in hooks


def test_install_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / '.claude' / 'settings.json'
    _write(path, {'env': {}})
    path.chmod(0o600)
    install('claude', tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(path.parent) == ['settings.json']


def test_shell_has_nothing_to_install(tmp_path: Path) -> None:
    with pytest.raises(AgitmemError, match='no native hooks'):
        install('shell', tmp_path)
    with pytest.raises(AgitmemError, match="unknown agent 'git'"):
        install('git', tmp_path)


def test_the_package_exports_exactly_what_it_loads_lazily() -> None:
    import agitmem.agents

    assert sorted(agitmem.agents.__all__) == sorted(agitmem.agents._WHERE)
    for name in agitmem.agents.__all__:
        assert getattr(agitmem.agents, name) is not None
