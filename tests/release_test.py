"""A release users can pin (docs/release.md): the version in one place, the
README's `rev:` and install URLs, the changelog and the license agree; the
project's CI workflow is a valid workflow that runs the README's test
command on all three platforms; every shell script agitmem writes or
ships is POSIX sh (it runs under dash, macOS's bash 3.2 and Git for
Windows' sh)."""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from agitmem import __version__
from agitmem import githooks
from agitmem import trees
from testing.util import agitmem
from testing.util import run

ROOT = Path(__file__).resolve().parents[1]
TAG = f'v{__version__}'


def _readme_test_command() -> str:
    text = (ROOT / 'README.md').read_text()
    m = re.search(r'Run the tests.*?```bash\n(.*?)\n```', text, re.S)
    assert m, 'the README names its test command'
    return m.group(1).strip()


def test_the_cli_and_the_package_say_the_same_version(tmp_path: Path) -> None:
    proc = agitmem('--version', cwd=tmp_path)
    assert proc.stdout.strip() == f'agitmem {__version__}'
    assert re.fullmatch(r'\d+\.\d+\.\d+', __version__)
    assert 'version = ' not in (ROOT / 'pyproject.toml').read_text().split('[project.optional-dependencies]')[0]


@pytest.mark.parametrize('path', ['README.md', 'docs/checks.md', 'templates/github/agitmem-land.yml',
                                  'templates/github/agitmem-review.yml', 'templates/gitlab/agitmem-land.gitlab-ci.yml'])
def test_every_pinned_version_is_this_one(path: str) -> None:
    text = (ROOT / path).read_text()
    pins = re.findall(r'rev:\s*(v[\w.]+)', text) + re.findall(r'agitmem@(v[\w.]+)', text) + \
        re.findall(r'`@(v[\w.]+)`', text)
    assert pins, f'{path} pins no version'
    assert set(pins) == {TAG}


def test_the_changelog_has_this_version() -> None:
    text = (ROOT / 'CHANGELOG.md').read_text()
    versions = re.findall(r'^## \[([^\]]+)\]', text, re.M)
    assert versions[0] == 'Unreleased' or versions[0] == __version__
    assert __version__ in versions


def test_the_license_is_the_one_pyproject_names() -> None:
    assert 'license = "MIT"' in (ROOT / 'pyproject.toml').read_text()
    assert (ROOT / 'LICENSE').read_text().startswith('MIT License')


# -- the project's CI on a forge ------------------------------------------------

WORKFLOW = ROOT / '.github' / 'workflows' / 'ci.yml'


def test_the_workflow_is_valid() -> None:
    checker = shutil.which('check-jsonschema', path=str(Path(sys.executable).parent)) or shutil.which('check-jsonschema')
    assert checker, 'check-jsonschema is in the test extra'
    proc = run(checker, '--builtin-schema', 'vendor.github-workflows', str(WORKFLOW), cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_workflow_runs_the_readme_test_command_on_every_platform() -> None:
    flow = yaml.safe_load(WORKFLOW.read_text())
    job = flow['jobs']['test']
    assert set(job['strategy']['matrix']['os']) == {'ubuntu-latest', 'macos-latest', 'windows-latest'}
    last = job['steps'][-1]['run'].strip().splitlines()[-1].strip()
    assert last == _readme_test_command()
    assert 'bash .ci/install-claude' in WORKFLOW.read_text()


def test_ci_runs_the_readme_test_command() -> None:
    lines = (ROOT / '.ci' / 'run').read_text().strip().splitlines()
    assert _readme_test_command() in lines


# -- shell scripts are POSIX sh ---------------------------------------------------

def _scripts(tmp_path: Path) -> list[Path]:
    """Every sh script agitmem ships or writes: the agent shims, each git
    hook shim, the index-copy chain."""
    out = sorted((ROOT / 'hooks').glob('*.sh'))
    for name in ('pre-commit', 'commit-msg', 'post-commit', 'pre-push', 'post-checkout', 'post-merge', 'post-rewrite'):
        path = tmp_path / name
        path.write_text(githooks.shim(name, '/usr/bin/python3'))
        out.append(path)
    chain = tmp_path / 'tree-chain.sh'
    chain.write_text('#!/bin/sh\n' + trees._TREE_SH)
    out.append(chain)
    return out


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None and os.environ.get('CI'):
        pytest.fail(f'{name} is not installed (.ci/run installs it)')
    if found is None:
        pytest.skip(f'{name} is not installed here (.ci/run installs it)')
    return found


def test_shell_scripts_pass_shellcheck_as_sh(tmp_path: Path) -> None:
    shellcheck = _tool('shellcheck')
    for script in _scripts(tmp_path):
        # SC1090: a chained hook is sourced by its path, which is not known
        # until it runs (githooks.shim): not a portability question
        proc = run(shellcheck, '--shell=sh', '--severity=warning', '--exclude=SC1090', str(script), cwd=tmp_path)
        assert proc.returncode == 0, (script.name, proc.stdout)


# the post-commit shim's bound on `git hash-object` (githooks._SAVED): not
# POSIX, in every sh agitmem runs under; where it fails it fails quietly
_ALLOWED = re.compile(r'.* line \d+ \(ulimit\):\n\s*\{ ulimit -c 0; ulimit -t 1; \}\n')


def test_shell_scripts_have_no_bashisms(tmp_path: Path) -> None:
    checkbashisms = _tool('checkbashisms')
    for script in _scripts(tmp_path):
        proc = run(checkbashisms, '--force', '--extra', str(script), cwd=tmp_path)
        found = _ALLOWED.sub('', proc.stdout + proc.stderr)
        assert proc.returncode == 0 or not found, (script.name, found)
