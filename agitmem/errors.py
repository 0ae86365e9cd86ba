from __future__ import annotations


class AgitmemError(Exception):
    """Bad usage or bad input: reported as one line on stderr, exit 2."""


class CheckFailed(Exception):
    """A check found problems (exit 1); findings were already printed."""
