"""The recovery verdicts against a set labelled blind (tests/memory/episodes/,
README there): each episode played through the real hooks in its client's
payloads (testing/episodes.py), `agitmem recovery --json` read back, and
the verdicts compared with the labels: agreement, Cohen's kappa, per-class
recall and precision and the confusion matrix, printed (`pytest -s`) and
written to the test's temporary directory as report.txt.  The floors are
issue 21's: agreement >= 0.85, every verdict's recall >= 0.7."""
from __future__ import annotations

import concurrent.futures
import os
from pathlib import Path
from typing import Any
from typing import NamedTuple

import pytest

from testing import episodes
from testing import zygote
from testing.util import started

HERE = Path(__file__).parent / 'episodes'
# another set (the labeller's working copy, say): AGITMEM_EPISODES=dir
SOURCE = Path(os.environ.get('AGITMEM_EPISODES') or HERE)


class EpisodeSet(NamedTuple):
    """A directory of labelled episodes (FORMAT.md; its labeller's rules
    in its LABELS.md or README.md)."""
    path: Path
    floor: float  # the agreement measured on it, a little under: a guard against regressions
    size: int  # it holds at least this many episodes
    meets_issue: bool  # issue 21's floors hold on it; else that test is a strict xfail

    @property
    def episodes(self) -> list[Path]:
        return sorted(self.path.glob('*.yaml'))


# one line per set: tests/memory/episodes/<name>/ with its episodes and LABELS.md.
# The first set (64) was read by the classifier's authors; the second (33),
# labelled blind by another labeller, was not read while the first two rounds
# were written, and its disagreements were while the third was (README there).
SETS = {
    'first': EpisodeSet(SOURCE, floor=0.97, size=50, meets_issue=True),
    'held-out': EpisodeSet(HERE / 'held-out', floor=0.96, size=30, meets_issue=True),
    # the third (50), labelled blind by a third labeller while the third round
    # was written, and measured once after it: the held-out figure (0.66
    # before the third round, 0.74 after; LABELS.md there).  The fourth
    # round read its disagreements (1.00 after it): no longer held out
    # (README there)
    'third': EpisodeSet(HERE / 'third', floor=0.96, size=50, meets_issue=True),
    # the fourth (50), written and labelled blind by a fourth labeller while
    # the fourth round was written (on the third's disagreements), measured
    # on main before that round and once after it: 0.72 both times.  The
    # fifth round read its disagreements (0.98 after it): no longer held out
    # (README there)
    'fourth': EpisodeSet(HERE / 'fourth', floor=0.96, size=50, meets_issue=True),
    # the fifth and sixth (50 each), written and labelled blind by two more
    # labellers while the fifth round was written, measured on main before
    # it and once after it: fifth 0.66 -> 0.70, sixth 0.60 -> 0.66.  The
    # sixth round read their disagreements (fifth 0.92, sixth 0.94 after
    # it): no longer held out (README there)
    'fifth': EpisodeSet(HERE / 'fifth', floor=0.92, size=50, meets_issue=True),
    'sixth': EpisodeSet(HERE / 'sixth', floor=0.90, size=50, meets_issue=True),
    # the seventh (50), written and labelled blind by a seventh labeller
    # while the sixth round was written, measured on main before that round
    # and once after it: 0.64 -> 0.70.  The seventh round read it (a report
    # judged by what backs it, hand-backs without a question, build outputs):
    # 0.90, every recall >= 0.70
    # The eighth round (definitions per language, results read from output,
    # claims under a request, places the Decisions keep out): 0.92
    'seventh': EpisodeSet(HERE / 'seventh', floor=0.90, size=50, meets_issue=True),
    # the eighth (50), written and labelled blind by an eighth labeller
    # while the seventh round was written, measured on main before it and
    # once after it: 0.70 -> 0.74.  The coordinator then read its
    # disagreements (a turn that ends only talking or looking around is a
    # reset, "remind me what to do" asks for the task, a build's products
    # beside the agent's edit): 0.86, every recall >= 0.80; no longer held out
    # The eighth round: 0.88, then 0.94 with a helper called from
    # current_symbol counted as the task's and a claim's backticked
    # identifiers no longer taken for commands
    'eighth': EpisodeSet(HERE / 'eighth', floor=0.90, size=50, meets_issue=True),
    # the ninth (50), written and labelled blind by a ninth labeller while
    # the eighth round was written, measured on main before it (0.86, every
    # recall >= 0.78: issue 21's floors met held out) and after it (0.80:
    # symbols in more languages hid drift at the right place); the
    # coordinator then read its disagreements (README there).  A second
    # labeller, blind to the first's labels, agreed on 50 of 50.  The ninth
    # round read them (choices of work handed back in more languages,
    # releases a request makes wait on a pass, Fortran kinds): 0.96
    'ninth': EpisodeSet(HERE / 'ninth', floor=0.92, size=50, meets_issue=True),
}

Played = list[tuple[dict[str, Any], dict[str, Any]]]


# episodes played at once, each its own repository in its own directory,
# each through a warm agitmem of its own (testing/zygote.py: the same
# program without the interpreter's start for each of ~13 runs an episode
# makes; the last test below shows both ways give the same rows).  Coverage
# does not follow these plays: they measure the judge, not the lines (the
# rest of the suite runs those), and coverage's save in each of ~6,000 runs
# was about four fifths of the module's time under coverage
WORKERS = 2
# each set played once: the suite runs with `--dist loadfile`, so this
# module's tests share one xdist worker (pytest-xdist's xdist_group does
# nothing under pytest 9: it renames `item._nodeid`, which pytest 9 no
# longer reads)
_PLAYED: dict[str, Played] = {}


@pytest.fixture
def played(tmp_path_factory: pytest.TempPathFactory, name: str) -> Played:
    if name not in _PLAYED:
        eps = [episodes.load(p) for p in SETS[name].episodes]
        zygotes = [zygote.Zygote(measured=False) for _ in range(WORKERS)]
        try:
            with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
                rows = list(pool.map(
                    lambda i: episodes.play(eps[i], tmp_path_factory.mktemp(eps[i]['id']), zygotes[i % WORKERS].run),
                    range(len(eps)),
                ))
        finally:
            for z in zygotes:
                z.close()
        _PLAYED[name] = list(zip(eps, rows))
    return _PLAYED[name]


@pytest.mark.parametrize('name', SETS)
def test_the_set_is_large_and_spans_the_clients_and_verdicts(name: str) -> None:
    eps = [episodes.load(p) for p in SETS[name].episodes]
    assert len(eps) >= SETS[name].size
    assert (SETS[name].path / 'LABELS.md').is_file() or (SETS[name].path / 'README.md').is_file()
    assert {e['client'] for e in eps} == {'claude', 'codex', 'gemini'}
    assert {episodes.VERDICTS[e['label']] for e in eps} == set(episodes.CLASSES)
    assert {e['language'] for e in eps} == {'en', 'zh'}


def _report(played: Played, tmp_path: Path, name: str) -> dict[str, Any]:
    pairs = [(episodes.VERDICTS[ep['label']], row['verdict'] or 'pending') for ep, row in played]
    text = episodes.report(pairs, f'recovery verdicts vs the blind labels ({name} set)')
    wrong = [
        f'{ep["id"]}: labelled {ep["label"]}, judged {row["verdict"]}: {"; ".join(row.get("evidence") or ())}'
        for ep, row in played if episodes.VERDICTS[ep['label']] != row['verdict']
    ]
    text += '\n\ndisagreements:\n' + '\n'.join(wrong or ['none']) + '\n'
    print('\n' + text)
    (tmp_path / f'report-{name}.txt').write_text(text)
    return {**episodes.scores(pairs), 'text': text}


@pytest.mark.parametrize('name', SETS)
def test_verdicts_do_not_fall_below_what_was_measured(played: Played, tmp_path: Path, name: str) -> None:
    """A guard against regressions: the agreement measured on each set
    (first: 0.50 before issue 21's work, 0.83 after its first round, 1.00
    after the second and the third, not held out; held-out: 0.70 before
    the second round, 0.73 after it, 1.00 after the third, whose author
    read its disagreements; third: 0.74 before the fourth round, 1.00
    after it, whose author read its disagreements; fourth: 0.72 before the
    fifth round, 0.98 after it, whose author read its disagreements;
    fifth and sixth: 0.66 and 0.60 before the fifth round, 0.70 and 0.66
    after it, 0.92 and 0.94 after the sixth, whose author read their
    disagreements; seventh, held out: 0.64 before the sixth round, 0.70
    after it: README there)."""
    s = _report(played, tmp_path, name)
    assert s['agreement'] >= SETS[name].floor, s['text']


@pytest.mark.parametrize('name', [
    pytest.param(name, marks=[] if s.meets_issue else [pytest.mark.xfail(strict=True, reason=(
        f"issue 21's floors (agreement >= 0.85, every recall >= 0.7) are not met on the {name} set"
    ))])
    for name, s in SETS.items()
])
def test_verdicts_agree_with_the_labels(played: Played, tmp_path: Path, name: str) -> None:
    s = _report(played, tmp_path, name)
    assert s['agreement'] >= 0.85, s['text']
    for c, v in s['classes'].items():
        assert v['recall'] >= 0.7, (c, s['text'])


@pytest.mark.parametrize('name', SETS)
def test_every_verdict_says_which_event_decided(played: Played, name: str) -> None:
    for ep, row in played:
        assert row['evidence'], ep['id']
        assert row['first_action'] or not ep['turn'], ep['id']


@pytest.mark.parametrize('name', SETS)
def test_the_user_prompt_after_the_compaction_is_shown(played: Played, name: str) -> None:
    prompted = [(ep, row) for ep, row in played if ep.get('user_prompt')]
    for ep, row in prompted:
        first_line = ' '.join(ep['user_prompt'].split())[:60]
        assert first_line in ' '.join(row['shown'].split()), ep['id']


def test_scores_on_a_known_matrix() -> None:
    pairs = [('recovered', 'recovered')] * 3 + [('drift', 'location'), ('drift', 'drift'), ('reset', 'unknown')]
    s = episodes.scores(pairs)
    assert s['agreement'] == pytest.approx(4 / 6)
    assert s['classes']['drift'] == {'n': 2, 'recall': 0.5, 'precision': 1.0}
    assert s['classes']['location']['precision'] == 0.0
    # p_e = (3/6)(3/6) + (2/6)(1/6) = 0.25 + 1/18
    p_e = 0.25 + 1 / 18
    assert s['kappa'] == pytest.approx((4 / 6 - p_e) / (1 - p_e))
    text = episodes.report(pairs, 't')
    assert 'unknown' in text.splitlines()[2]  # a verdict no label has is a column


def _comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A row without what differs between two plays of one episode: the
    record's id, its time, the checkpoint commit, the state's age."""
    differs = ('id', 'at', 'checkpoint', 'state_age')
    shown = row['shown']
    for key in differs:
        if isinstance(row.get(key), str) and row[key]:
            shown = shown.replace(row[key], f'<{key}>')
    return {**{k: v for k, v in row.items() if k not in differs}, 'shown': shown}


def test_a_warm_agitmem_plays_an_episode_as_the_console_script_does(tmp_path: Path) -> None:
    """The sets above are played through testing/zygote.py; two episodes
    of each client, played both ways, give the same row."""
    eps = [episodes.load(p) for p in SETS['first'].episodes]
    sample = [ep for client in ('claude', 'codex', 'gemini') for ep in [e for e in eps if e['client'] == client][:2]]
    for ep in sample:
        (tmp_path / f'warm-{ep["id"]}').mkdir()
        (tmp_path / f'cold-{ep["id"]}').mkdir()
    with zygote.Zygote() as z:
        warm = [episodes.play(ep, tmp_path / f'warm-{ep["id"]}', z.run) for ep in sample]
    cold = [episodes.play(ep, tmp_path / f'cold-{ep["id"]}', started) for ep in sample]
    for ep, w, c in zip(sample, warm, cold):
        assert _comparable(w) == _comparable(c), ep['id']
