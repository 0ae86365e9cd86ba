"""`agitmem hook EVENT`: the agents' entry points.

Runs inside the agent's loop, so it never crashes the agent: any error is
one line on stderr and exit 0.  post-edit and prompt run after every edit
and prompt: they import pygit2 only when they have memory to save."""
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agitmem import agents
from agitmem import audit
from agitmem import config
from agitmem import render
from agitmem.porcelain import context
from agitmem.porcelain import observed
from agitmem.porcelain import notices
from agitmem.porcelain import sessions
from agitmem import memory
from agitmem import repo as repo_mod
from agitmem.agents import gemini
from agitmem.agents import transcript
from agitmem.errors import AgitmemError
from agitmem.repo import Repo

def _where(payload: agents.Payload) -> tuple[Repo, dict[str, Any]]:
    cwd = payload.cwd if payload.cwd and os.path.isdir(payload.cwd) else None
    repo = repo_mod.find(cwd)
    if not repo.agent_dir.exists() and not repo.agent_dir.is_symlink():
        _restore(repo)
    context.require_memory(repo)
    return repo, config.load(repo)


def _restore(repo: Repo) -> None:
    """.agent/ is gone (`git clean -fdx` takes it: it is excluded, so git
    counts it as ignored) but its memory is saved on the ref: check it out
    again, and say so (once: afterwards .agent/ is there).  Never over a
    stash that holds it (`git stash --all`): initialize refuses, and the
    hook says where the memory is."""
    if not repo_mod.git_out(
            repo, 'for-each-ref', '--count=1', '--format=x', 'refs/agitmem/heads/',
    ):
        return  # agitmem was never set up here: nothing to restore
    from agitmem.porcelain.initialize import initialize
    initialize(repo, None)
    said = (
        'agitmem: .agent/ was missing (git clean -x?) and no stash holds it; '
        'restored it from the memory ref: memory edits not saved to the ref '
        'before it went are not in it'
    )
    audit.log(repo.agent_dir, 'write restore', said)
    notices.say(said)


_NOTICES: list[str] = []  # said to the user with the hook's output


def _with_notices(agent: str, out: str) -> str:
    if not _NOTICES:
        return out
    said = render.controls_line('; '.join(_NOTICES))
    if agent in ('claude', 'codex', 'gemini'):
        try:
            data = json.loads(out) if out.strip() else {}
        except ValueError:
            data = None
        if isinstance(data, dict):
            old = data.get('systemMessage')
            data['systemMessage'] = f'{said}; {old}' if old else said
            return json.dumps(data, ensure_ascii=False)
    print(said, file=sys.stderr)
    return out


def _save(repo: Repo, subject: str, event: str) -> str | None:
    return _checkpoint(repo, subject, event)[0]


def _checkpoint(repo: Repo, subject: str, event: str = 'pre-compact') -> tuple[str | None, str | None]:
    """(the commit saved, or None when nothing changed; the memory ref's
    tip either way: the checkpoint a compaction starts from)."""
    from agitmem.porcelain import write  # pygit2: only when saving
    ctx = context.make(repo, config.load(repo))
    oid = write.save(ctx, subject, event=event)
    if oid is not None:
        return str(oid)[:12], str(oid)[:12]
    return None, _recovering('checkpoint', _recovery().checkpoint_of, repo, ctx.ref)


def _block(repo: Repo, cfg: dict[str, Any], agent: str, event: str,
           *, after_compact: bool) -> tuple[str, str]:
    """(the hook's output, the injection in it)"""
    from agitmem.porcelain import read
    ref = context.make(repo, cfg).ref
    block = read.injection(repo, cfg, after_compact=after_compact, ref=ref)
    message = '; '.join(f'agitmem: {w}' for w in block.warnings) or None
    return agents.envelope(agent, event, context=block.text, message=message), block.text


def _inject(repo: Repo, cfg: dict[str, Any], agent: str, event: str,
            *, after_compact: bool) -> str:
    return _block(repo, cfg, agent, event, after_compact=after_compact)[0]


def _recovery() -> Any:
    # only where a compaction is being handled: not on every edit and prompt
    from agitmem.porcelain import recovery
    return recovery


def _recovering(what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """The recovery log is a measurement: a failure there is said, and the
    hook goes on with the agent's memory."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        print(f'agitmem hook: recovery log ({what}): {type(e).__name__}: {e}', file=sys.stderr)
        return None


def _given_or_read(
        payload: agents.Payload, keys: tuple[str, ...], read: Any,
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


def _summary(payload: agents.Payload) -> str | None:
    """The client's summary of the compaction: Claude Code's PostCompact
    carries it; Codex and Gemini CLI write it in their transcripts."""
    return _given_or_read(payload, ('compact_summary',), transcript.summary)


def _agent_text(payload: agents.Payload) -> str | None:
    """The agent's last text of the turn: Codex's Stop and Claude Code's
    carry `last_assistant_message`, Gemini's AfterAgent `prompt_response`;
    else the transcript."""
    return _given_or_read(payload, ('last_assistant_message', 'prompt_response'), transcript.last_assistant_text)


def _open_recovery(
        repo: Repo, cfg: dict[str, Any], payload: agents.Payload, hs: dict[str, Any],
        *, trigger: str, injection: str, prompted: bool, prompt: str | None = None,
) -> None:
    stash = hs.get('compaction')
    if not isinstance(stash, dict):
        stash = hs['compaction'] = {}
    if not stash.get('summary'):
        stash['summary'] = _summary(payload)
    _recovery().open_record(
        repo, cfg, hs, agent=payload.agent, session_id=payload.session_id,
        trigger=trigger, injection=injection, prompted=prompted, prompt=prompt,
    )


def _turn_text(payload: agents.Payload) -> str | None:
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


def _close_recovery(repo: Repo, payload: agents.Payload, hs: dict[str, Any]) -> None:
    size = _context_size(payload)
    _recovery().close(repo, hs, _turn_text(payload), size)


def _session(payload: agents.Payload) -> str:
    return sessions.session_key(payload.agent, payload.session_id)


def _compactions(payload: agents.Payload) -> list[str] | None:
    """The compactions the session's transcript records; None without one
    (or when it cannot be read: that prompt goes on without)."""
    if not payload.transcript_path:
        return None
    try:
        return transcript.compactions(payload.transcript_path)
    except AgitmemError:
        return None  # the size read says what is wrong with it


def _new_compactions(payload: agents.Payload, hs: dict[str, Any]) -> list[str]:
    """Compactions of this session not handled yet.  The session's first
    look only takes note of what is there (a resumed session's old
    compactions are not news).  Keys seen are kept across transcript
    paths: Gemini CLI names a new, almost empty file at a resume's
    SessionStart and the original one in every later hook."""
    found = _compactions(payload)
    if found is None:
        return []
    seen = hs.get('compactions')
    first = not isinstance(seen, list)
    known = [k for k in seen if isinstance(k, str)] if isinstance(seen, list) else []
    hs['compactions'] = list(dict.fromkeys(known + found))[-100:]
    return [] if first else [k for k in found if k not in set(known)]


def _absorbed(found: list[str], hs: dict[str, Any]) -> list[str]:
    """Compactions found in the transcript, less the one SessionStart
    (compact) already handled before its record was written."""
    if found and hs.pop('absorb', False):
        return found[1:]
    return found


def session_start(payload: agents.Payload) -> str:
    repo, cfg = _where(payload)
    key = _session(payload)
    hs = sessions.read(repo, key)
    # Claude Code and Codex start the session again after a compaction
    after = payload.source == 'compact' or bool(hs.get('compact_pending'))
    fresh: dict[str, Any] = {'prompts': 0, 'context': None, 'compact_pending': False}
    if payload.source in ('compact', 'resume'):
        fresh['checkpoint_asked'] = hs.get('checkpoint_asked', False)
    for carried in ('compactions', 'compaction', 'recovery', 'absorb'):
        if carried in hs:
            fresh[carried] = hs[carried]
    # a compaction since this session's hooks last looked (Gemini: one in
    # the middle of the last prompt of a run now resumed) is news here
    found = _absorbed(_new_compactions(payload, fresh), fresh)
    if payload.source == 'compact' and not found:
        # Claude Code writes this compaction's compact_boundary after its
        # SessionStart: when a later hook sees it, it is this one, not news
        fresh['absorb'] = True
    if found and payload.agent == 'gemini':
        _compressed(repo, fresh, sessions.int_of(hs.get('context')))
    after = bool(found) or after
    if not after:
        sessions.write(repo, key, fresh)
        return _inject(repo, cfg, payload.agent, 'session-start', after_compact=False)
    audit.log(repo.agent_dir, 'hook session-start', f're-inject after compaction ({payload.agent})')
    out, text = _block(repo, cfg, payload.agent, 'session-start', after_compact=True)
    stash = fresh.get('compaction')
    trigger = stash.get('trigger') if isinstance(stash, dict) else None
    # an automatic compaction comes in the middle of a turn, which goes on
    # now; after a manual one (/compact) the next prompt starts the turn
    _recovering(
        'open', _open_recovery, repo, cfg, payload, fresh,
        trigger=trigger or 'compact', injection=text, prompted=trigger == 'auto',
    )
    sessions.write(repo, key, fresh)
    return out


def _state_age(repo: Repo) -> float | None:
    """Seconds since snapshot or state was last written (the newer)."""
    mtimes = []
    for name in (memory.STATE, memory.SNAPSHOT):
        try:
            mtimes.append((repo.memory_dir / name).stat().st_mtime)
        except OSError:
            pass
    return time.time() - max(mtimes) if mtimes else None


def pre_compact(payload: agents.Payload) -> str:
    if payload.agent == 'gemini':
        # Gemini CLI fires PreCompress before every model call, compressing
        # or not: a compression is seen in its chat file at the next prompt
        return agents.envelope(payload.agent, 'pre-compact')
    repo, cfg = _where(payload)
    key = _session(payload)
    if payload.event == 'PostCompact':
        return _post_compact(repo, payload, key)
    trigger = payload.trigger or 'compact'
    saved, checkpoint = _checkpoint(repo, f'hook pre-compact: checkpoint ({trigger})')
    hs = sessions.read(repo, key)
    hs['compact_pending'] = True
    before = _context_size(payload)
    hs['compaction'] = {
        'trigger': trigger,
        'checkpoint': checkpoint,
        'tokens_before': before if before is not None else hs.get('context'),
    }
    sessions.write(repo, key, hs)
    return agents.envelope(payload.agent, 'pre-compact', message=_checkpoint_said(repo, cfg, saved))


def _post_compact(repo: Repo, payload: agents.Payload, key: str) -> str:
    """Claude Code's and Codex's PostCompact: the client's summary, for the
    recovery log (to the open record when SessionStart came first)."""
    summary = _summary(payload)
    if summary:
        hs = sessions.read(repo, key)
        rec = hs.get('recovery')
        stash = hs.get('compaction')
        if isinstance(stash, dict):
            stash['summary'] = summary
        elif isinstance(rec, dict):
            _recovering('summary', _recovery().add_summary, repo, rec.get('id'), summary)
            _recovery().note_summary(hs, summary)
        else:
            hs['compaction'] = {'summary': summary}
        sessions.write(repo, key, hs)
    return agents.envelope(payload.agent, 'pre-compact')


def _compressed(repo: Repo, hs: dict[str, Any], before: int | None) -> None:
    """Gemini's only sign of a compression is its chat file: the checkpoint
    is saved when a hook first sees it there."""
    hs['compaction'] = {
        'trigger': 'compressed', 'tokens_before': before,
        'checkpoint': _checkpoint(repo, 'hook pre-compact: checkpoint (compressed)')[1],
    }


def _checkpoint_said(repo: Repo, cfg: dict[str, Any], saved: str | None) -> str:
    parts = [
        f'agitmem: memory checkpoint {saved}' if saved
        else 'agitmem: memory already saved',
    ]
    age = _state_age(repo)
    if age is not None and age > cfg['stale_minutes'] * 60:
        parts.append(
            f'state.json/snapshot.md are {int(age // 60)} min old: what '
            f'changed since will only survive in the summary; update them '
            f'right after the compaction',
        )
    return '; '.join(parts)


def _in_memory(repo: Repo, path: str, cwd: str | None) -> bool:
    p = Path(path)
    if not p.is_absolute():
        p = Path(cwd or repo.root) / p
    try:
        p.resolve().relative_to(repo.memory_dir.resolve())
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop
        return False
    return True


def _shell_writes_memory(payload: agents.Payload) -> bool:
    """A shell tool call (Codex and Claude Code `Bash`, Gemini
    `run_shell_command`) whose command names .agent/memory/: it may have
    written memory, so post-edit saves (a save that changes nothing makes
    no commit)."""
    if payload.tool_name not in ('Bash', 'run_shell_command', 'shell', 'exec_command'):
        return False
    tool_input = payload.raw.get('tool_input')
    command = tool_input.get('command') if isinstance(tool_input, dict) else None
    return isinstance(command, str) and '.agent/memory' in command


def _observe_tool(repo: Repo, cfg: dict[str, Any], payload: agents.Payload) -> None:
    # a fact lost is better than a memory save lost: never let it stop one
    key = _session(payload)
    try:
        events = observed.record_tool(repo, cfg, payload.raw, payload.edited_paths, payload.cwd, key)
    except Exception as e:
        print(f'agitmem hook post-edit: not observed: {type(e).__name__}: {e}', file=sys.stderr)
        return
    if events:
        hs = sessions.read(repo, key)
        if isinstance(hs.get('recovery'), dict):
            # the first turn after a compaction: its events, and what its
            # shell commands changed in the working tree
            rec = _recovery()
            if any(e.get('kind') == 'command' for e in events):
                events += _recovering('shell changes', rec.shell_edits, repo, hs) or []
            rec.note_events(hs, events)
            sessions.write(repo, key, hs)


def post_edit(payload: agents.Payload) -> str:
    repo, cfg = _where(payload)
    _observe_tool(repo, cfg, payload)
    if payload.event == 'PostToolUseFailure':
        return agents.envelope(payload.agent, 'post-edit')
    touched = [p for p in payload.edited_paths if _in_memory(repo, p, payload.cwd)]
    if not touched and _shell_writes_memory(payload):
        touched = ['.agent/memory (shell)']
    if touched:
        names = ', '.join(sorted({Path(p).name for p in touched}))
        saved = _save(repo, f'hook post-edit: {names}', 'post-edit')
        if saved:
            return agents.envelope(
                payload.agent, 'post-edit', message=f'agitmem: memory saved ({saved})',
            )
        return agents.envelope(payload.agent, 'post-edit')
    age = _state_age(repo)
    if age is None or age <= cfg['stale_minutes'] * 60:
        return agents.envelope(payload.agent, 'post-edit')
    reminder = (
        f'agitmem: snapshot.md and state.json were last updated '
        f'{int(age // 60)} min ago. If this edit changed the task\'s '
        f'progress, update them now (`agitmem state set last_action=... '
        f'next_intent=...`, and the In progress section of '
        f'.agent/memory/snapshot.md).'
    )
    audit.log(repo.agent_dir, 'hook post-edit', f'reminder: state {int(age // 60)} min old')
    if agents.supports_context(payload.agent, 'post-edit'):
        return agents.envelope(payload.agent, 'post-edit', context=reminder)
    return agents.envelope(payload.agent, 'post-edit', message=reminder)


def _context_size(payload: agents.Payload) -> int | None:
    if payload.context_len is not None:
        return payload.context_len
    if payload.transcript_path:
        try:
            sizes = transcript.context_sizes(payload.transcript_path)
        except AgitmemError as e:
            # the 40% rule is lost for this prompt, the rest still runs
            print(f'agitmem hook prompt: {e}', file=sys.stderr)
            return None
        if sizes:
            return sizes[-1]
    return None


CONTEXT_WINDOWS = {'claude': 200_000, 'codex': 272_000, 'gemini': 1_048_576}
CHECKPOINT = (
    'agitmem: this session\'s context is {pct}% full ({size} of {window} '
    'tokens); a compaction is near. Bring memory up to date now: `agitmem '
    'state set last_action=... next_intent=...`, the In progress section of '
    '.agent/memory/snapshot.md, and `agitmem fragment add --goal ... --next '
    '...` for what you learned.'
)


def _checkpoint_due(payload: agents.Payload, cfg: dict[str, Any], size: int | None, hs: dict[str, Any]) -> str | None:
    """Once per session, when its context first crosses checkpoint_at of
    the window (seed 003: checkpoint at 70%, before the client compacts)."""
    window = cfg.get('context_window') or CONTEXT_WINDOWS.get(payload.agent)
    at = cfg.get('checkpoint_at')
    if size is None or not window or not at or hs.get('checkpoint_asked'):
        return None
    if size < at * window:
        return None
    hs['checkpoint_asked'] = True
    return CHECKPOINT.format(pct=int(100 * size / window), size=size, window=window)


def before_model(payload: agents.Payload) -> str:
    """Gemini CLI's BeforeModel, before every model call.  A compression in
    the middle of a prompt is followed by more model calls and no
    BeforeAgent: the request right after it gets the after-compaction
    block, once.  Calls whose request holds no summary, or only summaries
    this session has handled, cost a JSON parse and no git."""
    request = payload.raw.get('llm_request')
    messages = request.get('messages') if isinstance(request, dict) else None
    if not isinstance(messages, list):
        return agents.envelope(payload.agent, 'prompt')
    asked = transcript.request_compactions(messages)
    if not asked:
        return agents.envelope(payload.agent, 'prompt')
    repo, cfg = _where(payload)
    key = _session(payload)
    hs = sessions.read(repo, key)
    seen = hs.get('compactions')
    if isinstance(seen, list) and set(asked) <= set(seen):
        return agents.envelope(payload.agent, 'prompt')
    # the chat file is the record of which compressions happened
    new = _absorbed(_new_compactions(payload, hs), hs)
    if not new:
        sessions.write(repo, key, hs)
        return agents.envelope(payload.agent, 'prompt')
    before = _context_size(payload)
    _compressed(repo, hs, before if before is not None else sessions.int_of(hs.get('context')))
    hs['checkpoint_asked'] = False  # a new window: ask again at 70%
    audit.log(repo.agent_dir, 'hook prompt', f're-inject before the next model call: compaction ({new[-1]})')
    from agitmem.porcelain import read
    block = read.injection(repo, cfg, after_compact=True, ref=context.make(repo, cfg).ref)
    # the turn goes on now, in the same prompt
    _recovering(
        'open', _open_recovery, repo, cfg, payload, hs,
        trigger='compact', injection=block.text, prompted=True,
    )
    sessions.write(repo, key, hs)
    out = gemini.with_context(messages, block.text)
    if block.warnings:
        out['systemMessage'] = '; '.join(f'agitmem: {w}' for w in block.warnings)
    return json.dumps(out, ensure_ascii=False)


def prompt(payload: agents.Payload) -> str:
    if payload.event == 'BeforeModel':
        return before_model(payload)
    repo, cfg = _where(payload)
    key = _session(payload)
    try:
        observed.record_prompt(repo, payload.prompt, key)
    except Exception as e:
        print(f'agitmem hook prompt: not observed: {type(e).__name__}: {e}', file=sys.stderr)
    hs = sessions.read(repo, key)
    prompts = (sessions.int_of(hs.get('prompts')) or 0) + 1
    size = _context_size(payload)
    last = sessions.int_of(hs.get('context'))
    new = _absorbed(_new_compactions(payload, hs), hs)
    # the 40% rule, within this session's own sizes, is for agents that
    # say nothing of their compactions (shell shims, unknown agents)
    dropped = (
        payload.agent == 'shell' and size is not None and last is not None and
        transcript.dropped([size], cfg['compaction_drop'], baseline=last)
    )
    pending = bool(hs.get('compact_pending'))
    due = prompts % cfg['reload_every'] == 0
    if new or dropped:
        hs['checkpoint_asked'] = False  # a new window: ask again at 70%
    checkpoint = _checkpoint_due(payload, cfg, size, hs)
    hs.update({
        'prompts': prompts,
        'context': size if size is not None else last,
        'compact_pending': False,
    })
    compacted = bool(new) or dropped or pending
    rec = hs.get('recovery')
    if not compacted and isinstance(rec, dict):
        if rec.get('prompted'):
            # the turn after the compaction ended without a stop hook
            _recovering('close', _close_recovery, repo, payload, hs)
        else:
            rec['prompted'] = True  # the turn after a /compact starts
            _recovery().note_prompt(hs, payload.prompt)
    if new and payload.agent == 'gemini':
        _compressed(repo, hs, last)
    elif dropped:
        hs['compaction'] = {'trigger': 'context drop', 'tokens_before': last}
    if not (compacted or due):
        sessions.write(repo, key, hs)
        if checkpoint:
            audit.log(repo.agent_dir, 'hook prompt', f'checkpoint asked at {size} tokens')
            return agents.envelope(payload.agent, 'prompt', context=checkpoint)
        return agents.envelope(payload.agent, 'prompt')
    why = (
        f'compaction ({new[-1]})' if new else f'context dropped {last} -> {size}' if dropped
        else 'after compaction' if pending else f'prompt {prompts}'
    )
    audit.log(repo.agent_dir, 'hook prompt', f're-inject: {why}')
    out, text = _block(repo, cfg, payload.agent, 'prompt', after_compact=compacted)
    if compacted:
        _recovering(
            'open', _open_recovery, repo, cfg, payload, hs,
            trigger='compact', injection=text, prompted=True, prompt=payload.prompt,
        )
    sessions.write(repo, key, hs)
    return out


def stop(payload: agents.Payload) -> str:
    repo, cfg = _where(payload)
    key = _session(payload)
    hs = sessions.read(repo, key)
    rec = hs.get('recovery')
    if isinstance(rec, dict) and (rec.get('prompted') or rec.get('events')):
        # the end of the first turn after a compaction: judge it
        _recovering('close', _close_recovery, repo, payload, hs)
        sessions.write(repo, key, hs)
    if not cfg['block_stop_without_progress'] or payload.stop_hook_active:
        return agents.envelope(payload.agent, 'stop')
    from agitmem.porcelain import read
    state = read.state(repo)
    tree = repo_mod.worktree_tree(repo)
    if state.get('tree') in (None, tree):
        return agents.envelope(payload.agent, 'stop')
    changed = repo_mod.changed_paths(repo, state['tree'], tree)
    if not changed:
        return agents.envelope(payload.agent, 'stop')
    shown = ', '.join(changed[:5]) + (' ...' if len(changed) > 5 else '')
    audit.log(repo.agent_dir, 'hook stop', f'blocked: code changed ({shown})')
    return agents.envelope(
        payload.agent, 'stop',
        block_reason=(
            f'Code changed since state.json was last updated ({shown}). '
            f'Record your progress before stopping: `agitmem state set '
            f'last_action=... next_intent=...` and the snapshot\'s In '
            f'progress / Done sections.'
        ),
    )


_HANDLERS = {
    'session-start': session_start,
    'pre-compact': pre_compact,
    'post-edit': post_edit,
    'prompt': prompt,
    'stop': stop,
}


def hook(
        event: str,
        agent: str | None,
        stdin: str,
        environ: Mapping[str, str] | None = None,
) -> int:
    environ = os.environ if environ is None else environ
    global _NOTICES
    _NOTICES = notices.collect()
    try:
        if event not in _HANDLERS:
            raise AgitmemError(
                f'unknown hook event "{event}" (agent events: '
                f'{", ".join(_HANDLERS)})',
            )
        payload = agents.parse(stdin, agent=agent, environ=environ)
        out = _with_notices(payload.agent, _HANDLERS[event](payload))
    except Exception as e:  # never crash the agent
        detail = ' '.join(str(e).split()) or type(e).__name__
        if not isinstance(e, AgitmemError):
            detail = f'{type(e).__name__}: {detail}'
        print(f'agitmem hook {event}: {detail}', file=sys.stderr)
        if agent == 'gemini':
            print('{}')  # Gemini CLI wants JSON on stdout, always
        return 0
    if out:
        sys.stdout.write(out if out.endswith('\n') else out + '\n')
    return 0
