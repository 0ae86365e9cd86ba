"""The `agitmem` program (the console script and `python -m agitmem`):
what the command will wait on from git is begun before the rest of
agitmem imports (agitmem/ahead.py)."""
from __future__ import annotations

import atexit
import os
import sys

from agitmem import ahead

# commands whose work is done when main returns, run often enough for
# the interpreter's teardown to count: git runs the hooks on every commit;
# an agent runs the writes at every step (pygit2's teardown is ~25 ms of CPU)
QUICK_EXIT = (
    ('hook', 'pre-commit'), ('hook', 'commit-msg'), ('hook', 'post-commit'),
    # the agent hooks: every prompt, every edit, every model call
    ('hook', 'prompt'), ('hook', 'post-edit'), ('hook', 'stop'),
    # and every session's start, after every compaction; `load` is what an
    # agent without hooks runs then (re, enum and the rest freed: ~1 ms)
    ('hook', 'session-start'), ('load',),
    ('state', 'set'), ('verify',),
    # the pre-commit hook's checks, typed (or run by a CI job)
    ('check',),
)


def main() -> int:
    if any(tuple(sys.argv[1:1 + len(words)]) == words for words in QUICK_EXIT) and (
            # coverage (CI) saves its data in an atexit function of its
            # own, registered before this one: the ordinary exit runs it
            'coverage' not in sys.modules
    ):
        # the first of this process's atexit functions, so the last to run
        atexit.register(quick_exit)
    ahead.begin(sys.argv[1:])
    from agitmem.cli import main as cli_main
    rc = cli_main()
    _ENDED.append(rc)
    return rc


_ENDED: list[int] = []  # main's exit code, once it has returned


def quick_exit() -> None:
    """End the process without the interpreter's teardown (every module
    freed, a full collection: a fifth of a commit hook's own time), once
    what exit would do that shows has been done: run last of the atexit
    functions (git reads begun and not taken are stopped by the others),
    it flushes the streams and ends with main's code.  A command that
    raised, or a stream that cannot be flushed, is left to the ordinary
    exit, which says so as it would.  (No thread of agitmem's is left to
    wait for: the interpreter has joined them before atexit runs.)"""
    if not _ENDED:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: begun with that descriptor closed
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(_ENDED[0])


if __name__ == '__main__':
    raise SystemExit(main())
