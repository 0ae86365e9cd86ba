from __future__ import annotations

from pathlib import Path

import pytest

from agitmem.checks.schema import check
from agitmem.checks.schema import finding
from testing.util import agitmem
from testing.util import mem

STATE = '.agent/memory/state.json'
FRAGMENTS = '.agent/memory/fragments.jsonl'
CONFIG = '.agent/config.yaml'


def test_well_formed_files_pass() -> None:
    assert check({
        STATE: b'{"step": 3}\n',
        FRAGMENTS: b'{"id": "A-001"}\n',
        CONFIG: b'max_rules: 10\n',
        '.agent/memory/notes.md': b'- a note\n',
    }) == []


@pytest.mark.parametrize(
    ('path', 'data', 'line', 'start'),
    (
        (STATE, b'{"step": ', 1, 'not valid JSON'),
        (STATE, b'[]', 1, 'must be a JSON object'),
        (STATE, b'{"step": -1}', None, '"step" must be a whole number'),
        (STATE, b'{"last_verification": {"result": "ok"}}', None, '"last_verification.result"'),
        (FRAGMENTS, b'{"id": "A-001"}\n{"id": "A-001"}\n', 2, 'duplicate id A-001'),
        (CONFIG, b'budget: 1\n', 1, 'unknown setting "budget"'),
        (CONFIG, b'enforce:\n- rule: no tabs\n', 1, 'enforce rule 1 ("no tabs"): needs exactly one'),
        (CONFIG, b'enforce:\n- rule: x\n  forbid: "("\n', 1, 'enforce rule 1 ("x"): `forbid` regex'),
        ('.agent/memory/notes.md', b'- a\r\n', 1, 'CRLF line ending'),
        ('.agent/memory/archive/2026/11/30-x.md', b'\xff', 1, 'not UTF-8'),
    ),
)
def test_malformed_file_is_an_error(path: str, data: bytes, line: int | None, start: str) -> None:
    found, = check({path: data})
    assert (found.id, found.severity, found.path, found.line) == ('schema', 'error', path, line)
    assert found.message.startswith(start), found.message
    assert found.message.endswith('; fix the file (agitmem save refuses it as it is)')


def test_finding_keeps_a_message_without_its_path() -> None:
    f = finding(STATE, 'something odd')
    assert (f.path, f.line, f.message.split(';')[0]) == (STATE, None, 'something odd')


def test_through_the_cli(memrepo: Path) -> None:
    mem(memrepo, 'state.json').write_text('{"current_goal": 1}\n')
    mem(memrepo, 'fragments.jsonl').write_text('nope\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert f'error schema {STATE}: "current_goal" must be a string or null; fix the file (agitmem save refuses it as it is)' in lines
    assert any(ln.startswith(f'error schema {FRAGMENTS}:1: not valid JSON') for ln in lines)


def test_symlink_in_memory_is_an_error(memrepo: Path, tmp_path: Path) -> None:
    (tmp_path / 'elsewhere.md').write_text('- x\n')
    mem(memrepo, 'linked.md').symlink_to(tmp_path / 'elsewhere.md')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 1
    assert 'error schema .agent/memory/linked.md: is a symlink' in proc.stdout


def test_bad_enforce_rule_is_bad_input(memrepo: Path) -> None:
    # like a config that is not YAML: every command refuses it in one line
    (memrepo / '.agent' / 'config.yaml').write_text('enforce:\n- rule: r\n  forbid: "["\n')
    proc = agitmem('check', cwd=memrepo)
    assert proc.returncode == 2
    assert proc.stderr.startswith('agitmem: .agent/config.yaml:1: enforce rule 1')
    assert len(proc.stderr.splitlines()) == 1
