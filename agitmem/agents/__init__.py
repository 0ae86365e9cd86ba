"""Agent hook adapters: payload in, envelope out, settings install.

The package only hands names on: the registry of agents in clients.py,
parsing in payload.py, envelopes in envelope.py, settings files in
settings.py.  On the hot path of `agitmem hook post-edit` / `hook prompt`:
standard library only."""
from __future__ import annotations

from agitmem.agents.clients import agitmem_event
from agitmem.agents.clients import AGENTS
from agitmem.agents.clients import EVENTS
from agitmem.agents.clients import native_event
from agitmem.agents.clients import settings_path
from agitmem.agents.clients import supports_context
from agitmem.agents.envelope import envelope
from agitmem.agents.payload import detect
from agitmem.agents.payload import parse
from agitmem.agents.payload import Payload
from agitmem.agents.settings import install
from agitmem.agents.settings import uninstall

__all__ = [
    'AGENTS', 'EVENTS', 'Payload', 'agitmem_event', 'detect', 'envelope',
    'install', 'native_event', 'parse', 'settings_path', 'supports_context',
    'uninstall',
]
