"""Reading the working tree's memory: one place for every command and hook.

A memory file is read only when it is a regular file of UTF-8/LF text; the
injection block is built here from the layers (inject.py cuts it to budget)."""
from __future__ import annotations

import os
import stat

from agitmem import audit
from agitmem import caches
from agitmem import memory
from agitmem import render
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import notes as notes_mod
from agitmem.memory import state as state_mod
from agitmem.repo import Repo

# typing and pathlib are not imported at run time: the agent hooks and
# load import this module (mypy takes any name TYPE_CHECKING as true;
# agitmem/tuples.py, repo.Repo)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any
    from typing import TypeVar
    from agitmem import inject
    T = TypeVar('T')

INJECTED = 'injected_context.txt'
# the SHA-1 of the last fragments.jsonl found valid whole (its text, in the
# worktree's git dir): a load of the same file again, most of them, checks
# nothing again and reads only the newest fragments, which it shows
FRAGMENTS_CHECKED = 'fragments-checked'


def user_tattoo_path() -> str | None:
    """The user's own tattoo (None when AGITMEM_HOME is relative or there is no home: config.user_home_at)."""
    from agitmem import config
    try:
        return os.path.join(config.user_home_at(), 'memory', memory.TATTOO)
    except AgitmemError:
        return None


# bytes of a memory file read at most: far past max_file_kb (256 KB by
# default), which a save enforces; a file larger is not taken into memory
READ_MAX = 64 << 20


def read_bytes(path: Path | str, shown: str, *, follow_symlink: bool = False) -> bytes | None:
    """A memory file's bytes, None when it does not exist.  Like a save, it
    takes only a regular file: a symlink (which could point anywhere), a
    FIFO (which would block the read forever) or a directory is refused in
    one line, and so is one over READ_MAX (or grown past it meanwhile)."""
    try:
        st = os.stat(path) if follow_symlink else os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            raise AgitmemError(f'{shown}: is a symlink; memory files must be regular files')
        if not stat.S_ISREG(st.st_mode):
            raise AgitmemError(f'{shown}: not a regular file')
        if st.st_size > READ_MAX:
            raise repo_mod.TooLarge(READ_MAX)
        # swapped meanwhile for a link, a FIFO or a device: refused
        return repo_mod.read_regular(path, READ_MAX, follow=follow_symlink)
    except repo_mod.TooLarge:
        raise AgitmemError(
            f'{shown}: over {READ_MAX >> 20} MB, more than a memory file holds: '
            f'trim it (or `agitmem archive`)',
        ) from None
    except repo_mod.NotRegularFile:
        raise AgitmemError(f'{shown}: not a regular file') from None
    except FileNotFoundError:
        return None
    except OSError as e:
        # a symlink loop, a file this user may not read (left by sudo):
        # one line, and the agent hooks leave the layer out (_layer)
        raise AgitmemError(f'{shown}: cannot be read ({e.strerror or type(e).__name__})') from None


def read_text(path: Path | str, shown: str, *, follow_symlink: bool = False) -> str | None:
    """A memory file's text to change and write back (None when it does not
    exist): only UTF-8/LF text, anything else refused in one line."""
    data = read_bytes(path, shown, follow_symlink=follow_symlink)
    return None if data is None else memory.decode(data, shown)


def shown_text(path: Path | str, shown: str, problems: list[str], *, follow_symlink: bool = False) -> str:
    """A memory file's text to show ('' when it does not exist): bytes that
    are not UTF-8 are kept, escaped where shown, and named in problems."""
    data = read_bytes(path, shown, follow_symlink=follow_symlink)
    if data is None:
        return ''
    text, problem = memory.decode_shown(data, shown)
    if problem:
        problems.append(problem)
    return text


def layer(repo: Repo, name: str) -> str:
    """One memory file's text ('' when it does not exist)."""
    return read_text(os.path.join(repo.memorydir, name), f'.agent/memory/{name}') or ''


def state(repo: Repo) -> dict[str, Any]:
    """state.json, parsed ({} when there is none)."""
    shown = f'.agent/memory/{memory.STATE}'
    text = read_text(os.path.join(repo.memorydir, memory.STATE), shown)
    if text is None:
        return {}
    return state_mod.parse(text, shown)


def user_tattoo(cfg: dict[str, Any]) -> str:
    """The user-level tattoo's text ('' when there is none or it is off)."""
    path = user_tattoo_path()
    if not cfg['user_tattoo'] or path is None:
        return ''
    # the user's own file may be a symlink (dotfile managers make them)
    return read_text(path, f'~/.agent/memory/{memory.TATTOO}', follow_symlink=True) or ''


def layers(repo: Repo, cfg: dict[str, Any], *, lenient: bool = False) -> inject.Memory:
    """The memory to show.  A file holding bytes that are not UTF-8 (a
    cloned memory ref may) is shown with them escaped and named once in
    `unreadable`: the rest of the memory still reaches the agent.
    `lenient` (the agent hooks: after a compaction the injection is all
    the agent has): a layer that cannot be read at all (state.json or a
    fragments line that is not valid, a symlink) is left out and named
    there too, where a command refuses the whole in one line."""
    from agitmem import inject  # the injection's: not every read pays for it
    problems: list[str] = []
    user = ''
    path = user_tattoo_path()
    if cfg['user_tattoo'] and path is not None:
        # the user's own file may be a symlink (dotfile managers make them)
        user = _layer(lambda: shown_text(path, f'~/.agent/memory/{memory.TATTOO}', problems, follow_symlink=True), '', problems, lenient)

    def layer_text(name: str) -> str:
        return _layer(lambda: shown_text(os.path.join(repo.memorydir, name), f'.agent/memory/{name}', problems), '', problems, lenient)

    state_text = layer_text(memory.STATE)
    fragments_text = layer_text(memory.FRAGMENTS)
    return inject.Memory(
        user_tattoo=user,
        project_tattoo=layer_text(memory.TATTOO),
        state=_layer(lambda: state_mod.parse(state_text, '.agent/memory/state.json') if state_text.strip() else {}, {}, problems, lenient),
        snapshot=layer_text(memory.SNAPSHOT),
        fragments=_layer(lambda: newest_fragments(repo, fragments_text, inject.NEWEST), [], problems, lenient),
        notes=notes_mod.newest(layer_text(memory.NOTES), inject.NEWEST),
        unreadable=tuple(problems),
    )


def _layer(read_it: Callable[[], T], empty: T, problems: list[str], lenient: bool) -> T:
    """One layer as read_it reads it; leniently, `empty` in place of one
    that cannot be read, with why in problems (escaped: it may quote the
    file's own text)."""
    try:
        return read_it()
    except AgitmemError as e:
        if not lenient:
            raise
        problems.append(f'{render.line(str(e))} (left out of this injection; `agitmem check` says what to fix)')
        return empty


def newest_fragments(repo: Repo, text: str, count: int) -> list[dict[str, Any]]:
    """fragments.jsonl's newest `count` fragments, the whole file checked
    as `fragments.parse` checks it (the same error, a bad line anywhere),
    unless this very text was found valid before (FRAGMENTS_CHECKED)."""
    if not text:
        return []
    shown = f'.agent/memory/{memory.FRAGMENTS}'
    key = repo_mod.sha1(text.encode('utf-8', 'surrogatepass')).encode() + b'\n'
    checked = os.path.join(repo.gitdir, 'agitmem', FRAGMENTS_CHECKED)
    if caches.own(checked, len(key)) == key:
        return fragments_mod.parse(fragments_mod.newest_lines(text, count), shown)
    found = fragments_mod.parse(text, shown)
    try:
        repo_mod.atomic_write(checked, key, durable=False)
    except OSError:
        pass  # (a directory there, a read-only git dir): checked whole again next time
    return found[-count:] if count > 0 else []


def memory_of(repo: Repo, ref: str | None) -> str | None:
    """A line for the agent when .agent/memory holds another branch's
    memory than ref's (a switch no post-checkout hook saw)."""
    held = repo_mod.memory_base(repo)[1]
    if ref is None or held is None or held == ref or not repo_mod.is_memory_ref(held):
        return None
    if not repo_mod.is_memory_ref(ref):
        return None  # a pinned ref: the memory is where it was asked to be
    # shown: a ref name may hold bytes that are not UTF-8 (a branch `caf\xe9`)
    held_name, name = repo_mod.shown(repo_mod.short_ref(held)), repo_mod.shown(repo_mod.short_ref(ref))
    return (
        f'NOTE: this is the memory of {held_name} ({repo_mod.shown(held)}), not of '
        f'{name}: the next save switches .agent/memory to {name}\'s memory '
        f'(`agitmem save`)'
    )


def freshness(repo: Repo, state: dict[str, Any], ref: str | None = None) -> inject.Freshness:
    """Compare the trees the state and the last verification were written
    against with the working tree now."""
    from agitmem import inject
    held = memory_of(repo, ref)
    now = state_mod.utc_now()
    age = state_mod.age_seconds(state.get('updated_at'), now)
    shown_age = state_mod.human_age(age) if age is not None else None
    state_tree = state.get('tree')
    lv = state.get('last_verification')
    lv_tree = lv.get('tree') if isinstance(lv, dict) else None
    if not state_tree and not lv_tree:
        return inject.Freshness(shown_age, memory_of=held)
    try:
        tree = repo_mod.worktree_tree(repo)
    except AgitmemError as e:
        # the memory still goes to the agent: freshness is advice
        return inject.Freshness(shown_age, memory_of=held, unknown=str(e))

    # both diffed at once, and once when they are the same tree (a verify
    # records its tree as the state's)
    diffs = repo_mod.changed_paths_from(
        repo, [t for t in (state_tree, lv_tree) if isinstance(t, str) and t != tree], tree,
    )

    def changed(old: object) -> tuple[str, ...] | None:
        if not isinstance(old, str) or not old or old == tree:
            return None
        # trees from before agitmem's own files were left out may differ
        # by those alone: not a code change
        return tuple(diffs.get(old, ())) or None

    return inject.Freshness(
        state_age=shown_age,
        state_changed=changed(state_tree),
        verification_changed=changed(lv_tree),
        memory_of=held,
    )


# RELATED's deadline, whatever config.yaml says: a hook must answer well
# within a client's own limit (Gemini CLI stops one at 15 s)
RELATED_SECONDS = (0.05, 5.0)


def related(repo: Repo, ref: str, mem: inject.Memory, seconds: float = 1.0) -> inject.Memory:
    """After a compaction: up to 3 older items of the memory history that
    match the state's goal and next intent and are not shown already
    (DESIGN.md section 12), and the `recall` query that shows more.  The
    search has `seconds` (clamped) to read history not cached yet: past
    them it stops, and a line says so (the next search goes on)."""
    query = recall_query(' '.join(
        v for v in (mem.state.get('current_goal'), mem.state.get('next_intent'))
        if isinstance(v, str)
    ))
    if not query:
        return mem
    import dataclasses
    import time

    import pygit2

    from agitmem.inject import NEWEST
    from agitmem.porcelain import recall
    shown = [
        *(f.get('id', '') for f in mem.fragments[-NEWEST:]),
        *mem.notes[-NEWEST:],
        *recall.decisions(mem.snapshot),
        # the tattoo is shown whole: its history's rules are not news
        *(t for _, t in memory.bullets(f'{mem.user_tattoo}\n{mem.project_tattoo}')),
    ]
    seconds = min(max(seconds, RELATED_SECONDS[0]), RELATED_SECONDS[1])
    start = time.monotonic()
    progress = recall.Progress()
    try:
        hits = recall.related_in(
            repo, ref, query, exclude=set(shown),
            bound=recall.Bound(start + seconds), progress=progress,
        )
    except (AgitmemError, OSError, ValueError, KeyError, pygit2.GitError) as e:
        # the memory goes to the agent without them: recall is an extra
        audit.log(repo.agent_dir, 'read related', f'left out: {e}')
        return mem
    stopped = ''
    if progress.stopped:
        stopped = (
            f'RELATED: search stopped after {time.monotonic() - start:.1f} s '
            f'(read {progress.read} of {progress.total} memory commits not '
            f'searched before; the next search goes on from there)'
        )
        audit.log(repo.agent_dir, 'read related', stopped)
    return mem._replace(
        related=[{**dataclasses.asdict(h), 'text': recall.summary(h)} for h in hits],
        recall_query=query,
        related_stopped=stopped,
    )


def recall_query(text: str, limit: int = 120) -> str:
    """text's words, each once, at most limit characters: a query the
    agent can run again as it is (words only: nothing to quote)."""
    import re
    words = ' '.join(dict.fromkeys(re.findall(r'[^\W_]+', text)))
    return words if len(words) <= limit else words[:limit].rsplit(' ', 1)[0]


def injection(
        repo: Repo,
        cfg: dict[str, Any],
        *,
        after_compact: bool,
        ref: str | None = None,
        summary: str | None = None,
        lenient: bool = False,
) -> inject.Block:
    """The injection block, also written to .agent/injected_context.txt:
    exactly what the agent was given, for the user to look at."""
    # the working tree's status, for freshness, runs on the other core
    # while the memory is read and the block built (a load began it already)
    repo_mod.start_tree(repo)
    from agitmem import inject
    from agitmem.porcelain import observed
    mem = layers(repo, cfg, lenient=lenient)
    mem = mem._replace(observed=observed.load(repo), summary=(summary or '')[:20_000] if after_compact else '')
    if after_compact and ref is not None:
        mem = related(repo, ref, mem, cfg['related_seconds'])
    block = inject.build(
        mem,
        budget_tokens=cfg['budget_tokens'],
        after_compact=after_compact,
        fresh=freshness(repo, mem.state, ref),
    )
    target = os.path.join(repo.agentdir, INJECTED)
    data = block.text.encode()
    # (read no further than the block: a cloned repository's link to a
    # large file is not read whole)
    if caches.read(target, len(data), follow=False) != data:
        try:
            # a view of what the agent was given, made again by the next load
            repo_mod.atomic_write(target, data, durable=False)
        except OSError:
            pass  # (a directory there, from a clone): the agent is given it all the same
    audit.log(
        repo.agentdir, 'read load',
        f'{block.tokens} tokens, {len(block.text)} chars'
        f'{", after compact" if after_compact else ""}',
    )
    return block
