"""`agitmem review [BASE..HEAD] [--markdown] [--json]` (DESIGN.md section 8):
what changed in the agent's memory over a code range, for a pull request.

The memory commits (on any memory ref, local or fetched) whose `Code-Head`
is a code commit in the range are the branch's memory work; so are the
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
from agitmem import render
from agitmem import repo as repo_mod
from agitmem import store
from agitmem.diffs import unified
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError
from agitmem.memory import fragments as fragments_mod
from agitmem.memory import snapshot as snapshot_mod
from agitmem.memory import tattoo as tattoo_mod
from agitmem.repo import Repo

MARKER = '<!-- agitmem-review -->'  # lets a CI job update its comment
_BULLET = re.compile(r'^(?:[-*+]|\d+[.)])\s+')
MAX_DIFF = 50_000  # characters of diff in --markdown (GitHub's limit is 65,536)


def _git_out(repo: Repo, *args: str) -> str | None:
    proc = repo_mod.git(*args, cwd=repo.root, check=False)
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
    walker = pr.walk(
        tips[0], pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME,
    )
    for sha in tips[1:]:
        walker.push(sha)
    rows = []
    for c in walker:
        tr = store.trailers(c)
        if 'Agitmem-Event' in tr:
            rows.append((c, tr.get('Code-Head'), tr.get('Code-Branch')))
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
    reach = {c.id for c in pr.walk(newest.id)}
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
    except ValueError:
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


# -- rendering -----------------------------------------------------------------------

def _verification(v: dict[str, Any] | None) -> str | None:
    if not v:
        return None
    text = f'{v.get("result", "?")}'
    if v.get('command'):
        text += f' `{v["command"]}`'
    if v.get('result') == 'failed' and v.get('reason'):
        text += f': {v["reason"]}'
    return text


def _progress_lines(p: dict[str, Any]) -> list[str]:
    lines = []
    if p['goal']:
        was = p['goal_before']
        changed = f' (was: {was})' if was and was != p['goal'] else ''
        lines.append(f'goal: {p["goal"]}{changed}')
    if p['next_intent']:
        lines.append(f'next: {p["next_intent"]}')
    if p['step'] is not None and p['step'] != (p['step_before'] or 0):
        lines.append(f'step: {p["step_before"] or 0} -> {p["step"]}')
    v = _verification(p['verification'])
    if v:
        lines.append(f'last verification: {v}')
    lines.extend(f'done: {d}' for d in p['done_added'])
    return lines


def _fragment_line(f: dict[str, Any]) -> str:
    parts = [str(f.get('goal') or '').strip()]
    for key in ('result', 'next'):
        if f.get(key):
            parts.append(f'{key}: {str(f[key]).strip()}')
    return f'{f["id"]} ' + '; '.join(p for p in parts if p)


def render_text(s: dict[str, Any]) -> str:
    out = [
        f'memory review of {s["range"]}: {len(s["commits"])} memory '
        f'commit(s) for {s["code_commits"]} code commit(s)',
    ]
    if not s['commits']:
        out.append('no memory changes in this range')
        return '\n'.join(out) + '\n'

    def section(title: str, lines: list[str]) -> None:
        if lines:
            out.append('')
            out.append(title)
            out.extend(f'  {x}' for x in lines)

    t, d = s['tattoo'], s['decisions']
    section(
        'Tattoo rules (they change what the agent does):',
        [f'+ {x}' for x in t['added']] + [f'- {x}' for x in t['removed']],
    )
    section('Decisions:', [f'+ {x}' for x in d['added']] + [f'- {x}' for x in d['removed']])
    section('Progress:', _progress_lines(s['progress']))
    section('New fragments:', [_fragment_line(f) for f in s['fragments']])
    section('Archived snapshots:', s['archived'])
    section('Memory commits:', [_row_line(c) for c in s['commits']])
    section(
        'Also in range, on another memory line (not in the diff):',
        [_row_line(c) for c in s['elsewhere']],
    )
    text = '\n'.join(out) + '\n'
    if s['diff']:
        text += '\n' + s['diff']
    return text


def _row_line(c: dict[str, str]) -> str:
    return f'{c["id"][:12]} {c["subject"]} (code {c["code_head"][:12]})'


def _md(text: str) -> str:
    """One line of memory text as Markdown inline content."""
    return ' '.join(text.split()).replace('<', '&lt;')


def _fence(text: str) -> str:
    runs = [len(m) for m in re.findall(r'`+', text)]
    return '`' * max(3, max(runs, default=0) + 1)


def render_markdown(s: dict[str, Any], *, max_diff: int = MAX_DIFF) -> str:
    n = len(s['commits'])
    out = [
        MARKER,
        f'### Agent memory: `{s["range"]}`',
        '',
    ]
    if not n:
        out.append(
            f'No memory changes for the {s["code_commits"]} code commit(s) '
            f'in this range.',
        )
        return '\n'.join(out) + '\n'
    out.append(
        f'{n} memory commit(s) for {s["code_commits"]} code commit(s), '
        f'recorded by agitmem.',
    )

    def section(title: str, lines: list[str]) -> None:
        if lines:
            out.extend(['', f'#### {title}', ''])
            out.extend(f'- {x}' for x in lines)

    t, d = s['tattoo'], s['decisions']
    section(
        'Tattoo rules (hard constraints: they change what the agent does)',
        [f'**added:** {_md(x)}' for x in t['added']] +
        [f'**removed:** ~~{_md(x)}~~' for x in t['removed']],
    )
    section(
        'Decisions',
        [f'**added:** {_md(x)}' for x in d['added']] +
        [f'**removed:** ~~{_md(x)}~~' for x in d['removed']],
    )
    section('Progress', [_md(x) for x in _progress_lines(s['progress'])])
    section('New fragments', [
        f'`{f["id"]}` {_md(_fragment_line(f).split(" ", 1)[1])}'
        for f in s['fragments']
    ])
    section('Archived snapshots', [f'`{p}`' for p in s['archived']])
    section('Memory commits', [
        f'`{c["id"][:12]}` {_md(c["subject"])} (code `{c["code_head"][:12]}`)'
        for c in s['commits']
    ])
    section('Also in range, on another memory line (not in the diff)', [
        f'`{c["id"][:12]}` {_md(c["subject"])}' for c in s['elsewhere']
    ])
    diff = s['diff']
    if diff:
        cut = ''
        if len(diff) > max_diff:
            cut = (
                f'\n_(diff cut at {max_diff:,} characters; run `agitmem review '
                f'{s["range"]}` for all of it)_\n'
            )
            diff = diff[:max_diff].rsplit('\n', 1)[0] + '\n'
        fence = _fence(diff)
        out.extend([
            '', '<details><summary>Memory diff</summary>', '',
            f'{fence}diff', diff.rstrip('\n'), fence, cut, '</details>',
        ])
    return '\n'.join(out) + '\n'


def review(ctx: Context, range_: str | None, markdown: bool, as_json: bool) -> int:
    pr = store.open_repo(ctx.repo)
    summary = summarize(build(ctx.repo, pr, range_))
    audit.log(
        ctx.repo.agent_dir, 'read review',
        f'{summary["range"]}: {len(summary["commits"])} memory commits',
    )
    if as_json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    elif markdown:
        print(render.controls(render_markdown(summary)), end='')
    else:
        print(render.controls(render_text(summary)), end='')
    return 0
