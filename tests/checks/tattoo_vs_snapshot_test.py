from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agitmem.checks import Finding
from agitmem.checks.tattoo_vs_snapshot import check
from agitmem.memory import tattoo
from testing.util import agitmem
from testing.util import mem
from testing.util import ok

TATTOO = '.agent/memory/tattoo.md'
SNAPSHOT = '.agent/memory/snapshot.md'
STATE = '.agent/memory/state.json'


def _snapshot(decisions: str = '', in_progress: str = '') -> str:
    return (
        '# Snapshot\n\n## Goal\nmove the loader\n\n'
        f'## In progress\n{in_progress}\n'
        f'## Decisions\n{decisions}'
    )


def _check(
        rules: str,
        snapshot: str = '',
        state: dict[str, Any] | None = None,
        user: str = '',
) -> list[Finding]:
    parsed = [('~/.agent/memory/tattoo.md', r) for r in tattoo.parse(user)]
    parsed += [(TATTOO, r) for r in tattoo.parse(rules)]
    state = state or {}
    return check(
        parsed, snapshot, state, snapshot_path=SNAPSHOT, state_path=STATE,
        state_text=json.dumps(state, indent=2),
    )


def test_agreeing_memory_passes() -> None:
    assert _check('- indent: 4 spaces\n', _snapshot('- indent: 4 spaces.\n')) == []


def test_values_compare_without_case_spacing_or_backticks() -> None:
    snap = _snapshot('- Indent:  `4 Spaces`\n')
    assert _check('- indent: 4 spaces\n', snap) == []


def test_decision_contradicting_a_rule_names_both_lines() -> None:
    snap = _snapshot('- error type: ConfigError\n- indent: tabs\n')
    found, = _check('# Tattoo\n\n- indent: 4 spaces\n', snap)
    assert (found.id, found.severity, found.path, found.line) == (
        'tattoo-vs-snapshot', 'error', SNAPSHOT, 10,
    )
    assert snap.splitlines()[9] == '- indent: tabs'
    assert found.message.startswith(
        f'decision "indent: tabs" contradicts tattoo rule "indent: 4 spaces" '
        f'({TATTOO}:3); change the decision to "indent: 4 spaces"',
    )


def test_only_decisions_are_compared() -> None:
    snap = _snapshot(in_progress='- indent: tabs (being removed)\n')
    assert _check('- indent: 4 spaces\n', snap) == []


def test_keys_match_across_spaces_dashes_and_underscores() -> None:
    found, = _check('- error-type: ConfigError\n', _snapshot('1. Error type: ValueError\n'))
    assert found.line == 9


def test_project_rule_wins_over_user_rule() -> None:
    snap = _snapshot('- indent: 2 spaces\n')
    assert _check('- indent: 2 spaces\n', snap, user='- indent: 4 spaces\n') == []
    found, = _check('', snap, user='- indent: 4 spaces\n')
    assert '(~/.agent/memory/tattoo.md:1)' in found.message


def test_state_key_contradicting_a_rule() -> None:
    found, = _check('- language: Python 3.11\n', state={'step': 1, 'language': 'Python 3.8'})
    assert (found.severity, found.path, found.line) == ('error', STATE, 3)
    assert found.message.startswith(
        'state "language" says "Python 3.8", which contradicts tattoo rule '
        '"language: Python 3.11"',
    )


def test_state_text_contradicting_a_rule() -> None:
    found, = _check('- indent: 4 spaces\n', state={'next_intent': 'indent: tabs'})
    assert found.path == STATE
    assert 'state "next_intent" says "indent: tabs"' in found.message


def test_forbidden_term_in_plan_warns() -> None:
    snap = _snapshot('- store config in `moment` objects\n', '- replace `var` in loader.ts\n')
    found = _check('- Never use `var` or `moment`.\n', snap)
    assert [(f.severity, f.line) for f in found] == [('warning', 7), ('warning', 10)]
    assert found[0].message.startswith(
        f'uses `var`, which tattoo rule "Never use `var` or `moment`." ({TATTOO}:1) forbids',
    )


def test_forbidden_term_is_a_whole_word() -> None:
    snap = _snapshot(in_progress='- rename the variable\n')
    assert _check('- never use `var`\n', snap) == []


def test_forbidden_term_in_state_warns() -> None:
    found, = _check('- 禁止使用 `eval`\n', state={'last_action': 'wrapped eval() in a helper'})
    assert (found.severity, found.path) == ('warning', STATE)


def test_terms_of_positive_rules_are_not_forbidden() -> None:
    snap = _snapshot(in_progress='- run `pytest`\n')
    assert _check('- always run `pytest`\n', snap) == []


def test_templates_pass(memrepo: Path) -> None:
    out = ok('check', cwd=memrepo)
    assert 'tattoo-vs-snapshot' not in out


def test_through_the_cli(memrepo: Path) -> None:
    with open(mem(memrepo, 'tattoo.md'), 'a') as f:
        f.write('- indent: 4 spaces\n')
    with open(mem(memrepo, 'snapshot.md'), 'a') as f:
        f.write('- indent: tabs\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    tattoo_line = mem(memrepo, 'tattoo.md').read_text().splitlines().index('- indent: 4 spaces') + 1
    snap_line = mem(memrepo, 'snapshot.md').read_text().splitlines().index('- indent: tabs') + 1
    assert (
        f'error tattoo-vs-snapshot {SNAPSHOT}:{snap_line}: decision "indent: tabs" '
        f'contradicts tattoo rule "indent: 4 spaces" ({TATTOO}:{tattoo_line})'
    ) in proc.stdout


def _counting_uses(monkeypatch: Any) -> list[int]:
    """tattoo_vs_snapshot._uses counted: the count, in a list of one."""
    from agitmem.checks import tattoo_vs_snapshot
    tried = [0]
    uses = tattoo_vs_snapshot._uses

    def counted(text: str, term: str) -> bool:
        tried[0] += 1
        return uses(text, term)
    monkeypatch.setattr(tattoo_vs_snapshot, '_uses', counted)
    return tried


def test_many_forbidden_terms_by_many_lines_are_not_each_tried(monkeypatch: Any) -> None:
    """A tattoo (it may come with a clone) forbidding thousands of terms,
    a snapshot of thousands of decisions: the terms each line could use
    are looked up by its words, not every term tried on every line (3,000
    by 3,000 took seconds of every commit's pre-commit hook)."""
    tried = _counting_uses(monkeypatch)
    rules = '- never use ' + ' '.join(f'`t{i}`' for i in range(3000)) + '\n'
    snap = _snapshot(''.join(f'- d{i} and t{i}x\n' for i in range(3000)) + '- uses t7 here\n')
    found = _check(rules, snap)
    assert [f.message.split(',')[0] for f in found] == ['uses `t7`']
    assert tried[0] < 10_000


def test_forbidden_terms_are_found_whatever_their_ends() -> None:
    """Terms whose ends are word characters or not, or none: each as
    _uses finds it, on every line, in the order of the rules' terms."""
    terms = ['var', '.env', 'a.b', '-x-', '->', 'ſt', 'foo bar', '$x', 'x$', '١٢']
    rules = '- never use ' + ' '.join(f'`{t}`' for t in terms) + '\n'
    lines = [
        'a var.', 'variable', 'my.env', 'a.bc', 'a.b c', 'y-x-z', 'p->q', 'ſt!', 'xſt',
        'foo bar', 'foo  bar', '$x1', 'a$x', 'x$y', 'ax$', '١٢', '١٢٣', '-',
    ]
    snap = _snapshot(''.join(f'- {line}\n' for line in lines))
    from agitmem.checks import tattoo_vs_snapshot
    expected = [
        (n, t) for n, line in enumerate(lines) for t in terms if tattoo_vs_snapshot._uses(f'- {line}', t)
    ]
    found = _check(rules, snap)
    assert [(f.line, f.message.split('`')[1]) for f in found] == [(n + 9, t) for n, t in expected]
    assert len(found) >= 10


def test_terms_of_no_word_on_many_lines_are_tried_a_bounded_number_of_times(monkeypatch: Any) -> None:
    """Terms with no word character (`->`) are tried on every line: past
    a bound of tries the check stops, and says so (20,000 such terms by
    20,000 lines took minutes of every commit's pre-commit hook)."""
    import itertools

    from agitmem.checks import tattoo_vs_snapshot
    monkeypatch.setattr(tattoo_vs_snapshot, '_TRIES_MAX', 50_000, raising=False)
    tried = _counting_uses(monkeypatch)
    terms = [''.join(t) for t in itertools.product('!#%&*+,-./:;<=>?@', repeat=3)][:1000]
    rules = '- never use ' + ' '.join(f'`{t}`' for t in terms) + '\n'
    snap = _snapshot('- a !!# b\n' + ''.join(f'- d{i}\n' for i in range(1000)))
    found = _check(rules, snap)
    assert tried[0] <= 50_000
    assert found[-1].message.startswith('the tattoo forbids more terms (1,000) than are looked for')
    assert (found[-1].path, found[-1].line) == (TATTOO, 1)
    # what was tried before is found
    assert found[0].message.startswith('uses `!!#`')
