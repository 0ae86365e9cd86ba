"""`recovery audit --html FILE`: one self-contained page (no script, no
network): the report's table and the recovered share by week, with and
without agitmem, as an inline SVG chart.  Every text from a log is
HTML-escaped after its control characters are made visible."""
from __future__ import annotations

import html
from typing import Any

from agitmem import render
from agitmem import secrets
from agitmem.memory import recovery_log
from agitmem.porcelain import log_episodes

_TITLES = {**recovery_log.TITLES, 'unjudgeable': 'unjudgeable'}


def _e(text: object) -> str:
    # masked before it is escaped: a key block's lines are still lines
    return html.escape(render.line(secrets.redact(str(text))), quote=True)


def _pct(value: object) -> str:
    return f'{value:.1f}%' if isinstance(value, (int, float)) else '-'


def _table(found: list[log_episodes.Found]) -> list[str]:
    out = ['<table>', '<tr><th></th><th>n</th>' + ''.join(f'<th>{_e(_TITLES[v])}</th>' for v in log_episodes.VERDICTS) + '</tr>']
    for name, row in log_episodes.table(found):
        cells = ''.join(f'<td>{_pct(row[v])}</td>' for v in log_episodes.VERDICTS)
        out.append(f'<tr><th>{_e(name)}</th><td>{row["n"]}</td>{cells}</tr>')
    out.append('</table>')
    return out


def _chart(weeks: list[tuple[str, dict[bool, tuple[int, int]]]]) -> list[str]:
    if not weeks:
        return ['<p>No judged compaction has a date: no chart.</p>']
    w, h, left, bottom = 760, 300, 50, 40
    step = (w - left - 20) / max(len(weeks) - 1, 1)

    def y(share: float) -> float:
        return 20 + (h - bottom - 20) * (1 - share)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" aria-label="recovered share by week">']
    for share in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<line x1="{left}" x2="{w - 20}" y1="{y(share):.1f}" y2="{y(share):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(share) + 4:.1f}" text-anchor="end" font-size="11">{int(share * 100)}%</text>')
    for i, (week, _) in enumerate(weeks):
        if len(weeks) <= 12 or i % max(len(weeks) // 12, 1) == 0:
            out.append(f'<text x="{left + i * step:.1f}" y="{h - bottom + 16}" text-anchor="middle" font-size="10">{_e(week)}</text>')
    for flag, colour, label in ((True, '#1b7f3b', 'with agitmem'), (False, '#b34700', 'without agitmem')):
        points = [
            (left + i * step, y(c[flag][0] / c[flag][1]), c[flag]) for i, (_, c) in enumerate(weeks) if c[flag][1]
        ]
        if len(points) > 1:
            path = ' '.join(f'{x:.1f},{yy:.1f}' for x, yy, _ in points)
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>')
        for x, yy, (r, n) in points:
            out.append(f'<circle cx="{x:.1f}" cy="{yy:.1f}" r="4" fill="{colour}"><title>{_e(label)}: {r} of {n} recovered</title></circle>')
    out.append(f'<text x="{left}" y="{h - 6}" font-size="12" fill="#1b7f3b">&#9632; with agitmem</text>')
    out.append(f'<text x="{left + 140}" y="{h - 6}" font-size="12" fill="#b34700">&#9632; without agitmem</text>')
    out.append('</svg>')
    return out


def page(found: list[log_episodes.Found], title: str = 'agitmem recovery audit') -> str:
    rows: list[str] = []
    for f in found:
        evidence = f.evidence[0] if f.evidence else ''
        rows.append(
            f'<tr><td>{_e(f.timestamp)}</td><td>{_e(f.client)} {_e(f.client_version)}</td>'
            f'<td>{_e(f.session)}</td><td>{f.index}</td><td>{"yes" if f.agitmem else "no"}</td>'
            f'<td>{_e(_TITLES.get(f.verdict, f.verdict))}</td><td>{_e(evidence)}</td></tr>',
        )
    body: list[Any] = [
        '<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8">',
        # nothing is fetched: no script, no style sheet, no image from elsewhere
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">',
        f'<title>{_e(title)}</title>',
        '<style>body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}'
        'td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:last-child{text-align:left}</style>',
        '</head><body>', f'<h1>{_e(title)}</h1>',
        f'<p>{len(found)} compaction(s) found in the clients\' own session logs, each first turn after one judged '
        'by the classifier of <code>agitmem recovery</code>.</p>',
        *_table(found), '<h2>Recovered share by week</h2>',
        '<p>Of the judged compactions of each week, the share recovered.</p>',
        *_chart(log_episodes.weekly(found)), '<h2>Compactions</h2>',
        '<table><tr><th>when</th><th>client</th><th>session</th><th>index</th><th>agitmem</th><th>verdict</th><th>evidence</th></tr>',
        *rows, '</table>', '</body></html>',
    ]
    return '\n'.join(body) + '\n'
