"""Paths compared as git's settings say the file system compares them: a
repository made case-insensitive and NFD-naming with git's own settings
(`core.ignorecase`, `core.precomposeUnicode`).  Linux's file system is
case-sensitive: the file on disk is `src/über.py` (composed), and the
agent reports `Src/Über.py` (decomposed), as macOS would hand it over."""
from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from agitmem import paths
from testing.util import agitmem
from testing.util import git
from testing.util import ok

PAYLOADS = Path(__file__).parent / 'agents' / 'payloads'
FILE = unicodedata.normalize('NFC', 'src/über.py')
REPORTED = unicodedata.normalize('NFD', 'Src/Über.py')
CODE = 'import os\n\n\ndef load_config(path):\n    data = open(path).read()\n    return data\n'


def test_key_folds_only_what_the_settings_say() -> None:
    assert paths.key(REPORTED, paths.PLAIN) == REPORTED
    assert paths.key(REPORTED, paths.Folding(precompose=True)) == unicodedata.normalize('NFC', REPORTED)
    assert paths.key(REPORTED, paths.Folding(ignorecase=True)) != paths.key(FILE, paths.Folding(ignorecase=True))
    both = paths.Folding(ignorecase=True, precompose=True)
    assert paths.key(REPORTED, both) == paths.key(FILE, both)


def test_on_disk_prefers_the_exact_spelling(tmp_path: Path) -> None:
    (tmp_path / 'a').mkdir()
    (tmp_path / 'a' / 'X.py').write_text('')
    (tmp_path / 'a' / 'x.py').write_text('')
    fold = paths.Folding(ignorecase=True)
    assert paths.on_disk(tmp_path, 'A/x.py', fold) == 'a/x.py'
    assert paths.on_disk(tmp_path, 'A/X.py', fold) == 'a/X.py'
    assert paths.on_disk(tmp_path, 'a/y.py', fold) is None
    assert paths.on_disk(tmp_path, '../a/x.py', fold) is None


def _payload(name: str, repo: Path, target: str) -> str:
    data = json.loads((PAYLOADS / f'{name}.json').read_text())
    data['tool_response']['structuredPatch'][0].update(newStart=5, newLines=1)
    data.update(cwd=str(repo), tool_input={**data['tool_input'], 'file_path': target})
    data['tool_response']['filePath'] = target
    return json.dumps(data)


def _hook(repo: Path, event: str, stdin: str) -> str:
    proc = agitmem('hook', event, '--agent', 'claude', cwd=repo, input=stdin)
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    assert 'not observed' not in proc.stderr, proc.stderr
    return proc.stdout


def _seen(repo: Path) -> dict[str, Any]:
    path = Path(git('rev-parse', '--absolute-git-dir', cwd=repo).strip()) / 'agitmem' / 'observed.json'
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def _context(repo: Path) -> str:
    stdin = json.dumps({'hook_event_name': 'SessionStart', 'source': 'compact', 'session_id': 's', 'cwd': str(repo)})
    out = json.loads(_hook(repo, 'session-start', stdin))
    return out['hookSpecificOutput']['additionalContext']  # type: ignore[no-any-return]


@pytest.fixture(params=[True, False], ids=['folding', 'linux'])
def folded(request: pytest.FixtureRequest, memrepo: Path) -> tuple[Path, bool]:
    on = request.param
    git('config', 'core.ignorecase', str(on).lower(), cwd=memrepo)
    git('config', 'core.precomposeUnicode', str(on).lower(), cwd=memrepo)
    (memrepo / 'src').mkdir(exist_ok=True)
    (memrepo / FILE).write_text(CODE)
    git('add', 'src', cwd=memrepo)
    git('commit', '-qm', 'code', cwd=memrepo)
    return memrepo, on


def test_edit_recorded_as_git_knows_the_file(folded: tuple[Path, bool]) -> None:
    repo, on = folded
    ok('state', 'set', f'current_file={REPORTED}', 'current_symbol=load_config', cwd=repo)
    _hook(repo, 'post-edit', _payload('claude_real_post_tool_use_edit', repo, str(repo / REPORTED)))
    edit, = _seen(repo)['edits']
    state = json.loads((repo / '.agent' / 'memory' / 'state.json').read_text())
    if on:
        # the file git knows, where its symbol was found
        assert (edit['file'], edit['symbol']) == (FILE, 'load_config')
        assert state['current_file'] == FILE
        assert 'state says current_file' not in _context(repo)
        assert 'state-vs-worktree' not in ok('check', cwd=repo)
    else:
        # a different case is a different file (that is not there)
        assert (edit['file'], edit['symbol']) == (REPORTED, None)
        assert state['current_file'] == REPORTED
        proc = agitmem('check', cwd=repo)
        assert 'current_file' in proc.stdout and 'does not exist' in proc.stdout


def test_state_vs_worktree_finds_current_file(folded: tuple[Path, bool]) -> None:
    repo, on = folded
    # written by another client straight into the file (a fetched memory ref may too)
    path = repo / '.agent' / 'memory' / 'state.json'
    state = json.loads(path.read_text())
    state.update(current_file=REPORTED, current_symbol='load_config')
    path.write_text(json.dumps(state))
    out = agitmem('check', cwd=repo)
    said = out.stdout + out.stderr
    assert ('current_file' in said) != on, said
    if on:
        # found, and read for the symbol
        state['current_symbol'] = 'parse_toml'
        path.write_text(json.dumps(state))
        assert 'current_symbol "parse_toml" is not in' in agitmem('check', cwd=repo).stdout


def test_a_file_of_another_case_outside_is_no_memory_file(folded: tuple[Path, bool]) -> None:
    # the agent writes .Agent/Memory/state.json: the memory, where names fold
    repo, on = folded
    before = git('rev-parse', 'refs/agitmem/heads/main', cwd=repo).strip()
    state = repo / '.agent' / 'memory' / 'state.json'
    data = json.loads(state.read_text())
    data['next_intent'] = 'parse TOML'
    state.write_text(json.dumps(data))
    data = json.loads((PAYLOADS / 'claude_real_post_tool_use_edit.json').read_text())
    target = str(repo / '.Agent' / 'Memory' / 'state.json')
    data.update(cwd=str(repo), tool_input={**data['tool_input'], 'file_path': target})
    out = _hook(repo, 'post-edit', json.dumps(data))
    after = git('rev-parse', 'refs/agitmem/heads/main', cwd=repo).strip()
    assert (after != before) == on, out
    assert ('memory saved' in out) == on
    if on:
        assert _seen(repo).get('edits', []) == []  # memory is not the work


def test_recovery_verdict_compares_the_file_git_knows(folded: tuple[Path, bool]) -> None:
    from tests.commands import recovery_test as rt
    repo, on = folded
    ok(
        'state', 'set', 'current_goal=read the config as TOML', 'current_symbol=load_config',
        'next_intent=replace the INI parsing in load_config with tomllib', cwd=repo,
    )
    # as another client wrote it, spelled as the agent said it
    path = repo / '.agent' / 'memory' / 'state.json'
    state = json.loads(path.read_text())
    state['current_file'] = REPORTED
    path.write_text(json.dumps(state))
    rt.compact(repo)
    rt.turn(repo, rt.edit(repo, REPORTED, 5))
    row, = rt.report(repo)['compactions']
    if on:
        assert row['verdict'] == 'recovered'
        assert row['first_action'] == f'edit {FILE} in load_config'
    else:
        # another file, which is not there: no symbol, not the state's file
        assert row['first_action'] == f'edit {REPORTED}'


# -- pathlib's answers without pathlib (the hooks' path, issue 41) -----------

SPELLINGS = (
    '', '.', '/', '//', '///', 'a', 'a/', 'a//b', './a/./b/.', '/a/../b', '//host/share/x',
    '///x//y/', '../a', 'a/..', ' a /b ', 'src/über.py', '.agent/memory (shell)',
)


@pytest.mark.parametrize('spelled', SPELLINGS)
def test_plain_spells_a_directory_as_pathlib_does(spelled: str) -> None:
    from agitmem import repo
    assert repo.plain(spelled) == str(Path(spelled))
    assert repo.plain(Path(spelled)) == str(Path(spelled))


@pytest.mark.parametrize('spelled', SPELLINGS)
def test_a_tool_paths_name_is_pathlibs(spelled: str) -> None:
    from agitmem.porcelain import agent_hooks
    assert agent_hooks._name(spelled) == Path(spelled).name


def test_resolved_is_pathlibs_resolve(tmp_path: Path) -> None:
    (tmp_path / 'real').mkdir()
    (tmp_path / 'link').symlink_to(tmp_path / 'real')
    (tmp_path / 'dangling').symlink_to(tmp_path / 'missing')
    (tmp_path / 'loop').symlink_to(tmp_path / 'loop')
    for rel in ('real', 'link/x.py', 'dangling', 'missing/a/../b', '.', 'link/../real'):
        assert paths.resolved(rel, str(tmp_path)) == str((tmp_path / rel).resolve())
        assert paths.parts(paths.resolved(rel, str(tmp_path))) == list((tmp_path / rel).resolve().parts)
        assert paths.resolved(str(tmp_path / rel)) == str((tmp_path / rel).resolve())
    assert paths.parts('/') == list(Path('/').parts)
    # a symlink loop: RuntimeError, as Path.resolve raises it
    with pytest.raises(RuntimeError):
        (tmp_path / 'loop').resolve()
    with pytest.raises(RuntimeError):
        paths.resolved('loop', str(tmp_path))
