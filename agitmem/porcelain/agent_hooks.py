"""What each agent hook event does (DESIGN.md sections 4 and 10): inject
memory at a session's start and after a compaction, checkpoint before
one, save memory edits, remind of stale state, open and close the
recovery record, block a stop without recorded progress.

Each takes the parsed payload and returns the hook's output for the
client.  post-edit and prompt run after every edit and prompt: they
import pygit2 only when they have memory to save, and what handles a
compaction (compactions, records, the transcript readers) only where one
can be seen: post-edit and stop never read a transcript unless the first
turn after a compaction is open.  What records the agent's edits and
requests (observed, paths) is imported by the events that record them:
not by stop, at the end of every turn; nor what checkpoints and reminds
(checkpoints), nor the audit log, which stop writes to only when it
blocks."""
from __future__ import annotations

import os
import sys

from agitmem import agents
from agitmem import jsontext
from agitmem import config
from agitmem import repo as repo_mod
from agitmem.porcelain import context
from agitmem.porcelain import notices
from agitmem.porcelain import sessions
from agitmem.repo import Repo

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from agitmem import inject


def where(payload: agents.Payload) -> tuple[Repo, dict[str, Any]]:
    """The payload's repository (its .agent/ restored when gone) and config."""
    cwd = payload.cwd if payload.cwd and os.path.isdir(payload.cwd) else None
    repo = repo_mod.find(cwd)
    if not os.path.lexists(repo.agentdir):
        restore(repo)
    context.require_memory(repo)
    return repo, config.load(repo)


def restore(repo: Repo) -> None:
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
    _audit(repo, 'write restore', said)
    notices.say(said)


def _injection(
        repo: Repo, cfg: dict[str, Any], *, after_compact: bool, summary: str | None = None,
) -> inject.Block:
    from agitmem.porcelain import read
    # leniently: a memory file that cannot be read is named in the block,
    # and the rest still reaches the agent
    return read.injection(
        repo, cfg, after_compact=after_compact, ref=context.make(repo, cfg).ref, summary=summary,
        lenient=True,
    )


def _summary(payload: agents.Payload, hs: dict[str, Any]) -> str | None:
    """The client's summary of the compaction just made: kept from a
    PostCompact that came first, else the payload's or the transcript's
    (Claude Code's SessionStart comes before its PostCompact).  A summary
    is advice to the block: one that cannot be read is left out."""
    from agitmem.porcelain import records
    stash = hs.get('compaction')
    if isinstance(stash, dict) and isinstance(stash.get('summary'), str):
        return str(stash['summary'])
    try:
        return records.summary(payload)
    except Exception:
        return None


def _warned(block: inject.Block) -> str | None:
    return '; '.join(f'agitmem: {w}' for w in block.warnings) or None


def _block(repo: Repo, cfg: dict[str, Any], agent: str, event: str,
           *, after_compact: bool, summary: str | None = None) -> tuple[str, str]:
    """(the hook's output, the injection in it)"""
    block = _injection(repo, cfg, after_compact=after_compact, summary=summary)
    return agents.envelope(agent, event, context=block.text, message=_warned(block)), block.text


def _session(payload: agents.Payload) -> str:
    return sessions.session_key(payload.agent, payload.session_id)


def _audit(repo: Repo, what: str, detail: str) -> None:
    """A line in the audit log (audit.py): imported by the hooks that
    write one, not by every edit, prompt and turn."""
    from agitmem import audit
    audit.log(repo.agentdir, what, detail)


def session_start(payload: agents.Payload) -> str:
    from agitmem.porcelain import checkpoints
    from agitmem.porcelain import compactions
    repo, cfg = where(payload)
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
    found = compactions.new_unhandled(payload, fresh)
    if payload.source == 'compact' and not found:
        # Claude Code writes this compaction's compact_boundary after its
        # SessionStart: when a later hook sees it, it is this one, not news
        fresh['absorb'] = True
    if found and payload.agent == 'gemini':
        checkpoints.compressed(repo, fresh, sessions.int_of(hs.get('context')))
    after = bool(found) or after
    if not after:
        sessions.write(repo, key, fresh)
        return _block(repo, cfg, payload.agent, 'session-start', after_compact=False)[0]
    _audit(repo, 'hook session-start', f're-inject after compaction ({payload.agent})')
    from agitmem.porcelain import records  # the recovery log's: after a compaction only
    out, text = _block(
        repo, cfg, payload.agent, 'session-start', after_compact=True, summary=_summary(payload, fresh),
    )
    stash = fresh.get('compaction')
    trigger = stash.get('trigger') if isinstance(stash, dict) and isinstance(stash.get('trigger'), str) else None
    # an automatic compaction comes in the middle of a turn, which goes on
    # now; after a manual one (/compact) the next prompt starts the turn
    records.open_(
        repo, cfg, payload, fresh,
        trigger=trigger or 'compact', injection=text, prompted=trigger == 'auto',
    )
    sessions.write(repo, key, fresh)
    return out


def pre_compact(payload: agents.Payload) -> str:
    from agitmem.porcelain import checkpoints
    if payload.agent == 'gemini':
        # Gemini CLI fires PreCompress before every model call, compressing
        # or not: a compression is seen in its chat file at the next prompt
        return agents.envelope(payload.agent, 'pre-compact')
    from agitmem.porcelain import compactions
    repo, cfg = where(payload)
    key = _session(payload)
    if payload.event == 'PostCompact':
        return _post_compact(repo, payload, key)
    trigger = payload.trigger or 'compact'
    saved, checkpoint = checkpoints.save(repo, f'hook pre-compact: checkpoint ({trigger})')
    hs = sessions.read(repo, key)
    hs['compact_pending'] = True
    before = compactions.context_size(payload, 'pre-compact')
    hs['compaction'] = {
        'trigger': trigger,
        'checkpoint': checkpoint,
        'tokens_before': before if before is not None else sessions.int_of(hs.get('context')),
    }
    sessions.write(repo, key, hs)
    return agents.envelope(payload.agent, 'pre-compact', message=checkpoints.said(repo, cfg, saved))


def _post_compact(repo: Repo, payload: agents.Payload, key: str) -> str:
    """Claude Code's and Codex's PostCompact: the client's summary, for the
    recovery log (to the open record when SessionStart came first)."""
    from agitmem.porcelain import records
    summary = records.summary(payload)
    if summary:
        hs = sessions.read(repo, key)
        records.add_summary(repo, hs, summary)
        sessions.write(repo, key, hs)
    return agents.envelope(payload.agent, 'pre-compact')


def _in_memory(repo: Repo, path: str, cwd: str | None) -> bool:
    from agitmem import paths
    try:
        # compared as Path.relative_to compares (case folded on Windows)
        memory = paths.parts(os.path.normcase(paths.resolved(repo.memorydir)))
        if paths.parts(os.path.normcase(paths.resolved(path, cwd or repo.top)))[:len(memory)] == memory:
            return True
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop
        pass
    if paths.folding(repo) == paths.PLAIN:
        return False
    # `.Agent/Memory/state.json` on a file system that folds case
    rel = paths.relative(repo, path, cwd)
    return rel is not None and f'{rel}/'.startswith('.agent/memory/')


def _name(path: str) -> str:
    """Path(path).name, without pathlib: the last name that is not `.`."""
    rest = os.path.splitdrive(path)[1].replace(os.altsep or os.sep, os.sep)
    names = [x for x in rest.split(os.sep) if x and x != '.']
    return names[-1] if names else ''


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
    from agitmem.porcelain import observed
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
            from agitmem.porcelain import records
            rec = records.recovery()
            if any(e.get('kind') == 'command' for e in events):
                events += records.recovering('shell changes', rec.shell_edits, repo, hs) or []
            rec.note_events(hs, events)
            sessions.write(repo, key, hs)


def post_edit(payload: agents.Payload) -> str:
    from agitmem.porcelain import checkpoints
    repo, cfg = where(payload)
    _observe_tool(repo, cfg, payload)
    if payload.event == 'PostToolUseFailure':
        return agents.envelope(payload.agent, 'post-edit')
    touched = [p for p in payload.edited_paths if _in_memory(repo, p, payload.cwd)]
    if not touched and _shell_writes_memory(payload):
        touched = ['.agent/memory (shell)']
    if touched:
        names = ', '.join(sorted({_name(p) for p in touched}))
        saved = checkpoints.save(repo, f'hook post-edit: {names}', 'post-edit')[0]
        if saved:
            return agents.envelope(
                payload.agent, 'post-edit', message=f'agitmem: memory saved ({saved})',
            )
        return agents.envelope(payload.agent, 'post-edit')
    minutes = checkpoints.stale_minutes(repo, cfg)
    if minutes is None:
        return agents.envelope(payload.agent, 'post-edit')
    reminder = (
        f'agitmem: snapshot.md and state.json were last updated '
        f'{minutes} min ago. If this edit changed the task\'s '
        f'progress, update them now (`agitmem state set last_action=... '
        f'next_intent=...`, and the In progress section of '
        f'.agent/memory/snapshot.md).'
    )
    _audit(repo, 'hook post-edit', f'reminder: state {minutes} min old')
    if agents.supports_context(payload.agent, 'post-edit'):
        return agents.envelope(payload.agent, 'post-edit', context=reminder)
    return agents.envelope(payload.agent, 'post-edit', message=reminder)


def before_model(payload: agents.Payload) -> str:
    """Gemini CLI's BeforeModel, before every model call.  A compression in
    the middle of a prompt is followed by more model calls and no
    BeforeAgent: the request right after it gets the after-compaction
    block, once.  Calls whose request holds no summary, or only summaries
    this session has handled, cost a JSON parse and no git."""
    from agitmem.porcelain import checkpoints
    from agitmem.agents import gemini
    from agitmem.agents import transcript
    from agitmem.porcelain import compactions
    from agitmem.porcelain import model_calls
    from agitmem.porcelain import records
    messages = model_calls.messages(payload)
    if messages is None:
        return agents.envelope(payload.agent, 'prompt')
    asked = transcript.request_compactions(messages)
    if not asked:
        return agents.envelope(payload.agent, 'prompt')
    repo, cfg = where(payload)
    key = _session(payload)
    hs = sessions.read(repo, key)
    seen = hs.get('compactions')
    if isinstance(seen, list) and set(asked) <= set(seen):
        return agents.envelope(payload.agent, 'prompt')
    # the chat file is the record of which compressions happened
    new = compactions.new_unhandled(payload, hs)
    if not new:
        sessions.write(repo, key, hs)
        return agents.envelope(payload.agent, 'prompt')
    before = compactions.context_size(payload)
    checkpoints.compressed(repo, hs, before if before is not None else sessions.int_of(hs.get('context')))
    hs['checkpoint_asked'] = False  # a new window: ask again at 70%
    _audit(repo, 'hook prompt', f're-inject before the next model call: compaction ({new[-1]})')
    block = _injection(repo, cfg, after_compact=True, summary=_summary(payload, hs))
    # the turn goes on now, in the same prompt
    records.open_(repo, cfg, payload, hs, trigger='compact', injection=block.text, prompted=True)
    sessions.write(repo, key, hs)
    out = gemini.with_context(messages, block.text)
    warned = _warned(block)
    if warned:
        out['systemMessage'] = warned
    return jsontext.dumps(out, ensure_ascii=False)


def prompt(payload: agents.Payload) -> str:
    from agitmem.porcelain import checkpoints
    if payload.event == 'BeforeModel':
        return before_model(payload)
    from agitmem.agents import transcript
    from agitmem.porcelain import compactions
    from agitmem.porcelain import observed
    repo, cfg = where(payload)
    key = _session(payload)
    try:
        observed.record_prompt(repo, payload.prompt, key)
    except Exception as e:
        print(f'agitmem hook prompt: not observed: {type(e).__name__}: {e}', file=sys.stderr)
    hs = sessions.read(repo, key)
    prompts = (sessions.int_of(hs.get('prompts')) or 0) + 1
    size = compactions.context_size(payload)
    last = sessions.int_of(hs.get('context'))
    new = compactions.new_unhandled(payload, hs)
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
    checkpoint = checkpoints.due(payload.agent, cfg, size, hs)
    hs.update({
        'prompts': prompts,
        'context': size if size is not None else last,
        'compact_pending': False,
    })
    compacted = bool(new) or dropped or pending
    rec = hs.get('recovery')
    if compacted or isinstance(rec, dict):
        # the recovery log's: a record to close, note or open
        from agitmem.porcelain import records
    if not compacted and isinstance(rec, dict):
        if rec.get('prompted'):
            # the turn after the compaction ended without a stop hook
            records.close(repo, payload, hs)
        else:
            rec['prompted'] = True  # the turn after a /compact starts
            records.recovery().note_prompt(hs, payload.prompt)
    if new and payload.agent == 'gemini':
        checkpoints.compressed(repo, hs, last)
    elif dropped:
        hs['compaction'] = {'trigger': 'context drop', 'tokens_before': last}
    if not (compacted or due):
        sessions.write(repo, key, hs)
        if checkpoint:
            _audit(repo, 'hook prompt', f'checkpoint asked at {size} tokens')
            return agents.envelope(payload.agent, 'prompt', context=checkpoint)
        return agents.envelope(payload.agent, 'prompt')
    why = (
        f'compaction ({new[-1]})' if new else f'context dropped {last} -> {size}' if dropped
        else 'after compaction' if pending else f'prompt {prompts}'
    )
    _audit(repo, 'hook prompt', f're-inject: {why}')
    out, text = _block(
        repo, cfg, payload.agent, 'prompt', after_compact=compacted,
        summary=_summary(payload, hs) if compacted else None,
    )
    if compacted:
        records.open_(
            repo, cfg, payload, hs,
            trigger='compact', injection=text, prompted=True, prompt=payload.prompt,
        )
    sessions.write(repo, key, hs)
    return out


def stop(payload: agents.Payload) -> str:
    repo, cfg = where(payload)
    key = _session(payload)
    hs = sessions.read(repo, key)
    rec = hs.get('recovery')
    if isinstance(rec, dict) and (rec.get('prompted') or rec.get('events')):
        # the end of the first turn after a compaction: judge it
        from agitmem.porcelain import records
        records.close(repo, payload, hs, 'stop')
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
    _audit(repo, 'hook stop', f'blocked: code changed ({shown})')
    return agents.envelope(
        payload.agent, 'stop',
        block_reason=(
            f'Code changed since state.json was last updated ({shown}). '
            f'Record your progress before stopping: `agitmem state set '
            f'last_action=... next_intent=...` and the snapshot\'s In '
            f'progress / Done sections.'
        ),
    )


HANDLERS = {
    'session-start': session_start,
    'pre-compact': pre_compact,
    'post-edit': post_edit,
    'prompt': prompt,
    'stop': stop,
}
