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


def test_a_command_importing_pygit2_breaks_the_command_contract(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    log = tree / 'agitmem' / 'commands' / 'log.py'
    log.write_text(log.read_text() + '\n\ndef _tip() -> object:\n    import pygit2\n    return pygit2\n')
    code, out = _lint(tree)
    assert code == 1
    assert 'Commands parse, call the porcelain, print: they never open the memory ref' in out
    assert 'agitmem.commands.log -> pygit2' in out


def test_a_command_importing_the_store_breaks_the_command_contract(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    show = tree / 'agitmem' / 'commands' / 'show.py'
    show.write_text(show.read_text() + '\nfrom agitmem import store  # noqa\n')
    code, out = _lint(tree)
    assert code == 1
    assert 'agitmem.commands.show -> agitmem.store' in out


@pytest.mark.parametrize('module,lazy', [
    # the two circles lazy imports once hid: the settings validating enforce
    # rules through the checks, the scanner taking its type from them
    ('config.py', 'from agitmem.checks import enforce'),
    ('secrets.py', 'from agitmem.checks import Finding'),
])
def test_a_lazy_import_climbing_a_layer_breaks_the_layers(tmp_path: Path, module: str, lazy: str) -> None:
    tree = _copy(tmp_path)
    path = tree / 'agitmem' / module
    path.write_text(path.read_text() + f'\n\ndef _late() -> object:\n    {lazy}\n    return None\n')
    code, out = _lint(tree)
    assert code == 1
    assert 'Layers run one way (DESIGN.md section 9) BROKEN' in out
    assert f'agitmem.{module[:-3]} -> agitmem.checks' in out


def test_siblings_in_a_layer_stay_independent(tmp_path: Path) -> None:
    # a circle between two modules of one layer is not a layer climbed:
    # the layer's modules import none of each other
    tree = _copy(tmp_path)
    inject = tree / 'agitmem' / 'inject.py'
    inject.write_text(inject.read_text() + '\n\ndef _late() -> object:\n    from agitmem import store\n    return store\n')
    code, out = _lint(tree)
    assert code == 1
    assert 'Layers run one way (DESIGN.md section 9) BROKEN' in out
    assert 'agitmem.inject -> agitmem.store' in out
