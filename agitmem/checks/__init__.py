from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    id: str  # the check id of DESIGN.md section 6, e.g. 'secrets'
    severity: str  # 'error' blocks, 'warning' informs
    message: str  # one sentence that says what to do
    path: str | None = None
    line: int | None = None
