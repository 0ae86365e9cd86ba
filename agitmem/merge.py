"""Memory-aware 3-way merge (DESIGN.md section 8).

Pure: three file maps in (base, ours, theirs: path inside a memory commit ->
content), the merged map and its conflicts out.  A file only one side
changed is taken from that side.  Where both changed:

- fragments.jsonl: union on `id`, in time order (`at`), no duplicates;
- notes.md: union of the "- " notes, in time order (their `YYYY-MM-DD HH:MM`
  stamps), no duplicates; the header lines above the first note are kept;
- archive/**: union (an archived snapshot is never lost to a delete);
- state.json: key by key; the bookkeeping keys take the newer value, and
  a key changed differently on both sides keeps ours and is recorded under
  "merge_conflicts" in the file itself, so it stays valid JSON;
- everything else (tattoo.md, snapshot.md, ...): line by line with git's own
  3-way merge (`git merge-file --diff3`), conflict markers written into the
  file.  In tattoo.md, rules both sides added at the same place are both
  kept (rules are a list, not a sentence).

Deletions count: a note or fragment one side removed (and the other left
alone) stays removed."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from typing import NamedTuple

from agitmem import memory
from agitmem import repo as repo_mod
from agitmem.errors import AgitmemError
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import state as state_mod

Files = dict[str, bytes]

# the key state.json records its unresolved keys under
STATE_CONFLICTS = 'merge_conflicts'
MARKER_SIZE = 7
# patterns, compiled (and cached by re) when first used
_OPEN = r'(?m)^<{7}(?: |$)'
_CLOSE = r'(?m)^>{7}(?: |$)'
_STAMP = r'^- (\d{4}-\d\d-\d\d[ T]\d\d:\d\d)'
_ID = r'^(.*)-(\d+)$'
_MISSING: Any = object()


class Conflict(NamedTuple):
    path: str  # inside .agent/memory, e.g. tattoo.md
    detail: str  # what is unresolved, e.g. 'conflict markers'

    def __str__(self) -> str:
        return f'{self.path}: {self.detail}'


class Result(NamedTuple):
    files: Files
    conflicts: tuple[Conflict, ...]
    notices: tuple[str, ...]  # resolved on our own, but worth saying


class Labels(NamedTuple):
    ours: str = 'ours'
    base: str = 'base'
    theirs: str = 'theirs'


def merge(base: Files, ours: Files, theirs: Files, labels: Labels = Labels()) -> Result:
    files: Files = {}
    conflicts: list[Conflict] = []
    notices: list[str] = []
    for path in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(path), ours.get(path), theirs.get(path)
        if path.startswith(f'{memory.ARCHIVE}/') and (o is None or t is None):
            value = o if o is not None else t
        elif o == t or t == b:
            value = o
        elif o == b:
            value = t
        elif o is None or t is None:
            value = o if o is not None else t
            side = labels.theirs if o is None else labels.ours
            notices.append(
                f'{path}: deleted on one side, changed on {side}: kept the '
                f'changed file',
            )
        else:
            value, c, n = merge_file(path, b or b'', o, t, labels)
            conflicts.extend(c)
            notices.extend(n)
        if value is not None:
            files[path] = value
    return Result(files, tuple(conflicts), tuple(notices))


def merge_file(
        path: str, base: bytes, ours: bytes, theirs: bytes, labels: Labels,
) -> tuple[bytes, list[Conflict], list[str]]:
    """One file both sides changed: (merged, conflicts, notices)."""
    if path == memory.FRAGMENTS:
        merged = merge_fragments(base, ours, theirs)
        if merged is not None:
            return merged[0], [], merged[1]
    elif path == memory.NOTES:
        return merge_notes(base, ours, theirs, labels)
    elif path == memory.STATE:
        state = merge_state(base, ours, theirs)
        if state is not None:
            data, keys = state
            return data, [Conflict(path, f'key "{k}"') for k in keys], []
    text, n = merge_text(base, ours, theirs, labels, union_adds=path == memory.TATTOO)
    conflicts = [Conflict(path, f'{n} conflict(s) marked in the file')] if n else []
    return text, conflicts, []


# -- line-based 3-way (git merge-file) --------------------------------------

def merge_text(
        base: bytes, ours: bytes, theirs: bytes, labels: Labels,
        *, union_adds: bool = False,
) -> tuple[bytes, int]:
    """git's 3-way merge of three texts: (result, number of conflicts);
    conflicts are left in the text with diff3 markers.  union_adds: a
    conflict where both sides only added lines keeps both additions."""
    import tempfile  # a merge of text only: its import is a noticeable cost
    with tempfile.TemporaryDirectory(prefix='agitmem-merge-') as tmp:
        names = []
        for name, data in (('ours', ours), ('base', base), ('theirs', theirs)):
            Path(tmp, name).write_bytes(data)
            names.append(name)
        proc = repo_mod.git(
            'merge-file', '-p', '--diff3', f'--marker-size={MARKER_SIZE}',
            '-L', labels.ours, '-L', labels.base, '-L', labels.theirs,
            *names, cwd=tmp, check=False,
        )
    if not 0 <= proc.returncode < 128:
        detail = proc.stderr.strip() or f'exit {proc.returncode}'
        raise AgitmemError(f'git merge-file failed: {detail}')
    text = proc.stdout
    if proc.returncode and union_adds:
        text = keep_both_additions(text, labels)
    return text.encode('utf-8', 'surrogateescape'), count_markers(text)


def keep_both_additions(text: str, labels: Labels) -> str:
    """Resolve the diff3 conflicts whose base part is empty (both sides
    inserted lines at the same place): ours, then theirs' new lines."""
    m = '<' * MARKER_SIZE, '|' * MARKER_SIZE, '=' * MARKER_SIZE, '>' * MARKER_SIZE
    start = f'{m[0]} {labels.ours}'
    mid_base = f'{m[1]} {labels.base}'
    end = f'{m[3]} {labels.theirs}'
    out: list[str] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        if lines[i].rstrip('\n') != start:
            out.append(lines[i])
            i += 1
            continue
        parts: list[list[str]] = [[], [], []]
        j, part = i + 1, 0
        while j < len(lines):
            line = lines[j].rstrip('\n')
            if part == 0 and line == mid_base:
                part = 1
            elif part == 1 and line == m[2]:
                part = 2
            elif part == 2 and line == end:
                break
            else:
                parts[part].append(lines[j])
            j += 1
        if j == len(lines) or parts[1]:  # unterminated, or a real conflict
            out.append(lines[i])
            i += 1
            continue
        ours_part, _, theirs_part = parts
        out.extend(_ended(ours_part))
        out.extend(_ended([x for x in theirs_part if x.rstrip('\n') not in
                           {y.rstrip('\n') for y in ours_part}]))
        i = j + 1
    return ''.join(out)


def _ended(lines: list[str]) -> list[str]:
    return [x if x.endswith('\n') else f'{x}\n' for x in lines]


def count_markers(text: str) -> int:
    return len(re.findall(_OPEN, text))


# -- fragments.jsonl ----------------------------------------------------------

class _Frag(NamedTuple):
    id: str
    obj: dict[str, Any]
    line: str

    def body(self) -> dict[str, Any]:
        return {k: v for k, v in self.obj.items() if k != 'id'}

    def key(self) -> tuple[str, str, int, str]:
        m = re.match(_ID, self.id)
        # (a number too long to count by: after every count, as the id sorts)
        seq = fragments_mod.seq_of(m[2]) if m else 0
        agent = m[1] if m else self.id
        return str(self.obj.get('at') or ''), agent, 10 ** fragments_mod.SEQ_DIGITS if seq is None else seq, self.line


def _fragments(data: bytes) -> dict[str, _Frag] | None:
    ret: dict[str, _Frag] = {}
    for line in data.decode('utf-8', 'surrogateescape').splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict) or not isinstance(obj.get('id'), str):
            return None
        if obj['id'] in ret:
            return None
        ret[obj['id']] = _Frag(obj['id'], obj, line)
    return ret


def merge_fragments(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, list[str]] | None:
    """Union on id in time order; None when a side is not valid JSONL (the
    caller falls back to a line merge).  Two different fragments under one
    id (two agents with the same $AGITMEM_AGENT) are both kept: the later
    one gets the next free id."""
    b, o, t = _fragments(base), _fragments(ours), _fragments(theirs)
    if b is None or o is None or t is None:
        return None
    kept: dict[str, _Frag] = {}
    extra: list[_Frag] = []
    for fid in sorted(set(o) | set(t)):
        of, tf, bf = o.get(fid), t.get(fid), b.get(fid)
        if of is None or tf is None:
            one = of or tf
            assert one is not None
            if bf is not None and one.obj == bf.obj:
                continue  # deleted on the other side, untouched here
            kept[fid] = one
        elif of.obj == tf.obj:
            kept[fid] = min(of, tf, key=lambda f: f.line)
        elif bf is not None and of.obj == bf.obj:
            kept[fid] = tf
        elif bf is not None and tf.obj == bf.obj:
            kept[fid] = of
        else:
            first, second = sorted((of, tf), key=_Frag.key)
            kept[fid] = first
            extra.append(second)
    notices = []
    bodies = [f.body() for f in kept.values()]
    for f in sorted(extra, key=_Frag.key):
        if f.body() in bodies:
            continue
        new_id = _next_id(set(kept) | set(b) | set(o) | set(t), f.id)
        obj = {**f.obj, 'id': new_id}
        kept[new_id] = _Frag(new_id, obj, json.dumps(
            obj, ensure_ascii=False, separators=(', ', ': '),
        ))
        bodies.append(f.body())
        notices.append(
            f'{memory.FRAGMENTS}: two different fragments were both {f.id}; '
            f'the later one is now {new_id}',
        )
    lines = [f.line for f in sorted(kept.values(), key=_Frag.key)]
    return ''.join(f'{x}\n' for x in lines).encode('utf-8', 'surrogateescape'), notices


def _next_id(taken: set[str], fid: str) -> str:
    m = re.match(_ID, fid)
    agent = m[1] if m else fid
    width = len(m[2]) if m else 3
    seqs = [
        fragments_mod.seq_of(x[2]) or 0 for x in (re.match(_ID, t) for t in taken) if x and x[1] == agent
    ]
    return f'{agent}-{max(seqs, default=0) + 1:0{width}d}'


# -- notes.md -----------------------------------------------------------------

def _notes(text: str) -> tuple[str, list[str]]:
    """(header: every line before the first note, notes); a note is its
    "- " line and any lines under it that are not notes themselves."""
    header: list[str] = []
    items: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith('- '):
            items.append([line])
        elif items:
            items[-1].append(line)
        else:
            header.append(line)
    notes = []
    for item in items:
        while len(item) > 1 and not item[-1].strip():
            item.pop()
        notes.append('\n'.join(item))
    return ''.join(f'{x}\n' for x in header), notes


def _stamps(notes: list[str]) -> dict[str, str]:
    """Each note's time: its stamp, or the stamp of the note above it."""
    ret: dict[str, str] = {}
    last = ''
    for n in notes:
        m = re.match(_STAMP, n)
        if m:
            last = m[1].replace('T', ' ')
        ret.setdefault(n, last)
    return ret


def merge_notes(
        base: bytes, ours: bytes, theirs: bytes, labels: Labels,
) -> tuple[bytes, list[Conflict], list[str]]:
    texts = [x.decode('utf-8', 'surrogateescape') for x in (base, ours, theirs)]
    (bh, bn), (oh, on), (th, tn) = map(_notes, texts)
    conflicts = []
    if oh == th or th == bh:
        header = oh
    elif oh == bh:
        header = th
    else:
        merged, count = merge_text(
            bh.encode(), oh.encode(), th.encode(), labels, union_adds=True,
        )
        header = merged.decode('utf-8', 'surrogateescape')
        if count:
            conflicts.append(
                Conflict(memory.NOTES, f'{count} conflict(s) marked in the file'),
            )
    base_set, ours_set, theirs_set = set(bn), set(on), set(tn)
    kept = {
        n for n in ours_set | theirs_set
        if n not in base_set or (n in ours_set and n in theirs_set)
    }
    times: dict[str, str] = {}
    for side in (bn, on, tn):
        for n, stamp in _stamps(side).items():
            times[n] = min(times.get(n, stamp), stamp)
    # same minute: the older notes (in base) first, in their order
    where = {n: i for i, n in enumerate(bn)}
    notes = sorted(kept, key=lambda n: (times[n], where.get(n, len(bn)), n))
    text = header + ''.join(f'{n}\n' for n in notes)
    return text.encode('utf-8', 'surrogateescape'), conflicts, []


# -- state.json -----------------------------------------------------------------

def _state(data: bytes) -> dict[str, Any] | None:
    if not data.strip():
        return {}
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _newer(a: Any, b: Any, field: str) -> bool:
    """Is a newer than b by its `field` timestamp (ISO strings)?"""
    ta = a.get(field) if isinstance(a, dict) else None
    tb = b.get(field) if isinstance(b, dict) else None
    return str(ta or '') > str(tb or '')


def merge_state(base: bytes, ours: bytes, theirs: bytes) -> tuple[bytes, list[str]] | None:
    """Key-wise 3-way; (merged file, conflicting keys), or None when a side
    is not a JSON object (the caller falls back to a line merge)."""
    b, o, t = _state(base), _state(ours), _state(theirs)
    if b is None or o is None or t is None:
        return None
    theirs_newer = _newer(t, o, 'updated_at')
    merged: dict[str, Any] = {}
    recorded: dict[str, Any] = {}
    for key in [*o, *(k for k in t if k not in o)]:
        bv, ov, tv = b.get(key, _MISSING), o.get(key, _MISSING), t.get(key, _MISSING)
        if ov == tv or tv == bv:
            value = ov
        elif ov == bv:
            value = tv
        elif ov is _MISSING or tv is _MISSING:
            value = tv if ov is _MISSING else ov  # a change beats a delete
        elif key == STATE_CONFLICTS and isinstance(ov, dict) and isinstance(tv, dict):
            value = {**tv, **ov}
        elif key == 'step' and isinstance(ov, int) and isinstance(tv, int):
            value = max(ov, tv)
        elif key == 'updated_at':
            value = max(str(ov or ''), str(tv or '')) or None
        elif key == 'tree':
            value = tv if theirs_newer else ov
        elif key == 'last_verification' and (
                isinstance(ov, dict) or isinstance(tv, dict)
        ):
            value = tv if _newer(tv, ov, 'at') else ov
        else:
            value = ov
            recorded[key] = {'ours': ov, 'theirs': tv}
        if value is not _MISSING:
            merged[key] = value
    if recorded:
        prior = merged.get(STATE_CONFLICTS)
        merged[STATE_CONFLICTS] = {
            **(prior if isinstance(prior, dict) else {}), **recorded,
        }
    return state_mod.render(merged).encode(), sorted(recorded)


# -- what is still unresolved ---------------------------------------------------

def unresolved(files: Files) -> list[Conflict]:
    """Conflicts a merge left that nobody resolved yet: marker lines in any
    memory file, and keys recorded under "merge_conflicts" in state.json."""
    ret = []
    for path, data in sorted(files.items()):
        text = data.decode('utf-8', 'surrogateescape')
        n = len(re.findall(_OPEN, text)) or len(re.findall(_CLOSE, text))
        if n:
            ret.append(Conflict(path, f'{n} conflict(s) marked in the file'))
    state = _state(files.get(memory.STATE, b''))
    if state is not None and isinstance(state.get(STATE_CONFLICTS), dict):
        for key in state[STATE_CONFLICTS]:
            ret.append(Conflict(memory.STATE, f'key "{key}"'))
    return ret
