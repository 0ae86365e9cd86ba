"""What a check found: the one type the checks and the secret scanner
share, below both of them."""
from __future__ import annotations

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple



class Finding(NamedTuple):
    id: str  # the check id of DESIGN.md section 6, e.g. 'secrets'
    severity: str  # 'error' blocks, 'warning' informs
    message: str  # one sentence that says what to do
    path: str | None = None
    line: int | None = None
