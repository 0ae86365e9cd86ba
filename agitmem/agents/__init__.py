"""Agent hook adapters: payload in, envelope out, settings install.

The package only hands names on: the registry of agents in clients.py,
parsing in payload.py, envelopes in envelopes.py, settings files in
settings.py.  Lazily (PEP 562): a hook on the hot path loads payload and
envelope, never the settings installer."""
from __future__ import annotations

import sys

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from agitmem.agents.clients import agitmem_event as agitmem_event
    from agitmem.agents.clients import AGENTS as AGENTS
    from agitmem.agents.clients import EVENTS as EVENTS
    from agitmem.agents.clients import native_event as native_event
    from agitmem.agents.clients import settings_path as settings_path
    from agitmem.agents.clients import supports_context as supports_context
    from agitmem.agents.envelopes import envelope as envelope
    from agitmem.agents.payload import detect as detect
    from agitmem.agents.payload import parse as parse
    from agitmem.agents.payload import Payload as Payload
    from agitmem.agents.settings import install as install
    from agitmem.agents.settings import uninstall as uninstall

_WHERE = {
    'AGENTS': 'clients', 'EVENTS': 'clients', 'agitmem_event': 'clients',
    'native_event': 'clients', 'settings_path': 'clients',
    'supports_context': 'clients', 'envelope': 'envelopes', 'detect': 'payload',
    'parse': 'payload', 'Payload': 'payload', 'install': 'settings',
    'uninstall': 'settings',
}
__all__ = [
    'AGENTS',
    'EVENTS',
    'Payload',
    'agitmem_event',
    'detect',
    'envelope',
    'install',
    'native_event',
    'parse',
    'settings_path',
    'supports_context',
    'uninstall',
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    # __import__, not importlib.import_module: the importlib package (and
    # the warnings it imports) is not loaded with the interpreter
    module = f'{__name__}.{_WHERE[name]}'
    __import__(module)
    return getattr(sys.modules[module], name)
