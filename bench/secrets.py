"""The credential scanner on the labelled corpus of tests/corpus/secrets/.

    python bench/secrets.py [--heldout | --fresh | --fresh2 | --fresh3] [--families] [--misses N] [--false-alarms] [--source S]

Prints recall (secrets found) and false-positive rate (benign texts flagged)
per source and overall, each case tested bare and in the contexts a memory
file gives it: a memory line (`- note: deploy with <text>`), a JSON string
and a YAML block.  The labels are the peers' own (gitleaks' tps/fps,
trufflehog's pattern tests, secretlint's ng/ok snapshots; see extract.py),
but for the trufflehog negatives relabel.py's stated rules relabel; their
counts, and the false-positive rate on trufflehog's negatives as it
labelled them, are printed too.
Tuning reads only the cases not marked `heldout`; --heldout reports on the
others; --fresh on fresh.jsonl (Nosey Parker's examples, a part measured
once, with recall on the rules it marks `claimed`; read since); --fresh2 on
fresh2.jsonl (semgrep-rules, trivy, ripsecrets and whispers test data,
extracted blind, tuned on in round 8: FRESH2.md); --fresh3 on fresh3.jsonl
(kingfisher's rule examples and detect-secrets' plugin tests, extracted
blind, held out in round 8, read and tuned on in round 9: FRESH3.md).  Where detect-secrets
is importable it runs on the same strings, side by side (it is not a
dependency).  Also prints the scan cost per KB.

    python bench/secrets.py --hostile

prints the scan's speed in MB/s on ordinary text and on the slowest of the
hostile shapes (tests/corpus/secrets/hostile.py), measured in the same run,
and their ratio: every shape ranked at 4 KB, the 16 slowest re-measured at
256 KB (best of 3).
"""
from __future__ import annotations

import argparse
import collections
import json
import pathlib
import sys
import time
from collections.abc import Callable
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
# this file is named like the standard library's `secrets`: not importable as it
sys.path[:] = [p for p in sys.path if pathlib.Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / 'tests' / 'corpus' / 'secrets'

from agitmem.secrets import scan


def contexts(text: str) -> dict[str, str]:
    import yaml
    return {
        'bare': text,
        'memory line': '- note: deploy with ' + text,
        'json': json.dumps({'note': text}),
        'yaml': yaml.safe_dump({'note': text}, allow_unicode=True),
    }


def load(
        heldout: bool, fresh: bool = False, fresh2: bool = False, fresh3: bool = False,
) -> list[dict[str, Any]]:
    out = []
    peers = (
        'fresh3.jsonl' if fresh3 else 'fresh2.jsonl' if fresh2
        else 'fresh.jsonl' if fresh else 'peers.jsonl'
    )
    for name in (peers, 'ordinary.jsonl'):
        with open(CORPUS / name) as f:
            for line in f:
                case = json.loads(line)
                if case['heldout'] == heldout or case['source'] == 'ordinary':
                    out.append(case)
    return out


Scanner = Callable[[str], bool]


def agitmem(text: str) -> bool:
    return bool(scan(text, 'notes.md'))


def detect_secrets() -> Scanner | None:
    """detect-secrets' own file scan (its default plugins and filters,
    entropy limits included), one temporary file per text."""
    try:
        from detect_secrets import SecretsCollection  # type: ignore[import-not-found]
        from detect_secrets.settings import default_settings  # type: ignore[import-not-found]
    except ImportError:
        return None
    import tempfile
    tmp = pathlib.Path(tempfile.mkdtemp(prefix='bench-secrets-'))
    path = tmp / 'notes.md'

    def run(text: str) -> bool:
        path.write_text(text)
        found = SecretsCollection()
        with default_settings():
            found.scan_file(str(path))
        return bool(found.data)
    return run


class Tally:
    def __init__(self) -> None:
        self.n = collections.Counter[str]()
        self.hit = collections.Counter[str]()

    def add(self, key: str, hit: bool) -> None:
        self.n[key] += 1
        self.hit[key] += hit

    def rate(self, key: str) -> str:
        return f'{self.hit[key] / self.n[key]:.3f}' if self.n[key] else '  -  '


def run(
        cases: list[dict[str, Any]], scanner: Scanner, misses: int, only_benign: bool = False,
) -> tuple[Tally, Tally, Tally, list[str]]:
    pos, neg, fam = Tally(), Tally(), Tally()
    missed: list[str] = []
    for case in cases:
        for ctx, text in contexts(case['text']).items():
            hit = scanner(text)
            t = pos if case['label'] == 'secret' else neg
            for key in ('all', case['source'], f'ctx {ctx}'):
                t.add(key, hit)
            if case.get('peer_label', case['label']) == 'benign':
                # the negatives as the peer labelled them, relabels undone
                neg.add(f'peer label {case["source"]}', hit)
            if case['label'] == 'secret':
                fam.add(f'{case["source"]}:{case["family"]}', hit)
                if case.get('claimed'):
                    pos.add('claimed', hit)
            else:
                fam.add(f'{case["source"]}:{case["family"]}:fp', hit)
            wrong = hit != (case['label'] == 'secret')
            if only_benign and case['label'] == 'secret':
                wrong = False
            if wrong and ctx == 'bare' and len(missed) < misses:
                missed.append(
                    f'{case["label"]:6} {case["source"]}:{case["family"]} '
                    f'{case["text"][:160]!r}',
                )
    return pos, neg, fam, missed


def cost_per_kb() -> float:
    text = _ordinary_text()
    return _best(text, 5) / (len(text.encode()) / 1024) * 1e6


def _ordinary_text() -> str:
    import random
    rnd = random.Random(0)
    lines = [c['text'] for c in load(False) if c['source'] == 'ordinary']
    return '\n'.join(rnd.choice(lines) for _ in range(4000))


def _best(text: str, runs: int = 3) -> float:
    best = float('inf')
    for _ in range(runs):
        t0 = time.perf_counter()
        scan(text, 'notes.md')
        best = min(best, time.perf_counter() - t0)
    return best


def hostile(size: int = 256 * 1024, top: int = 16) -> None:
    """MB/s on ordinary text and on the slowest hostile shapes."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('hostile', CORPUS / 'hostile.py')
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ranked = []
    for name, text in module.shapes(4096):
        ranked.append((_best(text, 1) / len(text), name))
    ranked.sort(reverse=True)
    slowest = {name for _, name in ranked[:top]}
    ordinary = _ordinary_text()
    floor = len(ordinary.encode()) / _best(ordinary) / 1e6
    print(f'# {len(ranked)} hostile shapes ranked at 4 KB; the {top} slowest at {size // 1024} KB')
    print(f'{"ordinary text":50} {floor:8.2f} MB/s')
    worst = (float('inf'), '')
    for name, text in module.shapes(size):
        if name in slowest:
            speed = len(text.encode()) / _best(text) / 1e6
            print(f'{name[:50]:50} {speed:8.2f} MB/s')
            worst = min(worst, (speed, name))
    print(f'worst hostile shape: {worst[1]} at {worst[0]:.2f} MB/s; '
          f'ordinary / worst = {floor / worst[0]:.0f}')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--heldout', action='store_true', help='the held-out cases')
    parser.add_argument('--fresh', action='store_true', help='the fresh part (Nosey Parker)')
    parser.add_argument('--fresh2', action='store_true', help='the second fresh held-out part')
    parser.add_argument('--fresh3', action='store_true', help='the third fresh part (read in round 9)')
    parser.add_argument('--families', action='store_true', help='a row per family')
    parser.add_argument('--misses', type=int, default=0, help='print N wrong cases')
    parser.add_argument(
        '--false-alarms', action='store_true',
        help='of the N wrong cases, print only benign texts flagged',
    )
    parser.add_argument('--source', help='only this source (gitleaks, ...)')
    parser.add_argument('--no-others', action='store_true', help='agitmem only')
    parser.add_argument('--hostile', action='store_true', help='speed on hostile shapes')
    args = parser.parse_args(argv)
    if args.hostile:
        hostile()
        return 0
    cases = load(
        args.heldout or args.fresh or args.fresh2 or args.fresh3,
        args.fresh, args.fresh2, args.fresh3,
    )
    if args.source:
        cases = [c for c in cases if c['source'] in (args.source, 'ordinary')]
    scanners: dict[str, Scanner] = {'agitmem': agitmem}
    ds = None if args.no_others else detect_secrets()
    if ds is not None:
        scanners['detect-secrets'] = ds
    part = (
        'third fresh (read and tuned on in round 9)' if args.fresh3
        else 'second fresh held-out' if args.fresh2 else 'fresh' if args.fresh
        else 'held-out' if args.heldout else 'tuning'
    )
    print(f'# {part} part: {len(cases)} cases x 4 contexts')
    results = {
        name: run(cases, scanner, args.misses, args.false_alarms)
        for name, scanner in scanners.items()
    }
    names = list(results)
    # the scanners side by side: recall and false-positive rate of each
    head = ''.join(f' | {n:>26}' for n in names)
    print(f'\n{"":24}{head}')
    print(f'{"":24}' + ' | recall (n)   fp rate (n)  ' * len(names))
    keys = ['all', 'gitleaks', 'trufflehog', 'secretlint', 'noseyparker',
            'semgrep-rules', 'trivy', 'ripsecrets', 'whispers', 'kingfisher',
            'detect-secrets', 'claimed', 'ordinary'] + \
        [f'ctx {c}' for c in ('bare', 'memory line', 'json', 'yaml')]
    for key in keys:
        row = ''.join(
            f' | {pos.rate(key):>6} {pos.n[key]:5}  {neg.rate(key):>6} {neg.n[key]:5}'
            for pos, neg, _, _ in results.values()
        )
        print(f'{key:24}{row}')
    for label, sources in (
            ('fp rate, gitleaks + secretlint negatives', ('gitleaks', 'secretlint')),
            ('fp rate, all peers\' negatives', tuple({c['source'] for c in cases} - {'ordinary'})),
    ):
        figures = []
        for _, neg, _, _ in results.values():
            hit = sum(neg.hit[k] for k in sources)
            n = sum(neg.n[k] for k in sources)
            figures.append(f'{hit / max(n, 1):.3f}')
        print(f'{label}: ' + ', '.join(f'{n} {f}' for n, f in zip(names, figures)))
    relabelled = collections.Counter(
        c['relabel'].split(':')[0] for c in cases if 'relabel' in c
    )
    print(f'relabelled negatives (relabel.py): {sum(relabelled.values())} '
          f'({", ".join(f"{r} {n}" for r, n in sorted(relabelled.items()))}); '
          f'fp rate on trufflehog\'s negatives as it labelled them: ' +
          ', '.join(f'{n} {neg.rate("peer label trufflehog")}'
                    for n, (_, neg, _, _) in results.items()))
    for name, (_, _, fam, _) in results.items():
        claimed = [k for k in fam.n if not k.endswith(':fp') and fam.hit[k] > 0]
        n = sum(fam.n[k] for k in claimed)
        h = sum(fam.hit[k] for k in claimed)
        print(f'{name}: families found at least once: {len(claimed)} of '
              f'{sum(1 for k in fam.n if not k.endswith(":fp"))}; '
              f'recall on them {h / max(n, 1):.3f}')
    if args.families:
        fams = [r[2] for r in results.values()]
        print(f'\n{"family (cases x 4 contexts)":56}' +
              ''.join(f' | {n:>20}' for n in names))
        print(f'{"":56}' + ' | recall   fp rate    ' * len(names))
        for k in sorted(fams[0].n):
            if not k.endswith(':fp'):
                row = ''.join(
                    f' | {f.rate(k):>6}   {f.rate(k + ":fp"):>7}    ' for f in fams
                )
                print(f'  {k + f" ({fams[0].n[k]})":54}{row.rstrip()}')
    for name, (_, _, _, missed) in results.items():
        for m in missed:
            print(f'  {name} wrong:', m)
    print(f'\nscan cost: {cost_per_kb():.1f} us per KB of ordinary text')
    return 0

if __name__ == '__main__':
    raise SystemExit(main())
