"""The recovery judge on real sessions: `agitmem recovery audit --json` over
a part of tests/corpus/realset/ (real public Claude Code and Codex
sessions, each compaction labelled blind), compared with its labels.

    python bench/realset.py dev            # the part read while tuning
    python bench/realset.py holdout        # the part nobody here has read
    python bench/realset.py dev --show     # each disagreement (dev only)

Prints the compactions found against the labelled ones, the confusion
matrix (rows: labels; columns: the audit's verdicts), agreement, Cohen's
kappa, each verdict's recall, the share of real recoveries called a
failure, and the failures' shares beside the 430-compaction study's.
The holdout part never prints a disagreement: it stays unread."""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / 'tests' / 'corpus' / 'realset'
VERDICTS = ('recovered', 'drift', 'location', 'state', 'reset', 'unjudgeable')
FAILURES = ('drift', 'location', 'state', 'reset')
# the study this project started from: the failures' shares (of 430 compactions)
STUDY = {'drift': 34, 'location': 29, 'state': 22, 'reset': 15}


def extract(part: str, into: Path) -> Path:
    with tarfile.open(SET / f'{part}.tar.gz') as tar:
        tar.extractall(into, filter='data')
    return into / part


def audit(logs: Path) -> list[dict[str, object]]:
    agitmem = Path(sys.executable).parent / 'agitmem'
    argv = [str(agitmem)] if agitmem.exists() else [sys.executable, '-m', 'agitmem']
    proc = subprocess.run(
        [*argv, 'recovery', 'audit', '--json', str(logs)], capture_output=True, text=True,
        cwd=logs, check=True,
    )
    return json.loads(proc.stdout)['compactions']  # type: ignore[no-any-return]


def score(labels: list[dict[str, object]], found: list[dict[str, object]]) -> dict[str, object]:
    """The figures of one part: pairs (label, verdict) by (file, index)."""
    got = {(os.path.basename(str(f['file'])), int(str(f['index']))): f for f in found}
    pairs = []
    missing = []
    for row in labels:
        key = (str(row['file']), int(str(row['index'])))
        if key not in got:
            missing.append(key)
            continue
        verdict = str(got[key]['verdict'])
        pairs.append((str(row['label']), 'unjudgeable' if verdict == 'unknown' else verdict, key, got[key]))
    n = len(pairs)
    agree = sum(1 for lab, v, _, _ in pairs if lab == v)
    po = agree / n if n else 0.0
    lab_counts = collections.Counter(lab for lab, _, _, _ in pairs)
    got_counts = collections.Counter(v for _, v, _, _ in pairs)
    pe = sum(lab_counts[v] * got_counts[v] for v in VERDICTS) / (n * n) if n else 0.0
    kappa = (po - pe) / (1 - pe) if pe < 1 else 1.0
    recall = {
        v: sum(1 for lab, g, _, _ in pairs if lab == v and g == v) / lab_counts[v]
        for v in VERDICTS if lab_counts[v]
    }
    recovered = [g for lab, g, _, _ in pairs if lab == 'recovered']
    return {
        'n': n, 'labelled': len(labels), 'found': len(found), 'missing': missing,
        'agreement': po, 'kappa': kappa, 'recall': recall,
        'matrix': {lab: collections.Counter(g for la, g, _, _ in pairs if la == lab) for lab in VERDICTS},
        'recovered_called_failure': sum(1 for g in recovered if g in FAILURES),
        'recovered_total': len(recovered),
        'pairs': pairs,
    }


def report(part: str, s: dict[str, object], show: bool) -> None:
    print(f'realset {part}: {s["labelled"]} labelled compactions, {s["found"]} found by the audit, '
          f'{len(s["missing"])} labelled but not found')  # type: ignore[arg-type]
    head = 'label / verdict'
    print(f'{head:>16}' + ''.join(f'{v:>12}' for v in VERDICTS))
    matrix = s['matrix']
    assert isinstance(matrix, dict)
    for lab in VERDICTS:
        row = matrix[lab]
        if sum(row.values()):
            print(f'{lab:>16}' + ''.join(f'{row[v]:>12}' for v in VERDICTS))
    recall = s['recall']
    assert isinstance(recall, dict)
    print(f'agreement {s["agreement"]:.2f}, kappa {s["kappa"]:.2f}, n {s["n"]}')
    print('recall: ' + ', '.join(f'{v} {r:.2f}' for v, r in recall.items()))
    print(f'real recoveries called a failure: {s["recovered_called_failure"]} of {s["recovered_total"]}')
    pairs = s['pairs']
    assert isinstance(pairs, list)
    fails = collections.Counter(lab for lab, _, _, _ in pairs if lab in FAILURES)
    total = sum(fails.values())
    print('failures by label: ' + (', '.join(
        f'{v} {fails[v]} ({100 * fails[v] / total:.0f}%, study {STUDY[v]}%)' for v in FAILURES) if total else 'none'))
    called = collections.Counter(g for _, g, _, _ in pairs if g in FAILURES)
    total = sum(called.values())
    print('failures as judged: ' + (', '.join(
        f'{v} {called[v]} ({100 * called[v] / total:.0f}%, study {STUDY[v]}%)' for v in FAILURES) if total else 'none'))
    if show and part != 'holdout':
        for lab, got, key, row in pairs:
            if lab != got:
                print(f'  {key[0]}#{key[1]}: label {lab}, judged {got}: {row.get("evidence")}')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('part', choices=('dev', 'holdout'))
    parser.add_argument('--show', action='store_true', help='print each disagreement (dev only)')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = extract(args.part, Path(tmp))
        labels = yaml.safe_load((root / 'labels.yaml').read_text())
        s = score(labels, audit(root / 'logs'))
    report(args.part, s, args.show)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
