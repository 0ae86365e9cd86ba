"""How each client's compaction shows, and how full its context is.

Claude Code and Codex announce a compaction (PreCompact, PostCompact,
SessionStart with source `compact`); Gemini CLI only writes it in its chat
file, which a later hook reads.  The sizes come from the payload or the
transcript.  Standard library only: the hot hooks use it on every prompt."""
from __future__ import annotations

import sys

from agitmem import agents
from agitmem.agents import transcript
from agitmem.errors import AgitmemError

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONTEXT_WINDOWS = {'claude': 200_000, 'codex': 272_000, 'gemini': 1_048_576}


def in_transcript(payload: agents.Payload) -> list[str] | None:
    """The compactions the session's transcript records; None without one
    (or when it cannot be read: that prompt goes on without)."""
    if not payload.transcript_path:
        return None
    try:
        return transcript.compactions(payload.transcript_path)
    except AgitmemError:
        return None  # the size read says what is wrong with it


def new(payload: agents.Payload, hs: dict[str, Any]) -> list[str]:
    """Compactions of this session not handled yet.  The session's first
    look only takes note of what is there (a resumed session's old
    compactions are not news).  Keys seen are kept across transcript
    paths: Gemini CLI names a new, almost empty file at a resume's
    SessionStart and the original one in every later hook."""
    found = in_transcript(payload)
    if found is None:
        return []
    seen = hs.get('compactions')
    first = not isinstance(seen, list)
    known = [k for k in seen if isinstance(k, str)] if isinstance(seen, list) else []
    hs['compactions'] = list(dict.fromkeys(known + found))[-100:]
    return [] if first else [k for k in found if k not in set(known)]


def absorbed(found: list[str], hs: dict[str, Any]) -> list[str]:
    """Compactions found in the transcript, less the one SessionStart
    (compact) already handled before its record was written."""
    if found and hs.pop('absorb', False):
        return found[1:]
    return found


def new_unhandled(payload: agents.Payload, hs: dict[str, Any]) -> list[str]:
    return absorbed(new(payload, hs), hs)


_SAID: set[str] = set()


def context_size(payload: agents.Payload, hook: str = 'prompt') -> int | None:
    """The session's context size now: the payload's, else the last the
    transcript records (`hook`: agitmem's hook that asks, for its message)."""
    if payload.context_len is not None:
        return payload.context_len
    if payload.transcript_path:
        try:
            sizes = transcript.context_sizes(payload.transcript_path)
        except AgitmemError as e:
            # the 40% rule is lost for this prompt, the rest still runs;
            # said once (the prompt and the record it closes both ask)
            if str(e) not in _SAID:
                _SAID.add(str(e))
                from agitmem import render
                print(f'agitmem hook {hook}: {render.controls_line(str(e))}', file=sys.stderr)
            return None
        if sizes:
            return sizes[-1]
    return None


def window(agent: str, cfg: dict[str, Any]) -> int | None:
    return cfg.get('context_window') or CONTEXT_WINDOWS.get(agent)
