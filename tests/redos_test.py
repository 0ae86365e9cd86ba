"""Enforce regexes cannot make `check --staged` (and so `git commit`) run
without bound: shapes that backtrack are refused when the config is read,
and matching that still runs long is stopped and reported."""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from agitmem.checks import enforce
from agitmem import redos
from agitmem.checks.enforce import check
from agitmem.config import enforce_rules
from agitmem.diffs import Added
from agitmem.errors import AgitmemError
from testing.util import git
from testing.util import ok

BACKTRACKING = [
    r'(a+)+$', r'(a|aa)+$', r'(.*a){20}', r'^(a*)*$', r'(.*)*', r'(x+x+)+y',
    r'(\w+\s?)*$', r'(ab|a.)+$', r'(\d+|\w+)+', r'((a+)b?)+', r'(?:[a-z]+)*@',
    r'(\s*,\s*\w+)*x', r'(a?a)+b', r'(?:.*=){10}', r'(a|a?)+b',
    r'(\w+\s+\w+)+!', r'(?i)(A+a+)+x', r'prefix (?:(a+)+|b)$',
]
LINEAR = [
    r'print\(', r'\t', r'(\w+\s)+', r'(foo|bar)+', r'(?:[^,]*,)+',
    r'^feat(\(\w+\))?: .+', r'(a|ab)+$', r'(\d+\.)+\d+',
    r'^(fix|feat|docs|chore)(\([a-z-]+\))?!?: \S', r'a{2,5}', r'(ab)+',
    r'[A-Z]{2,}-\d+', r'(?:https?://\S+\s+)+', r'(ab*)+', r'(a++)+',
    r'(?>a+)+', r'(\w|\d)+x', r'(\w+,)*\w+',
]
# backtracks without bound (40^12 steps on 40 a's) in a shape the
# analysis does not refuse: only the time limit stops it
SLOW = 'a*' * 12 + 'x'
TATTOO = [(1, 'no slow rules')]


@pytest.mark.parametrize('pattern', BACKTRACKING)
def test_backtracking_regex_is_refused(pattern: str) -> None:
    for kind in ('forbid', 'commit_msg'):
        with pytest.raises(AgitmemError) as excinfo:
            enforce_rules([{'rule': 'r', kind: pattern}])
        msg = str(excinfo.value)
        assert f'enforce rule 1 ("r"): `{kind}` regex {pattern!r}' in msg
        assert 'exponential time' in msg


@pytest.mark.parametrize('pattern', LINEAR)
def test_linear_regex_is_accepted(pattern: str) -> None:
    assert enforce_rules([{'rule': 'r', 'forbid': pattern}]) == [
        {'rule': 'r', 'forbid': pattern},
    ]


def test_the_analysis_misses_the_slow_pattern() -> None:
    # or the time-limit tests below would test nothing
    assert redos.problem(SLOW) is None


def _added(*texts: str) -> list[Added]:
    return [Added('src/a.py', i, t) for i, t in enumerate(texts, 1)]


def test_forbid_out_of_time_is_an_error_naming_the_rule() -> None:
    rules = enforce_rules([{'rule': 'no slow rules', 'forbid': SLOW}])
    start = time.monotonic()
    findings = check(
        rules, tattoo_lines=TATTOO, added=_added('fine', 'a' * 40),
        commit_msg=None, old_files=lambda p: None, new_files=lambda p: None,
    )
    assert time.monotonic() - start < enforce.RULE_SECONDS + 5
    assert [(f.severity, f.message) for f in findings] == [(
        'error',
        f'enforce rule "no slow rules": regex /{SLOW}/ ran out of time (2 s) '
        f'on src/a.py:2: it backtracks without bound; rewrite it in '
        f'config.yaml (no nested quantifiers like `(a+)+`)',
    )]


def test_commit_msg_out_of_time_is_an_error_naming_the_rule() -> None:
    rules = enforce_rules([{'rule': 'no slow rules', 'commit_msg': SLOW}])
    findings = check(
        rules, tattoo_lines=TATTOO, added=[], commit_msg='a' * 40,
        old_files=lambda p: None, new_files=lambda p: None,
    )
    assert len(findings) == 1
    assert 'enforce rule "no slow rules"' in findings[0].message
    assert 'ran out of time' in findings[0].message
    assert 'on the commit message' in findings[0].message


def test_many_slow_rules_share_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(enforce, 'RULE_SECONDS', 0.5)
    monkeypatch.setattr(enforce, 'TOTAL_SECONDS', 1.0)
    rules = enforce_rules([{'rule': 'no slow rules', 'forbid': SLOW}] * 8)
    start = time.monotonic()
    findings = check(
        rules, tattoo_lines=TATTOO, added=_added('a' * 40),
        commit_msg=None, old_files=lambda p: None, new_files=lambda p: None,
    )
    took = time.monotonic() - start
    assert len(findings) == 8
    assert all('ran out of time' in f.message for f in findings)
    # 8 rules at 0.5 s each would be 4 s: the total caps it near 1 s
    assert took < 1.0 + 8 * enforce.MIN_SECONDS + 1.5


def test_a_fast_rule_keeps_its_findings_and_the_alarm_is_restored() -> None:
    before = signal.getsignal(signal.SIGALRM)
    rules = enforce_rules([{'rule': 'no slow rules', 'forbid': 'TODO'}])
    findings = check(
        rules, tattoo_lines=TATTOO, added=_added('ok', '# TODO later'),
        commit_msg=None, old_files=lambda p: None, new_files=lambda p: None,
    )
    assert [f.line for f in findings] == [2]
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_rule_checked_off_the_main_thread_runs_without_the_alarm() -> None:
    """Only the main thread may set a signal handler (an MCP server's
    worker thread may not): there the analysis is the guard, and the rule
    is checked, no error, the main thread's alarm untouched."""
    import threading
    before = signal.getsignal(signal.SIGALRM)
    rules = enforce_rules([{'rule': 'no slow rules', 'forbid': 'TODO'}])
    out: list[object] = []

    def run() -> None:
        try:
            out.append(check(
                rules, tattoo_lines=TATTOO, added=_added('# TODO'),
                commit_msg=None, old_files=lambda p: None, new_files=lambda p: None,
            ))
        except BaseException as e:  # (said in the main thread)
            out.append(e)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    [findings] = out
    assert isinstance(findings, list) and [f.line for f in findings] == [1]
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


# the real thing: `git commit` through agitmem's git hooks

def _malicious(memrepo: Path, rule: dict[str, str]) -> None:
    """A config (as `init` in a clone or a pull would adopt it) whose
    enforce rule backtracks, and a staged line that sets it off.  The git
    hooks were installed before it arrived."""
    ok('install', 'git', cwd=memrepo)
    with open(memrepo / '.agent' / 'memory' / 'tattoo.md', 'a') as f:
        f.write('- no slow rules\n')
    kind, pattern = next((k, v) for k, v in rule.items() if k != 'rule')
    (memrepo / '.agent' / 'config.yaml').write_text(
        f"enforce:\n  - rule: no slow rules\n    {kind}: '{pattern}'\n",
    )
    (memrepo / 'src' / 'app.py').write_text('a' * 40 + '\n')
    git('add', 'src/app.py', cwd=memrepo)


def _commit(memrepo: Path, msg: str = 'change') -> subprocess.CompletedProcess[str]:
    # timeout: a hang guard, not a speed assertion
    return subprocess.run(
        ['git', 'commit', '-q', '-m', msg], cwd=memrepo, capture_output=True,
        text=True, timeout=20,
    )


@pytest.mark.parametrize('kind', ['forbid', 'commit_msg'])
def test_git_commit_with_a_backtracking_rule_is_refused_at_once(
        memrepo: Path, kind: str,
) -> None:
    head = git('rev-parse', 'HEAD', cwd=memrepo)
    _malicious(memrepo, {'rule': 'no slow rules', kind: '(a+)+$'})
    proc = _commit(memrepo, 'a' * 40)
    assert proc.returncode != 0
    assert 'Traceback' not in proc.stderr
    assert f"`{kind}` regex '(a+)+$' can take exponential time" in proc.stderr
    assert git('rev-parse', 'HEAD', cwd=memrepo) == head


@pytest.mark.parametrize('kind', ['forbid', 'commit_msg'])
def test_git_commit_with_a_slow_rule_ends_and_names_it(
        memrepo: Path, kind: str,
) -> None:
    head = git('rev-parse', 'HEAD', cwd=memrepo)
    _malicious(memrepo, {'rule': 'no slow rules', kind: SLOW})
    proc = _commit(memrepo, 'a' * 40)
    assert proc.returncode != 0
    assert 'Traceback' not in proc.stderr
    out = proc.stdout + proc.stderr
    assert f'enforce rule "no slow rules": regex /{SLOW}/ ran out of time' in out
    assert git('rev-parse', 'HEAD', cwd=memrepo) == head
