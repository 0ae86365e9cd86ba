"""What the porcelain has to tell the user besides its result (a memory
switched, a directory restored): on stderr for a command; for an agent
hook, collected and put in the hook's output where the user sees it."""
from __future__ import annotations

import sys

_collected: list[str] | None = None


def say(line: str) -> None:
    if _collected is not None:
        _collected.append(line)
    else:
        print(line, file=sys.stderr)


def collect() -> list[str]:
    """From now on, keep what is said (in the returned list)."""
    global _collected
    _collected = []
    return _collected
