"""agitmem/checks/__init__.py: the check ids, written out so that reading
AGITMEM_SKIP imports no check, are the modules' own, in the order run.py
runs them."""
from __future__ import annotations

import importlib
import pkgutil

import agitmem.checks
from agitmem import checks
from agitmem.checks import run


def test_ids_are_every_check_modules_id() -> None:
    modules = [
        importlib.import_module(f'agitmem.checks.{m.name}')
        for m in pkgutil.iter_modules(agitmem.checks.__path__)
    ]
    ids = {m.ID for m in modules if hasattr(m, 'ID')}
    assert set(checks.IDS) == ids
    assert len(checks.IDS) == len(ids)
    assert run.IDS is checks.IDS


def test_parse_skip() -> None:
    assert checks.parse_skip(' secrets, nope,,enforce ') == (
        frozenset({'secrets', 'enforce'}), ['nope'],
    )
