"""`agitmem promote`: notes that keep coming back are tattoo candidates
(seed 000 section 7.2).  Counted across the whole notes history on the
memory ref, never only today's file; moved into tattoo.md only when the
user asks, one at a time."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from dataclasses import field

import pygit2

from agitmem import memory
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.checks import tattoo_size
from agitmem.errors import AgitmemError
from agitmem.memory import notes as notes_mod
from agitmem.memory import tattoo as tattoo_mod
from agitmem.porcelain import read
from agitmem.porcelain import write
from agitmem.porcelain.context import Context

THRESHOLD = 3
_STAMP = re.compile(r'^(\d{4}-\d{2}-\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2})?)?\s*')
_PUNCT = re.compile(r'[^\w\s]|_')


def strip_stamp(note: str) -> str:
    """The note without the `YYYY-MM-DD HH:MM` that `agitmem note` puts first."""
    return _STAMP.sub('', note, count=1).strip()


def normalize(note: str) -> str:
    """What makes two notes the same note: no timestamp, case, punctuation
    or runs of whitespace."""
    text = _PUNCT.sub(' ', strip_stamp(note).casefold())
    return ' '.join(text.split())


@dataclass
class Candidate:
    key: str
    text: str  # the newest wording, without its timestamp
    count: int = 0
    dates: list[str] = field(default_factory=list)


def _notes_blob(commit: pygit2.Commit) -> pygit2.Oid | None:
    try:
        entry = commit.tree[memory.NOTES]
    except KeyError:
        return None
    return entry.id if entry.type_str == 'blob' else None


def _occurrences(ctx: Context) -> dict[str, tuple[int, str]]:
    """{note line: (times it occurs, date first seen)} across every version
    of notes.md on the memory ref.  A note kept in many commits is one
    occurrence; the same text appended again (another line) is another."""
    pr = store.open_repo(ctx.repo)
    seen: set[pygit2.Oid] = set()
    found: dict[str, tuple[int, str]] = {}
    # oldest first, so the date kept is the one the line first appeared
    for commit in reversed(store.history(pr, ctx.ref)):
        oid = _notes_blob(commit)
        if oid is None or oid in seen:
            continue
        seen.add(oid)
        try:
            text = memory.decode(store.blob_data(pr, oid, memory.NOTES), memory.NOTES)
        except AgitmemError:
            continue  # a broken (or huge) old version: its notes are not counted
        date = store.commit_time(commit).strftime('%Y-%m-%d')
        for line, times in Counter(notes_mod.parse(text)).items():
            old = found.get(line)
            if old is None:
                found[line] = (times, date)
            elif times > old[0]:
                found[line] = (times, old[1])
    return found


def _promoted(ctx: Context) -> set[str]:
    rules = memory.bullets(read.layer(ctx.repo, memory.TATTOO))
    return {normalize(r) for _, r in rules}


def candidates(ctx: Context, threshold: int = THRESHOLD) -> list[Candidate]:
    """Notes seen `threshold` times or more, most often first; notes the
    tattoo already holds are not candidates."""
    done = _promoted(ctx)
    by_key: dict[str, Candidate] = {}
    for line, (times, first) in _occurrences(ctx).items():
        key = normalize(line)
        if not key or key in done:
            continue
        m = _STAMP.match(line)
        date = m[1] if m else first
        c = by_key.setdefault(key, Candidate(key, strip_stamp(line)))
        c.count += times
        c.dates.extend([date] * times)
        if date >= max(c.dates):
            c.text = strip_stamp(line)
    ret = [c for c in by_key.values() if c.count >= threshold]
    for c in ret:
        c.dates.sort()
    # most often first; among equals the most recently seen first
    ret.sort(key=lambda c: c.key)
    ret.sort(key=lambda c: c.dates[-1], reverse=True)
    ret.sort(key=lambda c: c.count, reverse=True)
    return ret


def pick(ctx: Context, what: str) -> Candidate:
    """The candidate `what` names: its number in the list, or its text."""
    if what.isdigit():
        listed = candidates(ctx)
        n = int(what)
        if not 1 <= n <= len(listed):
            raise AgitmemError(
                f'no candidate {n}: `agitmem promote` lists {len(listed)}',
            )
        return listed[n - 1]
    key = normalize(what)
    if not key:
        raise AgitmemError('promote needs a number from the list or the text of a note')
    every = candidates(ctx, threshold=1)
    exact = [c for c in every if c.key == key]
    if exact:
        return exact[0]
    partial = [c for c in every if key in c.key]
    if len(partial) == 1:
        return partial[0]
    if partial:
        raise AgitmemError(
            f'"{what}" matches {len(partial)} notes: give more of the text, '
            f'or its number from `agitmem promote`',
        )
    raise AgitmemError(f'no note in the notes history matches "{what}"')


def _without(notes: str, key: str) -> tuple[str, int]:
    kept = []
    removed = 0
    for line in notes.splitlines(keepends=True):
        if line.startswith('- ') and normalize(line[2:]) == key:
            removed += 1
        else:
            kept.append(line)
    return ''.join(kept), removed


def _with_rule(tattoo: str, rule: str) -> str:
    if tattoo and not tattoo.endswith('\n'):
        tattoo += '\n'
    return f'{tattoo}- {rule}\n'


def _fits(ctx: Context, tattoo: str) -> None:
    """Refuse a tattoo whose rules would crowd the state out of the
    injection (tattoo-size's bound), before anything is written."""
    rules = tattoo_mod.combine(
        tattoo_mod.parse(read.user_tattoo(ctx.cfg)), tattoo_mod.parse(tattoo),
    )
    why = tattoo_size.over_bound(rules)
    if why is not None:
        raise AgitmemError(
            f'not promoted: with this rule {why}; shorten or drop tattoo '
            f'rules first (nothing changed)',
        )


def promote(ctx: Context, chosen: Candidate) -> tuple[str | None, int]:
    """Move a note into tattoo.md as a rule and take its occurrences out of
    notes.md, in one memory commit `promote: ...` through the write path.
    Both files are put back when the save refuses.  (commit, notes removed)"""
    tattoo_path = ctx.repo.memory_dir / memory.TATTOO
    notes_path = ctx.repo.memory_dir / memory.NOTES
    with store.locked(ctx.repo):
        write.align(ctx)
        tattoo = read.layer(ctx.repo, memory.TATTOO)
        _fits(ctx, _with_rule(tattoo, chosen.text))
        notes = read.layer(ctx.repo, memory.NOTES)
        new_notes, removed = _without(notes, chosen.key)
        old = {
            p: p.read_bytes() if p.is_file() else None
            for p in (tattoo_path, notes_path)
        }
        repo_mod.atomic_write(tattoo_path, _with_rule(tattoo, chosen.text).encode())
        if removed:
            repo_mod.atomic_write(notes_path, new_notes.encode())
        try:
            oid = write.save(ctx, f'promote: {chosen.text[:60]}', event='promote')
        except BaseException:
            for path, data in old.items():
                if data is None:
                    path.unlink(missing_ok=True)
                else:
                    repo_mod.atomic_write(path, data)
            raise
    return oid, removed
