"""config.yaml as commands read it: parsed once, then kept in the git dir."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from testing.util import agitmem
from testing.util import agitmem_argv
from testing.util import git
from testing.util import ok
from tests.imports_test import imported

CONFIG = 'budget_tokens: 500\nstale_minutes: 3\nenforce:\n  - {rule: no tabs, forbid: "\\t", files: "*.py"}\n'


def _cache(repo: Path) -> Path:
    return repo / '.git' / 'agitmem' / 'config-cache.json'


def _config(repo: Path, text: str) -> Path:
    path = repo / '.agent' / 'config.yaml'
    path.write_text(text)
    return path


def test_an_unchanged_config_is_read_without_yaml(memrepo: Path) -> None:
    _config(memrepo, CONFIG)
    assert 'yaml' in imported(memrepo, 'state', 'show')  # the first read parses it
    kept = json.loads(_cache(memrepo).read_text())
    assert kept['raw']['budget_tokens'] == 500
    assert not (memrepo / '.agent' / '.config-cache.json').exists()
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
    assert not _cache(memrepo).exists()


def test_a_damaged_or_forged_cache_is_no_way_round_the_checks(memrepo: Path) -> None:
    cache = _cache(memrepo)
    _config(memrepo, 'stale_minutes: 3\n')
    ok('state', 'show', cwd=memrepo)
    key = json.loads(cache.read_text())['sha1']
    cache.write_text('{not json')
    ok('state', 'show', cwd=memrepo)
    # a cache for this very text that says something else: still checked
    cache.write_text(json.dumps({'sha1': key, 'raw': {'stale_minutes': -5}}))
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


def _staged_tab(repo: Path) -> None:
    with (repo / '.agent' / 'memory' / 'tattoo.md').open('a') as f:
        f.write('- no tabs\n')  # an enforce rule stands for a tattoo rule
    (repo / 'b.py').write_text('\tx = 1\n')
    git('add', 'b.py', cwd=repo)


def test_a_cache_forged_in_agent_dir_switches_no_rule_off(memrepo: Path) -> None:
    """The attack of issue 19: the parse kept beside config.yaml edited so
    that its `enforce` rule is gone, config.yaml unchanged."""
    _config(memrepo, CONFIG)
    _staged_tab(memrepo)
    assert agitmem('check', '--staged', cwd=memrepo).returncode == 1  # parsed, cached
    forged = {'text': CONFIG, 'raw': {'budget_tokens': 500, 'stale_minutes': 3, 'enforce': []}}
    (memrepo / '.agent' / '.config-cache.json').write_text(json.dumps(forged))
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 1 and 'no tabs' in proc.stdout + proc.stderr
    # and with no cache of ours at all (a fresh clone, a new worktree)
    _cache(memrepo).unlink()
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 1 and 'no tabs' in proc.stdout + proc.stderr


def test_the_cache_is_keyed_by_the_bytes_of_config_yaml(memrepo: Path) -> None:
    """A cache for other bytes (another config.yaml, or the same one's
    parse altered along with its text) is not this file's parse."""
    _config(memrepo, CONFIG)
    _staged_tab(memrepo)
    assert agitmem('check', '--staged', cwd=memrepo).returncode == 1
    cache = _cache(memrepo)
    kept = json.loads(cache.read_text())
    cache.write_text(json.dumps({'sha1': '0' * 40, 'text': CONFIG, 'raw': {**kept['raw'], 'enforce': []}}))
    proc = agitmem('check', '--staged', cwd=memrepo)
    assert proc.returncode == 1 and 'no tabs' in proc.stdout + proc.stderr
    assert json.loads(cache.read_text()) == kept  # parsed again, kept again


def test_each_worktree_keeps_its_own_cache(memrepo: Path, tmp_path: Path) -> None:
    _config(memrepo, CONFIG)
    ok('state', 'show', cwd=memrepo)
    git('add', '-A', cwd=memrepo)
    git('commit', '-qm', 'x', '--allow-empty', cwd=memrepo)
    other = tmp_path / 'other'
    git('worktree', 'add', '-q', str(other), '-b', 'other', cwd=memrepo)
    ok('init', cwd=other)
    _config(other, 'budget_tokens: 300\n')
    ok('state', 'show', cwd=other)
    gd = Path(git('rev-parse', '--absolute-git-dir', cwd=other).strip())
    assert json.loads((gd / 'agitmem' / 'config-cache.json').read_text())['raw'] == {'budget_tokens': 300}
    assert json.loads(_cache(memrepo).read_text())['raw']['budget_tokens'] == 500


def test_a_cache_that_is_no_json_file_reads_as_none(memrepo: Path) -> None:
    """The cache is written without fsync and lives where a crash, or
    anyone with the checkout, can leave anything: a FIFO, a link to
    /dev/zero, JSON nested past the parser's depth.  Each is no cache."""
    cache = _cache(memrepo)
    _config(memrepo, 'stale_minutes: 3\n')
    cache.parent.mkdir(parents=True, exist_ok=True)
    for make in (os.mkfifo, lambda p: os.symlink('/dev/zero', p), lambda p: p.write_text('[' * 100_000 + ']' * 100_000)):
        cache.unlink(missing_ok=True)
        make(cache)
        proc = subprocess.run(
            [*agitmem_argv(), 'state', 'show'], cwd=memrepo, capture_output=True, text=True, timeout=60,
        )
        assert proc.returncode == 0 and proc.stderr == '', proc.stderr[-300:]
