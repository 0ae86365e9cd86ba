from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agitmem.agents import AGENTS
from agitmem.agents import agitmem_event
from agitmem.agents import EVENTS
from agitmem.agents import native_event
from agitmem.agents import parse
from agitmem.agents import Payload
from agitmem.errors import AgitmemError

PAYLOADS = Path(__file__).parent / 'payloads'


def _text(name: str) -> str:
    return (PAYLOADS / f'{name}.json').read_text()


def _parse(name: str, agent: str | None = None) -> Payload:
    return parse(_text(name), agent=agent, environ={})


# fixture -> (agent, agitmem event it maps onto)
FIXTURES = {
    'claude_session_start_startup': ('claude', 'session-start'),
    'claude_session_start_resume': ('claude', 'session-start'),
    'claude_session_start_clear': ('claude', 'session-start'),
    'claude_session_start_compact': ('claude', 'session-start'),
    'claude_pre_compact_manual': ('claude', 'pre-compact'),
    'claude_pre_compact_auto': ('claude', 'pre-compact'),
    'claude_post_edit_write': ('claude', 'post-edit'),
    'claude_post_edit_edit': ('claude', 'post-edit'),
    'claude_post_edit_multiedit': ('claude', 'post-edit'),
    'claude_post_edit_notebook': ('claude', 'post-edit'),
    'claude_prompt': ('claude', 'prompt'),
    'claude_stop': ('claude', 'stop'),
    'claude_stop_active': ('claude', 'stop'),
    'codex_session_start_startup': ('codex', 'session-start'),
    'codex_session_start_compact': ('codex', 'session-start'),
    'codex_pre_compact_auto': ('codex', 'pre-compact'),
    'codex_post_edit_apply_patch': ('codex', 'post-edit'),
    'codex_prompt': ('codex', 'prompt'),
    'codex_stop': ('codex', 'stop'),
    'gemini_session_start_startup': ('gemini', 'session-start'),
    'gemini_session_start_resume': ('gemini', 'session-start'),
    'gemini_pre_compact_auto': ('gemini', 'pre-compact'),
    'gemini_post_edit_write_file': ('gemini', 'post-edit'),
    'gemini_post_edit_replace': ('gemini', 'post-edit'),
    'gemini_prompt': ('gemini', 'prompt'),
    'gemini_stop': ('gemini', 'stop'),
}


@pytest.mark.parametrize(('name', 'expected'), sorted(FIXTURES.items()))
def test_detects_the_agent_of_each_fixture(
        name: str,
        expected: tuple[str, str],
) -> None:
    agent, event = expected
    payload = _parse(name)
    assert payload.agent == agent
    assert payload.event == native_event(agent, event)
    assert payload.event is not None
    assert agitmem_event(agent, payload.event) == event


@pytest.mark.parametrize(('name', 'expected'), sorted(FIXTURES.items()))
def test_explicit_agent_gives_the_same_payload(
        name: str,
        expected: tuple[str, str],
) -> None:
    assert _parse(name, agent=expected[0]) == _parse(name)


def test_every_agent_and_event_has_a_fixture() -> None:
    covered = set(FIXTURES.values())
    for agent in ('claude', 'codex', 'gemini'):
        for event in EVENTS:
            assert (agent, event) in covered


@pytest.mark.parametrize(
    'name',
    sorted(p.stem for p in PAYLOADS.glob('claude_real_*.json')),
)
def test_recorded_claude_payloads_are_claude(name: str) -> None:
    payload = _parse(name)
    assert payload.agent == 'claude'
    assert payload.raw['hook_event_name'] == payload.event


@pytest.mark.parametrize(
    ('name', 'source'),
    (
        ('claude_session_start_startup', 'startup'),
        ('claude_session_start_resume', 'resume'),
        ('claude_session_start_clear', 'clear'),
        ('claude_session_start_compact', 'compact'),
        ('codex_session_start_startup', 'startup'),
        ('codex_session_start_compact', 'compact'),
        ('gemini_session_start_startup', 'startup'),
        ('gemini_session_start_resume', 'resume'),
    ),
)
def test_session_start_source(name: str, source: str) -> None:
    assert _parse(name).source == source


def test_claude_common_fields() -> None:
    payload = _parse('claude_session_start_compact')
    assert payload.session_id == '00893aaf-19fa-41d2-8238-13269b9b3ca0'
    assert payload.transcript_path is not None
    assert payload.transcript_path.endswith(
        '/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl',
    )
    assert payload.cwd == '/home/user/proj'
    assert payload.tool_name is None
    assert payload.edited_paths == ()
    assert payload.prompt is None
    assert payload.stop_hook_active is False
    assert payload.context_len is None


@pytest.mark.parametrize(
    ('name', 'trigger'),
    (
        ('claude_pre_compact_manual', 'manual'),
        ('claude_pre_compact_auto', 'auto'),
        ('codex_pre_compact_auto', 'auto'),
        ('gemini_pre_compact_auto', 'auto'),
    ),
)
def test_pre_compact_trigger(name: str, trigger: str) -> None:
    assert _parse(name).trigger == trigger


@pytest.mark.parametrize(
    ('name', 'tool', 'paths'),
    (
        (
            'claude_post_edit_write', 'Write',
            ('/home/user/proj/src/config/index.ts',),
        ),
        (
            'claude_post_edit_edit', 'Edit',
            ('/home/user/proj/src/config/loader.ts',),
        ),
        (
            'claude_post_edit_multiedit', 'MultiEdit',
            ('/home/user/proj/.agent/memory/snapshot.md',),
        ),
        (
            'claude_post_edit_notebook', 'NotebookEdit',
            ('/home/user/proj/analysis.ipynb',),
        ),
        (
            'codex_post_edit_apply_patch', 'apply_patch',
            ('src/config/loader.ts', 'src/config/index.ts'),
        ),
        (
            'gemini_post_edit_write_file', 'write_file',
            ('/home/user/proj/src/config/index.ts',),
        ),
        (
            'gemini_post_edit_replace', 'replace',
            ('/home/user/proj/src/config/loader.ts',),
        ),
    ),
)
def test_post_edit_paths(name: str, tool: str, paths: tuple[str, ...]) -> None:
    payload = _parse(name)
    assert payload.tool_name == tool
    assert payload.edited_paths == paths


def test_claude_path_from_tool_response_when_input_has_none() -> None:
    data = json.loads(_text('claude_post_edit_write'))
    data['tool_input'] = {'content': 'x'}
    payload = parse(json.dumps(data), environ={})
    assert payload.edited_paths == ('/home/user/proj/src/config/index.ts',)


def test_codex_patch_paths_delete_and_move() -> None:
    patch = (
        '*** Begin Patch\n'
        '*** Delete File: old.py\n'
        '*** Update File: a.py\n'
        '*** Move to: b.py\n'
        '@@\n-x\n+y\n'
        '*** Update File: a.py\n'
        '*** End Patch\n'
    )
    data = json.loads(_text('codex_post_edit_apply_patch'))
    data['tool_input'] = {'command': patch}
    payload = parse(json.dumps(data), environ={})
    assert payload.edited_paths == ('old.py', 'a.py', 'b.py')


@pytest.mark.parametrize(
    'name', ('claude_prompt', 'codex_prompt', 'gemini_prompt'),
)
def test_prompt(name: str) -> None:
    assert _parse(name).prompt == 'Finish moving loadConfig into index.ts'


def test_gemini_prompt_without_hook_context() -> None:
    """The real BeforeAgent payload: the prompt carries agitmem's own block
    from SessionStart in <hook_context>; the user's request is what follows."""
    data = json.loads((PAYLOADS / 'gemini' / 'BeforeAgent.json').read_text())
    assert '<hook_context>' in data['prompt']
    assert parse(json.dumps(data), environ={}).prompt == 'Port the config loader to TOML.'
    data['prompt'] = '<hook_context>a</hook_context>\n<hook_context>b</hook_context>\nhi <hook_context>unclosed'
    assert parse(json.dumps(data), environ={}).prompt == 'hi <hook_context>unclosed'


@pytest.mark.parametrize(
    ('name', 'active'),
    (
        ('claude_stop', False),
        ('claude_stop_active', True),
        ('codex_stop', False),
        ('gemini_stop', False),
    ),
)
def test_stop_hook_active(name: str, active: bool) -> None:
    assert _parse(name).stop_hook_active is active


def test_codex_null_transcript_path() -> None:
    payload = _parse('codex_session_start_compact')
    assert payload.agent == 'codex'
    assert payload.transcript_path is None


def test_raw_keeps_fields_the_docs_do_not_list() -> None:
    data = json.loads(_text('claude_prompt'))
    data['prompt_id'] = 'p-1'
    data['effort'] = {'level': 'medium'}
    payload = parse(json.dumps(data), environ={})
    assert payload.agent == 'claude'
    assert payload.raw['effort'] == {'level': 'medium'}


def test_environment_breaks_a_tie() -> None:
    data = {
        'session_id': 's', 'cwd': '/p', 'hook_event_name': 'SessionStart',
        'source': 'startup', 'transcript_path': '/tmp/t.jsonl',
    }
    text = json.dumps(data)
    claude_env = {'CLAUDE_PROJECT_DIR': '/p'}
    gemini_env = {'GEMINI_PROJECT_DIR': '/p', 'CLAUDE_PROJECT_DIR': '/p'}
    assert parse(text, environ=claude_env).agent == 'claude'
    assert parse(text, environ=gemini_env).agent == 'gemini'


@pytest.mark.parametrize(
    ('text', 'words'),
    (
        ('', 'empty'),
        ('  \n', 'empty'),
        ('{"hook_event_name": ', 'not JSON'),
        ('hello', 'not JSON'),
        ('[1, 2]', 'JSON array'),
        ('"SessionStart"', 'JSON string'),
        ('3', 'JSON number'),
        ('null', 'JSON null'),
        ('{"session_id": "s"}', 'no hook_event_name'),
        ('{"hook_event_name": "beforeSubmitPrompt"}', 'no known agent'),
    ),
)
def test_bad_input_is_one_clear_line(text: str, words: str) -> None:
    with pytest.raises(AgitmemError) as excinfo:
        parse(text, environ={})
    msg = str(excinfo.value)
    assert words in msg
    assert '\n' not in msg


@pytest.mark.parametrize('agent', ('claude', 'codex', 'gemini'))
def test_empty_input_with_explicit_agent(agent: str) -> None:
    with pytest.raises(AgitmemError, match='empty'):
        parse('', agent=agent, environ={})


def test_unknown_agent_name() -> None:
    with pytest.raises(AgitmemError, match="unknown agent 'cursor'"):
        parse('{}', agent='cursor', environ={})


def test_shell_reads_the_environment() -> None:
    environ = {
        'AGENT_CONTEXT_LEN': '48000',
        'AGENT_EVENT_SOURCE': 'compact',
        'AGENT_SESSION_ID': 's-1',
        'AGENT_EDITED_PATHS': 'src/a.py\n.agent/memory/state.json\n',
        'AGENT_TOOL_NAME': 'edit',
        'AGENT_PROMPT': 'go on',
        'AGENT_STOP_HOOK_ACTIVE': '1',
        'HOME': '/root',
    }
    payload = parse('', agent='shell', environ=environ)
    assert payload.agent == 'shell'
    assert payload.context_len == 48000
    assert payload.source == 'compact'
    assert payload.session_id == 's-1'
    assert payload.edited_paths == ('src/a.py', '.agent/memory/state.json')
    assert payload.tool_name == 'edit'
    assert payload.prompt == 'go on'
    assert payload.stop_hook_active is True
    assert 'HOME' not in payload.raw
    assert payload.raw['AGENT_CONTEXT_LEN'] == '48000'


def test_shell_with_nothing_set() -> None:
    payload = parse('', agent='shell', environ={})
    assert payload.context_len is None
    assert payload.source is None
    assert payload.edited_paths == ()
    assert payload.stop_hook_active is False
    assert payload.raw == {}


@pytest.mark.parametrize('value', ('lots', '12.5', '-3'))
def test_shell_bad_context_len(value: str) -> None:
    with pytest.raises(AgitmemError, match='AGENT_CONTEXT_LEN'):
        parse('', agent='shell', environ={'AGENT_CONTEXT_LEN': value})


def test_event_names() -> None:
    assert native_event('gemini', 'pre-compact') == 'PreCompress'
    assert native_event('gemini', 'prompt') == 'BeforeAgent'
    assert native_event('codex', 'post-edit') == 'PostToolUse'
    assert native_event('shell', 'stop') is None
    assert agitmem_event('claude', 'SessionEnd') is None
    assert set(AGENTS) == {'claude', 'codex', 'gemini', 'shell'}


def test_hot_path_imports_no_heavy_modules() -> None:
    code = (
        'import sys\n'
        'import agitmem.agents, agitmem.agents.transcript\n'
        'heavy = ("pygit2", "yaml", "filelock")\n'
        'print(",".join(m for m in heavy if m in sys.modules))\n'
    )
    out = subprocess.run(
        (sys.executable, '-c', code),
        capture_output=True, text=True, check=True,
    )
    assert out.stdout.strip() == ''
