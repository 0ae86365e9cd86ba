"""The memory review's summary (porcelain/review.py) as text for a
terminal and as Markdown for a pull request comment."""
from __future__ import annotations

import re
from typing import Any

MARKER = '<!-- agitmem-review -->'  # lets a CI job update its comment
MAX_DIFF = 50_000  # characters of diff in --markdown (GitHub's limit is 65,536)


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
