"""The hooks' side of the recovery log (porcelain/recovery.py keeps the
log): what a record is opened and closed with, read from the payload or
the client's transcript.  The log is a measurement: a failure there is
said, and the hook goes on with the agent's memory."""
from __future__ import annotations

import sys

from agitmem import agents
from agitmem.agents import transcript
from agitmem.errors import AgitmemError
from agitmem.porcelain import compactions
from agitmem.repo import Repo

# typing is not imported at run time: the session-start hook imports this
# module (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any


def recovery() -> ModuleType:
    # only where a compaction is being handled: not on every edit and prompt
    from agitmem.porcelain import recovery
    return recovery


def recovering(what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """fn(*args, **kwargs), or None after saying why it failed."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        print(f'agitmem hook: recovery log ({what}): {type(e).__name__}: {e}', file=sys.stderr)
        return None


def _given_or_read(
        payload: agents.Payload, keys: tuple[str, ...], read: Callable[[str], object],
) -> str | None:
    """The first of `keys` the payload carries, else `read` of its
    transcript (None when neither has it)."""
    for key in keys:
        given = payload.raw.get(key)
        if isinstance(given, str) and given.strip():
            return given
    if payload.transcript_path:
        try:
            found = read(payload.transcript_path)
        except AgitmemError:
            return None
        return found if isinstance(found, str) else None
    return None


def summary(payload: agents.Payload) -> str | None:
    """The client's summary of the compaction: Claude Code's PostCompact
    carries it; Codex and Gemini CLI write it in their transcripts."""
    return _given_or_read(payload, ('compact_summary',), transcript.summary)


def _agent_text(payload: agents.Payload) -> str | None:
    """The agent's last text of the turn: Codex's Stop and Claude Code's
    carry `last_assistant_message`, Gemini's AfterAgent `prompt_response`;
    else the transcript."""
    return _given_or_read(payload, ('last_assistant_message', 'prompt_response'), transcript.last_assistant_text)


def turn_text(payload: agents.Payload) -> str | None:
    """All the agent said in the turn (a claim or a plan said between its
    tools counts too), ending with its closing message."""
    last = _agent_text(payload)
    said: list[str] = []
    if payload.transcript_path:
        try:
            said = transcript.turn_texts(payload.transcript_path)
        except AgitmemError:
            said = []
    if last and (not said or said[-1].strip() != last.strip()):
        said.append(last)
    return '\n\n'.join(said) if said else last


def _open(
        repo: Repo, cfg: dict[str, Any], payload: agents.Payload, hs: dict[str, Any],
        *, trigger: str, injection: str, prompted: bool, prompt: str | None = None,
) -> None:
    stash = hs.get('compaction')
    if not isinstance(stash, dict):
        stash = hs['compaction'] = {}
    if not stash.get('summary'):
        stash['summary'] = summary(payload)
    recovery().open_record(
        repo, cfg, hs, agent=payload.agent, session_id=payload.session_id,
        trigger=trigger, injection=injection, prompted=prompted, prompt=prompt,
    )


def open_(
        repo: Repo, cfg: dict[str, Any], payload: agents.Payload, hs: dict[str, Any],
        *, trigger: str, injection: str, prompted: bool, prompt: str | None = None,
) -> None:
    """Open the record of the compaction just re-injected after."""
    recovering(
        'open', _open, repo, cfg, payload, hs,
        trigger=trigger, injection=injection, prompted=prompted, prompt=prompt,
    )


def _close(repo: Repo, payload: agents.Payload, hs: dict[str, Any], hook: str) -> None:
    size = compactions.context_size(payload, hook)
    recovery().close(repo, hs, turn_text(payload), size)


def close(repo: Repo, payload: agents.Payload, hs: dict[str, Any], hook: str = 'prompt') -> None:
    """Judge the first turn after the compaction: it has ended (at agitmem's
    `hook`: the prompt or the stop that ends it)."""
    recovering('close', _close, repo, payload, hs, hook)


def add_summary(repo: Repo, hs: dict[str, Any], summary: str) -> None:
    """A summary that comes after the injection (Claude Code's PostCompact
    after its SessionStart): to the open record, else kept for it."""
    rec = hs.get('recovery')
    stash = hs.get('compaction')
    if isinstance(stash, dict):
        stash['summary'] = summary
    elif isinstance(rec, dict):
        recovering('summary', recovery().add_summary, repo, rec.get('id'), summary)
        recovery().note_summary(hs, summary)
    else:
        hs['compaction'] = {'summary': summary}
