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

import hashlib
import heapq
import json
import marshal
import math
import re
from collections.abc import Collection
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from agitmem import memory
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import snapshot as snapshot_mod
from agitmem.porcelain.context import Context
from agitmem.repo import Repo

# bump when what the cache holds changes: an old cache is built again
VERSION = 1
KINDS = ('note', 'fragment', 'decision', 'snapshot', 'tattoo')
_K1, _B = 1.2, 0.75  # BM25's usual constants
_FRAGMENT_ID = re.compile(r'(?<![\w.-])([A-Za-z0-9_.]+-\d+)(?![\w-])')
_WORD = re.compile(r'[^\W_]+(?:_[^\W_]+)*')
_CJK = re.compile(r'[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+')
_CAMEL = re.compile(r'[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+')
# the fields of a fragment that are its text, in the order they read
_FRAGMENT_TEXT = ('goal', 'basis', 'action', 'result', 'next')


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
    for m in _WORD.finditer(text):
        word = m.group()
        pos = 0
        for c in _CJK.finditer(word):
            ret.extend(_latin(word[pos:c.start()]))
            run = c.group()
            ret.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
            pos = c.end()
        ret.extend(_latin(word[pos:]))
    return ret


def _latin(word: str) -> list[str]:
    if not word:
        return []
    parts = [p.lower() for chunk in word.split('_') for p in (_CAMEL.findall(chunk) or [chunk])]
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
    ret: Items = {}
    for line in text.split('\n'):
        if not line.strip():
            continue
        try:
            f = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(f, dict) and isinstance(f.get('id'), str) and fragments_mod._ID.match(f['id']):
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


def _archived(path: str, text: str) -> Items:
    """An archived snapshot: the file as one item, and its Decisions."""
    return {f'snapshot\0{path}': ('snapshot', None, text.strip()), **_decisions(text)}


def _decode(data: bytes) -> str:
    return data.decode('utf-8', 'replace')


# the memory files recall reads, by name at the tree's root
_FLAT = {
    memory.NOTES: lambda t: _bullets('note', t),
    memory.TATTOO: lambda t: _bullets('tattoo', t),
    memory.FRAGMENTS: _fragments,
    memory.SNAPSHOT: _decisions,
}


class _Reader:
    """The items of a memory commit, file by file, each blob parsed once
    (the parent's, which the next commit compares with, stays at hand)."""

    def __init__(self, pr: pygit2.Repository) -> None:
        self.pr = pr
        self.blobs: dict[pygit2.Oid, Items] = {}
        self.archives: dict[pygit2.Oid, dict[str, pygit2.Oid]] = {}

    def entries(self, tree: pygit2.Tree) -> dict[str, pygit2.Oid]:
        """What recall reads of a memory tree: the flat files, and each
        archived snapshot as archive/<path>."""
        ret = {}
        for e in tree:
            if e.name in _FLAT and e.type_str == 'blob':
                ret[e.name] = e.id
            elif e.name == memory.ARCHIVE and e.type_str == 'tree':
                ret.update(self._archive(e.id))
        return ret

    def _archive(self, oid: pygit2.Oid) -> dict[str, pygit2.Oid]:
        hit = self.archives.get(oid)
        if hit is None:
            hit = {}
            tree = self.pr[oid]
            assert isinstance(tree, pygit2.Tree)
            stack: list[tuple[str, pygit2.Tree]] = [(f'{memory.ARCHIVE}/', tree)]
            while stack:
                prefix, t = stack.pop()
                for e in t:
                    if e.type_str == 'tree':
                        sub = self.pr[e.id]
                        assert isinstance(sub, pygit2.Tree)
                        stack.append((f'{prefix}{e.name}/', sub))
                    elif e.type_str == 'blob' and (e.name or '').endswith('.md'):
                        hit[f'{prefix}{e.name}'] = e.id
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
        blob = self.pr[oid]
        assert isinstance(blob, pygit2.Blob)
        return blob.data

    def added(self, path: str, old: pygit2.Oid | None, new: pygit2.Oid) -> tuple[Items, Items]:
        """(items in new, items gone since old) for one file.  A file that
        only grew (notes and fragments are appended to) is parsed in its
        new lines only."""
        if old is not None and path in (memory.NOTES, memory.FRAGMENTS) and new not in self.blobs:
            before, after = self.data(old), self.data(new)
            if after.startswith(before) and before.endswith(b'\n'):
                return _FLAT[path](_decode(after[len(before):])), {}
        now = self.items(path, new)
        if old is None:
            return now, {}
        then = self.items(path, old)
        return now, {k: v for k, v in then.items() if k not in now}


# -- the index of one memory ref -------------------------------------------------

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
        self.times: list[int] = []
        self.offsets: list[int] = []
        # per item
        self.kinds: list[str] = []
        self.fids: list[str] = []  # '' for all but fragments
        self.texts: list[str] = []
        self.files: list[str] = []
        self.first: list[int] = []
        self.last: list[int] = []
        self.current: list[bool] = []
        self.lengths: list[int] = []  # words
        # word -> [item, count, item, count...]; a cached one is decoded
        # when a search asks for it
        self.postings: dict[str, list[int]] = {}
        self.packed: dict[str, str] = {}
        self._keys: dict[str, int] | None = None
        self._positions: dict[str, int] | None = None

    @property
    def keys(self) -> dict[str, int]:
        if self._keys is None:
            self._keys = {self.key(i): i for i in range(len(self.texts))}
        return self._keys

    def key(self, i: int) -> str:
        kind = self.kinds[i]
        if kind == 'fragment':
            return f'fragment\0{self.fids[i]}'
        if kind == 'snapshot':
            return f'snapshot\0{self.files[i]}'
        return f'{kind}\0{self.texts[i]}'

    def fragment(self, fid: str) -> int | None:
        return self.keys.get(f'fragment\0{fid}') if fid in self.fids else None

    # -- building --------------------------------------------------------------

    def walk(self, pr: pygit2.Repository, top: pygit2.Commit, since: str | None) -> None:
        """Read the commits from top back to `since` (exclusive), oldest first."""
        reader = _Reader(pr)
        walker = pr.walk(top.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        if since is not None:
            walker.hide(pygit2.Oid(hex=since))
        if self._positions is None:
            self._positions = {h: n for n, h in enumerate(self.commits)}
        positions = self._positions
        for w in list(self.packed):
            self._posting(w)
        entries: dict[pygit2.Oid, dict[str, pygit2.Oid]] = {}

        def of(c: pygit2.Commit) -> dict[str, pygit2.Oid]:
            hit = entries.get(c.tree_id)
            if hit is None:
                if len(entries) > 256:
                    entries.clear()
                hit = entries[c.tree_id] = store.whole(pr, c.tree, lambda: reader.entries(c.tree))
            return hit

        for c in walker:
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
            self.postings.setdefault(w, []).extend((i, n))

    def _posting(self, w: str) -> list[int]:
        packed = self.packed.pop(w, None)
        if packed is not None:
            self.postings[w] = [int(x) for x in packed.split()]
        return self.postings.get(w, [])

    # -- the cache ---------------------------------------------------------------

    def dump(self) -> bytes:
        """Columns of plain values in marshal's format (it loads five times
        faster than JSON, and holds only data: nothing in it runs): the ids
        of the commits as one string, the postings as one string a word."""
        for w in list(self.packed):
            self._posting(w)
        files = sorted(set(self.files))
        at = {f: n for n, f in enumerate(files)}
        return marshal.dumps({
            'version': VERSION, 'ref': self.ref, 'tip': self.tip,
            'commits': ''.join(self.commits), 'times': self.times, 'offsets': self.offsets,
            'kinds': ''.join(k[0] for k in self.kinds), 'fids': self.fids, 'texts': self.texts,
            'paths': files, 'files': [at[f] for f in self.files],
            'first': self.first, 'last': self.last,
            'current': ''.join('1' if c else '0' for c in self.current),
            'lengths': self.lengths,
            'postings': {w: ' '.join(map(str, p)) for w, p in self.postings.items()},
        })

    @classmethod
    def load(cls, data: bytes, ref: str) -> Index | None:
        try:
            raw = marshal.loads(data)
            if not isinstance(raw, dict) or raw.get('version') != VERSION or raw.get('ref') != ref:
                return None
            self = cls(ref)
            self.tip = str(raw['tip'])
            packed = raw['commits']
            self.commits = [packed[n:n + 40] for n in range(0, len(packed), 40)]
            self.times, self.offsets = raw['times'], raw['offsets']
            self.kinds = [_KIND[k] for k in raw['kinds']]
            self.fids, self.texts = raw['fids'], raw['texts']
            paths = raw['paths']
            self.files = [paths[n] for n in raw['files']]
            self.first, self.last = raw['first'], raw['last']
            self.current = [c == '1' for c in raw['current']]
            self.lengths, self.packed = raw['lengths'], raw['postings']
            columns = (self.kinds, self.fids, self.files, self.first, self.last, self.current, self.lengths)
            if any(len(c) != len(self.texts) for c in columns) or len(self.times) != len(self.commits):
                return None
        except (ValueError, TypeError, KeyError, AttributeError, IndexError, EOFError):
            return None  # an unreadable cache is built again
        return self

    # -- searching ---------------------------------------------------------------

    def scores(self, words: list[str]) -> dict[int, float]:
        """BM25 of each item holding one of the words."""
        n = len(self.texts)
        if not n:
            return {}
        avg = (sum(self.lengths) / n) or 1.0
        ret: dict[int, float] = {}
        for w in dict.fromkeys(words):
            posting = self._posting(w)
            df = len(posting) // 2
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for j in range(0, len(posting), 2):
                i, tf = posting[j], posting[j + 1]
                norm = tf + _K1 * (1 - _B + _B * self.lengths[i] / avg)
                ret[i] = ret.get(i, 0.0) + idf * tf * (_K1 + 1) / norm
        return ret

    def hit(self, i: int, score: float) -> Hit:
        last = self.last[i]
        return Hit(
            kind=self.kinds[i], text=self.texts[i], id=self.fids[i] or None,
            commit=self.commits[last], date=_iso(self.times[last], self.offsets[last]),
            file=self.files[i], ref=self.ref, score=round(score, 4), current=self.current[i],
        )

    def recency(self, i: int) -> tuple[int, int]:
        return self.last[i], self.first[i]


_KIND = {k[0]: k for k in KINDS}


def _iso(when: int, offset: int) -> str:
    import datetime
    tz = datetime.timezone(datetime.timedelta(minutes=offset))
    return datetime.datetime.fromtimestamp(when, tz).isoformat()


def _cache_path(repo: Repo, ref: str) -> Path:
    # memory refs are shared by every worktree, but refs/worktree/ ones
    where = repo.git_dir if ref.startswith('refs/worktree/') else repo.common_dir
    name = hashlib.sha1(ref.encode('utf-8', 'surrogateescape')).hexdigest()[:16]
    return where / 'agitmem' / 'recall' / f'{name}.marshal'


def index(repo: Repo, pr: pygit2.Repository, ref: str) -> Index | None:
    """The index of ref as its tip is now: the cached one, extended by the
    commits since its tip, or built again; None when ref has no memory."""
    top = store.tip(pr, ref)
    if top is None:
        return None
    path = _cache_path(repo, ref)
    try:
        cached = Index.load(path.read_bytes(), ref)
    except OSError:
        cached = None
    if cached is not None and cached.tip == str(top.id):
        return cached
    if cached is not None and cached.tip is not None and _ancestor(pr, cached.tip, top.id):
        idx, since = cached, cached.tip
    else:
        idx, since = Index(ref), None
    idx.walk(pr, top, since)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        repo_mod.atomic_write(path, idx.dump())
    except OSError:
        pass  # a read-only git dir: the search goes on, uncached
    return idx


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
    return list(dict.fromkeys(m.group(1) for m in _FRAGMENT_ID.finditer(text)))


def _search(
        repo: Repo, ref: str, query: str, *, limit: int, all_branches: bool,
        exclude: Collection[str] = (), min_words: int = 1,
) -> list[Hit]:
    pr = store.open_repo(repo)
    refs = memory_refs(pr, ref) if all_branches else [ref]
    ids = fragment_ids(query)
    # an id is looked up, not matched word by word (`A` would match any `a`)
    words = tokens(_FRAGMENT_ID.sub(' ', query))
    # key -> (which wins when refs share the item, rank, (index, item, score))
    ranked: dict[str, tuple[tuple[bool, int], tuple[float, int, int], tuple[Index, int, float]]] = {}
    for n, r in enumerate(refs):
        idx = index(repo, pr, r)
        if idx is None:
            continue
        found = _matches(idx, words, min_words)
        # a fragment named by id comes first, then the ones it refers to
        for rank, fid in enumerate(_with_refs(idx, ids)):
            i = idx.fragment(fid)
            if i is not None:
                found[i] = 1e6 - rank
        times, last, first, texts, fids = idx.times, idx.last, idx.first, idx.texts, idx.fids
        # recency breaks ties: where it was last seen, then first seen; only
        # the best are made hits (a common word matches every note)
        top = heapq.nlargest(limit, (
            (score, times[last[i]], times[first[i]], i) for i, score in found.items()
            if not (texts[i] in exclude or (fids[i] and fids[i] in exclude))
        ))
        for score, when, since, i in top:
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
) -> list[Hit]:
    words = tokens(text)
    if not words:
        return []
    # two words in common at least: one shared word is noise
    return _search(
        repo, ref, text, limit=limit, all_branches=False, exclude=exclude,
        min_words=min(2, len(set(words))),
    )
