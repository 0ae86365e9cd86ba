"""`agitmem hook EVENT` fed recorded-shape payloads through the real CLI."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from testing.util import agitmem
from testing.util import agitmem_argv
from testing.util import git
from testing.util import mem
from testing.util import message
from testing.util import ok
from testing.util import run
from testing.util import tip

PAYLOADS = Path(__file__).parent.parent / 'agents' / 'payloads'
HOOKS = Path(__file__).parent.parent.parent / 'hooks'
GOAL = 'move loadConfig into index.ts'
NEXT = 'delete the original and update imports'


def payload(name: str, repo: Path, **changes: Any) -> str:
    data = json.loads((PAYLOADS / f'{name}.json').read_text())
    data['cwd'] = str(repo)
    data.update(changes)
    return json.dumps(data)


def hook(repo: Path, event: str, stdin: str, *args: str, env: dict[str, str] | None = None) -> tuple[str, str]:
    proc = agitmem('hook', event, *args, cwd=repo, input=stdin, env=env)
    assert proc.returncode == 0, proc.stderr
    assert 'Traceback' not in proc.stderr
    return proc.stdout, proc.stderr


@pytest.fixture
def agentrepo(memrepo: Path) -> Path:
    ok('state', 'set', f'current_goal={GOAL}', f'next_intent={NEXT}', 'current_file=src/app.py', cwd=memrepo)
    return memrepo


def _context(out: str) -> str:
    data = json.loads(out)
    return data['hookSpecificOutput']['additionalContext']  # type: ignore[no-any-return]


@pytest.mark.parametrize('agent', ('claude', 'codex'))
def test_session_start_compact_injects_restate(agentrepo: Path, agent: str) -> None:
    out, _ = hook(agentrepo, 'session-start', payload(f'{agent}_session_start_compact', agentrepo), '--agent', agent)
    text = _context(out)
    assert json.loads(out)['hookSpecificOutput']['hookEventName'] == 'SessionStart'
    assert 'restate current_goal and next_intent' in text
    assert f'current_goal: {GOAL}' in text and f'next_intent: {NEXT}' in text
    assert (agentrepo / '.agent' / 'injected_context.txt').read_text() == text


@pytest.mark.parametrize('name', ('claude_session_start_startup', 'claude_session_start_resume', 'claude_session_start_clear'))
def test_session_start_other_sources_no_restate(agentrepo: Path, name: str) -> None:
    out, _ = hook(agentrepo, 'session-start', payload(name, agentrepo))  # agent detected
    text = _context(out)
    assert GOAL in text and 'restate' not in text


def test_session_start_real_claude_payload(agentrepo: Path) -> None:
    out, _ = hook(agentrepo, 'session-start', payload('claude_real_session_start_compact', agentrepo), '--agent', 'claude')
    assert 'restate' in _context(out)


@pytest.mark.parametrize(('agent', 'name', 'broken', 'text', 'says'), (
    ('claude', 'claude_session_start_compact', 'fragments.jsonl', '{"id": "A-001"}\n{oops\n',
     'NOTE: .agent/memory/fragments.jsonl:2: not valid JSON'),
    ('codex', 'codex_session_start_compact', 'notes.md', None, 'NOTE: .agent/memory/notes.md: is a symlink'),
    ('claude', 'claude_session_start_startup', 'fragments.jsonl', '{"id": "A-001"}\n{"id": "A-001"}\n',
     'NOTE: .agent/memory/fragments.jsonl:2: duplicate id A-001'),
))
def test_session_start_injects_the_memory_it_can_read(
        agentrepo: Path, agent: str, name: str, broken: str, text: str | None, says: str,
) -> None:
    """One memory file that cannot be read (a fragments line broken by
    hand, a symlink) is named in the block: the rest of the memory still
    reaches the agent after a compaction, where `load` refuses the whole."""
    path = mem(agentrepo, broken)
    if text is None:
        path.unlink()
        path.symlink_to('/etc/hostname')
    else:
        path.write_text(text)
    out, err = hook(agentrepo, 'session-start', payload(name, agentrepo), '--agent', agent)
    block = _context(out)
    assert says in block and '(left out of this injection; `agitmem check` says what to fix)' in block
    assert f'current_goal: {GOAL}' in block and f'next_intent: {NEXT}' in block and 'TATTOO' in block
    assert (agentrepo / '.agent' / 'injected_context.txt').read_text() == block
    assert agitmem('load', cwd=agentrepo).returncode == 2


def test_session_start_names_a_broken_state_and_shows_the_rest(agentrepo: Path) -> None:
    mem(agentrepo, 'state.json').write_text('{"current_goal": "\x1b[31mred"')
    ok('note', 'a note that still reaches the agent', '--no-save', cwd=agentrepo)
    out, _ = hook(agentrepo, 'session-start', payload('claude_session_start_compact', agentrepo), '--agent', 'claude')
    block = _context(out)
    assert 'NOTE: .agent/memory/state.json:1: not valid JSON' in block
    assert 'a note that still reaches the agent' in block and '\x1b' not in block


@pytest.mark.parametrize(('broken', 'text', 'says'), (
    ('state.json', '{"current_goal": "g", "x": ' + '[' * 600 + ']' * 600 + '}\n',
     'NOTE: .agent/memory/state.json: nested too deeply to be a state block'),
    ('fragments.jsonl', '{"id": "A-001", "goal": ' + '[' * 600 + ']' * 600 + '}\n',
     'NOTE: .agent/memory/fragments.jsonl:1: nested too deeply'),
))
@pytest.mark.parametrize('agent', ('claude', 'gemini'))
def test_session_start_leaves_out_a_layer_nested_too_deeply_to_show(
        agentrepo: Path, agent: str, broken: str, text: str, says: str,
) -> None:
    """A value json reads (600 deep) but the injection's escaping recursed
    past Python's limit on: the hook printed nothing (a RecursionError
    line on stderr) and `load` a traceback.  Now the layer is named and
    left out, the rest injected; load refuses in one line."""
    mem(agentrepo, broken).write_text(text)
    ok('note', 'a note that still reaches the agent', '--no-save', cwd=agentrepo)
    name = 'gemini_session_start_startup' if agent == 'gemini' else 'claude_session_start_compact'
    out, err = hook(agentrepo, 'session-start', payload(name, agentrepo), '--agent', agent)
    assert 'RecursionError' not in err
    block = _context(out)
    assert says in block and 'TATTOO' in block and 'a note that still reaches the agent' in block
    load = agitmem('load', cwd=agentrepo)
    assert load.returncode == 2 and 'Traceback' not in load.stderr
    assert says.removeprefix('NOTE: ') in load.stderr and len(load.stderr.splitlines()) == 1


def test_session_start_names_a_user_tattoo_it_cannot_open(agentrepo: Path) -> None:
    """The user's own tattoo (followed as a symlink: dotfile managers make
    them) a symlink loop: os.stat's OSError was no AgitmemError, so the
    hook injected nothing (one `OSError` line) and `load` ended on a
    traceback.  Named and left out; load refuses in one line."""
    tattoo = Path(os.environ['AGITMEM_HOME']) / 'memory' / 'tattoo.md'
    tattoo.parent.mkdir(parents=True)
    tattoo.symlink_to('loop')
    (tattoo.parent / 'loop').symlink_to('tattoo.md')
    out, err = hook(agentrepo, 'session-start', payload('claude_session_start_compact', agentrepo), '--agent', 'claude')
    block = _context(out)
    assert 'NOTE: ~/.agent/memory/tattoo.md: cannot be read (Too many levels of symbolic links)' in block
    assert f'current_goal: {GOAL}' in block and 'TATTOO' in block and err == ''
    load = agitmem('load', cwd=agentrepo)
    assert load.returncode == 2 and 'Traceback' not in load.stderr and len(load.stderr.splitlines()) == 1
    assert '~/.agent/memory/tattoo.md: cannot be read' in load.stderr


def test_session_start_after_a_compaction_never_reads_a_fifo(agentrepo: Path) -> None:
    """notes.md a FIFO: the block names it, but the recovery record's
    yardstick read the memory files again through pathlib, which blocked
    the hook until the client killed it (a link to /dev/zero: until the
    memory ran out); the agent got nothing after its compaction."""
    notes = mem(agentrepo, 'notes.md')
    notes.unlink()
    os.mkfifo(notes)
    proc = subprocess.run(
        [*agitmem_argv(), 'hook', 'session-start', '--agent', 'claude'], cwd=agentrepo, text=True,
        capture_output=True, input=payload('claude_session_start_compact', agentrepo), timeout=30,
    )
    assert proc.returncode == 0 and proc.stderr == ''
    block = _context(proc.stdout)
    assert 'NOTE: .agent/memory/notes.md: not a regular file' in block and f'current_goal: {GOAL}' in block
    assert 'compaction' in (agentrepo / '.agent' / 'log' / 'memory.log').read_text()


def test_gemini_pre_compress_alone_is_not_a_compaction(agentrepo: Path) -> None:
    """Gemini CLI 0.61.0 fires PreCompress before every model call."""
    before = tip(agentrepo)
    out, _ = hook(agentrepo, 'pre-compact', payload('gemini_pre_compact_auto', agentrepo), '--agent', 'gemini')
    assert json.loads(out) == {}  # pure JSON, nothing to say
    out, _ = hook(agentrepo, 'prompt', payload('gemini_prompt', agentrepo, transcript_path=None), '--agent', 'gemini')
    assert json.loads(out) == {}
    assert tip(agentrepo) == before  # no checkpoint either


GEMINI_CHAT = PAYLOADS / 'gemini' / 'chat-compress-manual.jsonl'


def _split_at_compression(path: Path) -> tuple[str, str]:
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if 'Got it. Thanks for the additional context!' in ln)
    return ''.join(lines[:at]), ''.join(lines[at:])


def test_gemini_real_compression_in_the_chat_file(agentrepo: Path, tmp_path: Path) -> None:
    """A real recorded chat file: the compression is its `$set.messages`
    with the summary answered by Gemini's acknowledgement."""
    chat = tmp_path / 'session.jsonl'
    before, after = _split_at_compression(GEMINI_CHAT)
    chat.write_text(before)
    stdin = payload('gemini_prompt', agentrepo, transcript_path=str(chat), session_id='g1')
    assert json.loads(hook(agentrepo, 'prompt', stdin, '--agent', 'gemini')[0]) == {}
    saved = tip(agentrepo)
    mem(agentrepo, 'notes.md').write_text('- unsaved when it compressed\n')
    chat.write_text(before + after)
    out, _ = hook(agentrepo, 'prompt', stdin, '--agent', 'gemini')
    text = _context(out)
    assert 'restate' in text and NEXT in text
    assert tip(agentrepo) != saved  # the checkpoint, at the real compression
    assert 'checkpoint (compressed)' in message(agentrepo)
    # handled once; Gemini rewrites `messages` again at every start
    chat.write_text(before + after + after)
    assert json.loads(hook(agentrepo, 'prompt', stdin, '--agent', 'gemini')[0]) == {}


def _before_model(repo: Path, chat: Path, session: str) -> str:
    """A BeforeModel payload (the recorded one) whose request is the chat
    file's latest `messages`, as Gemini CLI sends them: role and text."""
    data = json.loads((PAYLOADS / 'gemini' / 'BeforeModel.json').read_text())
    messages: list[dict[str, str]] = []
    for line in chat.read_text().splitlines():
        record = json.loads(line)
        if isinstance(record.get('$set'), dict) and 'messages' in record['$set']:
            messages = [
                {'role': 'model' if m['type'] == 'gemini' else 'user',
                 'content': m['content'] if isinstance(m['content'], str) else ''.join(p.get('text', '') for p in m['content'])}
                for m in record['$set']['messages']
            ]
    messages.append({'role': 'user', 'content': 'the prompt goes on'})
    data.update(cwd=str(repo), transcript_path=str(chat), session_id=session)
    data['llm_request']['messages'] = messages
    return json.dumps(data)


def test_gemini_before_model_after_a_compression_in_the_prompt(agentrepo: Path, tmp_path: Path) -> None:
    """The first model request after a compression gets the after-compaction
    block (once), before the next BeforeAgent; other requests are unchanged."""
    chat = tmp_path / 'session.jsonl'
    before, after = _split_at_compression(GEMINI_CHAT)
    chat.write_text(before)
    prompt = payload('gemini_prompt', agentrepo, transcript_path=str(chat), session_id='g3')
    assert json.loads(hook(agentrepo, 'prompt', prompt, '--agent', 'gemini')[0]) == {}
    # no summary in the request: nothing to do, no git
    assert json.loads(hook(agentrepo, 'prompt', _before_model(agentrepo, chat, 'g3'), '--agent', 'gemini')[0]) == {}
    saved = tip(agentrepo)
    mem(agentrepo, 'notes.md').write_text('- unsaved when it compressed\n')
    chat.write_text(before + after)
    out = json.loads(hook(agentrepo, 'prompt', _before_model(agentrepo, chat, 'g3'), '--agent', 'gemini')[0])
    messages = out['hookSpecificOutput']['llm_request']['messages']
    assert out['hookSpecificOutput']['hookEventName'] == 'BeforeModel'
    last = messages[-1]['content']
    assert last.endswith('the prompt goes on') and 'restate' in last and NEXT in last
    assert tip(agentrepo) != saved and 'checkpoint (compressed)' in message(agentrepo)
    report = json.loads(ok('recovery', '--json', cwd=agentrepo))
    assert [(r['agent'], r['trigger']) for r in report['compactions']] == [('gemini', 'compressed')]
    # once: the next model call, and the next prompt, see nothing new
    assert json.loads(hook(agentrepo, 'prompt', _before_model(agentrepo, chat, 'g3'), '--agent', 'gemini')[0]) == {}
    assert json.loads(hook(agentrepo, 'prompt', prompt, '--agent', 'gemini')[0]) == {}
    report = json.loads(ok('recovery', '--json', cwd=agentrepo))
    assert len(report['compactions']) == 1


def test_gemini_before_model_odd_requests(agentrepo: Path, tmp_path: Path) -> None:
    """A request with no messages, or with a summary but no user text to
    put the block before, never breaks the call."""
    chat = tmp_path / 'session.jsonl'
    chat.write_text(GEMINI_CHAT.read_text())
    data = json.loads(_before_model(agentrepo, chat, 'g4'))
    data['llm_request'] = {'messages': 'not a list'}
    assert json.loads(hook(agentrepo, 'prompt', json.dumps(data), '--agent', 'gemini')[0]) == {}
    # the session's first look only takes note of what is there
    stdin = _before_model(agentrepo, chat, 'g4')
    assert json.loads(hook(agentrepo, 'prompt', stdin, '--agent', 'gemini')[0]) == {}
    assert json.loads(hook(agentrepo, 'prompt', stdin, '--agent', 'gemini')[0]) == {}


def test_gemini_with_context_appends_without_user_text() -> None:
    from agitmem.agents import gemini
    out = gemini.with_context([{'role': 'model', 'content': 'hi'}, 'odd'], 'BLOCK')
    messages = out['hookSpecificOutput']['llm_request']['messages']  # type: ignore[index]
    assert messages == [{'role': 'model', 'content': 'hi'}, 'odd', {'role': 'user', 'content': 'BLOCK'}]


def test_gemini_resumed_session_old_compression_is_not_news(agentrepo: Path, tmp_path: Path) -> None:
    chat = tmp_path / 'session.jsonl'
    chat.write_text(GEMINI_CHAT.read_text())
    stdin = payload('gemini_prompt', agentrepo, transcript_path=str(chat), session_id='g2')
    assert json.loads(hook(agentrepo, 'prompt', stdin, '--agent', 'gemini')[0]) == {}


def test_sessions_do_not_cross(agentrepo: Path) -> None:
    """Session A's compaction is A's: B's prompts get no restate, A's
    next prompt gets it (once)."""
    a = {'session_id': 'session-a', 'transcript_path': None}
    b = {'session_id': 'session-b', 'transcript_path': None}
    hook(agentrepo, 'pre-compact', payload('claude_pre_compact_auto', agentrepo, **a), '--agent', 'claude')
    assert hook(agentrepo, 'prompt', payload('claude_prompt', agentrepo, **b), '--agent', 'claude')[0] == ''
    out, _ = hook(agentrepo, 'prompt', payload('claude_prompt', agentrepo, **a), '--agent', 'claude')
    assert 'restate' in _context(out)
    assert hook(agentrepo, 'prompt', payload('claude_prompt', agentrepo, **a), '--agent', 'claude')[0] == ''


def test_session_sizes_do_not_cross(agentrepo: Path) -> None:
    """Shell shims: each $AGITMEM_SESSION compares its own sizes."""
    big = {'AGENT_CONTEXT_LEN': '185000', 'AGITMEM_SESSION': 'big'}
    small = {'AGENT_CONTEXT_LEN': '20000', 'AGITMEM_SESSION': 'small'}
    for env in (big, small, big, small):
        out, _ = hook(agentrepo, 'prompt', '', '--agent', 'shell', env=env)
        assert 'restate' not in out


def test_session_state_is_pruned(agentrepo: Path) -> None:
    for i in range(3):
        hook(agentrepo, 'prompt', payload('claude_prompt', agentrepo, session_id=f's{i}', transcript_path=None), '--agent', 'claude')
    sessions = agentrepo / '.git' / 'agitmem' / 'sessions'
    files = sorted(sessions.iterdir())
    assert len(files) == 3
    old = time.time() - 8 * 24 * 3600
    for f in files[:2]:
        os.utime(f, (old, old))
    hook(agentrepo, 'prompt', payload('claude_prompt', agentrepo, session_id='new', transcript_path=None), '--agent', 'claude')
    assert len(list(sessions.iterdir())) == 2


def test_gemini_session_start_is_pure_json(agentrepo: Path) -> None:
    out, _ = hook(agentrepo, 'session-start', payload('gemini_session_start_startup', agentrepo), '--agent', 'gemini')
    assert GOAL in _context(out)


def test_pre_compact_saves_checkpoint(agentrepo: Path) -> None:
    mem(agentrepo, 'notes.md').write_text('- unsaved before compaction\n')
    out, _ = hook(agentrepo, 'pre-compact', payload('claude_pre_compact_auto', agentrepo), '--agent', 'claude')
    msg = message(agentrepo)
    assert msg.startswith('hook pre-compact: checkpoint (auto)\n')
    assert 'Agitmem-Event: pre-compact' in msg
    assert 'memory checkpoint' in json.loads(out)['systemMessage']
    assert git('show', 'refs/agitmem/heads/main:notes.md', cwd=agentrepo) == '- unsaved before compaction\n'


def test_pre_compact_warns_when_state_stale(agentrepo: Path) -> None:
    old = time.time() - 3600
    for name in ('state.json', 'snapshot.md'):
        os.utime(mem(agentrepo, name), (old, old))
    out, _ = hook(agentrepo, 'pre-compact', payload('claude_pre_compact_manual', agentrepo), '--agent', 'claude')
    assert '60 min old' in json.loads(out)['systemMessage']


def test_post_edit_of_memory_saves(agentrepo: Path) -> None:
    notes = mem(agentrepo, 'notes.md')
    notes.write_text('- edited by the agent\n')
    before = tip(agentrepo)
    stdin = payload('claude_post_edit_write', agentrepo, tool_input={'file_path': str(notes), 'content': 'x'})
    out, _ = hook(agentrepo, 'post-edit', stdin, '--agent', 'claude')
    assert tip(agentrepo) != before
    assert message(agentrepo).startswith('hook post-edit: notes.md\n')
    assert 'memory saved' in json.loads(out)['systemMessage']


def test_post_edit_reminds_when_stale(agentrepo: Path) -> None:
    stdin = payload('claude_post_edit_edit', agentrepo, tool_input={'file_path': str(agentrepo / 'src' / 'app.py')})
    out, _ = hook(agentrepo, 'post-edit', stdin, '--agent', 'claude')
    assert out == ''  # state fresh: nothing to say
    old = time.time() - 30 * 60
    for name in ('state.json', 'snapshot.md'):
        os.utime(mem(agentrepo, name), (old, old))
    out, _ = hook(agentrepo, 'post-edit', stdin, '--agent', 'claude')
    assert 'last updated 30 min ago' in _context(out)


def test_post_edit_gemini_and_codex(agentrepo: Path) -> None:
    old = time.time() - 30 * 60
    for name in ('state.json', 'snapshot.md'):
        os.utime(mem(agentrepo, name), (old, old))
    out, _ = hook(agentrepo, 'post-edit', payload('gemini_post_edit_write_file', agentrepo), '--agent', 'gemini')
    assert '30 min ago' in _context(out)
    out, _ = hook(agentrepo, 'post-edit', payload('codex_post_edit_apply_patch', agentrepo), '--agent', 'codex')
    assert '30 min ago' in _context(out)


def test_prompt_reinjects_every_reload_every(agentrepo: Path) -> None:
    (agentrepo / '.agent' / 'config.yaml').write_text('reload_every: 3\n')
    stdin = payload('claude_prompt', agentrepo, transcript_path=None)
    outs = [hook(agentrepo, 'prompt', stdin, '--agent', 'claude')[0] for _ in range(6)]
    assert [bool(o) for o in outs] == [False, False, True, False, False, True]
    assert 'restate' not in _context(outs[2])
    assert GOAL in _context(outs[2])


def _transcript(path: Path, sizes: list[int]) -> None:
    lines = []
    for i, size in enumerate(sizes):
        lines.append({'type': 'user', 'uuid': f'u{i}', 'message': {'role': 'user', 'content': 'hi'}})
        lines.append({
            'type': 'assistant', 'uuid': f'a{i}', 'requestId': f'r{i}',
            'message': {'id': f'm{i}', 'role': 'assistant', 'content': [{'type': 'text', 'text': 'ok'}],
                        'usage': {'input_tokens': size, 'cache_creation_input_tokens': 0,
                                  'cache_read_input_tokens': 0, 'output_tokens': 10}},
        })
    path.write_text(''.join(json.dumps(ln) + '\n' for ln in lines))


def test_claude_context_drop_alone_is_not_a_compaction(agentrepo: Path, tmp_path: Path) -> None:
    """Claude Code says when it compacts (SessionStart compact, the
    transcript's compact_boundary): a smaller context alone (a /clear, a
    subagent) is not one.  The 40% rule is for agents that say nothing."""
    t = tmp_path / 'session.jsonl'
    _transcript(t, [50_000, 100_000, 130_000])
    stdin = payload('claude_prompt', agentrepo, transcript_path=str(t))
    assert hook(agentrepo, 'prompt', stdin, '--agent', 'claude')[0] == ''
    _transcript(t, [50_000, 100_000, 130_000, 30_000])  # -77%
    assert hook(agentrepo, 'prompt', stdin, '--agent', 'claude')[0] == ''


def test_claude_compact_boundary_in_transcript(agentrepo: Path, tmp_path: Path) -> None:
    t = tmp_path / 'session.jsonl'
    _transcript(t, [50_000, 120_000])
    stdin = payload('claude_prompt', agentrepo, transcript_path=str(t))
    assert hook(agentrepo, 'prompt', stdin, '--agent', 'claude')[0] == ''
    with t.open('a') as f:
        f.write(json.dumps({'type': 'system', 'subtype': 'compact_boundary', 'uuid': 'b1',
                            'compactMetadata': {'trigger': 'auto', 'preTokens': 120000}}) + '\n')
    out, _ = hook(agentrepo, 'prompt', stdin, '--agent', 'claude')
    assert 'restate' in _context(out)
    log = (agentrepo / '.agent' / 'log' / 'memory.log').read_text()
    assert 're-inject: compaction (claude:b1)' in log
    assert hook(agentrepo, 'prompt', stdin, '--agent', 'claude')[0] == ''


def test_checkpoint_asked_once_near_the_window(agentrepo: Path, tmp_path: Path) -> None:
    (agentrepo / '.agent' / 'config.yaml').write_text('context_window: 200000\n')
    t = tmp_path / 'session.jsonl'
    _transcript(t, [100_000])
    stdin = payload('claude_prompt', agentrepo, transcript_path=str(t))
    assert hook(agentrepo, 'prompt', stdin, '--agent', 'claude')[0] == ''
    _transcript(t, [100_000, 150_000])  # 75% of the window
    out, _ = hook(agentrepo, 'prompt', stdin, '--agent', 'claude')
    text = _context(out)
    assert '75% full' in text and 'agitmem state set' in text and 'fragment add' in text
    _transcript(t, [100_000, 150_000, 160_000])
    assert hook(agentrepo, 'prompt', stdin, '--agent', 'claude')[0] == ''  # once


def test_shell_shims(agentrepo: Path) -> None:
    shim = str(HOOKS / 'on_compact.sh')
    env = {'AGENT_CONTEXT_LEN': '185000'}
    first = run('sh', shim, cwd=agentrepo, env=env)
    assert first.returncode == 0 and first.stdout == ''
    second = run('sh', shim, cwd=agentrepo, env={'AGENT_CONTEXT_LEN': '42000'})
    assert second.stdout.startswith('===== AGENT MEMORY BEGIN =====\nYour context was just compacted.')
    pre = run('sh', str(HOOKS / 'pre_task.sh'), cwd=agentrepo)
    assert GOAL in pre.stdout and 'restate' not in pre.stdout
    notes = mem(agentrepo, 'notes.md')
    notes.write_text('- shim edit\n')
    run('sh', str(HOOKS / 'post_edit.sh'), str(notes), cwd=agentrepo)
    assert message(agentrepo).startswith('hook post-edit: notes.md')


def test_init_copies_shims(memrepo: Path) -> None:
    for name in ('pre_task.sh', 'post_edit.sh', 'on_compact.sh'):
        shim = memrepo / '.agent' / 'hooks' / name
        assert os.access(shim, os.X_OK)
        assert 'agitmem hook' in shim.read_text()


def test_stop_blocks_without_progress(agentrepo: Path) -> None:
    stdin = payload('claude_stop', agentrepo)
    assert hook(agentrepo, 'stop', stdin, '--agent', 'claude')[0] == ''  # off by default
    (agentrepo / '.agent' / 'config.yaml').write_text('block_stop_without_progress: true\n')
    assert hook(agentrepo, 'stop', stdin, '--agent', 'claude')[0] == ''  # nothing changed
    (agentrepo / 'src' / 'app.py').write_text('changed\n')
    out, _ = hook(agentrepo, 'stop', stdin, '--agent', 'claude')
    data = json.loads(out)
    assert data['decision'] == 'block'
    assert 'src/app.py' in data['reason']
    active = payload('claude_stop_active', agentrepo)
    assert hook(agentrepo, 'stop', active, '--agent', 'claude')[0] == ''  # no loop
    ok('state', 'set', 'last_action=changed app.py', cwd=agentrepo)
    assert hook(agentrepo, 'stop', stdin, '--agent', 'claude')[0] == ''


@pytest.mark.parametrize(
    ('stdin', 'args', 'expected'),
    (
        ('', (), 'hook input is empty'),
        ('not json', (), 'not JSON'),
        ('[1, 2]', (), 'agitmem hook prompt:'),
        ('{"hook_event_name": "Mystery", "foo": 1}', (), 'agitmem hook prompt:'),
        ('{}', ('--agent', 'nobody'), "unknown agent 'nobody'"),
    ),
)
def test_hook_bad_input_exits_0_with_one_line(agentrepo: Path, stdin: str, args: tuple[str, ...], expected: str) -> None:
    before = tip(agentrepo)
    out, err = hook(agentrepo, 'prompt', stdin, *args)
    assert out == ''
    assert len(err.strip().splitlines()) == 1
    assert expected in err
    assert tip(agentrepo) == before


def test_hook_bad_transcript(agentrepo: Path, tmp_path: Path) -> None:
    missing = payload('claude_prompt', agentrepo, transcript_path=str(tmp_path / 'nope.jsonl'))
    out, err = hook(agentrepo, 'prompt', missing, '--agent', 'claude')
    assert out == '' and len(err.splitlines()) == 1 and 'nope.jsonl' in err
    bad_t = tmp_path / 'bad.jsonl'
    bad_t.write_text('{"a": 1}\nnot json\n{"b": 2}\n')
    out, err = hook(agentrepo, 'prompt', payload('claude_prompt', agentrepo, transcript_path=str(bad_t)), '--agent', 'claude')
    assert out == '' and len(err.splitlines()) == 1 and 'bad.jsonl:2' in err


def test_hook_without_agent_dir(repo: Path) -> None:
    out, err = hook(repo, 'session-start', payload('claude_session_start_startup', repo), '--agent', 'claude')
    assert out == '' and 'agitmem init' in err
    out, err = hook(repo, 'session-start', payload('gemini_session_start_startup', repo), '--agent', 'gemini')
    assert json.loads(out) == {}
    assert not (repo / '.agent').exists()


def test_hook_unknown_event(agentrepo: Path) -> None:
    out, err = hook(agentrepo, 'lunch', '{}')
    assert 'unknown hook event "lunch"' in err


def _typed(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """agitmem run with a terminal on stdin, as a person types it."""
    import pty
    parent, child = pty.openpty()
    try:
        return subprocess.run([*agitmem_argv(), *args], cwd=repo, stdin=child, capture_output=True, text=True, timeout=60)
    finally:
        os.close(child)
        os.close(parent)


def test_hook_given_an_argument_it_takes_not(agentrepo: Path) -> None:
    """`hook EVENT --agent A extra` ran the event, the argument ignored.
    Typed by a person (a terminal on stdin): exit 2, one line.  Called by
    an agent (a payload on stdin): one line, exit 0, the event not run
    (exit 2 blocks the agent's prompt or its stop); Gemini still gets {}."""
    for args in (('hook', 'stop', '--agent'), ('hook', 'stop', '--agent', 'claude', '--bogus'),
                 ('hook', 'session-start', '--agent', 'claude', 'extra'), ('hook', 'lunch', '--agent', 'claude')):
        typed = _typed(agentrepo, *args)
        assert typed.returncode == 2 and typed.stdout == '', typed
        assert len(typed.stderr.splitlines()) == 1 and typed.stderr.startswith('agitmem: '), typed
    assert 'takes no argument but --agent (given: extra)' in typed.stderr or 'unknown hook event' in typed.stderr
    out, err = hook(agentrepo, 'session-start', payload('claude_session_start_startup', agentrepo), '--agent', 'claude', 'extra')
    assert out == '' and err == 'agitmem hook session-start: hook session-start takes no argument but --agent (given: extra)\n'
    out, err = hook(agentrepo, 'session-start', payload('gemini_session_start_startup', agentrepo), '--agent', 'gemini', 'x', 'y')
    assert json.loads(out) == {} and 'given: x y' in err
    # without the argument the event runs (the block is given)
    out, _ = hook(agentrepo, 'session-start', payload('claude_session_start_startup', agentrepo), '--agent', 'claude')
    assert out


def test_hook_leaves_user_repo_untouched(agentrepo: Path) -> None:
    from testing.util import git_state
    (agentrepo / 'src' / 'app.py').write_text('edit\n')
    before = git_state(agentrepo)
    for event, name in (('session-start', 'claude_session_start_compact'), ('pre-compact', 'claude_pre_compact_auto'),
                        ('post-edit', 'claude_post_edit_write'), ('prompt', 'claude_prompt'), ('stop', 'claude_stop')):
        hook(agentrepo, event, payload(name, agentrepo, transcript_path=None), '--agent', 'claude')
        assert git_state(agentrepo) == before, event


def test_hot_hooks_do_not_import_pygit2(agentrepo: Path) -> None:
    import sys
    stdin = payload('claude_post_edit_edit', agentrepo, tool_input={'file_path': str(agentrepo / 'src' / 'app.py')})
    for event, data in (('post-edit', stdin), ('prompt', payload('claude_prompt', agentrepo, transcript_path=None))):
        proc = run(sys.executable, '-X', 'importtime', '-m', 'agitmem', 'hook', event, '--agent', 'claude',
                   cwd=agentrepo, input=data)
        assert proc.returncode == 0
        assert 'agitmem.commands.hook' in proc.stderr
        assert 'pygit2' not in proc.stderr, event


def test_session_start_asks_git_twice_and_sees_a_change(agentrepo: Path, tmp_path: Path) -> None:
    # where the repository and HEAD are (one rev-parse) and the working
    # tree's status, both begun before the hook imports (issue 23)
    trace = tmp_path / 'trace'
    stdin = payload('claude_session_start_startup', agentrepo)
    hook(agentrepo, 'session-start', stdin, '--agent', 'claude', env={'GIT_TRACE': str(trace)})
    ran = [ln.split('built-in: git ', 1)[1] for ln in trace.read_text().splitlines() if 'built-in: git ' in ln]
    verbs = sorted(next(w for w in r.split() if not w.startswith('-')) for r in ran)
    assert verbs == ['rev-parse', 'status'], ran
    (agentrepo / 'src.py').write_text('x = 1\n')
    out, _ = hook(agentrepo, 'session-start', stdin, '--agent', 'claude')
    assert 'src.py' in _context(out)


def test_gemini_lone_surrogates_in_the_payload(agentrepo: Path, tmp_path: Path) -> None:
    """JSON may hold any lone surrogate (a chat cut in the middle of an
    emoji): in the session id, the prompt and a compression's summary it
    is text like any other, hashed and kept, never an error."""
    chat = tmp_path / 'session.jsonl'
    before, after = _split_at_compression(GEMINI_CHAT)
    chat.write_text(before)
    prompt = payload('gemini_prompt', agentrepo, transcript_path=str(chat), session_id='g\ud800', prompt='fix \udfff')
    out, err = hook(agentrepo, 'prompt', prompt, '--agent', 'gemini')
    assert json.loads(out) == {} and err == ''
    requests = json.loads((agentrepo / '.git' / 'agitmem' / 'observed.json').read_text())['requests']
    assert requests[-1]['text'] == 'fix \udfff'
    summary = json.dumps('\ud800 cut')[1:-1]
    chat.write_text(before + after.replace('<state_snapshot>', f'<state_snapshot>{summary}', 1))
    out, err = hook(agentrepo, 'prompt', _before_model(agentrepo, chat, 'g\ud800'), '--agent', 'gemini')
    assert err == ''
    assert 'restate' in json.loads(out)['hookSpecificOutput']['llm_request']['messages'][-1]['content']


def test_hook_stdin_bounded_and_any_bytes(agentrepo: Path) -> None:
    """An endless stdin (/dev/zero) is read to a bound, and bytes that are
    not UTF-8 are the same error under a strict locale as under C."""
    with open(os.devnull if os.name == 'nt' else '/dev/zero', 'rb') as zero:
        proc = subprocess.run(
            [*agitmem_argv(), 'hook', 'prompt', '--agent', 'gemini'], cwd=agentrepo, stdin=zero,
            capture_output=True, text=True, timeout=60,
        )
    assert proc.returncode == 0 and proc.stdout == '{}\n'
    assert proc.stderr.strip() == 'agitmem hook prompt: hook input is too large to read (over 256 MB)'
    raw = subprocess.run(
        [*agitmem_argv(), 'hook', 'prompt', '--agent', 'gemini'], cwd=agentrepo, input=b'\xff{"a": 1}',
        capture_output=True, env={**os.environ, 'PYTHONIOENCODING': 'utf-8:strict'},
    )
    assert raw.returncode == 0 and raw.stdout == b'{}\n'
    assert raw.stderr.decode().startswith('agitmem hook prompt: hook input is not JSON')


def test_damaged_hook_caches_read_as_empty(agentrepo: Path) -> None:
    """The session's hook state and the observed facts are not fsynced: a
    crash, or a hand, may leave them past what JSON reads (nested too
    deep).  Each reads as empty: the session's memory is still injected."""
    stdin = payload('gemini_session_start_startup', agentrepo, session_id='d1')
    hook(agentrepo, 'session-start', stdin, '--agent', 'gemini')
    hook(agentrepo, 'prompt', payload('gemini_prompt', agentrepo, session_id='d1'), '--agent', 'gemini')
    cached = [agentrepo / '.git' / 'agitmem' / 'observed.json', *(agentrepo / '.git' / 'agitmem' / 'sessions').glob('*.json')]
    assert len(cached) >= 2
    for path in cached:
        path.write_text('[' * 100_000 + ']' * 100_000)
    out, err = hook(agentrepo, 'session-start', stdin, '--agent', 'gemini')
    assert err == '' and NEXT in _context(out)
    out, err = hook(agentrepo, 'prompt', payload('gemini_prompt', agentrepo, session_id='d1'), '--agent', 'gemini')
    assert 'not observed' not in err and 'Error' not in err
