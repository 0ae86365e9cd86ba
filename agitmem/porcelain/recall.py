"""Recall: search the whole history of a memory ref (DESIGN.md section 12).

Notes, fragments (by id too, following their refs), the snapshot's
Decisions, archived snapshots and tattoo rules, as they ever were on the
memory ref, each item once however many commits held it.  No index to keep
in sync: what the search needs is built from the ref's history and cached
under the git dir keyed by the ref's tip; when the ref moved forward the
cache is extended from the cached tip, when it was rewritten (a reset, a
forced fetch) it is built again.

The score is lexical and deterministic: BM25 over words (camelCase and
snake_case split, the whole word kept too) and Chinese character bigrams;
recency breaks ties."""
from __future__ import annotations

import array
import functools
import itertools
import json
import math
import re
from collections.abc import Collection
from collections.abc import Iterable
from collections.abc import MutableSequence
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from agitmem import memory
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import snapshot as snapshot_mod
from agitmem.errors import AgitmemError
from agitmem.porcelain.context import Context
from agitmem.repo import Repo

# bump when what the cache holds changes: an old cache is built again
VERSION = 3
KINDS = ('note', 'fragment', 'decision', 'snapshot', 'tattoo')
_K1, _B = 1.2, 0.75  # BM25's usual constants
# RELATED reads at most this many commits not in the cache yet (about a
# second's worth of reading)
RELATED_MAX_NEW = 2000
# and at most this many bytes of blobs, whatever its deadline: a heavy
# history (hundreds of large notes.md) is read over several compactions
RELATED_MAX_BYTES = 64 * 1024 * 1024
# patterns, compiled when first used (the Chinese ranges take a warm
# search's worth of time to compile; most queries are ASCII)
_PATTERNS = {
    'fragment_id': r'(?<![\w.-])([A-Za-z0-9_.]+-\d+)(?![\w-])',
    'word': r'[^\W_]+(?:_[^\W_]+)*',
    'cjk': r'[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+',
    'camel': r'[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+',
}


@functools.cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_PATTERNS[name])
# the fields of a fragment that are its text, in the order they read
_FRAGMENT_TEXT = ('goal', 'basis', 'action', 'result', 'next')


@dataclass(frozen=True)
class Bound:
    """How much of a history not in the cache yet one search may read:
    a deadline (time.monotonic()) and a number of blob bytes.  Reading
    stops between two commits; what was read is cached, and the next
    search goes on from there."""
    until: float
    max_bytes: int = RELATED_MAX_BYTES


@dataclass
class Progress:
    """What a bounded search read: commits of the history, and whether it
    stopped before the tip (then: after how long)."""
    read: int = 0
    total: int = 0
    stopped: bool = False


@dataclass(frozen=True)
class Hit:
    kind: str  # 'note' | 'fragment' | 'decision' | 'snapshot' | 'tattoo'
    text: str  # the item itself (a note line, a fragment's body, a decision...)
    id: str | None  # a fragment's id, else None
    commit: str  # hex id of the newest memory commit holding it
    date: str  # that commit's date, ISO 8601
    file: str  # path under .agent/memory/ it came from
    ref: str  # the memory ref
    score: float
    current: bool  # still present at the ref's tip


# -- words ---------------------------------------------------------------------

def tokens(text: str) -> list[str]:
    """The words of text, lowercased: camelCase and snake_case split into
    their parts (the whole word kept too), runs of Chinese characters as
    overlapping bigrams (a lone character as itself)."""
    ret: list[str] = []
    for m in _pattern('word').finditer(text):
        word = m.group()
        if word.isascii():
            ret.extend(_latin(word))
            continue
        pos = 0
        for c in _pattern('cjk').finditer(word):
            ret.extend(_latin(word[pos:c.start()]))
            run = c.group()
            ret.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
            pos = c.end()
        ret.extend(_latin(word[pos:]))
    return ret


def _latin(word: str) -> list[str]:
    if word.islower() and '_' not in word or word.isdigit():
        return [word]  # most words: nothing to split (no camelCase, no snake_case)
    if not word:
        return []
    parts = [p.lower() for chunk in word.split('_') for p in (_pattern('camel').findall(chunk) or [chunk])]
    whole = word.lower()
    return parts if len(parts) == 1 and parts[0] == whole else [*parts, whole]


# -- items: what each memory file holds ----------------------------------------

Item = tuple[str, str | None, str]  # (kind, fragment id, text)
Items = dict[str, Item]  # key -> item


def fragment_text(f: dict[str, Any]) -> str:
    parts = [f'{k}: {f[k]}' for k in _FRAGMENT_TEXT if isinstance(f.get(k), str) and f[k]]
    refs = [r for r in f.get('refs') or () if isinstance(r, str)]
    if refs:
        parts.append(f'refs: {", ".join(refs)}')
    return '; '.join(parts)


def _bullets(kind: str, text: str) -> Items:
    return {f'{kind}\0{t}': (kind, None, t) for _, t in memory.bullets(text)}


def _fragments(text: str) -> Items:
    """Each fragment line that parses (one that does not is skipped: a
    history may hold anything, recall reads what it can)."""
    import json  # only while reading history: a warm search never needs it
    ret: Items = {}
    for line in text.split('\n'):
        if not line.strip():
            continue
        try:
            f = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(f, dict) and isinstance(f.get('id'), str) and fragments_mod.id_parts(f['id']):
            ret[f'fragment\0{f["id"]}'] = ('fragment', f['id'], fragment_text(f))
    return ret


def _decisions(text: str) -> Items:
    section = snapshot_mod.parse(text).get(snapshot_mod.DECISIONS)
    ret: Items = {}
    for _, line in snapshot_mod.content_lines(section):
        t = line[2:].strip() if line.startswith(('- ', '* ')) else line
        if t:
            ret[f'decision\0{t}'] = ('decision', None, t)
    return ret


def decisions(snapshot: str) -> list[str]:
    """The Decisions of a snapshot as recall holds them."""
    return [item[2] for item in _decisions(snapshot).values()]


def summary(hit: Hit) -> str:
    """A hit on one line: an archived snapshot by its Goal (and the
    first lines of its other sections), anything else as it is."""
    if hit.kind != 'snapshot':
        return hit.text
    text = hit.text
    if text.startswith('---\n') and '\n---\n' in text:
        text = text.split('\n---\n', 1)[1]  # the state, as front matter
    snap = snapshot_mod.parse(text)
    parts = []
    for section in snap.sections:
        lines = [t for _, t in snapshot_mod.content_lines(section)]
        if lines:
            parts.append(f'{section.name}: {" / ".join(lines[:3])}')
    return '; '.join(parts) or ' '.join(text.split())


def _archived(path: str, text: str) -> Items:
    """An archived snapshot: the file as one item, and its Decisions."""
    return {f'snapshot\0{path}': ('snapshot', None, text.strip()), **_decisions(text)}


def _decode(data: bytes) -> str:
    # bytes that are not UTF-8 kept as surrogates: shown \udcXX, as `show` does
    return data.decode('utf-8', 'surrogateescape')


# the memory files recall reads, by name at the tree's root
_FLAT = {
    memory.NOTES: lambda t: _bullets('note', t),
    memory.TATTOO: lambda t: _bullets('tattoo', t),
    memory.FRAGMENTS: _fragments,
    memory.SNAPSHOT: _decisions,
}


# the files whose every line is one item (or none)
_LINE_ITEMS = (memory.NOTES, memory.TATTOO, memory.FRAGMENTS)


_FILE = (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)


class _Reader:
    """The items of a memory commit, file by file, each blob parsed once
    (the parent's, which the next commit compares with, stays at hand)."""

    def __init__(self, pr: pygit2.Repository, top: pygit2.Commit) -> None:
        self.pr = pr
        self.blobs: dict[pygit2.Oid, Items] = {}
        self.archives: dict[pygit2.Oid, dict[str, pygit2.Oid]] = {}
        self.top = top  # the commit being read
        self.raw: dict[pygit2.Oid, bytes] = {}
        self.bytes_read = 0  # of blobs, each read once while at hand

    def entries(self, tree: pygit2.Tree) -> dict[str, pygit2.Oid]:
        """What recall reads of a memory tree: the flat files, and each
        archived snapshot as archive/<path>.  A tree from a remote may
        hold anything: an entry no checkout would write (a symlink, `..`)
        is not read."""
        ret = {}
        for e in tree:
            if e.name in _FLAT and e.filemode in _FILE:
                ret[e.name] = e.id
            elif e.name == memory.ARCHIVE and e.filemode == pygit2.GIT_FILEMODE_TREE:
                ret.update(self._archive(e.id))
        return ret

    def _archive(self, oid: pygit2.Oid) -> dict[str, pygit2.Oid]:
        hit = self.archives.get(oid)
        if hit is None:
            hit = {}
            stack: list[tuple[str, pygit2.Oid]] = [(f'{memory.ARCHIVE}/', oid)]
            while stack:
                prefix, at = stack.pop()
                tree = self.pr[at]
                assert isinstance(tree, pygit2.Tree)
                for e in tree:
                    try:
                        path = store.safe_entry(prefix, e.name or '', e.filemode)
                    except AgitmemError:
                        continue
                    if e.filemode == pygit2.GIT_FILEMODE_TREE:
                        stack.append((f'{path}/', e.id))
                    elif e.filemode in _FILE and path.endswith('.md'):
                        hit[path] = e.id
            self.archives[oid] = hit
        return hit

    def items(self, path: str, oid: pygit2.Oid) -> Items:
        hit = self.blobs.get(oid)
        if hit is None:
            if len(self.blobs) > 256:
                self.blobs.clear()  # a long history: keep only what is near
            text = _decode(self.data(oid))
            hit = _archived(path, text) if path not in _FLAT else _FLAT[path](text)
            self.blobs[oid] = hit
        return hit

    def data(self, oid: pygit2.Oid) -> bytes:
        # a commit's old blob is, most often, the new one of the commit
        # read just before: each is read once
        hit = self.raw.get(oid)
        if hit is None:
            if len(self.raw) > 8:
                self.raw.clear()
            # a partial clone may lack it: fetched with the commit's objects
            hit = self.raw[oid] = store.whole(self.pr, self.top.tree, lambda: self._data(oid))
        return hit

    def _data(self, oid: pygit2.Oid) -> bytes:
        try:
            data = store.blob_data(self.pr, oid, str(oid))
        except AgitmemError:
            return b''  # a blob a remote made huge: not read, found empty
        self.bytes_read += len(data)
        return data

    def added(self, path: str, old: pygit2.Oid | None, new: pygit2.Oid) -> tuple[Items, Items]:
        """(items new or changed in new, items gone since old) for one
        file; what both hold is dated by _gone and _mark_current.  A file
        of one item a line (notes, fragments, tattoo) is parsed in the
        lines that differ only: a large notes.md rewritten in place each
        commit costs its changed lines, not all of them."""
        if old is not None and path in _LINE_ITEMS and new not in self.blobs:
            before, after = self.data(old), self.data(new)
            parse = _FLAT[path]
            if after.startswith(before) and before.endswith(b'\n'):
                return parse(_decode(after[len(before):])), {}
            was, now_is = before.split(b'\n'), after.split(b'\n')
            was_set, now_set = set(was), set(now_is)
            came = parse(_decode(b'\n'.join(x for x in now_is if x not in was_set)))
            went = parse(_decode(b'\n'.join(x for x in was if x not in now_set)))
            return came, {k: v for k, v in went.items() if k not in came}
        now = self.items(path, new)
        if old is None:
            return now, {}
        then = self.items(path, old)
        changed = {k: v for k, v in now.items() if then.get(k) != v}
        return changed, {k: v for k, v in then.items() if k not in now}


# -- the index of one memory ref -------------------------------------------------

class Damaged(Exception):
    """A cached index's posting is not one `dump` writes (a crafted
    cache): the index is built again."""


class Index:
    """Every item ever on a memory ref, with where it was first and last
    seen, and an inverted index of its words.  Positions count commits in
    topological order (parents first), so a larger one is newer.  Kept in
    columns (and cached so) because loading it is the warm search's cost."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        self.tip: str | None = None
        # per commit walked, by position
        self.commits: list[str] = []
        self.times: MutableSequence[int] = []
        self.offsets: MutableSequence[int] = []
        # per item
        self.kinds: list[str] = []
        self.fids: list[str] = []  # '' for all but fragments
        self.texts: list[str] = []
        self.files: list[str] = []
        self.first: MutableSequence[int] = []
        self.last: MutableSequence[int] = []
        self.current: list[bool] = []
        self.lengths: MutableSequence[int] = []  # words
        # word -> [item, count, item, count...]; a cached one is decoded
        # when a search asks for it
        self.postings: dict[str, Sequence[int]] = {}
        # word -> its posting's number in a cache's column of postings
        self.packed: dict[str, int] = {}
        self._column: memoryview = memoryview(b'')
        self._starts: Sequence[int] = ()
        # a cache's columns a search need not decode: kinds, files,
        # current, commits; decoded when the index grows (`_unpack`)
        self.raw: dict[str, Any] | None = None
        # derived, cached: each item's BM25 weight of a word it holds once,
        # and its rank by recency (last seen, then first seen)
        self._once: Sequence[float] | None = None
        self._recency: Sequence[int] | None = None
        self._keys: dict[str, int] | None = None
        self._positions: dict[str, int] | None = None

    @property
    def keys(self) -> dict[str, int]:
        if self._keys is None:
            self._keys = {self.key(i): i for i in range(len(self.texts))}
        return self._keys

    def key(self, i: int) -> str:
        kind = self.kind(i)
        if kind == 'fragment':
            return f'fragment\0{self.fids[i]}'
        if kind == 'snapshot':
            return f'snapshot\0{self.file(i)}'
        return f'{kind}\0{self.texts[i]}'

    # columns a cache keeps packed, read one item at a time
    def kind(self, i: int) -> str:
        return _KIND[self.raw['kinds'][i]] if self.raw is not None else self.kinds[i]

    def file(self, i: int) -> str:
        raw = self.raw
        return str(raw['paths'][raw['files'][i]]) if raw is not None else self.files[i]

    def is_current(self, i: int) -> bool:
        return self.raw['current'][i] == '1' if self.raw is not None else self.current[i]

    def commit(self, pos: int) -> str:
        return str(self.raw['commits'][pos * 40:pos * 40 + 40]) if self.raw is not None else self.commits[pos]

    def _unpack(self) -> None:
        """Every column and posting as a list, to grow them."""
        raw, self.raw = self.raw, None
        if raw is not None:
            self.times, self.offsets = list(self.times), list(self.offsets)
            self.first, self.last, self.lengths = list(self.first), list(self.last), list(self.lengths)
            packed = raw['commits']
            self.commits = [packed[n:n + 40] for n in range(0, len(packed), 40)]
            self.kinds = [_KIND[k] for k in raw['kinds']]
            self.files = [raw['paths'][n] for n in raw['files']]
            self.current = [c == '1' for c in raw['current']]
        for w in list(self.packed):
            self.postings[w] = list(self._posting(w))
        self._once = self._recency = None

    def fragment(self, fid: str) -> int | None:
        return self.keys.get(f'fragment\0{fid}') if fid in self.fids else None

    # -- building --------------------------------------------------------------

    def walk(
            self, pr: pygit2.Repository, top: pygit2.Commit, since: str | None,
            bound: Bound | None = None, progress: Progress | None = None,
    ) -> None:
        """Read the commits from top back to `since` (exclusive), oldest
        first; with a bound, stop between two commits when it is reached:
        the index then holds the history up to the last commit read."""
        import time
        progress = progress if progress is not None else Progress()
        reader = _Reader(pr, top)
        walker = pr.walk(top.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        if since is not None:
            walker.hide(pygit2.Oid(hex=since))
        self._unpack()
        if self._positions is None:
            self._positions = {h: n for n, h in enumerate(self.commits)}
        positions = self._positions
        entries: dict[pygit2.Oid, dict[str, pygit2.Oid]] = {}

        def of(c: pygit2.Commit) -> dict[str, pygit2.Oid]:
            hit = entries.get(c.tree_id)
            if hit is None:
                if len(entries) > 256:
                    entries.clear()
                hit = entries[c.tree_id] = store.whole(pr, c.tree, lambda: reader.entries(c.tree))
            return hit

        walked: Iterable[pygit2.Commit] = walker
        if bound is not None:
            # counted first (walking commits is cheap; reading blobs costs)
            listed = list(walker)
            progress.total, walked = len(listed), listed
        done = None
        for c in walked:
            if bound is not None and done is not None and (
                    time.monotonic() >= bound.until or reader.bytes_read >= bound.max_bytes
            ):
                progress.stopped = True
                break
            done = c
            progress.read += 1
            reader.top = c
            pos = len(self.commits)
            hexid = str(c.id)
            positions[hexid] = pos
            self.commits.append(hexid)
            self.times.append(c.commit_time)
            self.offsets.append(c.commit_time_offset)
            parent = c.parents[0] if c.parent_ids else None
            if parent is not None and parent.tree_id == c.tree_id:
                continue
            now = of(c)
            # a root commit, or one whose parent the cache never saw, adds only
            ppos = positions.get(str(parent.id)) if parent is not None else None
            then = of(parent) if parent is not None and ppos is not None else {}
            for path, oid in now.items():
                old = then.get(path)
                if old == oid:
                    continue
                new_items, gone = reader.added(path, old, oid)
                for key, item in new_items.items():
                    self._seen(key, item, path, pos)
                if ppos is not None:
                    for key in gone:
                        self._gone(key, ppos)
            if ppos is not None:
                for path in then.keys() - now.keys():
                    for key in reader.items(path, then[path]):
                        self._gone(key, ppos)
        if progress.stopped and done is not None:
            top = done  # the index as of the last commit read
        reader.top = top
        self._mark_current(reader, of(top), positions[str(top.id)])
        self.tip = str(top.id)

    def _seen(self, key: str, item: Item, path: str, pos: int) -> None:
        i = self.keys.get(key)
        if i is None:
            i = self.keys[key] = len(self.texts)
            kind, fid, text = item
            self.kinds.append(kind)
            self.fids.append(fid or '')
            self.texts.append(text)
            self.files.append(path)
            self.first.append(pos)
            self.last.append(pos)
            self.current.append(False)
            self._index(i, f'{text} {fid}' if fid else text)
        elif pos >= self.last[i]:
            # a fragment edited under its id: its newest text is the one shown
            self.texts[i], self.files[i], self.last[i] = item[2], path, pos

    def _gone(self, key: str, ppos: int) -> None:
        i = self.keys.get(key)
        if i is not None and ppos > self.last[i]:
            self.last[i] = ppos

    def _mark_current(self, reader: _Reader, tip_entries: dict[str, pygit2.Oid], pos: int) -> None:
        """Mark what the tip holds, dated by the tip."""
        self.current = [False] * len(self.texts)
        for path, oid in tip_entries.items():
            for key in reader.items(path, oid):
                i = self.keys.get(key)
                if i is not None:
                    self.files[i], self.last[i], self.current[i] = path, pos, True

    def _index(self, i: int, text: str) -> None:
        words = tokens(text)
        self.lengths.append(len(words))
        counts: dict[str, int] = {}
        for w in words:
            counts[w] = counts.get(w, 0) + 1
        for w, n in counts.items():
            posting = self.postings.setdefault(w, [])
            assert isinstance(posting, list)
            posting.extend((i, n))

    def _posting(self, w: str) -> Sequence[int]:
        j = self.packed.pop(w, None)
        if j is not None:
            got = array.array('I')
            try:
                got.frombytes(self._column[self._starts[j]:self._starts[j + 1]])
            except ValueError:
                raise Damaged(w) from None
            # a cache's posting: pairs of an item and its count (checked
            # here, as a search asks for it: all of them would cost a load
            # as much again)
            if not got or len(got) % 2 or max(got[::2]) >= len(self.texts):
                raise Damaged(w)
            self.postings[w] = got
        return self.postings.get(w, ())

    def once(self) -> Sequence[float]:
        """Each item's BM25 term weight for a word it holds once (most
        words): a search multiplies it by the word's idf."""
        if self._once is None:
            n = len(self.texts)
            avg = (sum(self.lengths) / n) if n else 1.0
            k, kb = _K1 * (1 - _B), _K1 * _B / (avg or 1.0)
            self._once = [(_K1 + 1) / (1 + k + kb * length) for length in self.lengths]
        return self._once

    def recency(self) -> Sequence[int]:
        """Each item's rank by when it was last seen, then first seen
        (larger: newer)."""
        if self._recency is None:
            times, last, first = self.times, self.last, self.first
            order = sorted(range(len(self.texts)), key=lambda i: (times[last[i]], times[first[i]], i))
            ranks = [0] * len(order)
            for rank, i in enumerate(order):
                ranks[i] = rank
            self._recency = ranks
        return self._recency

    # -- the cache ---------------------------------------------------------------

    def dump(self) -> bytes:
        """The cache: a header line (JSON: version, ref, tip, the size of
        each column) and the columns as bytes, none of them anything but
        data: the ids of the commits as one string, kinds and current as
        one character an item, numbers as arrays, strings as one UTF-8
        text and their lengths, each posting as the bytes of an array of
        integers.  (Not marshal: it is not safe on crafted data, and
        .git/agitmem/ is writable by whatever writes the repository.)"""
        self._unpack()
        files = sorted(set(self.files))
        at = {f: n for n, f in enumerate(files)}
        words = list(self.postings)
        postings = [array.array('I', self.postings[w]).tobytes() for w in words]
        columns = {
            'commits': ''.join(self.commits).encode('ascii'),
            'times': _ints(self.times), 'offsets': _ints(self.offsets),
            'kinds': ''.join(k[0] for k in self.kinds).encode('ascii'),
            'current': ''.join('1' if c else '0' for c in self.current).encode('ascii'),
            'fids': _strings(self.fids), 'texts': _strings(self.texts), 'paths': _strings(files),
            'files': _ints([at[f] for f in self.files]),
            'first': _ints(self.first), 'last': _ints(self.last), 'lengths': _ints(self.lengths),
            'once': array.array('d', self.once()).tobytes(), 'recency': _ints(self.recency()),
            'words': _strings(words), 'postings': _ints([len(p) for p in postings]) + b''.join(postings),
        }
        parts = [columns[c] for c in _COLUMNS]
        head = {'version': VERSION, 'ref': self.ref, 'tip': self.tip, 'sizes': [len(p) for p in parts]}
        return b''.join([_MAGIC, json.dumps(head).encode('utf-8', 'surrogatepass'), b'\n', *parts])

    @classmethod
    def load(cls, data: bytes, ref: str) -> Index | None:
        """The index a cache holds; None when it is not one of this
        version for `ref`, or any column is not what `dump` writes (each
        number an index of what it indexes): a crafted one is built again,
        never a search's traceback."""
        try:
            return cls._load(data, ref)
        except (ValueError, TypeError, KeyError, IndexError, OverflowError, RecursionError):
            return None

    @classmethod
    def _load(cls, data: bytes, ref: str) -> Index | None:
        if not data.startswith(_MAGIC):
            return None
        nl = data.index(b'\n', len(_MAGIC))
        head = json.loads(data[len(_MAGIC):nl])
        sizes = head['sizes'] if isinstance(head, dict) else None
        if (
                not isinstance(head, dict) or head.get('version') != VERSION or head.get('ref') != ref
                or not isinstance(head.get('tip'), str) or not _OID.fullmatch(head['tip'])
                or not isinstance(sizes, list)
                or len(sizes) != len(_COLUMNS) or not all(type(n) is int and n >= 0 for n in sizes)
                or sum(sizes) != len(data) - nl - 1
        ):
            return None
        view, pos, col = memoryview(data), nl + 1, {}
        for name, size in zip(_COLUMNS, sizes):
            col[name] = view[pos:pos + size]
            pos += size
        commits = str(col['commits'], 'ascii')
        times, offsets = _unints(col['times']), _unints(col['offsets'])
        ncommits = len(times)
        if len(commits) != 40 * ncommits or len(offsets) != ncommits or not _HEX.fullmatch(commits):
            return None
        kinds, current = str(col['kinds'], 'ascii'), str(col['current'], 'ascii')
        fids, texts, paths = _unstrings(col['fids']), _unstrings(col['texts']), _unstrings(col['paths'])
        files, first, last = _unints(col['files']), _unints(col['first']), _unints(col['last'])
        lengths, recency = _unints(col['lengths']), _unints(col['recency'])
        once = array.array('d')
        once.frombytes(col['once'])
        words = _unstrings(col['words'])
        n = len(texts)
        if (
                any(len(c) != n for c in (kinds, current, fids, files, first, last, lengths, once, recency))
                or not set(kinds) <= _KIND.keys() or not set(current) <= {'0', '1'}
                or n and (
                    min(files) < 0 or max(files) >= len(paths) or min(lengths) < 0
                    or min(min(first), min(last)) < 0 or max(max(first), max(last)) >= ncommits
                    or not all(map(math.isfinite, once))
                )
        ):
            return None
        # each word's posting: where it begins in the column, after the
        # sizes; decoded when a search asks for the word
        sizes = _unints(col['postings'][:8 * len(words)])
        if len(sizes) != len(words) or (sizes and min(sizes) < 0):
            return None
        starts = array.array('q', itertools.accumulate(sizes, initial=8 * len(words)))
        if starts[-1] != len(col['postings']):
            return None
        packed = dict(zip(words, range(len(words))))
        self = cls(ref)
        self.tip = head['tip']
        # numbers as arrays: one copy each, not an object a number
        self.times, self.offsets, self.first, self.last = times, offsets, first, last
        self.fids, self.texts, self.lengths = fids, texts, lengths
        self._once, self._recency, self.packed = once, recency, packed
        self._column, self._starts = col['postings'], starts
        self.raw = {'commits': commits, 'kinds': kinds, 'current': current, 'paths': paths, 'files': files}
        return self

    # -- searching ---------------------------------------------------------------

    def scores(self, words: list[str]) -> dict[int, float]:
        """BM25 of each item holding one of the words.  The word most items
        hold is scored first, in C (map, zip): a common word is in every
        note, and this is the warm search's cost."""
        n = len(self.texts)
        postings = [(p, w) for w in dict.fromkeys(words) if (p := self._posting(w))]
        postings.sort(key=lambda pw: -len(pw[0]))
        once = self.once()
        ret: dict[int, float] = {}
        for posting, _ in postings:
            df = len(posting) // 2
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            items, counts = posting[::2], posting[1::2]
            if not ret and counts.count(1) == df:
                ret = dict(zip(items, map(idf.__mul__, map(once.__getitem__, items))))
                continue
            k, kb = self._norms()
            for i, tf in zip(items, counts):
                if tf == 1:
                    s = idf * once[i]
                else:
                    s = idf * tf * (_K1 + 1) / (tf + k + kb * self.lengths[i])
                ret[i] = ret.get(i, 0.0) + s
        return ret

    def _norms(self) -> tuple[float, float]:
        n = len(self.texts)
        avg = (sum(self.lengths) / n) if n else 1.0
        return _K1 * (1 - _B), _K1 * _B / (avg or 1.0)

    def hit(self, i: int, score: float) -> Hit:
        last = self.last[i]
        return Hit(
            kind=self.kind(i), text=self.texts[i], id=self.fids[i] or None,
            commit=self.commit(last), date=_iso(self.times[last], self.offsets[last]),
            file=self.file(i), ref=self.ref, score=round(score, 4), current=self.is_current(i),
        )

    def when(self, i: int) -> tuple[int, int]:
        """(last seen, first seen), as commit times."""
        return self.times[self.last[i]], self.times[self.first[i]]


_KIND = {k[0]: k for k in KINDS}
# the cache's first bytes, and its columns in the order written
_MAGIC = b'agitmem recall index\n'
_COLUMNS = (
    'commits', 'times', 'offsets', 'kinds', 'current', 'fids', 'texts', 'paths', 'files',
    'first', 'last', 'lengths', 'once', 'recency', 'words', 'postings',
)
_HEX = re.compile('[0-9a-f]*')
_OID = re.compile('[0-9a-f]{40}')


def _ints(values: Sequence[int]) -> bytes:
    return array.array('q', values).tobytes()


def _strings(values: Sequence[str]) -> bytes:
    """Strings as a cache column: how many, then their text, each ended
    by a NUL (split in C: the texts are most of a load); JSON when one
    holds a NUL itself."""
    text = ''.join(f'{v}\0' for v in values)
    if text.count('\0') == len(values):
        return b'z' + _ints([len(values)]) + text.encode('utf-8', 'surrogatepass')
    return b'j' + json.dumps(values).encode()


def _unstrings(data: memoryview) -> list[str]:
    """`_strings`' strings (ValueError when the column is not one)."""
    kind = bytes(data[:1])
    if kind == b'j':
        got = json.loads(bytes(data[1:]))
        if not isinstance(got, list) or not set(map(type, got)) <= {str}:
            raise ValueError('not a column of strings')
        return got
    count, = _unints(data[1:9])
    ret = str(data[9:], 'utf-8', 'surrogatepass').split('\0')
    # (each string ended by a NUL: the last of the split is empty)
    if kind != b'z' or len(ret) != count + 1 or ret.pop():
        raise ValueError('not a column of strings')
    return ret


def _unints(data: bytes | memoryview) -> MutableSequence[int]:
    got = array.array('q')
    got.frombytes(data)
    return got


def _iso(when: int, offset: int) -> str:
    """A commit's date as datetime.isoformat() writes it, without
    importing datetime (a tenth of what a warm search costs)."""
    import time
    sign = '-' if offset < 0 else '+'
    try:
        at = time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(when + offset * 60))
    except (OverflowError, ValueError, OSError):
        # a date no calendar of the C library holds (a crafted commit's)
        return f'@{when}'
    return at + f'{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}'


# bytes of a cached index read: far above the index of any memory's history
CACHE_MAX = 512 << 20


def _cache_path(repo: Repo, ref: str) -> Path:
    # memory refs are shared by every worktree, but refs/worktree/ ones
    where = repo.git_dir if ref.startswith('refs/worktree/') else repo.common_dir
    # (the cache names its ref: two refs sharing a name rebuild, never mix)
    name = str(pygit2.hash(ref.encode('utf-8', 'surrogateescape')))[:16]
    return where / 'agitmem' / 'recall' / f'{name}.index'


def index(
        repo: Repo, pr: pygit2.Repository, ref: str, *, max_new: int | None = None,
        bound: Bound | None = None, progress: Progress | None = None, fresh: bool = False,
) -> Index | None:
    """The index of ref as its tip is now: the cached one, extended by the
    commits since its tip, or built again (`fresh`: the cache not read);
    None when ref has no memory, or when that means reading more than
    max_new commits.  With a bound, the index may stop short of the tip
    (progress says so)."""
    top = store.tip(pr, ref)
    if top is None:
        return None
    path = _cache_path(repo, ref)
    from agitmem import caches
    data = None if fresh else caches.own(path, CACHE_MAX)  # never a FIFO's hang, nor a link
    cached = None if data is None else Index.load(data, ref)
    if cached is not None and cached.tip != str(top.id):
        try:
            cached._unpack()  # (to grow it: every posting read)
        except Damaged:
            cached = None
    if cached is not None and cached.tip == str(top.id):
        return cached
    if cached is not None and cached.tip is not None and _ancestor(pr, cached.tip, top.id):
        idx, since = cached, cached.tip
    else:
        idx, since = Index(ref), None
    # a parent a fetched commit lacks: fetched, or one line saying so
    if max_new is not None and store.whole(pr, top, lambda: _more_than(pr, top, since, max_new)):
        return None
    store.whole(pr, top, lambda: idx.walk(pr, top, since, bound, progress))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        repo_mod.atomic_write(path, idx.dump())
        # the cache an older agitmem kept (marshal's): never read again
        path.with_suffix('.marshal').unlink(missing_ok=True)
    except OSError:
        pass  # a read-only git dir: the search goes on, uncached
    return idx


def _more_than(pr: pygit2.Repository, top: pygit2.Commit, since: str | None, n: int) -> bool:
    """Are there more than n commits from top back to since?  (Walking
    commits is cheap; reading their blobs is what costs.)"""
    walker = pr.walk(top.id, pygit2.enums.SortMode.NONE)
    if since is not None:
        walker.hide(pygit2.Oid(hex=since))
    return any(i >= n for i, _ in enumerate(walker))


def _ancestor(pr: pygit2.Repository, old: str, new: pygit2.Oid) -> bool:
    try:
        return store.contains(pr, new, pygit2.Oid(hex=old))
    except (ValueError, KeyError, pygit2.GitError):
        return False


# -- search ------------------------------------------------------------------------

def memory_refs(pr: pygit2.Repository, first: str) -> list[str]:
    """first, then every other memory ref (heads, remote copies, the
    attic), by name."""
    try:
        found = sorted(n for n in pr.references if n.startswith(repo_mod.MEMORY_ROOT))
    except (pygit2.GitError, UnicodeError):
        found = []
    return [first, *(n for n in found if n != first)]


def fragment_ids(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1) for m in _pattern('fragment_id').finditer(text)))


def _search(
        repo: Repo, ref: str, query: str, *, limit: int, all_branches: bool,
        exclude: Collection[str] = (), min_words: int = 1, max_new: int | None = None,
        bound: Bound | None = None, progress: Progress | None = None,
) -> list[Hit]:
    pr = store.open_repo(repo)
    refs = memory_refs(pr, ref) if all_branches else [ref]
    ids = fragment_ids(query)
    # an id is looked up, not matched word by word (`A` would match any `a`)
    words = tokens(_pattern('fragment_id').sub(' ', query))
    # key -> (which wins when refs share the item, rank, (index, item, score))
    ranked: dict[str, tuple[tuple[bool, int], tuple[float, int, int], tuple[Index, int, float]]] = {}
    for n, r in enumerate(refs):
        idx = index(repo, pr, r, max_new=max_new, bound=bound, progress=progress)
        if idx is None:
            continue
        try:
            found = _matches(idx, words, min_words)
        except Damaged:
            idx = index(repo, pr, r, max_new=max_new, bound=bound, progress=progress, fresh=True)
            if idx is None:
                continue
            found = _matches(idx, words, min_words)
        # a fragment named by id comes first, then the ones it refers to
        for rank, fid in enumerate(_with_refs(idx, ids)):
            i = idx.fragment(fid)
            if i is not None:
                found[i] = 1e6 - rank
        # by score, then recency: sorted in C (a common word matches every
        # note); only the best are made hits
        items = list(found)
        rows = sorted(zip(found.values(), map(idx.recency().__getitem__, items), items), reverse=True)
        taken = 0
        for score, _, i in rows:
            if taken == limit:
                break
            if idx.texts[i] in exclude or (idx.fids[i] and idx.fids[i] in exclude):
                continue
            taken += 1
            when, since = idx.when(i)
            # the same item on several refs: this branch's, else the newest
            wins = (n == 0, when)
            key = idx.key(i)
            if key not in ranked or wins > ranked[key][0]:
                ranked[key] = (wins, (score, when, since), (idx, i, score))
    best = sorted(ranked.values(), key=lambda x: x[1], reverse=True)[:limit]
    return [idx.hit(i, score) for _, _, (idx, i, score) in best]


def _matches(idx: Index, words: list[str], min_words: int) -> dict[int, float]:
    if min_words <= 1:
        return idx.scores(words)
    scores: dict[int, float] = {}
    hits: dict[int, int] = {}
    for w in dict.fromkeys(words):
        for i, s in idx.scores([w]).items():
            scores[i] = scores.get(i, 0.0) + s
            hits[i] = hits.get(i, 0) + 1
    return {i: s for i, s in scores.items() if hits[i] >= min_words}


def _with_refs(idx: Index, ids: Iterable[str]) -> list[str]:
    """The ids asked for, then each one's refs (one level), once each."""
    ret: dict[str, None] = {}
    asked = list(ids)
    ret.update(dict.fromkeys(asked))
    for fid in asked:
        i = idx.fragment(fid)
        if i is None:
            continue
        m = re.search(r'(?:^|; )refs: (.*)$', idx.texts[i])
        if m:
            ret.update(dict.fromkeys(r.strip() for r in m[1].split(',') if r.strip()))
    return list(ret)


def search(ctx: Context, query: str, *, limit: int = 10, all_branches: bool = False) -> list[Hit]:
    """The items of memory history that best match query, best first."""
    return _search(ctx.repo, ctx.ref, query, limit=limit, all_branches=all_branches)


def related(ctx: Context, text: str, *, exclude: Collection[str], limit: int = 3) -> list[Hit]:
    """Older items that match text (the state's goal and next intent),
    none of those in exclude (ids or texts already shown): what the
    injection lists as RELATED after a compaction."""
    return related_in(ctx.repo, ctx.ref, text, exclude=exclude, limit=limit)


def related_in(
        repo: Repo, ref: str, text: str, *, exclude: Collection[str], limit: int = 3,
        bound: Bound | None = None, progress: Progress | None = None,
) -> list[Hit]:
    words = tokens(text)
    if not words:
        return []
    # two words in common at least: one shared word is noise
    # a long history never read yet is not read in a hook: the agent
    # would wait for it (`agitmem recall` builds the cache once)
    return _search(
        repo, ref, text, limit=limit, all_branches=False, exclude=exclude,
        min_words=min(2, len(set(words))), max_new=RELATED_MAX_NEW,
        bound=bound, progress=progress,
    )
