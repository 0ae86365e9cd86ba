"""`agitmem land`, and the CI jobs shipped in templates/ that call it: each
checked against the published schema, and its commands run as the CI job
runs them, against a bare remote, for each merge method."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from testing.forge import feature
from testing.forge import forge_merge
from testing.forge import MAIN
from testing.forge import METHODS
from testing.forge import notes
from testing.forge import setup
from testing.util import bad
from testing.util import git
from testing.util import ok
from testing.util import run
from testing.util import tip

ROOT = Path(__file__).resolve().parents[2]
GITHUB = ROOT / 'templates' / 'github' / 'agitmem-land.yml'
GITLAB = ROOT / 'templates' / 'gitlab' / 'agitmem-land.gitlab-ci.yml'
_EXPR = re.compile(r'\$\{\{\s*github\.event\.([\w.]+)\s*\}\}')


def _check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / 'check-jsonschema'
    return run(str(exe), '--builtin-schema', schema, str(path), cwd=ROOT)


@pytest.mark.parametrize(('schema', 'path'), [
    ('vendor.github-workflows', GITHUB),
    ('vendor.github-workflows', ROOT / 'templates' / 'github' / 'agitmem-review.yml'),
    ('vendor.gitlab-ci', GITLAB),
])
def test_ci_templates_match_the_published_schemas(schema: str, path: Path) -> None:
    proc = _check_jsonschema(schema, path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_schema_check_can_fail(tmp_path: Path) -> None:
    broken = tmp_path / 'broken.yml'
    broken.write_text('on: push\njobs:\n  x:\n    steps: 3\n')
    assert _check_jsonschema('vendor.github-workflows', broken).returncode != 0


def _event(o: dict[str, Any], path: str) -> str:
    for part in path.split('.'):
        o = o[part]
    return str(o)


def _ci_clone(remote: Path, tmp: Path, name: str) -> Path:
    """A CI runner's checkout: the whole history, the base branch."""
    ci = tmp / name
    git('clone', '-q', str(remote), str(ci), cwd=tmp)
    return ci


def _landed(remote: Path, branch: str, pr: str, sha: str, note: str) -> None:
    subject = git('log', '-1', '--format=%s', MAIN, cwd=remote).strip()
    assert subject == f'merge: {branch} (pull request {pr}, landed as {sha[:12]})'
    assert len(git('log', '-1', '--format=%P', MAIN, cwd=remote).split()) == 2
    assert f'Code-Head: {sha}' in git('log', '-1', '--format=%B', MAIN, cwd=remote)
    assert notes(remote).count(note) == 1


@pytest.mark.parametrize('method', METHODS)
def test_github_workflow_merges_the_memory_for_each_merge_method(
        tmp_path: Path, method: str,
) -> None:
    workflow = yaml.safe_load(GITHUB.read_text())
    assert workflow[True]['pull_request']['types'] == ['closed']  # `on:`
    job = workflow['jobs']['memory-land']
    assert 'github.event.pull_request.merged == true' in job['if']
    [checkout] = [s for s in job['steps'] if s.get('uses', '').startswith('actions/checkout')]
    assert checkout['with']['fetch-depth'] == 0
    [step] = [s for s in job['steps'] if 'agitmem land' in s.get('run', '')]

    remote, dev, forge = setup(tmp_path)
    feature(dev, 'feat', 'feat: retries are capped at 3')
    sha = forge_merge(forge, 'feat', method, 7)
    event = {'pull_request': {
        'merged': True, 'number': 7, 'merge_commit_sha': sha,
        'head': {'ref': 'feat'}, 'base': {'ref': 'main'},
    }}
    env = {k: _EXPR.sub(lambda m: _event(event, m[1]), v) for k, v in step['env'].items()}
    ci = _ci_clone(remote, tmp_path, 'runner')
    for attempt in range(2):  # a re-run of the job merges nothing twice
        proc = run('bash', '-e', '-c', step['run'], cwd=ci, env=env)
        assert proc.returncode == 0, proc.stderr
        _landed(remote, 'feat', '#7', sha, 'feat: retries are capped at 3')
    assert 'already holds' in proc.stdout
    # a teammate's next pull brings it
    git('pull', '-q', cwd=dev)
    assert tip(dev) == tip(remote)


@pytest.mark.parametrize('method', METHODS)
def test_gitlab_job_merges_the_memory_for_each_merge_method(
        tmp_path: Path, method: str,
) -> None:
    job = yaml.safe_load(GITLAB.read_text())['agitmem-land']
    # the API call needs a GitLab: the test gives its answer instead
    curl, *script = job['script']
    assert curl.startswith('curl --fail') and '--max-time' in curl
    identity = [line for line in job['before_script'] if line.startswith('git config')]
    assert len(identity) == 2

    remote, dev, forge = setup(tmp_path)
    feature(dev, 'feat', 'feat: retries are capped at 3')
    sha = forge_merge(forge, 'feat', method, 12)
    ci = _ci_clone(remote, tmp_path, 'runner')
    (ci / 'merge_requests.json').write_text(json.dumps([
        {'iid': 12, 'state': 'merged', 'source_branch': 'feat', 'target_branch': 'main'},
        {'iid': 3, 'state': 'closed', 'source_branch': 'old', 'target_branch': 'main'},
    ]))
    env = {'CI_COMMIT_BRANCH': 'main', 'CI_COMMIT_SHA': sha}
    proc = run('bash', '-e', '-c', '\n'.join(identity + script), cwd=ci, env=env)
    assert proc.returncode == 0, proc.stderr
    _landed(remote, 'feat', '!12', sha, 'feat: retries are capped at 3')


def test_land_without_memory_for_the_branch_is_a_no_op(tmp_path: Path) -> None:
    remote, _, forge = setup(tmp_path)
    before = tip(remote)
    out = ok('land', 'nope', '--into', 'main', '--pr', '#1', '--commit', 'HEAD', cwd=forge)
    assert 'origin has no memory for nope: nothing to merge' in out
    assert tip(remote) == before


def test_land_refuses_bad_input(tmp_path: Path) -> None:
    _, _, forge = setup(tmp_path)
    line = bad('land', 'feat', '--into', 'main', '--pr', '#1', '--commit', 'f' * 40, cwd=forge)
    assert 'is not a commit here' in line
    line = bad('land', 'feat', '--into', 'main', '--pr', '#1', '--commit', 'HEAD', '--remote', 'nowhere', cwd=forge)
    assert 'no remote named "nowhere"' in line
    line = bad('land', ' ', '--into', 'main', '--pr', '#1', '--commit', 'HEAD', cwd=forge)
    assert 'land needs a branch' in line


def test_land_refuses_to_merge_conflicting_memory(tmp_path: Path) -> None:
    remote, dev, forge = setup(tmp_path)
    feature(dev, 'feat', 'feat note')
    git('switch', '-q', 'feat', cwd=dev)
    (dev / '.agent' / 'memory' / 'tattoo.md').write_text('feat rules\n')
    ok('save', '-m', 'feat tattoo', cwd=dev)
    git('push', '-q', cwd=dev)
    git('switch', '-q', 'main', cwd=dev)
    (dev / '.agent' / 'memory' / 'tattoo.md').write_text('main rules\n')
    ok('save', '-m', 'main tattoo', cwd=dev)
    ok('push', cwd=dev)
    sha = forge_merge(forge, 'feat', 'squash', 4)
    before = tip(remote)
    line = bad('land', 'feat', '--into', 'main', '--pr', '#4', '--commit', sha, cwd=forge)
    assert 'conflicts with main\'s: not merged' in line
    assert tip(remote) == before
