from __future__ import annotations

from pathlib import Path

from agitmem.checks.tattoo_size import check
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
