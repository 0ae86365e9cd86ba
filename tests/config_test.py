"""config.yaml as commands read it: parsed once, then kept beside it."""
from __future__ import annotations

import json
from pathlib import Path

from testing.util import agitmem
from testing.util import git
from testing.util import ok
from tests.imports_test import imported

CONFIG = 'budget_tokens: 500\nstale_minutes: 3\nenforce:\n  - {rule: no tabs, forbid: "\\t", files: "*.py"}\n'


def _config(repo: Path, text: str) -> Path:
    path = repo / '.agent' / 'config.yaml'
    path.write_text(text)
    return path


def test_an_unchanged_config_is_read_without_yaml(memrepo: Path) -> None:
    _config(memrepo, CONFIG)
    assert 'yaml' in imported(memrepo, 'state', 'show')  # the first read parses it
    kept = json.loads((memrepo / '.agent' / '.config-cache.json').read_text())
    assert kept['text'] == CONFIG and kept['raw']['budget_tokens'] == 500
    assert 'yaml' not in imported(memrepo, 'state', 'show')
    assert 'yaml' not in imported(memrepo, 'load')


def test_a_changed_config_is_parsed_again(memrepo: Path) -> None:
    _config(memrepo, 'stale_minutes: 3\n')
    ok('state', 'set', 'current_goal=g', cwd=memrepo)
    assert 'budget' not in ok('status', cwd=memrepo)
    _config(memrepo, 'stale_minutes: 3\nbudget_tokens: 7\n')
    proc = agitmem('load', cwd=memrepo)
    assert 'over the budget of 7 tokens' in proc.stderr + proc.stdout


def test_a_bad_config_is_refused_every_time(memrepo: Path) -> None:
    _config(memrepo, 'stale_minutes: -1\n')
    for _ in range(2):
        proc = agitmem('state', 'show', cwd=memrepo)
        assert proc.returncode == 2 and 'out of range' in proc.stderr
    assert not (memrepo / '.agent' / '.config-cache.json').exists()


def test_a_damaged_or_forged_cache_is_no_way_round_the_checks(memrepo: Path) -> None:
    cache = memrepo / '.agent' / '.config-cache.json'
    _config(memrepo, 'stale_minutes: 3\n')
    cache.write_text('{not json')
    ok('state', 'show', cwd=memrepo)
    # a cache for this very text that says something else: still checked
    cache.write_text(json.dumps({'text': 'stale_minutes: 3\n', 'raw': {'stale_minutes': -5}}))
    proc = agitmem('state', 'show', cwd=memrepo)
    assert proc.returncode == 2 and 'out of range' in proc.stderr


def test_check_staged_reads_an_unchanged_config_without_yaml(memrepo: Path) -> None:
    _config(memrepo, CONFIG)
    with (memrepo / '.agent' / 'memory' / 'tattoo.md').open('a') as f:
        f.write('- no tabs\n')  # an enforce rule stands for a tattoo rule
    ok('save', cwd=memrepo)  # parsed once
    (memrepo / 'a.py').write_text('x = 1\n')
    git('add', 'a.py', cwd=memrepo)
    assert 'yaml' not in imported(memrepo, 'check', '--staged')
    (memrepo / 'b.py').write_text('\tx = 1\n')
    git('add', 'b.py', cwd=memrepo)
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 1 and 'no tabs' in proc.stdout + proc.stderr
