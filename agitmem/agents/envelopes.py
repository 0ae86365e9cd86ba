"""What a hook prints for the agent: each agent's envelope around the
context for the model, a message for the user, a refusal to stop."""
from __future__ import annotations


from agitmem import jsontext
from agitmem.agents import clients

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from agitmem.agents.clients import Native


def _envelope(
        mod: Native,
        event: str,
        context: str | None,
        message: str | None,
        block_reason: str | None,
) -> dict[str, object]:
    out: dict[str, object] = {}
    if block_reason is not None:
        # Gemini's AfterAgent says "deny": `reason` becomes the next prompt
        out['decision'] = mod.BLOCK_DECISION
        out['reason'] = block_reason
    if context is not None:
        out['hookSpecificOutput'] = {
            'hookEventName': mod.EVENT_NAMES[event],
            'additionalContext': context,
        }
    if message is not None:
        out['systemMessage'] = message
    return out


def envelope(
        agent: str,
        event: str,
        *,
        context: str | None = None,
        message: str | None = None,
        block_reason: str | None = None,
) -> str:
    """What to print on stdout for agitmem `event`, in `agent`'s format.

    '' means print nothing.  `context` is only allowed where
    `supports_context(agent, event)`; `block_reason` only on `stop`.
    `context` comes rendered (the injection block: inject.py escaped its
    memory text once); `message` and `block_reason` may quote paths and
    names as they are, and are rendered here, for the agent and the user.
    """
    clients.check_agent(agent)
    clients.check_event(event)
    if block_reason is not None and event != 'stop':
        raise ValueError(f'block_reason is only for stop, not {event}')
    if message is not None or block_reason is not None:
        # (what has nothing to say, nearly every hook, imports no renderer)
        from agitmem import render
        message = None if message is None else render.controls(message)
        block_reason = None if block_reason is None else render.controls(block_reason)
    if agent == 'shell':
        from agitmem.agents import shell
        return shell.envelope(context, message, block_reason)
    mod = clients.module(agent)
    if context is not None and event not in mod.CONTEXT_EVENTS:
        raise ValueError(
            f'{agent} {mod.EVENT_NAMES[event]} hooks cannot add context '
            f'for the model',
        )
    out = _envelope(mod, event, context, message, block_reason)
    if not out:
        # Gemini wants JSON on stdout, always
        return '{}' if agent == 'gemini' else ''
    # not ensure_ascii: escaped CJK would count six times against the
    # agents' hook output limits
    return jsontext.dumps(out, ensure_ascii=False)
