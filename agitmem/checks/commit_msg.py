"""The commit-msg stage: only the `commit_msg` enforce rules, against the
commit message.  Kept apart from run.py so that the commit-msg hook
imports the rules it runs, not every check."""
from __future__ import annotations

import os

from agitmem import config
from agitmem import memory
from agitmem.checks import Finding
from agitmem.errors import AgitmemError
from agitmem.repo import Repo

# typing for mypy only (it takes any name TYPE_CHECKING as true): the
# pre-commit hook imports this module, and typing is a tenth of its run
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG = f'.agent/{memory.CONFIG}'
TATTOO = f'.agent/memory/{memory.TATTOO}'


def enforce_rules(cfg: dict[str, Any]) -> tuple[list[dict[str, object]], list[Finding]]:
    """The enforce rules of cfg, and the schema finding of a bad one."""
    if not cfg['enforce']:
        return [], []
    try:
        return config.enforce_rules(cfg['enforce'], source=CONFIG), []
    except AgitmemError as e:
        from agitmem.checks import schema
        return [], [schema.finding(CONFIG, str(e))]


def idle(cfg: dict[str, Any]) -> bool:
    """Whether the stage finds nothing in any message under these settings
    (no commit_msg rule, no bad rule)."""
    rules, problems = enforce_rules(cfg)
    return not problems and not any('commit_msg' in r for r in rules)


def check(
        repo: Repo, cfg: dict[str, Any], message: str, *, skip: frozenset[str],
) -> list[Finding]:
    if not cfg['enforce']:
        return []  # (enforce, the rules' module, not imported)
    from agitmem.checks import enforce
    if enforce.ID in skip:
        return []
    rules, problems = enforce_rules(cfg)
    rules = [r for r in rules if 'commit_msg' in r]
    if not rules:
        return problems
    tattoo = _text_of(os.path.join(repo.memorydir, memory.TATTOO), TATTOO)
    return problems + enforce.check(
        rules, tattoo_lines=memory.bullets(tattoo), added=[],
        commit_msg=message, old_files=_none, new_files=_none,
    )


def _none(path: str) -> None:
    return None


def _text_of(path: str, shown: str) -> str:
    # a regular file only, as every memory read: a FIFO blocked the
    # commit, a link to /dev/zero filled the memory
    from agitmem import repo as repo_mod
    try:
        fd, _ = repo_mod.open_regular(path, follow=False)
        with os.fdopen(fd, 'rb') as f:
            return memory.decode(f.read(), shown)
    except (OSError, AgitmemError):
        return ''
