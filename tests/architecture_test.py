"""The layers of DESIGN.md section 9, as import-linter checks them in CI:
the real tree keeps every contract, and a command importing another (or a
lower layer reaching up) breaks one."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from testing.util import run

ROOT = Path(__file__).resolve().parents[1]
LINT = shutil.which('lint-imports', path=str(Path(sys.executable).parent)) or shutil.which('lint-imports')

pytestmark = pytest.mark.skipif(LINT is None, reason='import-linter is in the test extra')


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / 'tree'
    shutil.copytree(ROOT / 'agitmem', dst / 'agitmem', ignore=shutil.ignore_patterns('__pycache__'))
    shutil.copy(ROOT / 'pyproject.toml', dst / 'pyproject.toml')
    return dst


def _lint(tree: Path) -> tuple[int, str]:
    assert LINT is not None
    proc = run(LINT, '--no-cache', cwd=tree, env={'PYTHONPATH': str(tree)})
    return proc.returncode, proc.stdout + proc.stderr


def test_the_tree_keeps_every_contract(tmp_path: Path) -> None:
    code, out = _lint(_copy(tmp_path))
    assert code == 0, out
    assert 'BROKEN' not in out


def test_a_command_importing_another_breaks_independence(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    note = tree / 'agitmem' / 'commands' / 'note.py'
    note.write_text(note.read_text() + '\nfrom agitmem.commands.save import save  # noqa\n')
    code, out = _lint(tree)
    assert code == 1
    assert 'Commands never import each other BROKEN' in out
    assert 'agitmem.commands.note -> agitmem.commands.save' in out


def test_the_store_reaching_up_breaks_the_layers(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    store = tree / 'agitmem' / 'store.py'
    store.write_text(store.read_text() + '\nfrom agitmem.porcelain import write  # noqa\n')
    code, out = _lint(tree)
    assert code == 1
    assert 'Layers run one way (DESIGN.md section 9) BROKEN' in out
