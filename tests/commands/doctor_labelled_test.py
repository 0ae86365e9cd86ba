"""`agitmem doctor` against setups labelled blind (doctor-labels/, LABELS.md
there): each scenario's setup built for real (a repository after `agitmem
init`, a private HOME, then the scenario's shell script: installs,
settings edits, remotes, merges), `agitmem doctor --json` run, and each
check the labeller decided compared with doctor's level for it (the worst
of its findings; none at all is `ok`).  Agreement, Cohen's kappa, per-level
recall and the confusion matrix are printed (`pytest -s`) and written to
the test's temporary directory as report.txt."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from testing import labelled
from testing.util import agitmem_argv

HERE = Path(__file__).parent / 'doctor-labels'
SCENARIOS = sorted((HERE / 'scenarios').glob('*.yaml'))
LEVELS = ('ok', 'warning', 'error')
RANK = {level: i for i, level in enumerate(LEVELS)}
# every check docs/checks.md's Doctor table names
CHECKS = (
    'agent-hooks', 'mcp-server', 'codex-trust', 'gemini-trust', 'git-hooks', 'memory-ref', 'unsaved',
    'conflicts', 'fetch-refspec', 'remote-memory', 'tattoo-size', 'injection',
)
# the docs the labeller worked from gave no level for an injection over
# budget, so its problems went unlabelled (LABELS.md there)
NO_PROBLEM_LABELS = frozenset(('injection',))
# agreement measured when the set came in (1.00 on 178 labels, 2026-12-01): a
# guard against regressions, a little under it
FLOOR = 0.97
SETUP_TIMEOUT = 120

Judged = list[tuple[dict[str, Any], dict[str, str]]]


def _env(home: Path, scratch: Path, repo: Path) -> dict[str, str]:
    """The labeller's environment (run_setup.sh there): a private HOME, a
    plain PATH with this agitmem first, bash as the login shell (whose
    PATH does not have agitmem); AGITMEM_BIN and AGITMEM_PYTHON name this
    agitmem's console script and the interpreter it runs on."""
    gitconfig = home / '.gitconfig'
    gitconfig.write_text(
        '[init]\n\tdefaultBranch = main\n'
        '[user]\n\tname = Dev User\n\temail = dev@example.com\n',
    )
    script = agitmem_argv()[0]
    with open(script, 'rb') as f:
        first = f.readline()
    python = first[2:].strip().decode() if first.startswith(b'#!') else sys.executable
    keep = ('LANG', 'LC_ALL', 'TMPDIR', 'TERM')
    return {
        **{k: os.environ[k] for k in keep if k in os.environ},
        'HOME': str(home), 'GIT_CONFIG_GLOBAL': str(gitconfig), 'GIT_CONFIG_NOSYSTEM': '1',
        'SCRATCH': str(scratch), 'REPO': str(repo), 'SHELL': '/bin/bash',
        'PRE_COMMIT_HOME': str(home / '.cache' / 'pre-commit'),
        'PATH': f'{os.path.dirname(script)}{os.pathsep}/usr/local/bin:/usr/bin:/bin',
        'AGITMEM_BIN': script, 'AGITMEM_PYTHON': python,
    }


def _judge(scenario: dict[str, Any], root: Path) -> dict[str, str]:
    """Doctor's level for each check, after the scenario's setup."""
    home, scratch, repo = root / 'home', root / 'scratch', root / 'repo'
    for d in (home, scratch, repo):
        d.mkdir()
    env = _env(home, scratch, repo)
    (repo / 'src').mkdir()
    (repo / 'src' / 'app.py').write_text('def main():\n    return 0\n')
    (repo / 'README').write_text('# demo app\n')
    base = (
        'git init -q -b main && git add -A && git commit -qm "initial commit" && agitmem init >/dev/null\n'
    )
    for script in (base, scenario['setup']):
        proc = subprocess.run(
            ('bash', '-e', '-c', script), cwd=repo, env=env, capture_output=True, text=True,
            timeout=SETUP_TIMEOUT,
        )
        assert proc.returncode == 0, (scenario['id'], proc.stdout, proc.stderr)
    got = subprocess.run(
        ('agitmem', 'doctor', '--json'), cwd=repo, env=env, capture_output=True, text=True, timeout=SETUP_TIMEOUT,
    )
    assert 'Traceback' not in got.stderr, (scenario['id'], got.stderr)
    levels: dict[str, str] = {}
    for f in json.loads(got.stdout)['findings']:
        old = levels.get(f['check'], 'ok')
        levels[f['check']] = max(old, f['level'], key=RANK.__getitem__)
    return levels


@pytest.fixture(scope='module')
def judged(tmp_path_factory: pytest.TempPathFactory) -> Judged:
    ret = []
    for path in SCENARIOS:
        scenario = yaml.safe_load(path.read_text())
        ret.append((scenario, _judge(scenario, tmp_path_factory.mktemp(scenario['id']))))
    return ret


def _pairs(judged: Judged) -> list[tuple[str, str, str, str]]:
    """(scenario, check, label, doctor's level) for every labelled check."""
    return [
        (s['id'], check, label, levels.get(check, 'ok'))
        for s, levels in judged for check, label in s['expect'].items()
    ]


def test_the_set_spans_every_check_and_level() -> None:
    scenarios = [yaml.safe_load(p.read_text()) for p in SCENARIOS]
    assert len(scenarios) >= 40
    for check in CHECKS:
        labels = [s['expect'][check] for s in scenarios if check in s['expect']]
        assert labels.count('ok') >= 2, check
        if check not in NO_PROBLEM_LABELS:
            assert len(labels) - labels.count('ok') >= 2, check
    assert {label for s in scenarios for label in s['expect'].values()} == set(LEVELS)


def test_doctor_agrees_with_the_labels(judged: Judged, tmp_path: Path) -> None:
    rows = _pairs(judged)
    pairs = [(label, level) for _, _, label, level in rows]
    text = labelled.report(pairs, LEVELS, 'doctor vs the blind labels', unit='labelled checks')
    per_check = []
    for check in CHECKS:
        mine = [(a, b) for _, c, a, b in rows if c == check]
        hit = sum(1 for a, b in mine if a == b)
        per_check.append(f'{check:16}{len(mine):>5}{hit:>7}')
    wrong = [f'{sid} {check}: labelled {label}, doctor {level}' for sid, check, label, level in rows if label != level]
    text += (
        f'\n\n{"check":16}{"n":>5}{"agree":>7}\n' + '\n'.join(per_check) +
        '\n\ndisagreements:\n' + '\n'.join(wrong or ['none']) + '\n'
    )
    print('\n' + text)
    (tmp_path / 'report.txt').write_text(text)
    assert labelled.scores(pairs, LEVELS)['agreement'] >= FLOOR, text
