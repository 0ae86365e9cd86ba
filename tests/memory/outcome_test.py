"""A run's result read from its output alone (Codex gives no exit code)."""
from __future__ import annotations

import pytest

from agitmem.memory import verification


@pytest.mark.parametrize(('output', 'result'), (
    ('===> Performing EUnit tests...\n..F\nFailures:\n\n3 tests, 1 failures\n===> Error running tests\n', 'failed'),  # rebar3
    ('All 3 tests passed.\n', 'passed'),  # eunit
    ('test result: ok. 7 passed; 0 failed; 0 ignored\n', 'passed'),  # cargo
    ('test result: FAILED. 6 passed; 1 failed\n', 'failed'),
    ("thread 'main' panicked at src/lib.rs:4:5\n", 'failed'),
    ('error[E0308]: mismatched types\n', 'failed'),  # rustc
    ('=== 12 passed, 0 errors in 0.4s ===\n', 'passed'),  # pytest
    ('Traceback (most recent call last):\n  File "a.py", line 1\nValueError: x\n', 'failed'),
    ('ok  \tgithub.com/acme/csv\t0.21s\n', 'passed'),  # go test
    ('--- FAIL: TestGet (0.00s)\nFAIL\n', 'failed'),
    ('panic: runtime error: index out of range\n', 'failed'),  # go
    ('Tests run: 5, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS\n', 'passed'),  # mvn
    ('Tests run: 5, Failures: 1, Errors: 0\n[INFO] BUILD FAILURE\n', 'failed'),
    ('BUILD SUCCESSFUL in 4s\n', 'passed'),  # gradle
    ('BUILD FAILED in 4s\n', 'failed'),
    ('Passed!  - Failed:     0, Passed:    12, Skipped:     0\n', 'passed'),  # dotnet
    ('Failed!  - Failed:     1, Passed:    11, Skipped:     0\n', 'failed'),
    ('Finished in 0.2 seconds\n3 examples, 0 failures\n', 'passed'),  # rspec
    ('3 examples, 1 failure\n', 'failed'),
    ('Finished in 0.1 seconds\n5 tests, 0 failures\n', 'passed'),  # mix
    ('Tests:       2 passed, 2 total\n', 'passed'),  # jest
    ('Tests:       1 failed, 1 passed, 2 total\n', 'failed'),
    ('Ran 4 tests in 0.010s\n\nOK\n', 'passed'),  # unittest
    ('  1 passing (4ms)\n  2 failing\n', 'failed'),  # mocha
    ('ok 1 parses\nnot ok 2 rejects\n', 'failed'),  # TAP
    ('[info] Passed: Total 5, Failed 0, Errors 0, Passed 5\n[success] Total time: 6 s\n', 'passed'),  # sbt
    ('[error] Failed: Total 5, Failed 4, Errors 0, Passed 1\n', 'failed'),
    ('[error] Failed tests:\n[error] \tpay.AllocationSuite\n', 'failed'),
    ('Error: Cannot find module ./x\n', 'failed'),
    ('bash: pytset: command not found\n', 'failed'),
    ('total 8\ndrwxr-xr-x 2 dev dev 4096 a\n', None),  # a listing says nothing
    ('Compiler run successful!\n', None),
    ('', None),
))
def test_a_result_read_from_output_alone(output: str, result: str | None) -> None:
    assert verification.outcome(output) == result
    assert verification.failed_by_output(output) is (result == 'failed')
