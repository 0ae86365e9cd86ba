"""Scores of a judge (the recovery classifier, doctor) against a set
labelled blind: agreement, Cohen's kappa, per-class recall and precision,
and the confusion matrix as text.  `pairs` are (label, verdict); a verdict
no label has (`unknown`) is a column of its own."""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any


def confusion(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
    return dict(Counter(pairs))


def scores(pairs: list[tuple[str, str]], classes: Sequence[str]) -> dict[str, Any]:
    n = len(pairs)
    agree = sum(1 for a, b in pairs if a == b)
    extra = sorted({b for _, b in pairs} - set(classes))
    cols = [*classes, *extra]
    p_o = agree / n if n else math.nan
    p_e = sum(
        (sum(1 for a, _ in pairs if a == c) / n) * (sum(1 for _, b in pairs if b == c) / n) for c in cols
    ) if n else math.nan
    kappa = (p_o - p_e) / (1 - p_e) if n and p_e < 1 else math.nan
    per = {}
    for c in classes:
        labelled = sum(1 for a, _ in pairs if a == c)
        judged = sum(1 for _, b in pairs if b == c)
        hit = sum(1 for a, b in pairs if a == b == c)
        per[c] = {
            'n': labelled,
            'recall': hit / labelled if labelled else math.nan,
            'precision': hit / judged if judged else math.nan,
        }
    return {'n': n, 'agreement': p_o, 'kappa': kappa, 'classes': per, 'columns': cols}


def report(pairs: list[tuple[str, str]], classes: Sequence[str], title: str, unit: str = 'episodes') -> str:
    s = scores(pairs, classes)
    m = confusion(pairs)
    cols = s['columns']
    lines = [
        f'{title}: {s["n"]} {unit}, agreement {s["agreement"]:.2f}, Cohen\'s kappa {s["kappa"]:.2f}',
        '',
        f'{"label/verdict":16}' + ''.join(f'{c:>11}' for c in cols),
    ]
    for label in classes:
        lines.append(f'{label:16}' + ''.join(f'{m.get((label, c), 0):>11}' for c in cols))
    lines += ['', f'{"verdict":16}{"n":>5}{"recall":>9}{"precision":>11}']
    for c, v in s['classes'].items():
        lines.append(f'{c:16}{v["n"]:>5}{v["recall"]:>9.2f}{v["precision"]:>11.2f}')
    return '\n'.join(lines)
