"""The agents agitmem knows: their names for agitmem's events, what each
event can carry back, where their settings live.

On the hot path of `agitmem hook post-edit` / `hook prompt`: standard
library only, and nothing heavy imported at module level."""
from __future__ import annotations

import sys

from agitmem.errors import AgitmemError

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Protocol

    class Native(Protocol):
        SETTINGS: tuple[str, str]
        EVENT_NAMES: dict[str, str]
        MATCHERS: dict[str, str | None]
        CONTEXT_EVENTS: frozenset[str]
        NATIVE_EVENTS: frozenset[str]

        def hook_entry(self, event: str, command: str) -> dict[str, object]:
            ...

        def edited_paths(self, tool_input: dict[str, object]) -> list[str]:
            ...

        BLOCK_DECISION: str

EVENTS = ('session-start', 'pre-compact', 'post-edit', 'prompt', 'stop')
AGENTS = ('claude', 'codex', 'gemini', 'shell')
# the package as a launcher names it with a version or extras (`uvx
# agitmem@latest`, `pipx run agitmem==1.2`, `uvx agitmem[yaml]`), a pattern
# settings and mcp_settings match whole: what `install --command` wrote
PACKAGE_SPEC = r'agitmem[@=<>~!\[].*'

# the agents with hooks of their own, each its module (agents/<agent>.py)
NATIVE = ('claude', 'codex', 'gemini')


def module(agent: str) -> Native:
    """The module of a native agent (KeyError for any other), imported
    when first asked: a hook imports its own client's only."""
    if agent not in NATIVE:
        raise KeyError(agent)
    name = f'{__package__}.{agent}'
    # __import__, not importlib (agents/__init__.py)
    __import__(name)
    return sys.modules[name]


def check_agent(agent: str) -> None:
    if agent not in AGENTS:
        raise AgitmemError(
            f'unknown agent {agent!r}: expected one of {", ".join(AGENTS)}',
        )


def check_event(event: str) -> None:
    if event not in EVENTS:
        raise AgitmemError(
            f'unknown hook event {event!r}: expected one of '
            f'{", ".join(EVENTS)}',
        )


def native(agent: str) -> Native:
    check_agent(agent)
    try:
        return module(agent)
    except KeyError:
        raise AgitmemError(
            f'{agent} has no native hooks to install: its shims live in '
            f'.agent/hooks/ (agitmem init puts them there)',
        )


def native_event(agent: str, event: str) -> str | None:
    """The agent's own name for agitmem `event` (None for shell shims)."""
    check_agent(agent)
    check_event(event)
    if agent == 'shell':
        return None
    return module(agent).EVENT_NAMES[event]


def agitmem_event(agent: str, native: str) -> str | None:
    """The agitmem event an agent's hook event maps onto, if any."""
    check_agent(agent)
    if agent == 'shell':
        return None
    for event, name in module(agent).EVENT_NAMES.items():
        if name == native:
            return event
    return None


def supports_context(agent: str, event: str) -> bool:
    """Whether `envelope(agent, event, context=...)` can reach the model."""
    check_agent(agent)
    check_event(event)
    return agent == 'shell' or event in module(agent).CONTEXT_EVENTS


def settings_path(agent: str, root: Path) -> Path:
    return root.joinpath(*native(agent).SETTINGS)


def json_kind(value: object) -> str:
    if isinstance(value, list):
        return 'array'
    elif isinstance(value, str):
        return 'string'
    elif isinstance(value, bool):
        return 'boolean'
    elif isinstance(value, (int, float)):
        return 'number'
    elif value is None:
        return 'null'
    else:
        return 'object'
