"""Counts for the reliability suite.

The default run uses short counts so `pytest` stays quick; the long
variants are marked `slow` and run with `AGITMEM_FULL=1` (or `-m slow`, or
`python bench/run.py --full`)."""
from __future__ import annotations

import os

import pytest

# (processes, saves per process)
CONCURRENCY_SHORT = (4, 10)
CONCURRENCY_FULL = (8, 50)
# (clones, note + push per clone) against one loopback server; the full
# size takes 2-3 minutes per test on a loaded 2-core machine (the short one
# about 30 s)
BUSY_REMOTE_SHORT = (4, 3)
BUSY_REMOTE_FULL = (8, 10)
# branches merged on the server and deleted (tests/reliability/
# forge_lifecycle_test.py); the full size takes about 5 minutes on a
# loaded 2-core machine
FORGE_LIFECYCLE_SHORT = 6
FORGE_LIFECYCLE_FULL = 20
# kills per command (save, rollback, archive)
KILLS_SHORT = 10
KILLS_FULL = 50


def full_enabled(config: pytest.Config) -> bool:
    if os.environ.get('AGITMEM_FULL') == '1':
        return True
    expr = config.getoption('markexpr', '') or ''
    return 'slow' in expr and 'not slow' not in expr


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if full_enabled(config):
        return
    here = os.path.dirname(os.path.abspath(__file__))
    skip = pytest.mark.skip(
        reason='long variant: run with AGITMEM_FULL=1 or `pytest -m slow`',
    )
    for item in items:
        if item.get_closest_marker('slow') and str(item.path).startswith(here):
            item.add_marker(skip)
