from __future__ import annotations


class AgitmemError(Exception):
    """Bad usage or bad input: reported as one line on stderr, exit 2."""


class CheckFailed(Exception):
    """A check found problems (exit 1); findings were already printed."""


def detail(e: BaseException) -> str:
    """An exception's message on one line (its kind when it has none), to
    quote in a one-line error."""
    return ' '.join(str(e).split()) or type(e).__name__
