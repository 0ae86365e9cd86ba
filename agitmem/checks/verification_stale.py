"""`verification-stale`: the last recorded verification (`agitmem verify`)
ran on other code than the tree being committed, or failed on this one."""
from __future__ import annotations

from agitmem.checks import Finding

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module, and typing is a tenth of its run
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

ID = 'verification-stale'


def _line(text: str) -> int | None:
    for n, line in enumerate(text.splitlines(), 1):
        if '"last_verification"' in line:
            return n
    return None


def check(
        state: dict[str, Any],
        same_code: Callable[[str], bool | None],
        *,
        state_path: str,
        state_text: str = '',
) -> list[Finding]:
    """same_code(tree): whether the tree being committed is `tree` (None
    when that cannot be told); asked only when there is a verification."""
    lv = state.get('last_verification')
    if not isinstance(lv, dict) or not isinstance(lv.get('tree'), str):
        return []
    command = lv.get('command') or '<test command>'
    same = same_code(lv['tree'])
    if same is None:
        return []
    if not same:
        return [
            Finding(
                ID, 'warning',
                f'the last verification (`{command}`, {lv.get("result")}) '
                f'ran on other code (tree {lv["tree"][:12]}) than this '
                f'commit; run `agitmem verify -- {command}` again',
                path=state_path, line=_line(state_text),
            ),
        ]
    if lv.get('result') == 'failed':
        reason = lv.get('reason') or f'exit {lv.get("exit_code")}'
        return [
            Finding(
                ID, 'warning',
                f'the last verification of this very code failed '
                f'({reason}); fix it and run `agitmem verify -- {command}` '
                f'again',
                path=state_path, line=_line(state_text),
            ),
        ]
    return []
