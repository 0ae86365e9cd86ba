"""`recovery audit`: each compaction in a client's own session log,
rebuilt as the episode the hooks would have recorded, and judged by the
one judge (porcelain/recovery.judge, memory/recovery.classify).

The episode: the task in flight (agitmem's STATE where its block was
injected after the compaction, else the client's summary: Claude Code's
sections, Gemini CLI's <state_snapshot>, Codex's free text; the user's
last request; the last test run before it), the first turn after it
(what the hooks take for it: the rest of the interrupted turn when the
agent went on by itself, else the turn the user's next prompt starts, up
to the agent handing back), its tool events as observed.py makes them
from a hook payload, and all the agent said in it."""
from __future__ import annotations

import collections
import dataclasses
import datetime
import re
from pathlib import PurePosixPath
from pathlib import PureWindowsPath
from typing import Any
from typing import NamedTuple

from agitmem.agents import sessionlog
from agitmem.agents import tools
from agitmem.memory import recovery_log
from agitmem.memory import verification
from agitmem.porcelain import observed
from agitmem.porcelain import recovery as judging

VERDICTS = ('recovered', 'drift', 'location', 'state', 'reset', 'unjudgeable')
# edits and test runs before a compaction kept to find the task's place
BEFORE = 20
SUMMARY_CHARS = judging.SUMMARY_CHARS
PROMPT_CHARS = judging.PROMPT_CHARS
# of the agent's texts in a first turn, judged (its first, then its last ones)
SAID_CHARS = 64 * 1024


@dataclasses.dataclass(frozen=True)
class Found:
    """One compaction, judged."""
    file: str
    session: str
    index: int
    timestamp: str
    client: str
    client_version: str
    verdict: str
    evidence: list[str]
    agitmem: bool  # agitmem's block was injected in this session
    state_from: str  # where the task was taken from
    first_action: str | None
    key: str | None


class _Episode:
    def __init__(self, index: int, item: dict[str, Any], before: _Before) -> None:
        self.index = index
        self.at = item.get('at') or ''
        self.key = item.get('key')
        self.before = before.copy()
        self.summary: str | None = None
        self.block: str | None = None  # agitmem's block injected after it
        self.prior: str | None = None  # the last one before it, in this log
        self.prompt: str | None = None
        self.events: list[dict[str, Any]] = []
        self.first_text: str | None = None
        self.tail: collections.deque[str] = collections.deque()
        self.chars = 0  # in tail
        self.started = False  # the first turn began
        self.last_text = False  # the agent spoke last

    def say(self, text: str) -> None:
        """One more text of the agent's in the first turn: its first and
        its last ones kept, up to SAID_CHARS (a turn of a million texts is
        neither held nor judged whole)."""
        text = text[:SAID_CHARS]
        if self.first_text is None:
            self.first_text = text
            return
        if text == (self.tail[-1] if self.tail else self.first_text):
            return
        self.tail.append(text)
        self.chars += len(text)
        while self.chars > SAID_CHARS and len(self.tail) > 1:
            self.chars -= len(self.tail.popleft())

    @property
    def texts(self) -> list[str]:
        return [] if self.first_text is None else [self.first_text, *self.tail]


class _Before:
    """What was observed before a compaction (bounded): the last edits'
    places, the last test run (kept raw: its reason is read only for a
    compaction judged without agitmem's state), the user's last request."""

    def __init__(self) -> None:
        self.edits: list[tuple[str, str | None]] = []
        self.test: tuple[bool, tools.ShellRun] | None = None  # (failed, the run)
        self.prompt = ''

    def copy(self) -> _Before:
        ret = _Before()
        ret.edits, ret.test, ret.prompt = list(self.edits), self.test, self.prompt
        return ret

    def verification(self) -> dict[str, Any] | None:
        """The last test run as state.json's last_verification would have it."""
        if self.test is None:
            return None
        from agitmem import secrets
        failed, run = self.test
        code = run.exit_code if run.exit_code is not None else int(failed)
        return {
            'result': 'failed' if failed else 'passed',
            'command': observed.redacted_clip(run.command, observed.COMMAND_CHARS),
            'reason': secrets.redact(verification.reason(run.output, code)),
        }


# -- the tool events -------------------------------------------------------------

# a Windows session's path: a drive (`D:\\`) or a share (`\\\\srv\\share`)
_DRIVE = re.compile(r'\A(?:[A-Za-z]:[\\/]|\\\\(?![\\/]))')


def _relative(path: str, cwd: str, base: str = '') -> str:
    """An edit's path as the session's hooks would compare it: relative to
    the session's `cwd` where it lies inside it, else absolute; a relative
    path is taken from `base` (the tool call's own workdir) or `cwd`, and
    `.` and `..` are resolved by name (`../../src/a.py`, `/w/r/x/../a.py`:
    one file, spelled once).  The log's text, never the file system: the
    session's machine is not this one.  A relative `base` is the cwd's
    (Codex joins a call's workdir to the session's cwd)."""
    if _DRIVE.match(path) or _DRIVE.match(cwd) or _DRIVE.match(base):
        # a session on Windows: its paths compare case-insensitively, by \ or /
        import ntpath
        base = ntpath.join(cwd, base) if cwd and base else base or cwd
        w = PureWindowsPath(ntpath.normpath(ntpath.join(base, path) if base else path))
        try:
            return w.relative_to(ntpath.normpath(cwd)).as_posix() if cwd else w.as_posix()
        except ValueError:
            return w.as_posix()
    import posixpath
    base = posixpath.join(cwd, base) if cwd and base else base or cwd
    if base.startswith('/') and not path.startswith('/'):
        path = posixpath.join(base, path)
    p = PurePosixPath(posixpath.normpath(path)) if path else PurePosixPath()
    if cwd.startswith('/') and p.is_absolute():
        try:
            return p.relative_to(posixpath.normpath(cwd)).as_posix()
        except ValueError:
            return p.as_posix()
    return p.as_posix()


def _is_memory(rel: str, cwd: str) -> bool:
    """Is an edit at `rel` (from _relative) in memory or agitmem's own
    files, which are not the work: `.agent/` of any case in a Windows
    session (its file system folds case: `.AGENT\\x` is `.agent/x`)."""
    spelled = f'/{rel}'
    return '.agent/' in (spelled.casefold() if _DRIVE.match(cwd) or _DRIVE.match(rel) else spelled)


def _work_edits(raw: dict[str, Any], data: dict[str, Any], cwd: str) -> list[tuple[tools.Edit, str]]:
    """A tool call's edits with their paths as the session's hooks
    compare them (_relative, from the call's own workdir), but those in
    memory and agitmem's own files, which are not the work."""
    paths = tuple(p for p in data.get('paths') or () if isinstance(p, str))
    base = data.get('cwd')  # the tool call's own workdir
    base = base if isinstance(base, str) else ''
    ret = []
    for e in tools.edits(raw, paths):
        rel = _relative(e.path, cwd, base)
        if not _is_memory(rel, cwd):
            ret.append((e, rel))
    return ret


_CFG: dict[str, Any] = {}


def configure(root: str) -> None:
    """Audit a repository's sessions with its own settings: which commands
    are test runs (`verification_commands`, as its hooks take them)."""
    from agitmem import config
    from agitmem.agents import logread
    from agitmem.errors import AgitmemError
    try:
        text = logread.document(f'{root}/.agent/config.yaml', 1 << 20).decode('utf-8', 'replace')
        _CFG.update(config.parse(text, '.agent/config.yaml'))
    except (logread.Refused, AgitmemError):
        pass  # no settings, or damaged ones: the defaults, as a hook would


def tool_events(data: dict[str, Any], cwd: str, whole: bool = True) -> tuple[list[dict[str, Any]], list[tools.ShellRun]]:
    """The recovery log's events of one finished tool call, as the hooks
    make them from its payload (observed.edit_event / command_event); the
    enclosing definition from the file's text as the log has it after the
    edit (the file on disk is another version by now)."""
    raw = data.get('raw')
    events: list[dict[str, Any]] = []
    runs: list[tools.ShellRun] = []
    if isinstance(raw, dict):
        for e, rel in _work_edits(raw, data, cwd):
            after = data.get('after') if whole else None
            # (before a compaction, only where the work was: the edit's own
            # lines say that much, at a fraction of a whole file's cost)
            text = after if isinstance(after, str) and len(after) < 2_000_000 else _local(e)
            _, _, symbol, twice = observed.place(e, rel, text)
            events.append(observed.edit_event(e, rel, symbol, twice))
        run = tools.shell_run(raw)
    else:
        run = None
    given = data.get('run')
    if isinstance(given, tuple) and len(given) == 3:
        run = tools.ShellRun(given[0], given[1], tools.bounded(given[2]))
    if run is not None:
        events.append(observed.command_event(run, _CFG))
        runs.append(run)
    return events, runs


def _local(e: tools.Edit) -> str:
    """Without the file's text: the edit's own lines (a hunk's context
    and added lines; a new function names itself)."""
    return e.text


# -- the task in flight ------------------------------------------------------------

_STATE_LINE = re.compile(r'^(current_goal|current_file|current_symbol|last_action|next_intent): (.*)$')
_VERIFICATION = re.compile(r'^last_verification: (\w+) \(exit [^)]*\) `(.*?)`(?:: (.*?))?(?: \[at [^\]]*\])?$')


def from_block(block: str) -> dict[str, Any]:
    """The yardstick from agitmem's injection block: its STATE lines, the
    snapshot's Goal / In progress / Decisions, the newest notes."""
    state: dict[str, Any] = {}
    sections: dict[str, list[str]] = {}
    where = ''
    for line in block.splitlines():
        if line.startswith('===== AGENT MEMORY END'):
            break
        if line.startswith('## '):
            where = line[3:].split(' ', 1)[0].strip('(:')
            continue
        if line.startswith('### '):
            where = line[4:].strip()
            continue
        if where == 'STATE':
            m = _STATE_LINE.match(line)
            if m:
                state[m[1]] = m[2]
            v = _VERIFICATION.match(line)
            if v:
                state['last_verification'] = {'result': v[1], 'command': v[2], 'reason': v[3] or ''}
        elif where:
            sections.setdefault(where, []).append(line)
    notes = [n[2:] for n in sections.get('NOTES', []) if n.startswith('- ')]
    return recovery_log.expectation(
        state, sections.get('In progress', [])[:20], sections.get('Goal', [])[:20], [], [], notes[-5:],
        sections.get('Decisions', [])[:20],
    )


# a heading is one line: [ \t], not \s, so that a run of blank lines is
# not tried again from each of its starts (quadratic in a 64 KB summary)
_HEADING = re.compile(r'(?m)^[ \t]*(?:#+[ \t]*)?(?:\d+\.[ \t]*)?(?:\*\*)?([A-Z][A-Za-z /&]{2,40}?)(?:\*\*)?:?[ \t]*(?:\*\*)?[ \t]*$')
_XML_TAGS = ('overall_goal', 'current_plan', 'recent_actions', 'key_knowledge', 'file_system_state')


def _sections(summary: str) -> dict[str, str]:
    """Claude Code's summary sections by their lower-cased headings
    ("primary request and intent", "current work", "pending tasks",
    "optional next step", ...); Gemini CLI's <state_snapshot> parts."""
    ret = {}
    for tag in _XML_TAGS:  # the first of each: a search per tag, not per opening
        start = summary.find(f'<{tag}>')
        end = summary.find(f'</{tag}>', start) if start >= 0 else -1
        if end >= 0:
            ret[tag] = summary[start + len(tag) + 2:end].strip()
    heads = list(_HEADING.finditer(summary))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(summary)
        ret.setdefault(m[1].strip().lower(), summary[m.end():end].strip())
    return ret


def _items(text: str) -> list[str]:
    ret = []
    for line in text.splitlines():
        line = re.sub(r'^\s*(?:[-*•]|\d+[.)])\s*', '', line).strip()
        if line:
            ret.append(line)
    return ret


def _clip(text: str, n: int = 600) -> str:
    text = ' '.join(text.split())
    return text if len(text) <= n else text[:n - 1] + '…'


def _named(text: str, path: str) -> bool:
    name = path.rsplit('/', 1)[-1]
    return bool(name) and re.search(rf'(?<![\w.-]){re.escape(name)}(?![\w-])', text) is not None


# a path and its name whole, however many dots (drift.e2e.test.ts, index.d.ts);
# possessive: a run of a million dots is read once, not tried from each
_FILE_NAMED = re.compile(r'(?<![\w/.-])(?:[\w.-]+/)*+[\w-]+(?:\.[\w-]+)++')
_EXTENSION = re.compile(r'[A-Za-z]\w{0,9}')
PATH_CHARS = 1024


def _files_named(summary: str) -> list[str]:
    """The files a summary names: a path ending in an extension, of a
    path's length at most (a run of 600,000 dots names no file)."""
    return [f for f in _FILE_NAMED.findall(summary) if len(f) <= PATH_CHARS and _EXTENSION.fullmatch(f.rsplit('.', 1)[1])]


def from_summary(summary: str, before: _Before) -> dict[str, Any]:
    """The yardstick without agitmem: what the client's summary says was
    in flight, the user's last request, the place of the last edits, the
    last test run."""
    parts = _sections(summary)

    def part(*names: str) -> str:
        return next((parts[n] for n in names if parts.get(n)), '')
    goal = part('overall_goal', 'primary request and intent', 'primary request', 'task', 'goal')
    current = part('current work', 'current state', 'current status', 'work in progress', 'in progress')
    step = part('optional next step', 'next step', 'next steps', 'immediate next step')
    pending = part('pending tasks', 'remaining tasks', 'remaining work', 'todo')
    done: list[str] = []
    plan = parts.get('current_plan', '')
    in_progress = [_clip(current)] if current else []
    # the files the summary names (Claude Code's "Files and Code
    # Sections", its current work): the work's places, as a state's
    # current_file is
    # and the files edited last before it (what the hooks show as OBSERVED)
    named = _files_named(summary)
    paths = list(dict.fromkeys([*named, *(f for f, _ in reversed(before.edits))]))[:40]
    if paths:
        in_progress.append('files: ' + ', '.join(paths))
    # a summary's pending tasks are the rest of the user's request, not
    # other work (a Todo item of agitmem's snapshot is another goal)
    in_progress += [_clip(t, 300) for t in _items(pending)[:10]]
    todo: list[str] = []
    for line in _items(plan):
        mark = re.match(r'\[(DONE|IN PROGRESS|TODO)\]\s*(.*)', line, re.I)
        if not mark:
            continue
        what = mark[1].upper()
        (done if what == 'DONE' else in_progress if what == 'IN PROGRESS' else todo).append(_clip(mark[2], 300))
    if not step and plan:
        step = next(iter(in_progress), '') or next(iter(todo), '')
        if step in todo:
            todo.remove(step)
    if not (goal or current or step) and summary.strip():
        # free text (Codex): its last paragraph says where it stopped
        paras = [p for p in re.split(r'\n\s*\n', summary) if p.strip()]
        step = paras[-1] if paras else ''
    state: dict[str, Any] = {
        'current_goal': _clip(goal or before.prompt, 300),
        'next_intent': _clip(step, 300),
    }
    # the place: the newest file edited before that the work in flight
    # (current work, next step, pending tasks) names; none where it names
    # none (a guess would make every other file the wrong place).  The
    # files line lists every file the summary names and the last edited:
    # a finished step's file is there too
    flight = '\n'.join([step, current, *(p for p in in_progress if not p.startswith('files: '))])
    files = [f for f, _ in before.edits]
    named = [f for f in reversed(files) if _named(flight, f)]
    place = named[0] if named else ''
    if not goal and not flight.strip() and before.prompt:
        state['current_goal'] = _clip(before.prompt, 300)
    if place:
        state['current_file'] = place
        symbols = [s for f, s in reversed(before.edits) if f == place and s]
        symbol = next((s for s in symbols if re.search(rf'(?<![\w$]){re.escape(s.rsplit(".", 1)[-1])}(?![\w$])', flight)), None)
        if symbol:
            state['current_symbol'] = symbol
    lv = before.verification()
    if lv:
        state['last_verification'] = lv
    return recovery_log.expectation(state, in_progress[:20], [_clip(goal, 300)] if goal else [], todo[:20], done[:20])


# -- a log, compaction by compaction --------------------------------------------------

class LogResult(NamedTuple):
    found: list[Found]
    client: str | None
    agitmem: bool


def audit_file(path: str, client: str | None = None, seen: set[str] | None = None) -> LogResult:
    """Every compaction of the log at `path`, judged; one already in
    `seen` (a resumed or forked session's copy) is left out, its index
    kept.  Raises logread.Refused for a path that is no regular file."""
    seen = seen if seen is not None else set()
    meta = {'session': '', 'version': '', 'cwd': ''}
    before = _Before()
    episodes: list[_Episode] = []
    done: list[tuple[_Episode, str, list[str], str | None]] = []
    open_: _Episode | None = None
    injected = False
    last_block: str | None = None
    count = 0
    got_client: str | None = client

    def close(ep: _Episode, text: str | None, why: str | None = None) -> None:
        if why:
            done.append((ep, 'unjudgeable', [why], None))
            return
        verdict, evidence, first = judge(ep, meta, text)
        done.append((ep, verdict, evidence, first))

    for got_client, item in sessionlog.items(path, client):
        kind, data = item
        if kind == 'meta':
            for k in ('session', 'version', 'cwd'):
                meta[k] = meta[k] or data.get(k) or ''
            continue
        if kind == 'injection':
            injected = True
            if open_ is not None and open_.block is None and not open_.events:
                open_.block = data['text']
            else:
                last_block = data['text']
            continue
        if kind == 'compaction':
            if open_ is not None:
                if open_.started:
                    close(open_, None)
                else:
                    close(open_, None, 'compacted again before the agent acted')
            open_ = _Episode(count, data, before)
            open_.prior = last_block
            if isinstance(data.get('request'), str) and data['request'].strip():
                # the user's last request as the compaction kept it (Codex's
                # sealed summary): the log before it may not hold it
                open_.before.prompt = data['request'][:PROMPT_CHARS]
            count += 1
            episodes.append(open_)
            continue
        if kind == 'summary':
            if open_ is not None and open_.summary is None:
                open_.summary = data['text']
            continue
        if open_ is None:
            _note(before, kind, data, meta['cwd'])
            continue
        ep = open_
        if kind == 'prompt':
            if ep.started:
                close(ep, '\n\n'.join(ep.texts) or None if ep.texts else '')
                open_ = None
                _note(before, kind, data, meta['cwd'])
                continue
            ep.started = True
            ep.prompt = data['text']
        elif kind == 'text':
            ep.started = True
            ep.say(data['text'])
            ep.last_text = True
        elif kind == 'tool':
            ep.started = True
            events, _ = tool_events(data, meta['cwd'])
            ep.events = recovery_log.keep(ep.events, events)
            ep.last_text = False
        elif kind == 'end':
            if ep.texts or ep.events:
                close(ep, '\n\n'.join(ep.texts))
                open_ = None
        elif kind == 'new':
            close(ep, None, f'{data.get("why")}: the user started something new')
            open_ = None
    if open_ is not None:
        ep = open_
        if not (ep.texts or ep.events):
            close(ep, None, 'the log ends before the agent acted after the compaction')
        elif not ep.last_text:
            close(ep, None, 'the log ends in the middle of the first turn after the compaction')
        else:
            close(ep, '\n\n'.join(ep.texts))
    found = []
    for ep, verdict, evidence, first in done:
        if ep.key and ep.key in seen:
            continue
        if ep.key:
            seen.add(ep.key)
        found.append(Found(
            file=path, session=meta['session'], index=ep.index, timestamp=ep.at, client=got_client or '?',
            client_version=meta['version'], verdict=verdict, evidence=evidence, agitmem=injected,
            state_from='agitmem state' if ep.block or ep.prior else 'summary' if ep.summary else 'log',
            first_action=first, key=ep.key,
        ))
    found.sort(key=lambda f: f.index)
    return LogResult(found, got_client, injected)


def _note(before: _Before, kind: str, data: dict[str, Any], cwd: str) -> None:
    if kind == 'prompt':
        before.prompt = data['text'][:PROMPT_CHARS]
    elif kind == 'tool':
        raw = data.get('raw')
        if isinstance(raw, dict) and raw.get('tool_name') != 'apply_patch' and not data.get('paths'):
            run = tools.shell_run(raw)
        else:
            given = data.get('run')
            run = tools.ShellRun(given[0], given[1], given[2]) if isinstance(given, tuple) and len(given) == 3 else None
        if run is not None:
            # of a command before the compaction only a test run matters
            patterns = _CFG.get('verification_commands') or verification.DEFAULT_COMMANDS
            if verification.is_test_run(run.command, patterns):
                before.test = (observed.run_failed(run), tools.ShellRun(run.command, run.exit_code, tools.bounded(run.output)))
            return
        # an edit before it: its file, and the definition its own lines are in
        for e, rel in _work_edits(raw, data, cwd) if isinstance(raw, dict) else ():
            lines = e.text[:observed.CHANGED_CHARS].splitlines()
            symbol = observed.defined_in(lines, 1, len(lines), rel.rsplit('.', 1)[-1].lower() if '.' in rel.rsplit('/', 1)[-1] else '') if lines else None
            before.edits = [*before.edits, (rel, symbol)][-BEFORE:]


def judge(ep: _Episode, meta: dict[str, str], text: str | None) -> tuple[str, list[str], str | None]:
    """The one judge, on the episode as the hooks would have recorded it."""
    from agitmem import secrets
    summary = secrets.redact(ep.summary)[:SUMMARY_CHARS] if ep.summary else None
    if ep.block or ep.prior:
        # (the state as last injected before it, where no block came after:
        # Gemini CLI's BeforeModel block is not in its chat file)
        expect = from_block(ep.block or ep.prior or '')
    else:
        expect = from_summary(ep.summary or '', ep.before)
    prompt = secrets.redact(ep.prompt)[:PROMPT_CHARS] if ep.prompt else None
    verdict, evidence, first, _ = judging.judge(expect, [dict(e) for e in ep.events], text, prompt, summary)
    if verdict == 'unknown':
        verdict = 'unjudgeable'
    return verdict, evidence, first


# -- the report ---------------------------------------------------------------------------

def _when(stamp: str) -> datetime.datetime | None:
    try:
        at = datetime.datetime.fromisoformat(stamp.replace('Z', '+00:00'))
    except ValueError:
        return None
    return at if at.tzinfo else at.replace(tzinfo=datetime.timezone.utc)


def since(found: list[Found], date: datetime.date | None) -> list[Found]:
    if date is None:
        return found
    ret = []
    for f in found:
        at = _when(f.timestamp)
        if at is not None and at.date() >= date:
            ret.append(f)
    return ret


def shares(group: list[Found]) -> dict[str, Any]:
    out: dict[str, Any] = {'n': len(group)}
    for v in VERDICTS:
        k = sum(1 for f in group if f.verdict == v)
        out[v] = round(100 * k / len(group), 1) if group else None
    judged = [f for f in group if f.verdict != 'unjudgeable']
    out['judged'] = len(judged)
    return out


def table(found: list[Found]) -> list[tuple[str, dict[str, Any]]]:
    """The report's rows: all, with and without agitmem, by client, by month."""
    rows = [('all', shares(found))]
    rows.append(('with agitmem', shares([f for f in found if f.agitmem])))
    rows.append(('without agitmem', shares([f for f in found if not f.agitmem])))
    for c in sorted({f.client for f in found}):
        rows.append((f'client {c}', shares([f for f in found if f.client == c])))
    for m in sorted({f.timestamp[:7] for f in found if _when(f.timestamp)}):
        rows.append((f'month {m}', shares([f for f in found if f.timestamp[:7] == m and _when(f.timestamp)])))
    return rows


def weekly(found: list[Found]) -> list[tuple[str, dict[bool, tuple[int, int]]]]:
    """(ISO week, {with agitmem: (recovered, judged)}) in week order."""
    weeks: dict[str, dict[bool, list[int]]] = {}
    for f in found:
        at = _when(f.timestamp)
        if at is None or f.verdict == 'unjudgeable':
            continue
        y, w, _ = at.isocalendar()
        cell = weeks.setdefault(f'{y}-W{w:02d}', {True: [0, 0], False: [0, 0]})[f.agitmem]
        cell[1] += 1
        cell[0] += f.verdict == 'recovered'
    return [(k, {a: (v[a][0], v[a][1]) for a in (True, False)}) for k, v in sorted(weeks.items())]


# the walk of a directory named to `recovery audit` (`/`, a whole home):
# bounded in the entries it looks at, how deep it goes and its time (the
# clients' own logs lie 2 to 5 directories deep, a few thousand files)
WALK_ENTRIES = 200_000
WALK_DEPTH = 16
WALK_SECONDS = 30.0


def _log_name(name: str) -> bool:
    return name.endswith('.jsonl') or (name.startswith('session-') and name.endswith('.json'))


def logs_under(
        paths: list[str], *, entries: int = WALK_ENTRIES, depth: int = WALK_DEPTH,
        seconds: float = WALK_SECONDS,
) -> tuple[list[str], str | None]:
    """The files under each of `paths` (a file itself, or a directory's
    *.jsonl and session-*.json files, not through links), sorted per
    path; and why the walk stopped short of all of them (None when it did
    not): past `entries` directory entries or `seconds` it stops, past
    `depth` directories it looks no deeper."""
    import os
    import time
    stop = time.monotonic() + seconds
    seen = 0
    why: str | None = None
    deep = False
    ret: list[str] = []
    for p in paths:
        if not os.path.isdir(p) or os.path.islink(p):
            ret.append(p)
            continue
        found: list[str] = []
        todo = [(p, 0)]
        while todo and why is None:
            d, level = todo.pop()
            if time.monotonic() > stop:
                why = f'stopped after {seconds:g} s'
                break
            try:
                with os.scandir(d) as it:
                    for e in it:
                        seen += 1
                        if seen > entries or seen % 1024 == 0 and time.monotonic() > stop:
                            why = (f'stopped after {entries:,} entries' if seen > entries
                                   else f'stopped after {seconds:g} s')
                            break
                        try:
                            if e.is_dir(follow_symlinks=False):
                                if level + 1 < depth:
                                    todo.append((e.path, level + 1))
                                else:
                                    deep = True  # said at the end: the walk goes on
                            elif _log_name(e.name):
                                found.append(e.path)
                        except OSError:
                            continue
            except OSError:
                continue  # (unreadable, gone): as os.walk leaves it
        ret += sorted(found)
        if why is not None:
            break
    if why is None and deep:
        why = f'looked no deeper than {depth} directories'
    return ret, why
