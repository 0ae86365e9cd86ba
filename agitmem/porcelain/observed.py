"""Observed state: what the hooks saw the agent do, never written by it.

The last edits (file, lines, enclosing definition), the last shell
commands with their exit status, the user's last requests, kept in one
per-worktree file under the git dir (<git dir>/agitmem/observed.json): not
memory, never committed, never "unsaved".  A test run (a command matching
config `verification_commands`) also goes into state.json's
`last_verification`, marked `"observed": true`, under the writers' lock and
without a commit (the next save carries it).

On the post-edit and prompt path: standard library only, except for a
test run, which takes the writers' lock (the test itself took far longer)."""
from __future__ import annotations

import os

from agitmem import caches
from agitmem import jsontext
from agitmem import memory
from agitmem import repo as repo_mod
from agitmem.memory import state as state_mod
from agitmem.repo import Repo

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from agitmem.agents import tools

# what reads the tool calls and finds the definitions an edit is in
# (agents.tools, memory.definitions, paths) is imported where an edit is
# recorded: `load` and the prompt hook read and record no edit

EDITS = 5
COMMANDS = 5
REQUESTS = 3
REQUEST_CHARS = 300
COMMAND_CHARS = 200
# what an edit added, for the recovery verdict: a new helper's body whole
EDIT_TEXT_CHARS = 1000
CHANGED_CHARS = 256 * 1024  # of an edit's text, compared line by line
# how far above an edit to look for its enclosing definition
_SCAN_LINES = 400



def _path(repo: Repo) -> str:
    return os.path.join(repo.gitdir, 'agitmem', 'observed.json')


def load(repo: Repo) -> dict[str, Any]:
    """What was observed ({} when nothing, or when the file is damaged:
    it is a cache of facts, never worth failing a hook over).  Only the
    entries `record_*` writes, each value of its own type: the file is
    in the git dir, writable by whatever writes the repository, and the
    injection formats its values (an edit's `lines: [1]` ended `load` in
    a traceback)."""
    data = caches.read_json(_path(repo))
    if not isinstance(data, dict):
        return {}
    ret = {}
    for key, fields in _SHAPES.items():
        items = data.get(key)
        if isinstance(items, list):
            ret[key] = [_shaped(e, fields) for e in items if isinstance(e, dict) and isinstance(e.get(fields[0]), str)]
    return ret


# each list's entries: their fields, the first of them required (a string)
_SHAPES = {
    'edits': ('file', 'lines', 'symbol', 'at', 'session'),
    'commands': ('command', 'exit_code', 'at', 'session'),
    'requests': ('text', 'at', 'session'),
}


def _shaped(entry: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    """The entry's fields of their type: `lines` two whole numbers (or
    None), `exit_code` a whole number (or None), the rest strings (or
    None); any other value is dropped."""
    ret: dict[str, Any] = {}
    for f in fields:
        v = entry.get(f)
        if f == 'lines':
            ok = v is None or isinstance(v, list) and len(v) == 2 and all(_whole(n) for n in v)
        elif f == 'exit_code':
            ok = v is None or _whole(v)
        else:
            ok = v is None or isinstance(v, str)
        if ok and f in entry:
            ret[f] = v
    return ret


def _whole(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _store(repo: Repo, data: dict[str, Any]) -> None:
    # no fsync (a few ms on every edit and prompt): a crash of the machine
    # may leave it old or empty, which `load` reads as nothing observed.
    # A lone surrogate from a payload (only ever inside a JSON string) is
    # written as its JSON escape: `load` reads the same text back.  One
    # line: with an indent json encodes in Python, not C (a fifth of a
    # millisecond on every edit and prompt, for a file no one reads by eye)
    text = jsontext.dumps(data, ensure_ascii=False, separators=(',', ':')) + '\n'
    repo_mod.atomic_write(_path(repo), text.encode('utf-8', 'backslashreplace'), durable=False)


def enclosing(lines: list[str], start: int, ext: str) -> str | None:
    """The nearest definition at or above 1-based line `start` that
    encloses it (indented less, or the block opener of a brace language)."""
    from agitmem.memory import definitions
    patterns = definitions.patterns(ext)
    if not patterns or not lines:
        return None
    start = min(max(start, 1), len(lines))
    first = lines[start - 1]
    here = len(first) - len(first.lstrip()) if first.strip() and ext.lower() not in definitions.FLAT else None
    for i in range(start - 1, max(start - 1 - _SCAN_LINES, -1), -1):
        line = lines[i]
        if not line.strip() or line.strip() == '{':  # Allman braces open, not enclose
            continue
        indent = len(line) - len(line.lstrip())
        for p in patterns:
            m = p.match(line)
            if m and m[1] and (i == start - 1 or here is None or indent < here):
                return definitions.name(m)
        if here is not None and indent < here:
            here = indent  # deeper definitions above do not enclose it
    return None


def _relative(repo: Repo, path: str, cwd: str | None) -> str:
    # as the working tree spells it: on a file system that folds case or
    # decomposes names, the agent's `Src/Über.py` is git's `src/über.py`
    from agitmem import paths
    return paths.relative(repo, path, cwd) or path


def _locate(edit: tools.Edit, text: str) -> tuple[int | None, int | None]:
    if edit.start is not None:
        return edit.start, edit.end
    needle = edit.text.strip('\n')
    if not needle:
        return None, None
    at = text.find(needle)
    if at < 0:
        # its first line, not all of a 30 MB new_string split
        first = needle[:CHANGED_CHARS].splitlines()[0].strip()
        at = text.find(first) if first else -1
        if at < 0:
            return None, None
        needle = first
    start = text.count('\n', 0, at) + 1
    return start, start + needle.count('\n')


def defined_in(lines: list[str], start: int, end: int | None, ext: str) -> str | None:
    """The definition the lines `start`..`end` (1-based) write when they
    begin one (a new function is its own, not the one above it); else the
    one their first line is in."""
    from agitmem.memory import definitions
    patterns = definitions.patterns(ext)
    if not patterns or not lines:
        return None
    last = min(end if end is not None else start, len(lines))
    first = next((i for i in range(max(start, 1) - 1, last) if lines[i].strip()), None)
    if first is None:
        return enclosing(lines, start, ext)
    opened = definitions.opens(lines[first], ext)
    if opened:
        return opened
    return enclosing(lines, first + 1, ext)


def _read(full: str) -> str:
    try:
        # bounded and a regular file only: a link to /dev/zero has size 0
        return repo_mod.read_regular(full, 2_000_000).decode('utf-8', 'replace')
    except (OSError, ValueError):  # ValueError: a NUL in a payload's path
        return ''


def _ext(rel: str) -> str:
    return rel.rsplit('.', 1)[-1].lower() if '.' in rel.rsplit('/', 1)[-1] else ''


def symbol_at(repo: Repo, rel: str, start: int, end: int | None) -> tuple[str | None, bool]:
    """(the definition lines `start`..`end` of the file `rel` write or
    are in, whether the file defines it twice)."""
    text = _read(os.path.join(repo.top, rel))
    lines = text.splitlines()
    symbol = defined_in(lines, start, end, _ext(rel)) if text else None
    return symbol, twice(lines, symbol, _ext(rel))


def twice(lines: list[str], symbol: str | None, ext: str) -> bool:
    """The file defines `symbol` more than once in one scope (a step done
    again); in a language of clauses or overloads, by the same line more
    than once.  Methods of one name in two classes (or on two Go
    receivers) are two definitions, not one written twice."""
    if not symbol:
        return False
    from agitmem.memory import definitions
    patterns = definitions.patterns(ext)
    whole = ext.lower() in definitions.OVERLOADED
    found: list[tuple[str | None, str]] = []
    for i, line in enumerate(lines):
        # more impl blocks of one type are no second definition (Rust)
        if symbol in line and not line.lstrip().startswith('impl') and any((m := p.match(line)) and m[1] and definitions.name(m) == symbol for p in patterns):
            found.append((_scope(lines, i, ext), ' '.join(line.split()) if whole else symbol))
    return len(found) > len(set(found))


# a Go method's receiver type: `func (s *Store) Get(` is Store's Get
# compiled on first use by re's own cache (a Go file's edit): re is not
# imported on the hooks' paths otherwise (agitmem/jsontext.py)
_RECEIVER = r'^func\s*\(\s*(?:\w+\s+)?\*?\s*([\w.]+)'


def _scope(lines: list[str], i: int, ext: str) -> str | None:
    """Where the definition on line `i` (0-based) is made: the receiver of
    a Go method, else the nearest definition above it indented less (its
    class); None at the top level, or in a language whose blocks are not
    indented."""
    from agitmem.memory import definitions
    line = lines[i]
    receiver = None
    if ext.lower() == 'go':
        import re
        receiver = re.match(_RECEIVER, line)
    if receiver:
        return receiver[1]
    indent = len(line) - len(line.lstrip())
    if not indent or ext.lower() in definitions.FLAT:
        return None
    patterns = definitions.patterns(ext)
    for above in reversed(lines[max(i - _SCAN_LINES * 10, 0):i]):
        if not above.strip() or len(above) - len(above.lstrip()) >= indent:
            continue
        named = next((definitions.name(m) for p in patterns if (m := p.match(above)) and m[1]), None)
        if named:
            return named
        indent = len(above) - len(above.lstrip())
        if not indent:
            return None
    return None


def changed(text: str, removed: str) -> tuple[str, str]:
    """(the lines `text` adds, the lines of `removed` it takes out): an
    edit tool's new text repeats the unchanged lines around the change,
    and a realigned line (whitespace only) is no change."""
    def key(line: str) -> str:
        return ' '.join(line.split())
    # what is kept of it is a clip of EDIT_TEXT_CHARS: the start of a
    # huge edit (a 30 MB Write took 15 s here) says as much
    text, removed = text[:CHANGED_CHARS], removed[:CHANGED_CHARS]
    old = {key(line) for line in removed.splitlines()}
    new = {key(line) for line in text.splitlines()}
    added = '\n'.join(line for line in text.splitlines() if key(line) not in old)
    gone = '\n'.join(line for line in removed.splitlines() if key(line) not in new)
    return added, gone


def clip_text(text: str) -> str:
    """What an edit wrote, short: the recovery log weighs it against the
    task's words (and takes secrets out of it, if it keeps it)."""
    return _clip(text, EDIT_TEXT_CHARS)


def edit_entry(repo: Repo, edit: tools.Edit, cwd: str | None) -> dict[str, Any]:
    rel = _relative(repo, edit.path, cwd)
    start, end, symbol, again = place(edit, rel, _read(os.path.join(repo.top, rel)))
    return {
        'file': rel, 'lines': [start, end] if start is not None else None, 'symbol': symbol,
        'twice': again, 'at': state_mod.now_iso(),
    }


def place(edit: tools.Edit, rel: str, text: str) -> tuple[int | None, int | None, str | None, bool]:
    """(first line, last line, the definition it is in, whether the file
    defines that twice) of an edit of `rel`, whose text after the edit is
    `text` (the file on disk for a hook; the log's own copy for an audit)."""
    start, end = _locate(edit, text)
    lines = text.splitlines()
    symbol = defined_in(lines, start, end, _ext(rel)) if start is not None and text else None
    return start, end, symbol, twice(lines, symbol, _ext(rel))


def _push(items: object, entry: dict[str, Any], keep: int) -> list[dict[str, Any]]:
    old = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    return [*old, entry][-keep:]


def _clip(text: str, n: int) -> str:
    text = ' '.join(text.split())
    return text if len(text) <= n else text[:n - 1] + '…'


# characters scanned past what a clip keeps: more than any credential is
# long, so one the scanned window cuts never reaches the clip
SCAN_MARGIN = 8192


def _redacted(text: str) -> str:
    """secrets.redact(text), the scanner imported only where one of its
    rules could run (secret_words.may_hold: not for `go on`)."""
    from agitmem import secret_words
    if not secret_words.may_hold(text):
        return text
    from agitmem import secrets
    return secrets.redact(text)


def redacted_clip(text: str, n: int) -> str:
    """`_clip(secrets.redact(text), n)`, scanning only the start that can
    reach the clip (a 60 MB prompt was scanned whole: 100 s in the prompt
    hook): a window of the raw text, doubled until its redacted, clipped
    form runs SCAN_MARGIN characters past n, or it is the whole text."""
    size = n + SCAN_MARGIN
    while True:
        window = text[:size]
        flat = ' '.join(_redacted(window).split())
        if size >= len(text) or len(flat) >= n + SCAN_MARGIN:
            return _clip(flat, n)
        size *= 2


def record_tool(
        repo: Repo,
        cfg: dict[str, Any],
        raw: dict[str, object],
        paths: tuple[str, ...],
        cwd: str | None,
        session: str,
) -> list[dict[str, Any]]:
    """Record a tool event's edits and shell command (a test run goes into
    state.json too).  Returns what was seen, as events for the recovery
    log: edits with file and symbol, the command with its exit status and,
    for a test run, its result."""
    from agitmem.agents import tools
    edits = tools.edits(raw, paths)
    run = tools.shell_run(raw)
    if not edits and run is None:
        return []
    data = load(repo)
    events: list[dict[str, Any]] = []
    for e in edits:
        if '.agent/' in f'/{_relative(repo, e.path, cwd)}':
            continue  # memory and agitmem's own files are not the work
        entry = edit_entry(repo, e, cwd)
        twice = entry.pop('twice')
        data['edits'] = _push(data.get('edits'), {**entry, 'session': session}, EDITS)
        events.append(edit_event(e, entry['file'], entry['symbol'], twice))
    if run is not None:
        event = command_event(run, cfg)
        data['commands'] = _push(
            data.get('commands'),
            {'command': event['command'], 'exit_code': run.exit_code, 'at': state_mod.now_iso(), 'session': session},
            COMMANDS,
        )
        if event['test']:
            _verification(repo, event['command'], run)
        events.append(event)
    _store(repo, data)
    return events


# -- one tool event as the recovery log's events ---------------------------------
# The hooks (record_tool) and `recovery audit` (porcelain/log_episodes.py,
# reading a client's own log) make a first turn's events here, so that one
# classifier judges the same episode either way.

def edit_event(e: tools.Edit, rel: str, symbol: str | None, twice: bool) -> dict[str, Any]:
    """An edit of the file `rel`, in `symbol`: the lines it added and took out."""
    added, gone = changed(e.text, e.removed)
    edited = {'kind': 'edit', 'file': rel, 'symbol': symbol, 'text': clip_text(added)}
    if gone:
        edited['removed'] = clip_text(gone)
    return {**edited, 'twice': True} if twice else edited


def run_failed(run: tools.ShellRun) -> bool:
    """A test run failed: its exit code, or where the client gives none
    (Codex), what its output says."""
    from agitmem.memory import verification
    return verification.failed_by_output(run.output) if run.exit_code is None else run.exit_code != 0


def command_event(run: tools.ShellRun, cfg: dict[str, Any]) -> dict[str, Any]:
    """A shell command with its exit status; a test run (config
    `verification_commands`) with its result."""
    from agitmem.memory import verification
    command = redacted_clip(run.command, COMMAND_CHARS)  # a command line may hold a token
    event: dict[str, Any] = {'kind': 'command', 'command': command, 'exit_code': run.exit_code, 'test': None}
    if run.exit_code is None:
        # no exit code (Codex): what the output says of the run, if it says
        event['outcome'] = verification.outcome(run.output)
    patterns = cfg.get('verification_commands') or verification.DEFAULT_COMMANDS
    if verification.is_test_run(run.command, patterns):
        event['test'] = 'failed' if run_failed(run) else 'passed'
    return event


def _verification(repo: Repo, command: str, run: tools.ShellRun) -> dict[str, Any]:
    from agitmem.memory import verification
    failed = run_failed(run)
    code = run.exit_code
    from agitmem import secrets
    lv = {
        'command': command,
        'result': 'failed' if failed else 'passed',
        'exit_code': code,
        'reason': secrets.redact(verification.reason(run.output, (code if code is not None else int(failed)))),
        'at': state_mod.now_iso(),
        'tree': repo_mod.worktree_tree(repo),
        'observed': True,
    }
    write_verification(repo, lv)
    return lv


def write_verification(repo: Repo, lv: dict[str, Any]) -> bool:
    """Put an observed test run into state.json under the writers' lock
    (so a concurrent `state set` is never lost), without a commit, keeping
    its step, updated_at and mtime: a fact, not the agent's progress."""
    from agitmem import store  # the lock lives with the writers
    from agitmem.porcelain import read
    path = repo.memory_dir / memory.STATE
    shown = f'.agent/memory/{memory.STATE}'
    with store.locked(repo):
        # a regular file only (AgitmemError else): a FIFO would block the
        # hook, a link to /dev/zero fill the memory
        text = read.read_text(path, shown)
        if text is None:
            return False  # no state yet: nothing the agent would read it in
        st = os.lstat(path)
        current = state_mod.parse(text, shown) if text.strip() else {}
        current['last_verification'] = lv
        # a lone surrogate of the payload's (its command, its output), only
        # ever inside a JSON string: written as its JSON escape, as _store does
        repo_mod.atomic_write(path, state_mod.render(current).encode('utf-8', 'backslashreplace'))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return True


def record_prompt(repo: Repo, prompt: str | None, session: str) -> None:
    if not prompt or not prompt.strip():
        return
    text = redacted_clip(prompt, REQUEST_CHARS)
    data = load(repo)
    data['requests'] = _push(data.get('requests'), {'text': text, 'at': state_mod.now_iso(), 'session': session}, REQUESTS)
    _store(repo, data)
