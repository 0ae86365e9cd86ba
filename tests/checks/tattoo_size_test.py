from __future__ import annotations

from pathlib import Path

from agitmem.checks.tattoo_size import check
from agitmem.memory.tattoo import parse_rule
from testing.util import agitmem
from testing.util import mem
from testing.util import ok

PATH = '.agent/memory/tattoo.md'


def _rules(n: int) -> str:
    return '# Tattoo\n\n' + ''.join(f'- rule {i}\n' for i in range(1, n + 1))


def test_at_max_rules_is_fine() -> None:
    assert check(_rules(20), max_rules=20, path=PATH) == []


def test_over_max_rules_warns_at_the_first_extra_rule() -> None:
    found, = check(_rules(21), max_rules=20, path=PATH)
    assert (found.id, found.severity, found.path) == ('tattoo-size', 'warning', PATH)
    assert found.line == 23  # two header lines, then rule 21
    assert found.message.startswith('21 rules, over max_rules (20)')


def test_max_rules_comes_from_the_caller() -> None:
    assert check(_rules(3), max_rules=2, path=PATH)[0].severity == 'warning'


def test_over_200_lines_is_an_error() -> None:
    text = '- one rule\n' + 'prose\n' * 200
    found, = check(text, max_rules=20, path=PATH)
    assert found.severity == 'error'
    assert found.line == 201
    assert found.message.startswith('201 lines, over the limit of 200')


def test_200_lines_is_fine() -> None:
    assert check('prose\n' * 200, max_rules=20, path=PATH) == []


def test_through_the_cli_warning_does_not_fail(memrepo: Path) -> None:
    mem(memrepo, 'tattoo.md').write_text(_rules(25))
    out = ok('check', cwd=memrepo)
    assert f'warning tattoo-size {PATH}:23: 25 rules, over max_rules (20)' in out


def test_through_the_cli_max_rules_from_config(memrepo: Path) -> None:
    (memrepo / '.agent' / 'config.yaml').write_text('max_rules: 30\n')
    mem(memrepo, 'tattoo.md').write_text(_rules(25))
    assert 'tattoo-size' not in ok('check', cwd=memrepo)


def test_through_the_cli_too_long_fails(memrepo: Path) -> None:
    mem(memrepo, 'tattoo.md').write_text('x\n' * 300)
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert f'error tattoo-size {PATH}:201: 300 lines' in proc.stdout


def _long(n: int, width: int = 97) -> str:
    """n rules of `width` characters each: `- ` + text + newline = width + 3."""
    return ''.join(f'- {i:04d} {"r" * (width - 5)}\n' for i in range(n))


def test_rules_within_their_share_of_the_injection_are_fine() -> None:
    assert check(_long(60), max_rules=100, path=PATH) == []  # 6,000 characters


def test_rules_past_their_share_of_the_injection_are_an_error_at_that_rule() -> None:
    found, = check(_long(61), max_rules=100, path=PATH)
    assert (found.id, found.severity, found.line) == ('tattoo-size', 'error', 61)
    assert found.message.startswith(
        'the tattoo takes 6,100 characters of the injection, over its 6,000 '
        '(the rest of the 9,500 cap is the state\'s)',
    )


def test_one_huge_rule_is_an_error() -> None:
    found, = check(f'- keep it short\n- {"x" * 12_000}\n', max_rules=20, path=PATH)
    assert (found.severity, found.line) == ('error', 2)


def test_the_users_rules_count_towards_the_bound() -> None:
    user = [parse_rule('r' * 3000), parse_rule('s' * 2000)]
    found, = check(_long(10), max_rules=20, path=PATH, user=user)
    assert found.line == 10  # 5,006 of the user's, then 100 per rule
    assert check(_long(9), max_rules=20, path=PATH, user=user) == []
    # the user's alone pass it: the project's first line
    assert check('- x\n', max_rules=20, path=PATH, user=[parse_rule('u' * 7000)])[0].line == 1


def test_through_the_cli_a_tattoo_crowding_out_the_state_fails(memrepo: Path, tmp_path: Path) -> None:
    mem(memrepo, 'tattoo.md').write_text(f'- {"x" * 12_000}\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert f'error tattoo-size {PATH}:1: the tattoo takes 12,003 characters' in proc.stdout
    # with the user-level tattoo: together over the bound
    mem(memrepo, 'tattoo.md').write_text(_long(30))
    home = tmp_path / 'agent-home'
    (home / 'memory').mkdir(parents=True)
    (home / 'memory' / 'tattoo.md').write_text(_long(40))
    assert agitmem('check', cwd=memrepo).returncode == 0  # the project's alone fit
    proc = agitmem('check', cwd=memrepo, env={'AGITMEM_HOME': str(home)})
    assert proc.returncode == 1, proc.stdout
    assert f'error tattoo-size {PATH}:21: the tattoo takes 7,000 characters' in proc.stdout
