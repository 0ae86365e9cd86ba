"""`agitmem hook EVENT`: the agents' entry points.

Runs inside the agent's loop, so it never crashes the agent: any error is
one line on stderr and exit 0.  What each event does is the porcelain's
(porcelain/agent_hooks.py); here the payload is parsed, the event's
handler called, and its output printed with the porcelain's notices."""
from __future__ import annotations

import os
import sys

from agitmem import agents
from agitmem import jsontext
from agitmem import errors
from agitmem.errors import AgitmemError
from agitmem.porcelain import notices

# collections.abc's names are for mypy only (the agent hooks import this module)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from collections.abc import Sequence


def _with_notices(agent: str, out: str, said: list[str]) -> str:
    """The hook's output, with what the porcelain had to tell the user
    (a restored .agent/) where the client shows it."""
    if not said:
        return out
    from agitmem import render
    line = render.controls_line('; '.join(said))
    if agent in ('claude', 'codex', 'gemini'):
        try:
            data = jsontext.loads(out) if out.strip() else {}
        except ValueError:
            data = None
        if isinstance(data, dict):
            old = data.get('systemMessage')
            data['systemMessage'] = f'{line}; {old}' if old else line
            return jsontext.dumps(data, ensure_ascii=False)
    print(line, file=sys.stderr)
    return out


def _handled(event: str, payload: agents.Payload) -> str:
    """The event's output: the hooks' machinery is imported only when the
    event has something to do (not for Gemini's calls around every model
    call that have not).  Only Gemini CLI fires them: what answers them
    (model_calls.idle's two cases) is imported for its events alone."""
    if payload.agent == 'gemini' or payload.event == 'BeforeModel':
        from agitmem.porcelain import model_calls
        idle = model_calls.idle(event, payload)
        if idle is not None:
            return idle
    from agitmem.porcelain import agent_hooks
    return agent_hooks.HANDLERS[event](payload)


def answered_nothing(agent: str | None) -> int:
    """The end of a hook that did not run (its one line said why): exit
    0, never failing the agent's prompt, tool call or stop, and for
    Gemini CLI the empty JSON object it wants on stdout, always."""
    if agent == 'gemini':
        print('{}')
    return 0


def _misuse(event: str, args: Sequence[str]) -> str | None:
    """What is wrong with the hook's command line, or None."""
    if event in agents.EVENTS and not args:
        return None
    from agitmem import render
    if event not in agents.EVENTS:
        return (
            f'unknown hook event "{render.line(event)}" (agent events: '
            f'{", ".join(agents.EVENTS)})'
        )
    if args:
        return f'hook {event} takes no argument but --agent (given: {render.line(" ".join(args))})'
    return None


def hook(
        event: str,
        agent: str | None,
        stdin: str | None,
        environ: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
        typed: bool = False,
        *,
        parsed: dict[str, object] | None = None,
) -> int:
    """`typed`: stdin is a terminal, a person typed the command: a wrong
    command line is exit 2 for them, as any command's.  An agent's hook
    (a payload on stdin) is never failed for it: exit 0, one line, the
    event not run (exit 2 blocks the agent's prompt, tool or stop).
    `parsed`: stdin's JSON object, parsed already (cli._payload_head)."""
    environ = os.environ if environ is None else environ
    misuse = _misuse(event, args)
    if misuse is not None and typed:
        print(f'agitmem: {misuse}', file=sys.stderr)
        return 2
    said = notices.collect()
    try:
        if misuse is not None:
            raise AgitmemError(misuse)
        if stdin is None:
            raise AgitmemError('hook input is too large to read (over 256 MB)')
        payload = agents.parse(stdin, agent=agent, environ=environ, data=parsed)
        out = _with_notices(payload.agent, _handled(event, payload), said)
    except Exception as e:  # never crash the agent
        detail = errors.detail(e)
        if not isinstance(e, AgitmemError):
            detail = f'{type(e).__name__}: {detail}'
        print(f'agitmem hook {event}: {detail}', file=sys.stderr)
        return answered_nothing(agent)
    if out:
        sys.stdout.write(out if out.endswith('\n') else out + '\n')
    return 0
