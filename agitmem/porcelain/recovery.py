"""Record each compaction and judge the agent's first turn after it
(`.agent/log/recovery.jsonl`, memory/recovery_log.py has the format).

The hooks drive it: the injection after a compaction opens a record (in
the log, and in the session's hook state, which then collects the turn's
tool events); the end of that turn (Stop / AfterAgent, or the next prompt
where no stop hook runs) classifies it.  Standard library only: it runs
on the post-edit and prompt path, where only `judge` needs the classifier
(memory/recovery.py and its phrase lists, imported there)."""
from __future__ import annotations

import json
import os
import re
from typing import Any

from agitmem import audit
from agitmem import memory
from agitmem import paths
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.memory import recovery_log
from agitmem.memory import state as state_mod
from agitmem.porcelain import sessions
from agitmem.repo import Repo

SUMMARY_CHARS = 4000
SESSION_CHARS = 80
PROMPT_CHARS = 600


def _append(repo: Repo, record: dict[str, Any]) -> None:
    """One whole line, one O_APPEND write: two sessions never interleave."""
    if not repo.agent_dir.is_dir():
        return
    line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + '\n').encode('utf-8', 'backslashreplace')
    fd = _open(repo, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 'cannot write')
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _open(repo: Repo, flags: int, what: str) -> int:
    """The log, a regular file reached through no symlink (audit.open_log):
    a FIFO there must not hang a hook (or `agitmem recovery`) waiting for
    its other end, a link out of the repository is not written through."""
    name = f'.agent/log/{recovery_log.LOG}'
    try:
        return audit.open_log(repo.agent_dir, recovery_log.LOG, flags)
    except FileNotFoundError:
        raise
    except ValueError:
        raise AgitmemError(f'{name}: not a regular file')
    except OSError as e:
        raise AgitmemError(f'{name}: {what}: {e.strerror}')


def rows(repo: Repo) -> list[dict[str, Any]]:
    try:
        fd = _open(repo, os.O_RDONLY, 'cannot read')
    except FileNotFoundError:
        return []
    try:
        with os.fdopen(fd, 'rb') as f:
            data = f.read()
    except OSError as e:
        raise AgitmemError(f'.agent/log/{recovery_log.LOG}: cannot read: {e.strerror}')
    return recovery_log.fold(recovery_log.parse(data.decode('utf-8', 'replace')))


def _expectation(repo: Repo) -> tuple[dict[str, Any], dict[str, Any]]:
    """(state.json, the yardstick) as they are now; a damaged file gives
    an empty yardstick, never a failed hook."""
    from agitmem.porcelain import read

    def text(name: str) -> str:
        # as the injection reads it: a regular file only (a FIFO would
        # block the hook, a link to /dev/zero fill the memory)
        try:
            data = read.read_bytes(os.path.join(repo.memorydir, name), f'.agent/memory/{name}')
        except AgitmemError:
            return ''
        return '' if data is None else data.decode('utf-8', 'replace')
    try:
        raw = text(memory.STATE)
        state = state_mod.parse(raw, f'.agent/memory/{memory.STATE}') if raw.strip() else {}
    except AgitmemError:
        state = {}
    current = state.get('current_file')
    if isinstance(current, str) and current:
        # compared with the edits' files, which the hooks record as git
        # knows them: `Src/Über.py` is `src/über.py` where names fold
        state = {**state, 'current_file': paths.known(repo, current)}
    from agitmem.memory import snapshot as snapshot_mod
    snap = snapshot_mod.parse(text(memory.SNAPSHOT))

    def lines(name: str) -> list[str]:
        return [t for _, t in snapshot_mod.content_lines(snap.get(name))][:20]
    from agitmem.memory import notes as notes_mod
    expect = recovery_log.expectation(
        state, lines(snapshot_mod.IN_PROGRESS), lines(snapshot_mod.GOAL), lines(snapshot_mod.TODO),
        lines(snapshot_mod.DONE), notes_mod.parse(text(memory.NOTES))[-5:], lines(snapshot_mod.DECISIONS),
    )
    return state, expect


def open_record(
        repo: Repo,
        cfg: dict[str, Any],
        hs: dict[str, Any],
        *,
        agent: str,
        session_id: str | None,
        trigger: str,
        injection: str,
        prompted: bool,
        prompt: str | None = None,
) -> str:
    """Log a compaction whose injection was just given, and open its
    first turn in the session's hook state `hs` (the caller writes it).
    What pre-compact and post-compact stashed in `hs['compaction']`
    (checkpoint, sizes, the client's summary) goes in, with the working
    tree's tree (what shell commands of the turn change is seen against
    it) and the user's prompt when it starts the turn.  Returns its id."""
    stash = hs.pop('compaction', None)
    stash = stash if isinstance(stash, dict) else {}
    if isinstance(hs.get('recovery'), dict):
        # compacted again before the first turn after the last one ended:
        # that turn is judged on what it did
        close(repo, hs, None, None)
    import datetime
    state, expect = _expectation(repo)
    age = state_mod.age_seconds(state.get('updated_at'), datetime.datetime.now(datetime.timezone.utc))
    summary = stash.get('summary') if isinstance(stash.get('summary'), str) else None
    if summary:
        from agitmem import secrets  # a summary may quote a token
        summary = secrets.redact(summary)[:SUMMARY_CHARS]
    # an id from a payload, kept as given (cut): `recovery show` escapes it
    # (render.line) so that it cannot start a line of its own
    session = (session_id or '-')[:SESSION_CHARS]
    rid = os.urandom(6).hex()
    _append(repo, {
        'kind': 'compaction',
        'id': rid,
        'at': state_mod.now_iso(),
        'agent': agent,
        'session': session,
        # the stash is the session's hook state (a file in the git dir):
        # each value of its type, or not taken (a NaN made `recovery show
        # --json` print what no JSON reader takes)
        'trigger': _str(stash.get('trigger')) or trigger,
        'tokens_before': sessions.int_of(stash['tokens_before'] if 'tokens_before' in stash else hs.get('context')),
        'checkpoint': _str(stash.get('checkpoint')),
        'state_step': state.get('step'),
        'state_age': round(age) if age is not None else None,
        'stale': age is None or age > cfg['stale_minutes'] * 60,
        'expect': expect,
        'summary': summary,
        'injection': injection,
    })
    try:
        tree: str | None = repo_mod.worktree_tree(repo)
    except AgitmemError:
        tree = None  # shell-made changes go unseen, the rest is judged
    hs['recovery'] = {
        'id': rid, 'expect': expect, 'events': [], 'prompted': prompted,
        'summary': summary, 'tree': tree, 'prompt': None,
    }
    if prompt is not None:
        note_prompt(hs, prompt)
    return rid


def note_prompt(hs: dict[str, Any], prompt: str | None) -> None:
    """The user's prompt that starts the first turn after a compaction
    (without the context a client put into it)."""
    rec = hs.get('recovery')
    if not isinstance(rec, dict) or not isinstance(prompt, str):
        return
    text = re.sub(r'(?s)<hook_context>.*?</hook_context>', '', prompt).strip()
    if text:
        from agitmem import secrets
        rec['prompt'] = secrets.redact(text)[:PROMPT_CHARS]


def note_summary(hs: dict[str, Any], summary: str) -> None:
    """The client's summary, come after the record was opened."""
    rec = hs.get('recovery')
    if isinstance(rec, dict) and not rec.get('summary'):
        from agitmem import secrets
        rec['summary'] = secrets.redact(summary)[:SUMMARY_CHARS]


def shell_edits(repo: Repo, hs: dict[str, Any]) -> list[dict[str, Any]]:
    """The files shell commands of the first turn changed since the last
    look (the record's tree), as edit events, each with the definition its
    first changed line is in; files the agent's edit tools wrote are
    theirs.  Runs after a shell command only: a turn without one pays
    nothing."""
    rec = hs.get('recovery')
    if not isinstance(rec, dict) or not isinstance(rec.get('tree'), str):
        return []
    try:
        now = repo_mod.worktree_tree(repo)
    except AgitmemError:
        return []
    old, rec['tree'] = rec['tree'], now
    if old == now or not (repo_mod.is_oid(old) and repo_mod.is_oid(now)):
        return []
    tooled = {e.get('file') for e in rec.get('events') or () if isinstance(e, dict) and e.get('kind') == 'edit' and e.get('by') != 'shell'}
    names = repo_mod.git(
        'diff-tree', '-r', '-z', '--name-only', '--no-renames', old, now,
        cwd=repo.top, env=repo_mod.trees_only(repo), check=False,
    )
    if names.returncode != 0:
        return []
    changed = [p for p in names.stdout.split('\0') if p and repo_mod.is_code(p) and p not in tooled]
    return [_shell_edit(repo, old, now, rel) for rel in changed[:recovery_log.EVENTS]]


def _shell_edit(repo: Repo, old: str, new: str, rel: str) -> dict[str, Any]:
    """A file a shell command changed, as an edit event: the definition
    its first changed line is in, and the lines it added."""
    from agitmem.porcelain import observed
    proc = repo_mod.git('diff-tree', '-p', '-U0', '--no-color', '--no-renames', old, new, '--', rel, cwd=repo.top, check=False)
    diff = proc.stdout if proc.returncode == 0 else ''
    hunk = re.search(r'(?m)^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@', diff)
    added, gone = observed.changed(
        '\n'.join(line[1:] for line in diff.splitlines() if line.startswith('+') and not line.startswith('+++')),
        '\n'.join(line[1:] for line in diff.splitlines() if line.startswith('-') and not line.startswith('---')),
    )
    symbol, twice = None, False
    if hunk:
        start = max(int(hunk[1]), 1)
        symbol, twice = observed.symbol_at(repo, rel, start, start + max(int(hunk[2] or 1), 1) - 1)
    event = {'kind': 'edit', 'file': rel, 'symbol': symbol, 'by': 'shell', 'text': observed.clip_text(added), 'removed': observed.clip_text(gone)}
    return {**event, 'twice': True} if twice else event


def is_open(hs: dict[str, Any]) -> bool:
    return isinstance(hs.get('recovery'), dict)


def note_events(hs: dict[str, Any], events: list[dict[str, Any]]) -> bool:
    """Add the first turn's tool events (the first and the last of a long
    turn: recovery.keep); False when no record is open."""
    rec = hs.get('recovery')
    if not isinstance(rec, dict) or not events:
        return False
    old = rec.get('events')
    rec['events'] = recovery_log.keep(old if isinstance(old, list) else [], events)
    return True


def close(
        repo: Repo,
        hs: dict[str, Any],
        text: str | None,
        tokens_after: int | None,
) -> str | None:
    """Judge the open first turn and log the verdict; returns it."""
    rec = hs.pop('recovery', None)
    if not isinstance(rec, dict) or not isinstance(rec.get('id'), str):
        return None
    expect = rec.get('expect')
    expect = expect if isinstance(expect, dict) else {}
    events = [e for e in rec.get('events') or () if isinstance(e, dict)]
    prompt = rec.get('prompt') if isinstance(rec.get('prompt'), str) else None
    summary = rec.get('summary') if isinstance(rec.get('summary'), str) else None
    verdict, evidence, first, text = judge(expect, events, text, prompt, summary)
    _append(repo, {
        'kind': 'verdict',
        'id': rec['id'],
        'at': state_mod.now_iso(),
        'verdict': verdict,
        'evidence': evidence,
        'first_action': first,
        'events': events,
        'text': (text or '')[:recovery_log.TEXT_CHARS] or None,
        'prompt': prompt,
        'tokens_after': tokens_after,
    })
    return verdict


def judge(
        expect: dict[str, Any],
        events: list[dict[str, Any]],
        text: str | None,
        prompt: str | None,
        summary: str | None,
) -> tuple[str, list[str], str | None, str | None]:
    """(verdict, evidence, first action, the text as judged) of a first
    turn after a compaction: the one judge of the hooks' records and of
    `recovery audit`'s episodes read back from a client's log.  `text`
    None: compacted again before the turn ended.  Secrets are taken out
    of the text and of the events' lines (in place) first."""
    if text is None and not events:
        return 'unknown', ['compacted again before the turn after the last compaction did anything'], None, None
    from agitmem import secrets
    if text:
        text = secrets.redact(text)
    for e in events:
        for key in ('text', 'removed'):
            if isinstance(e.get(key), str):
                e[key] = secrets.redact(e[key])
    from agitmem.memory import recovery as classifier
    verdict, evidence, first = classifier.classify(expect, events, text, prompt, summary)
    if text is None:
        evidence.append('compacted again before the turn ended: judged on what it did until then')
    return verdict, evidence, first, text


def mark(repo: Repo, n: int, verdict: str) -> dict[str, Any]:
    """Seed 004's hand label for compaction `n`; it overrides the
    heuristic.  Returns the row as it was."""
    if verdict not in recovery_log.MARKS:
        raise AgitmemError(
            f'unknown verdict "{verdict}" (one of: {", ".join(recovery_log.MARKS)})',
        )
    row = one(repo, n)
    _append(repo, {'kind': 'mark', 'id': row['id'], 'at': state_mod.now_iso(), 'verdict': recovery_log.MARKS[verdict]})
    return row


def one(repo: Repo, n: int) -> dict[str, Any]:
    found = rows(repo)
    if not 1 <= n <= len(found):
        have = f'1 to {len(found)}' if found else 'none recorded yet'
        raise AgitmemError(f'no compaction {n} in the recovery log ({have})')
    return found[n - 1]


def since(found: list[dict[str, Any]], date: str | None) -> list[dict[str, Any]]:
    """Rows at or after `date` (YYYY-MM-DD, or an ISO time)."""
    if not date:
        return found
    import datetime
    try:
        start = datetime.datetime.fromisoformat(date.replace('Z', '+00:00'))
    except ValueError:
        raise AgitmemError(f'--since {date}: not a date (YYYY-MM-DD or an ISO time)')
    if start.tzinfo is None:
        start = start.replace(tzinfo=datetime.timezone.utc)
    ret = []
    for r in found:
        try:
            at = datetime.datetime.fromisoformat(str(r.get('at')).replace('Z', '+00:00'))
        except ValueError:
            continue
        if at >= start:
            ret.append(r)
    return ret


def checkpoint_of(repo: Repo, ref: str | None) -> str | None:
    """The memory ref's tip: the checkpoint a compaction starts from when
    pre-compact had nothing new to save."""
    if not ref:
        return None
    return repo_mod.git_out(repo, 'rev-parse', '-q', '--verify', '--short=12', f'{ref}^{{commit}}') or None


def add_summary(repo: Repo, rid: object, summary: str) -> None:
    """The client's summary, for a record opened before it came (Claude
    Code may start the session again before its PostCompact)."""
    if not isinstance(rid, str):
        return
    from agitmem import secrets
    _append(repo, {'kind': 'summary', 'id': rid, 'at': state_mod.now_iso(), 'summary': secrets.redact(summary)[:SUMMARY_CHARS]})


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
