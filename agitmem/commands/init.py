"""`agitmem init`: create .agent/, exclude it, first memory commit."""
from __future__ import annotations

from agitmem import repo as repo_mod
from agitmem.porcelain.initialize import initialize


def init(ref: str | None) -> int:
    for line in initialize(repo_mod.find(), ref):
        print(line)
    return 0
