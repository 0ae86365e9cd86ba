from __future__ import annotations

import json

import pytest

from agitmem.agents import envelope
from agitmem.agents import EVENTS
from agitmem.agents import supports_context
from agitmem.errors import AgitmemError


def _json(agent: str, event: str, **kwargs: str) -> object:
    return json.loads(envelope(agent, event, **kwargs))


@pytest.mark.parametrize(
    ('agent', 'event', 'name'),
    (
        ('claude', 'session-start', 'SessionStart'),
        ('claude', 'post-edit', 'PostToolUse'),
        ('claude', 'prompt', 'UserPromptSubmit'),
        ('codex', 'session-start', 'SessionStart'),
        ('codex', 'post-edit', 'PostToolUse'),
        ('codex', 'prompt', 'UserPromptSubmit'),
        ('gemini', 'session-start', 'SessionStart'),
        ('gemini', 'post-edit', 'AfterTool'),
        ('gemini', 'prompt', 'BeforeAgent'),
    ),
)
def test_context_goes_to_additional_context(
        agent: str,
        event: str,
        name: str,
) -> None:
    assert _json(agent, event, context='MEMORY') == {
        'hookSpecificOutput': {
            'hookEventName': name,
            'additionalContext': 'MEMORY',
        },
    }


@pytest.mark.parametrize('agent', ('claude', 'codex', 'gemini'))
@pytest.mark.parametrize('event', EVENTS)
def test_message_is_system_message(agent: str, event: str) -> None:
    assert _json(agent, event, message='memory saved') == {
        'systemMessage': 'memory saved',
    }


def test_context_and_message_together() -> None:
    assert _json('claude', 'session-start', context='M', message='hi') == {
        'hookSpecificOutput': {
            'hookEventName': 'SessionStart',
            'additionalContext': 'M',
        },
        'systemMessage': 'hi',
    }


@pytest.mark.parametrize(
    ('agent', 'decision'),
    (('claude', 'block'), ('codex', 'block'), ('gemini', 'deny')),
)
def test_stop_block(agent: str, decision: str) -> None:
    out = _json(agent, 'stop', block_reason='update snapshot.md first')
    assert out == {'decision': decision, 'reason': 'update snapshot.md first'}


def test_stop_block_with_message() -> None:
    out = _json('claude', 'stop', block_reason='r', message='m')
    assert out == {'decision': 'block', 'reason': 'r', 'systemMessage': 'm'}


@pytest.mark.parametrize('agent', ('claude', 'codex'))
@pytest.mark.parametrize('event', EVENTS)
def test_nothing_to_say_prints_nothing(agent: str, event: str) -> None:
    assert envelope(agent, event) == ''


@pytest.mark.parametrize('event', EVENTS)
def test_gemini_always_prints_json(event: str) -> None:
    assert envelope('gemini', event) == '{}'


# keys each Codex output schema allows (additionalProperties: false),
# from codex-rs/hooks/schema/generated/*.command.output.schema.json
CODEX_KEYS = {
    'session-start': {
        'continue', 'hookSpecificOutput', 'stopReason', 'suppressOutput',
        'systemMessage',
    },
    'pre-compact': {
        'continue', 'stopReason', 'suppressOutput', 'systemMessage',
    },
    'post-edit': {
        'continue', 'decision', 'hookSpecificOutput', 'reason', 'stopReason',
        'suppressOutput', 'systemMessage',
    },
    'prompt': {
        'continue', 'decision', 'hookSpecificOutput', 'reason', 'stopReason',
        'suppressOutput', 'systemMessage',
    },
    'stop': {
        'continue', 'decision', 'reason', 'stopReason', 'suppressOutput',
        'systemMessage',
    },
}


@pytest.mark.parametrize('event', EVENTS)
def test_codex_output_fits_its_schema(event: str) -> None:
    kwargs = {'message': 'm'}
    if supports_context('codex', event):
        kwargs['context'] = 'c'
    if event == 'stop':
        kwargs['block_reason'] = 'r'
    out = _json('codex', event, **kwargs)
    assert isinstance(out, dict)
    assert set(out) <= CODEX_KEYS[event]


@pytest.mark.parametrize(
    ('agent', 'event'),
    (
        ('claude', 'pre-compact'),
        ('claude', 'stop'),
        ('codex', 'pre-compact'),
        ('codex', 'stop'),
        ('gemini', 'pre-compact'),
        ('gemini', 'stop'),
    ),
)
def test_no_context_where_the_agent_cannot_take_it(
        agent: str,
        event: str,
) -> None:
    assert not supports_context(agent, event)
    with pytest.raises(ValueError, match='cannot add context'):
        envelope(agent, event, context='x')


@pytest.mark.parametrize('event', ('session-start', 'pre-compact', 'prompt'))
def test_block_reason_only_on_stop(event: str) -> None:
    with pytest.raises(ValueError, match='only for stop'):
        envelope('claude', event, block_reason='x')


def test_unicode_is_not_escaped() -> None:
    out = envelope('claude', 'session-start', context='目标: 完成 ===')
    assert '目标' in out
    assert json.loads(out)['hookSpecificOutput']['additionalContext'] == (
        '目标: 完成 ==='
    )


def test_multiline_context_round_trips() -> None:
    context = '===== AGENT MEMORY BEGIN =====\n- rule\n===== AGENT MEMORY END ====='
    out = envelope('codex', 'prompt', context=context)
    assert '\n' not in out
    assert json.loads(out)['hookSpecificOutput']['additionalContext'] == context


@pytest.mark.parametrize('event', EVENTS)
def test_shell_is_plain_text(event: str) -> None:
    assert supports_context('shell', event)
    assert envelope('shell', event, context='MEMORY') == 'MEMORY'
    assert envelope('shell', event) == ''


def test_shell_context_then_message() -> None:
    out = envelope('shell', 'stop', message='note', block_reason='not yet')
    assert out == 'note\nnot yet'
    assert envelope('shell', 'prompt', context='A', message='B') == 'A\nB'


def test_unknown_event_or_agent() -> None:
    with pytest.raises(AgitmemError, match="unknown hook event 'compact'"):
        envelope('claude', 'compact')
    with pytest.raises(AgitmemError, match="unknown agent 'aider'"):
        envelope('aider', 'stop')
