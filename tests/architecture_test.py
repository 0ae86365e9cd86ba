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


def _broken(tmp_path: Path, module: str, added: str) -> str:
    """lint-imports' report on a copy of the tree where agitmem/<module>
    ends with `added`; it must fail."""
    tree = _copy(tmp_path)
    path = tree / 'agitmem' / module
    path.write_text(path.read_text() + '\n' + added + '\n')
    code, out = _lint(tree)
    assert code == 1, out
    return out


def _lazily(statement: str) -> str:
    """statement inside a function: an import run only when called."""
    return f'\ndef _late() -> object:\n    {statement}\n    return None'


LAYERS = 'Layers run one way (DESIGN.md section 9) BROKEN'


def test_a_command_importing_another_breaks_independence(tmp_path: Path) -> None:
    out = _broken(tmp_path, 'commands/note.py', 'from agitmem.commands.save import save  # noqa')
    assert 'Commands never import each other BROKEN' in out
    assert 'agitmem.commands.note -> agitmem.commands.save' in out


def test_the_store_reaching_up_breaks_the_layers(tmp_path: Path) -> None:
    out = _broken(tmp_path, 'store.py', 'from agitmem.porcelain import write  # noqa')
    assert LAYERS in out


@pytest.mark.parametrize('module,added,arrow', [
    ('commands/log.py', _lazily('import pygit2'), 'agitmem.commands.log -> pygit2'),
    ('commands/show.py', 'from agitmem import store  # noqa', 'agitmem.commands.show -> agitmem.store'),
])
def test_a_command_opening_the_memory_ref_breaks_the_command_contract(
        tmp_path: Path, module: str, added: str, arrow: str,
) -> None:
    out = _broken(tmp_path, module, added)
    assert 'Commands parse, call the porcelain, print: they never open the memory ref' in out
    assert arrow in out


@pytest.mark.parametrize('module,lazy', [
    # the two circles lazy imports once hid: the settings validating enforce
    # rules through the checks, the scanner taking its type from them
    ('config.py', 'from agitmem.checks import enforce'),
    ('secrets.py', 'from agitmem.checks import Finding'),
])
def test_a_lazy_import_climbing_a_layer_breaks_the_layers(tmp_path: Path, module: str, lazy: str) -> None:
    out = _broken(tmp_path, module, _lazily(lazy))
    assert LAYERS in out
    assert f'agitmem.{module[:-3]} -> agitmem.checks' in out


def test_siblings_in_a_layer_stay_independent(tmp_path: Path) -> None:
    # a circle between two modules of one layer climbs no layer: the
    # layer's modules import none of each other
    out = _broken(tmp_path, 'inject.py', _lazily('from agitmem import store'))
    assert LAYERS in out
    assert 'agitmem.inject -> agitmem.store' in out
