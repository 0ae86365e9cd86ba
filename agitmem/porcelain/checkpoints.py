"""Memory checkpoints around a compaction: the save before it (the commit
a compaction starts from), what the agent is told then, and the ask to
bring memory up to date when the context nears full (seed 003: at 70%,
before the client compacts)."""
from __future__ import annotations

import os
import time

from agitmem import config
from agitmem import memory
from agitmem.porcelain import context
from agitmem.repo import Repo

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ASK = (
    'agitmem: this session\'s context is {pct}% full ({size} of {window} '
    'tokens); a compaction is near. Bring memory up to date now: `agitmem '
    'state set last_action=... next_intent=...`, the In progress section of '
    '.agent/memory/snapshot.md, and `agitmem fragment add --goal ... --next '
    '...` for what you learned.'
)


def save(repo: Repo, subject: str, event: str = 'pre-compact') -> tuple[str | None, str | None]:
    """(the commit saved, or None when nothing changed; the memory ref's
    tip either way: the checkpoint a compaction starts from)."""
    from agitmem.porcelain import write  # pygit2: only when saving
    ctx = context.make(repo, config.load(repo))
    oid = write.save(ctx, subject, event=event)
    if oid is not None:
        return str(oid)[:12], str(oid)[:12]
    from agitmem.porcelain import records  # the recovery log's: rare
    return None, records.recovering('checkpoint', records.recovery().checkpoint_of, repo, ctx.ref)


def compressed(repo: Repo, hs: dict[str, Any], before: int | None) -> None:
    """Gemini's only sign of a compression is its chat file: the checkpoint
    is saved when a hook first sees it there."""
    hs['compaction'] = {
        'trigger': 'compressed', 'tokens_before': before,
        'checkpoint': save(repo, 'hook pre-compact: checkpoint (compressed)')[1],
    }


def state_age(repo: Repo) -> float | None:
    """Seconds since snapshot or state was last written (the newer)."""
    mtimes = []
    for name in (memory.STATE, memory.SNAPSHOT):
        try:
            mtimes.append(os.stat(os.path.join(repo.memorydir, name)).st_mtime)
        except OSError:
            pass
    return time.time() - max(mtimes) if mtimes else None


def stale_minutes(repo: Repo, cfg: dict[str, Any]) -> int | None:
    """Minutes since state and snapshot were written, when over the
    config's stale_minutes; else None."""
    age = state_age(repo)
    if age is None or age <= cfg['stale_minutes'] * 60:
        return None
    return int(age // 60)


def said(repo: Repo, cfg: dict[str, Any], saved: str | None) -> str:
    parts = [
        f'agitmem: memory checkpoint {saved}' if saved
        else 'agitmem: memory already saved',
    ]
    minutes = stale_minutes(repo, cfg)
    if minutes is not None:
        parts.append(
            f'state.json/snapshot.md are {minutes} min old: what '
            f'changed since will only survive in the summary; update them '
            f'right after the compaction',
        )
    return '; '.join(parts)


def due(agent: str, cfg: dict[str, Any], size: int | None, hs: dict[str, Any]) -> str | None:
    """Once per session, when its context first crosses checkpoint_at of
    the window: the ask to bring memory up to date."""
    from agitmem.porcelain import compactions
    window = compactions.window(agent, cfg)
    at = cfg.get('checkpoint_at')
    if size is None or not window or not at or hs.get('checkpoint_asked'):
        return None
    if size < at * window:
        return None
    hs['checkpoint_asked'] = True
    return ASK.format(pct=int(100 * size / window), size=size, window=window)
