"""The `agitmem` program (the console script and `python -m agitmem`):
what the command will wait on from git is begun before the rest of
agitmem imports (agitmem/ahead.py)."""
from __future__ import annotations

import os
import sys

from agitmem import ahead

# commands whose work is done when main returns, run often enough for
# the interpreter's teardown to count: git runs the hooks on every commit;
# an agent runs the writes at every step (pygit2's teardown is ~25 ms of CPU)
QUICK_EXIT = (
    ('hook', 'pre-commit'), ('hook', 'commit-msg'), ('hook', 'post-commit'),
    ('state', 'set'), ('verify',),
)


def main() -> int:
    ahead.begin(sys.argv[1:])
    from agitmem.cli import main as cli_main
    rc = cli_main()
    if any(tuple(sys.argv[1:1 + len(words)]) == words for words in QUICK_EXIT):
        quick_exit(rc)
    return rc


def quick_exit(rc: int) -> None:
    """End the process without the interpreter's teardown (every module
    freed, a full collection: a fifth of a commit hook's own time), once
    what exit would do that shows has been done: the atexit functions
    (git reads begun and not taken are stopped there) and the streams
    flushed.  A stream that cannot be flushed is left to the ordinary
    exit, which says so as it would.  (No thread of agitmem's is left to
    wait for.)"""
    import atexit
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(rc)


if __name__ == '__main__':
    raise SystemExit(main())
