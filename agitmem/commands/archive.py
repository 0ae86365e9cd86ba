from __future__ import annotations

import datetime
import re

import yaml

from agitmem import audit
from agitmem import memory
from agitmem import store
from agitmem.commands.save import save_memory
from agitmem.context import Context
from agitmem.errors import AgitmemError
from agitmem.memory import snapshot as snapshot_mod
from agitmem.memory import state as state_mod
from agitmem.resources import resource_dir


def slug(text: str) -> str:
    words = re.findall(r'\w+', text.lower())
    return '-'.join(words)[:48].strip('-') or 'snapshot'


def goal_of(state: dict[str, object], snapshot_text: str) -> str:
    goal = state.get('current_goal')
    if isinstance(goal, str) and goal.strip():
        return goal.strip()
    lines = snapshot_mod.content_lines(
        snapshot_mod.parse(snapshot_text).get(snapshot_mod.GOAL),
    )
    return lines[0][1].lstrip('-* ').strip() if lines else 'untitled'


def archive(ctx: Context) -> int:
    templates = resource_dir('templates')
    with store.locked(ctx.repo):
        files = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
        if memory.ARCHIVE in files:
            raise AgitmemError(
                f'.agent/memory/{memory.ARCHIVE}: is a file; the archive is a '
                f'directory of archived snapshots: move the file away',
            )
        before = dict(files)
        snap = files.get(memory.SNAPSHOT, b'').decode()
        state_text = files.get(memory.STATE, b'{}').decode()
        state = state_mod.parse(state_text)
        fresh_snap = (templates / memory.SNAPSHOT).read_bytes()
        fresh_state = (templates / memory.STATE).read_bytes()
        if snap.encode() == fresh_snap and state == state_mod.parse(fresh_state.decode()):
            raise AgitmemError(
                'nothing to archive: snapshot and state are still the '
                'templates',
            )
        goal = goal_of(state, snap)
        now = datetime.datetime.now()
        path = f'{memory.ARCHIVE}/{now:%Y/%m/%d-%H%M%S}-{slug(goal)}.md'
        front = yaml.safe_dump(state, sort_keys=False, allow_unicode=True)
        files[path] = f'---\n{front}---\n\n{snap}'.encode()
        files[memory.SNAPSHOT] = fresh_snap
        files[memory.STATE] = fresh_state
        try:
            store.checkout(ctx.repo, files)
            oid = save_memory(ctx, f'archive: {goal}', event='archive', files=files)
        except BaseException as e:
            # memory goes back to what it was: no archive file, the snapshot
            try:
                store.checkout(ctx.repo, before)
            except (OSError, AgitmemError):
                pass  # the error that brought us here is the one to report
            if isinstance(e, OSError):
                raise AgitmemError(f'could not write .agent/memory: {e}')
            raise
    audit.log(ctx.repo.agent_dir, 'write archive', path)
    print(f'archived the snapshot to {path}; snapshot and state reset')
    print(f'recorded as {str(oid)[:12]} (read it with `agitmem show archive:{slug(goal)}`)')
    return 0
