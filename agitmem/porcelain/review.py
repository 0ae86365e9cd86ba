"""The memory review (DESIGN.md section 8): what changed in the agent's
memory over a code range, for a pull request.

The memory commits (on any memory ref, local or fetched) whose `Code-Head`
is a code commit in the range (or was, before an amend or a rebase that a
post-rewrite record maps to one in it) are the branch's memory work; so are the
branch's own memory commits made at the fork point, before its first code
commit (same `Code-Branch`, `Code-Head` the merge base).  The summary is
the change from the memory before the oldest of them to the newest: tattoo
rules added and removed first (they change what the agent does), then
decisions, progress, new fragments, archived snapshots, the commits and
the unified diff.  Needs no .agent/: it runs in CI on the fetched refs."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pygit2

from agitmem import audit
from agitmem import memory
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.diffs import unified
from agitmem.errors import AgitmemError
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import snapshot as snapshot_mod
from agitmem.memory import tattoo as tattoo_mod
from agitmem.porcelain import rewrites
from agitmem.repo import Repo

_BULLET = re.compile(r'^(?:[-*+]|\d+[.)])\s+')


def _git_out(repo: Repo, *args: str) -> str | None:
    proc = repo_mod.git(*args, cwd=repo.top, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def _commit(repo: Repo, rev: str) -> str:
    sha = _git_out(repo, 'rev-parse', '-q', '--verify', f'{rev}^{{commit}}')
    if not sha or rev.startswith('-'):
        raise AgitmemError(
            f'unknown revision "{rev}" (review takes BASE..HEAD, e.g. '
            f'main..HEAD or origin/main..feature)',
        )
    return sha


def code_range(repo: Repo, range_: str | None) -> tuple[str, str]:
    """(base, head) revisions as written: BASE..HEAD, BASE (..HEAD), or by
    default the upstream (else main, else master) ..HEAD."""
    if range_ is None:
        upstream = _git_out(
            repo, 'rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{upstream}',
        )
        for base in (upstream, 'main', 'master'):
            if base and _git_out(repo, 'rev-parse', '-q', '--verify', f'{base}^{{commit}}'):
                return base, 'HEAD'
        raise AgitmemError(
            'no upstream, main or master to review against: give a range, '
            'e.g. agitmem review origin/main..HEAD',
        )
    if '...' in range_:
        raise AgitmemError(
            f'"{range_}": use BASE..HEAD (two dots); review compares the '
            f'branch with where it forked',
        )
    base, sep, head = range_.partition('..')
    if not base.strip():
        raise AgitmemError(f'"{range_}": BASE is missing (e.g. main..HEAD)')
    return base.strip(), (head.strip() or 'HEAD') if sep else 'HEAD'


# -- which memory commits ---------------------------------------------------------

def _branch_name(full: str) -> str:
    """refs/heads/X or refs/remotes/R/X -> X (what Code-Branch records)."""
    if full.startswith('refs/heads/'):
        return full.removeprefix('refs/heads/')
    if full.startswith('refs/remotes/'):
        return full.removeprefix('refs/remotes/').partition('/')[2]
    return ''


def _memory_tips(repo: Repo) -> list[str]:
    out = _git_out(repo, 'for-each-ref', '--format=%(objectname)', 'refs/agitmem/') or ''
    return sorted(set(out.split()))


def select(
        repo: Repo,
        pr: pygit2.Repository,
        base: str,
        head: str,
        head_name: str,
) -> tuple[list[pygit2.Commit], int]:
    """(memory commits for the range, newest first; code commits in it)."""
    in_range = set((_git_out(repo, 'rev-list', f'{base}..{head}') or '').split())
    fork = _git_out(repo, 'merge-base', base, head)
    tips = _memory_tips(repo)
    if not tips or not in_range:
        return [], len(in_range)

    def walk() -> list[tuple[pygit2.Commit, dict[str, str]]]:
        walker = pr.walk(
            tips[0], pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME,
        )
        for sha in tips[1:]:
            walker.push(sha)
        return [(c, store.trailers(c)) for c in walker]
    rows = []
    messages = []
    # a parent a fetch never brought: fetched (a partial clone), or one line
    for c, tr in store.whole(pr, pr[tips[0]], walk):
        if 'Agitmem-Event' in tr:
            rows.append((c, tr.get('Code-Head'), tr.get('Code-Branch')))
            messages.append(c.message)
    # memory saved at a commit since amended or rebased: its new id counts
    mapped = rewrites.mappings(messages)
    if mapped:
        rows = [
            (c, next((x for x in rewrites.followed(h, mapped) if x in in_range), h) if h else h, b)
            for c, h, b in rows
        ]
    branches = {b for _, h, b in rows if h in in_range}
    if head_name:
        branches.add(head_name)
    chosen = [
        c for c, h, b in rows
        if h in in_range or (fork is not None and h == fork and b in branches)
    ]
    return chosen, len(in_range)


# -- what changed ---------------------------------------------------------------------

@dataclass
class Review:
    range: str
    code_commits: int
    commits: list[pygit2.Commit] = field(default_factory=list)
    elsewhere: list[pygit2.Commit] = field(default_factory=list)
    before: store.Files = field(default_factory=dict)
    after: store.Files = field(default_factory=dict)


def build(repo: Repo, pr: pygit2.Repository, range_: str | None) -> Review:
    base, head = code_range(repo, range_)
    base_sha, head_sha = _commit(repo, base), _commit(repo, head)
    head_name = _branch_name(_git_out(repo, 'rev-parse', '--symbolic-full-name', head) or '')
    chosen, n_code = select(repo, pr, base_sha, head_sha, head_name)
    shown = f'{base}..{head}'
    if not chosen:
        return Review(shown, n_code)
    newest = chosen[0]
    reach = store.whole(pr, newest, lambda: {c.id for c in pr.walk(newest.id)})
    line = [c for c in chosen if c.id in reach]
    oldest = line[-1]
    before = (
        store.tree_files(pr, oldest.parents[0].tree) if oldest.parents else {}
    )
    return Review(
        shown, n_code, line, [c for c in chosen if c.id not in reach],
        before, store.tree_files(pr, newest.tree),
    )


def _text(files: store.Files, name: str) -> str:
    return files.get(name, b'').decode('utf-8', 'replace')


def _added_removed(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    return [x for x in new if x not in old], [x for x in old if x not in new]


def _section_lines(text: str, name: str) -> list[str]:
    lines = snapshot_mod.content_lines(snapshot_mod.parse(text).get(name))
    return [_BULLET.sub('', t) for _, t in lines]


def _state(files: store.Files) -> dict[str, Any]:
    try:
        obj = json.loads(_text(files, memory.STATE) or '{}')
    except (ValueError, RecursionError):
        return {}
    return obj if isinstance(obj, dict) else {}


def _fragments(files: store.Files) -> list[dict[str, Any]]:
    try:
        return fragments_mod.parse(_text(files, memory.FRAGMENTS))
    except AgitmemError:
        return []


def summarize(r: Review) -> dict[str, Any]:
    rules_before = [x.text for x in tattoo_mod.parse(_text(r.before, memory.TATTOO))]
    rules_after = [x.text for x in tattoo_mod.parse(_text(r.after, memory.TATTOO))]
    rules_added, rules_removed = _added_removed(rules_before, rules_after)
    snap_b, snap_a = _text(r.before, memory.SNAPSHOT), _text(r.after, memory.SNAPSHOT)
    dec_added, dec_removed = _added_removed(
        _section_lines(snap_b, snapshot_mod.DECISIONS),
        _section_lines(snap_a, snapshot_mod.DECISIONS),
    )
    done_added, _ = _added_removed(
        _section_lines(snap_b, snapshot_mod.DONE),
        _section_lines(snap_a, snapshot_mod.DONE),
    )
    sb, sa = _state(r.before), _state(r.after)
    lv = sa.get('last_verification')
    progress = {
        'goal': sa.get('current_goal') or None,
        'goal_before': sb.get('current_goal') or None,
        'next_intent': sa.get('next_intent') or None,
        'step_before': sb.get('step'),
        'step': sa.get('step'),
        'done_added': done_added,
        'verification': lv if isinstance(lv, dict) else None,
    }
    old_ids = {f['id'] for f in _fragments(r.before)}
    new_fragments = [f for f in _fragments(r.after) if f['id'] not in old_ids]
    archived = sorted(
        p for p in r.after
        if p.startswith(f'{memory.ARCHIVE}/') and p not in r.before
    )
    return {
        'range': r.range,
        'code_commits': r.code_commits,
        'tattoo': {'added': rules_added, 'removed': rules_removed},
        'decisions': {'added': dec_added, 'removed': dec_removed},
        'progress': progress,
        'fragments': new_fragments,
        'archived': archived,
        'commits': [_commit_row(c) for c in r.commits],
        'elsewhere': [_commit_row(c) for c in r.elsewhere],
        'diff': ''.join(d for _, _, d in unified(r.before, r.after)),
    }


def _commit_row(c: pygit2.Commit) -> dict[str, str]:
    t = store.trailers(c)
    return {
        'id': str(c.id),
        'subject': c.message.split('\n', 1)[0],
        'event': t.get('Agitmem-Event', ''),
        'code_branch': t.get('Code-Branch', ''),
        'code_head': t.get('Code-Head', ''),
    }


def summary(repo: Repo, range_: str | None) -> dict[str, Any]:
    """What changed in memory over the code range, as plain data (the
    renderers' and `--json`'s)."""
    s = summarize(build(repo, store.open_repo(repo), range_))
    audit.log(
        repo.agent_dir, 'read review',
        f'{s["range"]}: {len(s["commits"])} memory commits',
    )
    return s
