"""What a push retries and what it takes as final, over messages recorded
from real servers (git 2.39: `git daemon`, `git http-backend`, see
testing/gitserver.py) racing and refusing on loopback."""
from __future__ import annotations

import pytest

from agitmem.porcelain.sharing import backoff
from agitmem.porcelain.sharing import refusal
from agitmem.porcelain.sharing import retryable
from agitmem.porcelain.sharing import Row
from agitmem.porcelain.sharing import said
from agitmem.porcelain.sharing import transient
from agitmem.porcelain.sharing import unpushed_line

# stderr of a push that lost the ref lock to a concurrent push (porcelain
# summary: "[remote rejected] (failed to update ref)")
LOCK_EXPECTED = (
    "remote: error: cannot lock ref 'refs/agitmem/heads/main': is at "
    '71d506569beaebb05cbb5294baab26c0acc4a21c but expected '
    '813320976c81c7ea1af3db56b3f213ad3a618703        \n'
    "error: failed to push some refs to 'git://127.0.0.1:55433/remote.git'\n"
)
LOCK_EXISTS = (
    "remote: error: cannot lock ref 'refs/agitmem/heads/main': reference "
    'already exists        \n'
    "error: failed to push some refs to 'http://127.0.0.1:40645/remote.git'\n"
)
HOOK_DECLINED = (
    'remote: memory refs are not accepted here        \n'
    "error: failed to push some refs to 'git://127.0.0.1:40089/remote.git'\n"
)
REFUSED_CONNECTION = (
    'fatal: unable to connect to 127.0.0.1:\n'
    '127.0.0.1[0: 127.0.0.1]: errno=Connection refused\n\n'
)


@pytest.mark.parametrize('summary', (
    '[rejected] (fetch first)',
    '[rejected] (non-fast-forward)',
    '[rejected] (stale info)',
    '[remote rejected] (failed to update ref)',
    "[remote rejected] (cannot lock ref 'refs/agitmem/heads/main')",
    '[remote rejected] (incorrect old value provided)',
    '[remote rejected] (transaction failed to start)',
))
def test_races_are_retried(summary: str) -> None:
    assert retryable(summary)
    assert Row('!', 'refs/agitmem/heads/main', summary).lost_race


@pytest.mark.parametrize('summary', (
    '[remote rejected] (pre-receive hook declined)',
    '[remote rejected] (hook declined)',
    '[remote rejected] (deny updating a hidden ref)',
    '[remote rejected] (deletion prohibited)',
    '[remote rejected] (missing necessary objects)',
    '[remote rejected] (shallow update not allowed)',
    '[remote rejected] (n/a (unpacker error))',
    '[remote rejected] (secrets found)',
))
def test_refusals_are_final(summary: str) -> None:
    assert not retryable(summary)
    row = Row('!', 'refs/agitmem/heads/main', summary)
    assert row.refused and not row.lost_race


def test_pushed_rows_are_neither() -> None:
    for flag, summary in ((' ', 'a1b2c3d..e4f5a6b'), ('*', '[new reference]'), ('=', '[up to date]')):
        row = Row(flag, 'refs/agitmem/heads/main', summary)
        assert not row.lost_race and not row.refused


@pytest.mark.parametrize('stderr', (
    'fatal: the remote end hung up unexpectedly\n',
    # smart HTTP answering 503 to the pack (testing.gitserver.http_busy)
    'error: RPC failed; HTTP 503 curl 22 The requested URL returned error: 503\n'
    'send-pack: unexpected disconnect while reading sideband packet\n'
    'fatal: the remote end hung up unexpectedly\n',
    'fatal: unable to access \'http://127.0.0.1:1/r.git/\': The requested URL returned error: 502\n',
    'fatal: read error: Connection reset by peer\n',
    'fatal: early EOF\n',
    'error: unexpected disconnect while reading sideband packet\n',
    LOCK_EXPECTED,
    LOCK_EXISTS,
))
def test_a_push_dropped_on_the_way_is_transient(stderr: str) -> None:
    assert transient(stderr)


@pytest.mark.parametrize('stderr', (
    HOOK_DECLINED,
    REFUSED_CONNECTION,
    'fatal: remote error: no such repository: /nothere.git\n',
    "fatal: repository 'http://127.0.0.1:43677/nothere.git/' not found\n",
    'fatal: remote error: access denied or repository not exported: /r.git\n',
    "fatal: '/tmp/gone.git' does not appear to be a git repository\n"
    'fatal: Could not read from remote repository.\n',
    'git@example.com: Permission denied (publickey).\n'
    'fatal: the remote end hung up unexpectedly\n',
    "fatal: unable to access 'https://example.com/r.git/': The requested URL returned error: 403\n",
    "fatal: Authentication failed for 'https://example.com/r.git/'\n",
    '',
))
def test_refusals_and_bad_addresses_are_final(stderr: str) -> None:
    assert not transient(stderr)


def test_refusal_is_one_line_with_what_the_server_said() -> None:
    line = refusal(
        'refs/agitmem/heads/main', 'origin',
        '[remote rejected] (pre-receive hook declined)', HOOK_DECLINED,
    )
    assert line == (
        'refs/agitmem/heads/main not pushed: origin refused it (pre-receive '
        'hook declined): memory refs are not accepted here'
    )


def test_refusal_without_server_words() -> None:
    line = refusal('refs/agitmem/heads/x', 'up', '[remote rejected] (deletion prohibited)', '')
    assert line == 'refs/agitmem/heads/x not pushed: up refused it (deletion prohibited)'


def test_said_keeps_the_reason_after_a_colon() -> None:
    assert said(REFUSED_CONNECTION, 'exit 128') == (
        'unable to connect to 127.0.0.1: 127.0.0.1[0: 127.0.0.1]: errno=Connection refused'
    )
    assert said('', 'exit 128') == 'exit 128'


def test_said_names_the_cause_of_a_hang_up() -> None:
    stderr = (
        'error: RPC failed; HTTP 503 curl 22 The requested URL returned error: 503\n'
        'send-pack: unexpected disconnect while reading sideband packet\n'
        'fatal: the remote end hung up unexpectedly\n'
    )
    assert said(stderr, 'exit 1') == (
        'RPC failed; HTTP 503 curl 22 The requested URL returned error: 503'
    )
    hung_up = 'fatal: the remote end hung up unexpectedly\n'
    assert said(hung_up, 'exit 128') == 'the remote end hung up unexpectedly'


def test_backoff_grows_is_capped_and_jittered() -> None:
    assert backoff(1, 0.0) == 0.0
    assert backoff(1, 0.999) < backoff(2, 0.999) < backoff(3, 0.999)
    assert backoff(30, 0.999) <= 2.0
    assert backoff(3, 0.5) == pytest.approx(0.5 * 0.05 * 8)


def test_worst_case_sleeps_fit_the_deadline() -> None:
    # 9 sleeps between the 10 pushes tried when a push fails on the way
    # take at most a fifth of the 60 s deadline
    assert sum(backoff(a, 0.999999) for a in range(1, 10)) < 12


def test_unpushed_line() -> None:
    assert unpushed_line({'refs/agitmem/heads/main': 1}, 'origin') == (
        'memory not pushed: 1 commit ahead of origin (the next `agitmem push` carries it)'
    )
    assert unpushed_line(
        {'refs/agitmem/heads/feature': 2, 'refs/agitmem/heads/main': 3}, 'up',
    ).startswith('memory not pushed: 5 commits ahead of up (feature 2, main 3)')
