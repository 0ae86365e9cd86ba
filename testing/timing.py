"""Where the suite's time goes: each test module's total (setup, call and
teardown of its tests), printed at the end of the run beside pytest's own
--durations.  Under xdist the controller sees every worker's reports, so
the totals are of the whole run; with several workers they add up to more
than the wall time."""
from __future__ import annotations

import collections
import os

import pytest

_TOTALS: collections.Counter[str] = collections.Counter()
_COUNTS: collections.Counter[str] = collections.Counter()
# AGITMEM_TIMES=<file>: one line per test phase as it ends (seconds, phase,
# outcome, test), so a run that is stopped early still tells where its time
# went and what failed
_LOG = os.environ.get('AGITMEM_TIMES')


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get('PYTEST_XDIST_WORKER'):
        return  # the controller sees this report too: counted there once
    module = report.nodeid.split('::', 1)[0]
    _TOTALS[module] += report.duration
    if report.when == 'call':
        _COUNTS[module] += 1
    if _LOG:
        with open(_LOG, 'a') as f:
            f.write(f'{report.duration:.3f}\t{report.when}\t{report.outcome}\t{report.nodeid}\n')


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _TOTALS:
        return
    total = sum(_TOTALS.values())
    terminalreporter.write_sep('=', 'time per test module (setup + call + teardown)')
    for module, seconds in _TOTALS.most_common(30):
        terminalreporter.write_line(
            f'{seconds:8.1f}s {100 * seconds / total:5.1f}% '
            f'{_COUNTS[module]:5d} tests  {module}',
        )
    terminalreporter.write_line(f'{total:8.1f}s in all ({len(_TOTALS)} modules)')
