"""The recovery classifier: the verdict on the agent's first turn after a
compaction, held against what the state said when it came (the
yardstick, recovery_log.expectation).

The verdicts are seed 004's (section 5): recovered, goal drift, location
lost, state confusion, full reset; `unknown` where the first turn shows
nothing to judge by.  Only a verdict needs this module (and its phrase
lists, memory/phrases.py, which cost tens of milliseconds to compile):
the hooks that only add to the log import memory/recovery_log.py."""
from __future__ import annotations

import re
import shlex
from typing import Any
from typing import NamedTuple

from agitmem.memory import phrases

# a test command a claim names: the run that backs it must be that one
_RUNNER = re.compile(
    r'\b(?:pytest|tox|nox|jest|vitest|mocha|rspec|ctest|bats|phpunit|prove|unittest|'
    r'(?:npm|yarn|pnpm|cargo|go|mvn|gradle|make|dotnet|swift|mix|bun|deno)\s+(?:run\s+)?test)\b'
    # a build tool's test task after its options: `./mvnw -q test`,
    # `./gradlew :app:testDebugUnitTest`, `python manage.py test`, `php artisan test`
    r'|\b(?:mvnw?|gradlew?|mix|cabal|stack|swift|dart|flutter|sbt|bazel|rake|artisan|manage\.py|terraform|busted)\b'
    r'(?:\s+-[^\s&|;]+)*\s+["\']?:?(?:[\w-]+:)*test\w*\b'
    # a task runner's test task: `mise run test:ci`, `just test`, `task test-unit`,
    # `bun run test:e2e`, `make check-test`, `hatch run test`
    r'|\b(?:mise|just|task|make|poe|invoke|nx|turbo|hatch|pdm|rye|uv|poetry|composer|(?:npm|yarn|pnpm|bun)(?:\s+run)?)'
    r'(?:\s+run)?(?:\s+-[^\s&|;]+)*\s+(?:[\w.-]+[:-])?tests?(?![\w.])'
    # a workspace package's test script: `pnpm --filter e2e test`, `npm -w
    # web test`, `yarn workspace api test`
    r'|\b(?:npm|yarn|pnpm|bun)\b(?:\s+(?:--?(?:filter|F|workspace|w|C|dir|prefix|cwd)(?:=|\s+)[^\s&|;]+|workspace\s+[^\s&|;]+|-[^\s&|;]+|run))+'
    r'\s+(?:[\w.-]+[:-])?tests?(?![\w.])'
    # browser test runners, bare or through npx / bunx / a package manager's exec
    r'|\bplaywright\s+test\b|\bcypress\s+run\b'
    # a project's whole check, which runs its tests among its steps: `bun
    # verify`, `mise ci`, `npm run validate`, `make check`, `mise run check`
    r'|\b(?:mise|just|task|make|poe|nx|turbo|npm|yarn|pnpm|bun)(?:\s+run)?\s+(?:verify|ci|validate)(?![\w.:-])'
    r'|\b(?:make|mise|just|task)(?:\s+run)?\s+check(?![\w.:-])',
    re.I,
)
# the commands of a check other than the tests, by the kind a claim names (phrases.checks)
_CHECK_COMMANDS = {
    'build': r'\b(?:build|compile|tsc|tsup|webpack|javac|gcc|g\+\+|clang|make)\b',
    'lint': r'\b(?:vet|lint|eslint|ruff|flake8|pylint|mypy|tsc|clippy|check|typecheck)\b',
}
# a test run's selection: pytest -k EXPR and node ids, go test -run, jest/vitest -t
_SELECT = re.compile(
    r"""(?:\s-k\s*|\s-run[=\s]+|\s-t\s+|\s--testNamePattern[=\s]+|\s--grep[=\s]+|::)(?:"([^"]*)"|'([^']*)'|([^\s'"]+))""",
)
_TEST_WORD = re.compile(r'\btests?\b|\bpytest\b|\bverif|测试|验证', re.I)


def _str(value: object) -> str:
    return value if isinstance(value, str) else ''


# a word (a run of path characters) longer than this names no file, symbol
# or command anyone types: the judge's regexes that find where a text names
# a file try every start of a word, quadratic in its length (a state's goal
# holding a 20,000-character word took 5 to 43 s of CPU for each edit)
_WORD_CHARS = 256
_LONG_WORD = re.compile(r'[\w./-]{%d,}' % (_WORD_CHARS + 1))


def _short_words(text: str) -> str:
    """`text` with each word over _WORD_CHARS cut to its first _WORD_CHARS
    (every text the judge reads: the state's, the client's, the agent's)."""
    return _LONG_WORD.sub(lambda m: m[0][:_WORD_CHARS], text) if len(text) > _WORD_CHARS else text


def _sound(expect: dict[str, Any]) -> dict[str, Any]:
    """`expect` with text where text belongs: it comes back from the
    session's hook state, which may be damaged."""
    ret = dict(expect)
    for key in (
            'current_file', 'current_symbol', 'current_goal', 'next_intent', 'verification_reason', 'last_action',
            'verification_command',
    ):
        ret[key] = _short_words(_str(expect.get(key)))
    for key in ('in_progress', 'goal', 'todo', 'done', 'notes', 'decisions'):
        value = expect.get(key)
        ret[key] = [_short_words(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []
    ret['verification'] = _str(expect.get('verification')) or None
    return ret


def _mentions(text: str, path: str) -> bool:
    """`path` is named in `text`: itself, a tail of it ("config/loader.ts"
    for src/config/loader.ts) or its bare file name; not another file of
    that name ("tests/app.py" is not src/app.py)."""
    if not path or not text:
        return False
    name = path.rsplit('/', 1)[-1]
    for m in re.finditer(rf'[\w./-]*(?<![\w.-]){re.escape(name)}(?![\w-])', text):
        named = m[0].lstrip('./')
        if named in (path, name) or path.endswith('/' + named) or named.endswith('/' + path):
            return True
    return False


def _in_directory(text: str, path: str) -> bool:
    """`path` lies in a directory `text` names ("bump react in
    packages/ui" for packages/ui/package.json)."""
    return any(
        '/' in d.strip('/') and path.startswith(d.strip('/').lstrip('./') + '/')
        for d in re.findall(r'[\w.-]+(?:/[\w.-]+)+/?', text)
    )


# extensions of one language family: a change made in parse.ts can be made
# in a .js copy of it (src/legacy/cronParse.js)
_FAMILIES = {
    'js': 'js', 'jsx': 'js', 'mjs': 'js', 'cjs': 'js', 'ts': 'js', 'tsx': 'js', 'mts': 'js', 'cts': 'js',
    'py': 'py', 'pyi': 'py', 'c': 'c', 'h': 'c', 'cc': 'c', 'cpp': 'c', 'cxx': 'c', 'hpp': 'c', 'hh': 'c',
    'yml': 'yaml', 'yaml': 'yaml', 'sh': 'sh', 'bash': 'sh', 'kt': 'jvm', 'kts': 'jvm', 'java': 'jvm',
    # fixed-form and free-form Fortran (a legacy .f beside a .f90) hold the same code
    'f': 'fortran', 'for': 'fortran', 'ftn': 'fortran', 'f77': 'fortran', 'f90': 'fortran', 'f95': 'fortran',
    'f03': 'fortran', 'f08': 'fortran', 'erl': 'erlang', 'hrl': 'erlang', 'ex': 'elixir', 'exs': 'elixir',
}


# a backup's own ending (loader.ts.bak, loader.ts~): the file it copies is
# the one before it
_BACKUP_END = re.compile(r'(?:~|\.(?:bak|backup|orig|old|save|copy|tmp|prev))+$', re.I)


def _unmarked(name: str, mark: re.Pattern[str]) -> str:
    """`name` without the copy's mark it ends in; only its last 64
    characters are looked at (a path from a log may be a megabyte of
    dots, and an end-anchored search is tried from each)."""
    tail = name[-64:]
    m = mark.search(tail)
    return name[:len(name) - len(tail) + m.start()] if m and m.start() else name


def _kind(path: str) -> str:
    """A file's language (its extension's family): which files can hold
    the same change (a backup `loader.ts.bak` holds TypeScript)."""
    name = _unmarked(path.rsplit('/', 1)[-1], _BACKUP_END)
    ext = name.rsplit('.', 1)[-1].lower() if '.' in name else ''
    return _FAMILIES.get(ext, ext)


# a copy's marks: a directory of copies (backup/, old/), or a name a copy
# is given (loader.old.ts, loader_backup.ts, "loader copy.ts", loader.ts.bak)
_COPY_DIR = re.compile(r'(?:^|/)(?:backups?|bak|old|orig|originals?|copy|copies|archived?|\.?trash)/', re.I)
_COPY_MARK = re.compile(r'[ ._-]+(?:bak|backup|orig|original|old|copy(?: ?\d+)?|\(copy(?: ?\d+)?\))$', re.I)


def _copy_of(f: str, place: str) -> bool:
    """`f` is a copy of the file `place`: the same name with a copy's mark
    (loader.old.ts, loader.ts.bak), or the same path under a directory of
    copies that `place` is not in (backup/src/loader.ts)."""
    if not f or not place or f == place or _kind(f) != _kind(place):
        return False
    name, want = f.rsplit('/', 1)[-1], place.rsplit('/', 1)[-1]
    if len(name) > 255:  # no file system's name
        return False
    bare = _unmarked(name, _BACKUP_END)
    stem, ext = (bare.rsplit('.', 1) + [''])[:2] if '.' in bare else (bare, '')
    marked = _unmarked(stem, _COPY_MARK)
    if (marked != stem or bare != name) and f'{marked}.{ext}'.rstrip('.') == want:
        return True
    return name == want and _COPY_DIR.search(f) is not None and _COPY_DIR.search(place) is None


# a test file's name: test_x.py, x_test.go, x.test.ts, x.spec.js, XTest.java;
# or any name in a tests directory (tests/lexer.rs)
# (x.e2e.test.ts, x.integration.spec.js: a kind of test of x)
_TEST_NAME = re.compile(r'^test_(.+)$|^(.+?)(?:[._-](?:e2e|integration|int|unit|it|live))?(?:_test|\.test|\.spec|_spec|Tests?)$')
_TEST_DIR = re.compile(r'(?:^|/)(?:tests?|__tests__|spec)/')


def _tests_of(test: str, path: str) -> bool:
    """`test` is the test file of `path` (csv_test.go of csv.go,
    tests/lexer.rs of src/lexer.rs, tests/test_overlap.py of
    bookings/overlap.py)."""
    if not test or not path or test == path or _kind(test) != _kind(path):
        return False
    stem = path.rsplit('/', 1)[-1].rsplit('.', 1)[0]
    name = test.rsplit('/', 1)[-1].rsplit('.', 1)[0]
    m = _TEST_NAME.match(name)
    return (m[1] or m[2]) == stem if m else name == stem and _TEST_DIR.search(test) is not None


_DOCUMENTS = frozenset(('md', 'markdown', 'mdx', 'rst', 'txt', 'adoc', 'asciidoc', 'org', 'textile'))


def _document(path: str) -> bool:
    """A document (README.md, docs/*.rst): it holds no code change;
    writing it is documenting, a task of its own."""
    return _kind(path) in _DOCUMENTS


def _names_a_file(text: str, path: str) -> bool:
    """`text` names a file of `path`'s kind (its language): a place the
    task's change could have been meant for."""
    return any(_kind(p) == _kind(path) for p in re.findall(r'[\w./-]*\w\.[A-Za-z]\w*', text))


def _mentions_loosely(text: str, path: str) -> bool:
    """`path` is named in `text`, or its file name without the extension
    is ("the README" for README.md)."""
    stem = path.rsplit('/', 1)[-1].split('.', 1)[0]
    return _mentions(text, path) or (len(stem) >= 4 and re.search(rf'(?<![\w/.-]){re.escape(stem)}(?![\w-])', text) is not None)


def _names(text: str, name: str) -> bool:
    """The identifier `name` is named in `text`."""
    return bool(name) and re.search(rf'(?<![\w$]){re.escape(name)}(?![\w$])', text) is not None


def _names_code(text: str, name: str) -> bool:
    """`text` names the identifier `name` as code: `name`, name(), or a
    name no prose word has (snake_case, camelCase, digits); "summary" in
    a sentence is not the function summary."""
    if not _names(text, name):
        return False
    if re.search(r'[_\d]|[a-z][A-Z]', name):
        return True
    return re.search(rf'`{re.escape(name)}`|(?<![\w$]){re.escape(name)}\s*\(', text) is not None


def _clip(text: str, n: int = 200) -> str:
    text = ' '.join(text.split())
    return text if len(text) <= n else text[:n - 1] + '…'


class _Task(NamedTuple):
    """What the first turn is judged against."""
    text: str  # the task: current_goal, next_intent, In progress (and a new request)
    others: tuple[tuple[str, str], ...]  # other tasks, (what, text): Todo items, side remarks, notes
    request: str | None  # the user's new request after the compaction
    restated: bool  # the user's prompt said the task again
    failing: str = ''  # why the last verification failed: what the task must turn green

    @property
    def other(self) -> str:
        return '\n'.join(t for _, t in self.others)


def _task(expect: dict[str, Any], prompt: str | None, summary: str | None) -> _Task:
    task = '\n'.join([
        expect['current_goal'], expect['next_intent'], *expect['in_progress'],
        expect['current_file'], expect['current_symbol'],
    ])
    if not task.strip():  # no state: the snapshot's Goal is all there is
        task = '\n'.join(expect['goal'])
    others = tuple(
        [('Todo item', t) for t in expect['todo']]
        + [('side remark of the summary', t) for t in phrases.side_remarks(summary or '')]
        + [('note', t) for t in expect['notes'][-5:]]
    )
    # a remark of the summary most of whose words are the task's own says
    # the task again ("also need to update the tests in test_exports.py"
    # beside a next step that updates them): it is no other task
    mine = phrases.words(task)
    others = tuple(
        (what, t) for what, t in others
        if what != 'side remark of the summary' or not _most(phrases.words(t), mine)
    )
    request, restated = None, False
    said = (prompt or '').strip()
    # "did the JPY test pass?", "现在什么情况？": a question how the work
    # stands asks for no other work
    if said and not phrases.goes_on(said) and not phrases.asks_status(said):
        mine, theirs = phrases.words(task), phrases.words(said)
        if theirs and len(theirs & mine) >= 0.6 * len(theirs) and len(theirs & mine) >= 2:
            restated = True
        else:
            request = said
            # the user asked for what a Todo item or a side remark names:
            # that is the task now, not another one
            others = tuple(
                (what, t) for what, t in others
                if not (len(theirs & phrases.words(t)) >= 3 and len(theirs & phrases.words(t)) > len(theirs & mine))
            )
            task = f'{said}\n{task}'
    failing = expect['verification_reason'] if expect['verification'] == 'failed' else ''
    return _Task(task, others, request, restated, failing)


def _most(words: set[str], of: set[str]) -> bool:
    """More than half of `words` (three at least) are in `of`."""
    hit = len(words & of)
    return hit >= 3 and hit > 0.5 * len(words)


_DEFINES = r'(?:\b(?:def|function|func|fn|class|struct|interface|type|enum|trait|impl|var|let|const)\s+(?:\([^)]*\)\s*)?{0}\b|\b{0}\s*(?::[^=\n]*)?=\s*(?:async\s*)?(?:function\b|\())'
# next_intent asks for the references to change too: an edit of a caller
# or an import of current_symbol in another file is then the task's
# ("call .normalize() in X" is X's own change, not its callers')
_REFERENCES = re.compile(r'\b(?:imports?|callers?|call\s+sites?|calls?\s+(?:to|of)\b|usages?|references?|wire)|引用|调用|导入', re.I)
# "X, then Y": Y is a later step, not the one to take first
_LATER = re.compile(r'\b(?:then|afterwards?|after\s+that|once\s+(?:that|this|it)\b)|然后|之后|再', re.I)
# a file (with an extension) or a directory (ending in /): "limit/offset" and
# "trace/debug/info" are words, not places
_PATH = re.compile(
    # a path begun where its run of [\w.-] begins (one begun inside the run
    # is found from its start; begun at each character, each scanned the
    # rest of the run: 32 KB of "1.1.1..." took seconds)
    r'(?<![\w.-])(?:[\w.-]+/)+[\w.-]*\.[A-Za-z]\w*|(?<![\w.-])(?:[\w.-]+/)+(?![\w.])|(?<![\w-])-*\b[\w-]+\.(?:py|pyi|ts|tsx|js|jsx|mjs|go|rs|rb|java|kt|c|h|cc|cpp|hpp|cs|swift|php|'
    r'md|rst|txt|json|ya?ml|toml|cfg|ini|sh|sql|html|css|vue|lock)\b',
)


# a name only code has: snake_case, camelCase, a call
_CODE_NAME = re.compile(r'\b[A-Za-z]\w*_\w+|\b[a-z]+[A-Z]\w*|\b\w+\(\)')


def _defines(text: str, name: str) -> bool:
    return bool(name) and re.search(_DEFINES.format(re.escape(name)), text) is not None


def _named_by(text: str, symbol: str) -> bool:
    """`symbol` is named in `text`, itself or by all its words (httpClient
    in "bump the HTTP client timeout")."""
    if not text:
        return False
    if _names(text, symbol):
        return True
    parts = phrases.words(symbol) - {symbol.lower()}
    return len(parts) >= 2 and parts <= phrases.words(text)


class _Serves(NamedTuple):
    """Which task an edit's new words match: the goal's or another's."""
    goal: int  # words it adds that only the task has
    other: int  # words it adds that only the best-matching other task has
    item: tuple[str, str] | None  # that other task, (what, text)


def _content(text: str) -> set[str]:
    """The stems of `text` without its file paths, and its literals
    (10-30/10): where an edit is is judged apart from what it does."""
    text = _PATH.sub(' ', text)
    return phrases.stems(text) | phrases.literals(text)


def _serves(task: _Task, new: set[str]) -> _Serves:
    """Compare `new` (the stems an edit or a closing text introduces)
    with the task and with each other task; a word both have decides
    nothing."""
    # the failing test's literal inputs ("bad range "10-30/10"") are the goal's
    goal = _content(task.text) | phrases.literals(task.failing)
    items = [(what, text, _content(text)) for what, text in task.others]
    theirs = set().union(*(w for _, _, w in items)) if items else set()
    best = max(items, key=lambda i: len(new & (i[2] - goal)), default=None)
    hit = len(new & (best[2] - goal)) if best else 0
    return _Serves(len(new & (goal - theirs)), hit, (best[0], best[1]) if best and hit else None)


def _edit_serves(task: _Task, added: str, removed: str, adds: list[str]) -> _Serves:
    """What an edit introduces, compared with the tasks: the names it
    defines first (a new function is named for what it is for), else the
    words of the lines it added and not of those it took out
    (identifiers by their parts, words by their stems, Chinese by
    bigrams)."""
    by_lines = _serves(task, _content(added) - _content(removed))
    if adds:
        by_name = _serves(task, phrases.stems(' '.join(adds)))
        if by_name.goal or by_name.other:
            # lines that lean the same way, and further, say it more
            # surely than the name's one word (`scaleOf` beside `currency`
            # and `"JPY" | "KRW"`); lines that lean the other way do not
            # overrule what a new function is named for
            lean = (by_name.other > by_name.goal) - (by_name.other < by_name.goal)
            same = lean == (by_lines.other > by_lines.goal) - (by_lines.other < by_lines.goal) != 0
            further = abs(by_lines.other - by_lines.goal) > abs(by_name.other - by_name.goal)
            return by_lines if same and further else by_name
    return by_lines


def _redone(expect: dict[str, Any], f: str, adds: list[str]) -> str | None:
    """The Done (or last_action) line that records a name this edit
    defines as already added in another file: the step done again."""
    lines: list[str] = [*expect['done'], expect['last_action']]
    for line in lines:
        if not _PATH.search(line) or _mentions(line, f):
            continue
        for name in adds:
            if _names_code(line, name):
                return line
    return None


def _rewritten(
        expect: dict[str, Any], task: _Task, f: str, rewrites: list[str], adds: list[str], serves: _Serves,
        at_current: bool,
) -> str | None:
    """The Done (or last_action) line that records as written the file
    `f` and a definition this edit writes anew (`rewrites`: names both
    its added and its removed lines define), or, before the turn changed
    current_file (`at_current`: tests added after the change are its
    tests), that records `f` written with definitions it names while
    this edit adds others to it (`adds`: the step written again under new
    names) or brings nothing of the goal's (`serves`: it only rewrites or
    drops what is there); away from current_file and from what the
    change the task asks for names (next_intent, In progress, the user's
    request): a finished step done again."""
    change = '\n'.join([task.request or '', expect['next_intent'], *expect['in_progress']])
    if not f or f == expect['current_file'] or _mentions(change, f):
        return None
    lines: list[str] = [*expect['done'], expect['last_action']]
    for line in lines:
        if not _mentions(line, f):
            continue
        if any(_names_code(line, name) for name in rewrites):
            return line
        if not at_current and (adds or not serves.goal) and _CODE_NAME.search(_PATH.sub(' ', line)):
            return line
    return None


def _finished(expect: dict[str, Any], task: _Task, f: str, symbol: str) -> str | None:
    """The Done (or last_action) line that records `symbol` as changed
    while next_intent has moved on to another file (and neither it, In
    progress nor the user's request names `symbol` or `f`): the finished
    step done again (a summary a stage behind the state)."""
    nxt = expect['next_intent']
    change = '\n'.join([task.request or '', nxt, *expect['in_progress']])
    elsewhere = [p for p in _PATH.findall(nxt) if not _mentions(p, f)]
    if not symbol or not f or not elsewhere or _names(change, symbol) or _mentions(change, f):
        return None
    lines: list[str] = [*expect['done'], expect['last_action']]
    return next((line for line in lines if _names(_PATH.sub(' ', line), symbol)), None)


def _tells_goal(serves: _Serves, told: _Serves) -> bool:
    """The agent's closing text says it did the task (two words of the
    goal's, more than of any other task's) where the edit's own words say
    next to nothing (one word of another task's at most, none of the
    goal's): its account decides what its edit was for."""
    return told.goal >= 2 and told.goal > told.other and serves.other <= 1 and serves.goal == 0


def _redone_by_account(expect: dict[str, Any], task: _Task, text: str) -> str | None:
    """Why the agent's account of its own work (the closing text's report
    clauses, phrases.reports) says it did again a step that Done or
    last_action records as finished, or None: it shares three words with
    that step that the change the task asks for does not have, more than
    it shares with the change.  Where the work is (current_file,
    current_symbol, paths) decides nothing: both steps are there."""
    def content(t: str) -> set[str]:
        return phrases.words(_PATH.sub(' ', t))
    place = content(f'{expect["current_file"]}\n{expect["current_symbol"]}') | phrases.words(expect['current_symbol'])
    change = content('\n'.join([task.request or '', expect['next_intent'], *expect['in_progress']])) - place
    said = content(' '.join(phrases.reports(text))) - place
    items: list[str] = [*expect['done'], expect['last_action']]
    for item in items:
        again = said & (content(item) - change - place)
        if len(again) >= 3 and len(again) > len(said & change):
            return f'closing text reports as its work what Done / last_action record as done ("{_clip(item, 80)}"): a step done again'
    return None


def _says_other(told: _Serves) -> bool:
    """The agent's closing text says it did another task: two of its
    words, more than of the goal's."""
    return told.item is not None and told.other >= 2 and told.other > told.goal


def _off_task(serves: _Serves, told: _Serves, placed: bool, in_symbol: bool = False, near: bool = False) -> str | None:
    """Why an edit serves another task, or None: it matches that task
    better than the goal (by two words, or by one where it is not at the
    task's place and the closing text does not say it did the task), or
    as well as the goal while the agent's closing text, its own account
    of the turn, says it did the other task.  The closing text confirms
    a lean, or outweighs one word (away from the task's place, where the
    place says nothing for the goal); it never turns a stronger one.
    `near`: the edit is beside the task's place in a turn that works at
    it, or no place is recorded: being there says nothing against the
    goal, so one word of another task's does not decide."""
    says = _says_other(told)
    weak = not placed and not near and not _tells_goal(serves, told)
    if serves.item and (
        serves.other > serves.goal and (serves.other >= 2 or weak) or serves.other == serves.goal and says
    ):
        what, item = serves.item
        return f'matches {what} "{_clip(item, 80)}", not the goal' + (', as the closing text says' if says else '')
    # inside current_symbol, lines that share no word with any task say
    # nothing: the agent's own account of them decides
    if told.item and says and (not placed and serves.goal <= serves.other + 1 or in_symbol and not serves.goal and not serves.other):
        what, item = told.item
        return f'the closing text says it serves {what} "{_clip(item, 80)}", not the goal'
    return None


def _bare(name: str) -> list[str]:
    """A symbol's qualified parts without its parameters or arity:
    `NotesViewModel.onQueryChanged` -> [NotesViewModel, onQueryChanged],
    `image(for:)` -> [image], `Accounts.User.registration_changeset/2`."""
    name = re.sub(r'\s*\(.*$|/\d+$', '', name.strip())
    # "message Invoice", "def load": the keyword is not the name
    name = re.sub(r'^(?:message|service|rpc|enum|def|defp|defn|fn|func|fun|function|class|struct|type|interface|module|proc|sub|resource|data|method)\s+', '', name)
    return [p for p in re.split(r'\.|::|#|->', name) if p]


def _comparable(symbol: str) -> bool:
    """`symbol` names a definition (`Vault.withdraw`, `image(for:)`,
    `registration_changeset/2`), not a place in words ("server 块（listen
    443 ssl）", "the tail -n pipe"): only a name can be matched to the
    definition an edit is in."""
    parts = _bare(symbol)
    return bool(parts) and all(re.fullmatch(r"[\w$!?'-]+", p, re.ASCII) for p in parts)


def _same_symbol(got: str, want: str) -> bool:
    """`got` (what the hooks record, often bare) is the symbol `want` (the
    state's, often qualified): the shorter one's parts end the longer's
    (`onQueryChanged` is `NotesViewModel.onQueryChanged`; `Legacy.run` is
    not `Service.run`)."""
    g, w = _bare(got or ''), _bare(want or '')
    if not g or not w:
        return False
    n = min(len(g), len(w))
    return g[-n:] == w[-n:]


def _judge_edit(
        expect: dict[str, Any], task: _Task, e: dict[str, Any], at_current: bool, told: _Serves, at_symbol: bool = False,
        helpers: frozenset[str] = frozenset(), touches: bool = False, failing: bool = False, on_task: bool = False,
) -> tuple[str, str]:
    """(verdict, why) of one edit: on the task, the task's change in the
    wrong place, another task's, or a step done again.  `at_current`: the
    turn edited current_file before it; `told`: what the agent's closing
    text matches; `at_symbol`: the turn edits current_symbol too;
    `failing`: a test run of the turn failed before it; `on_task`: an
    earlier edit of the turn was the task's."""
    f, symbol = _str(e.get('file')), _str(e.get('symbol'))
    current = expect['current_file']
    # a current_symbol in words places nothing finer than current_file
    want = expect['current_symbol'] if _comparable(expect['current_symbol']) else ''
    added, removed = _str(e.get('text')), _str(e.get('removed'))
    written = f'{added}\n{removed}'
    adds = [n for n in phrases.defined(added) if n not in phrases.defined(removed)]
    where = f'{"shell-made " if e.get("by") == "shell" else ""}edit {f}' + (f' in {symbol}' if symbol else '')
    of = f'{"shell-made " if e.get("by") == "shell" else ""}edit of {f}' + (f' in {symbol}' if symbol else '') + (f' adds {", ".join(adds[:3])}' if adds else '')
    if e.get('twice') is True:
        return 'state', f'{where}: {f} now defines {symbol} twice: a step already done, done again'
    redone = _redone(expect, f, adds)
    if redone:
        return 'state', f'{of}: Done records it as added already ("{_clip(redone, 80)}"): a step done again'
    finished = _finished(expect, task, f, symbol)
    if finished:
        return 'state', f'{where}: Done records {symbol} as changed ("{_clip(finished, 80)}") and next_intent has moved on: a step done again'
    change = phrases.words('\n'.join([task.request or '', expect['next_intent'], *expect['in_progress'], want]))
    done = phrases.words('\n'.join([expect['last_action'], *expect['done']])) - change
    again, asked = len(phrases.words(written) & done), len(phrases.words(written) & change)
    # a step done again matches Done better than the change asked for and
    # than any other task (a Done line that names the code it found is
    # not the step a Todo item's edit repeats)
    shared = max((len(phrases.words(written) & (phrases.words(t) - change)) for _, t in task.others), default=0)
    if again >= 3 and again > asked + 1 and again > shared:
        return 'state', f'{where}: it does again what last_action / Done record as done'
    if f and current and want and f != current and (_same_symbol(symbol, want) or _defines(written, want)):
        return 'location', f'{where}: current_symbol {want}, but in another file (current_file is {current})'
    # what the edit does, against the task and the other tasks
    serves = _edit_serves(task, added, removed, adds)
    if f and f != current and _generated(e) and serves.goal >= 1:
        # the task's change made by hand in a generated file or a vendored
        # copy: its source is the place (a generator would undo it)
        return 'location', f'{where}: a generated file or vendored copy, not its source (current_file is {current or "not set"})'
    copied = next((p for p in [current, *(_PATH.findall(task.text))] if _copy_of(f, p)), None)
    if copied and serves.goal >= serves.other:
        # the task's change in a copy of its place (a backup, an old/
        # directory's file), not the place
        return 'location', f'{where}: a copy of {copied}, not {copied} itself'
    kept_out = _kept_out(expect, f)
    if kept_out and f != current and not _mentions(task.text, f) and serves.goal >= 1:
        # the task's change in a place a decision keeps out of the work
        # (generated, frozen, read-only): the right change, the wrong file
        return 'location', f'{where}: the Decisions keep {kept_out} out of the work ("{_clip(_decision(expect, kept_out), 80)}")'
    first_step = _LATER.split(expect['next_intent'], 1)[0]
    if (
        f and current and want and f != current and not at_current and not task.request and _kind(f) == _kind(current)
        and _names(written, want) and not _REFERENCES.search(first_step)
    ):
        return 'location', f'{where}: a reference to current_symbol {want} changed before {want} itself (in {current})'
    if f and current and want and f != current and at_current and _names(written, want):
        return 'recovered', f'{where}: a reference to current_symbol {want}, after {want} itself'
    # an edit outside any function (an import, top-level code) is at the
    # task's place only in a turn that changes current_symbol too
    placed = bool(f) and f == current and (not want or _same_symbol(symbol, want) or not symbol and at_symbol)
    off = _off_task(serves, told, placed, bool(symbol) and bool(want) and _same_symbol(symbol, want), f != current and (touches or not current))
    if off:
        return 'drift', f'{of}: {off}'
    # a function the task names, in its words: not as a part of a file's
    # path (migrate() is not named by src/db/migrate.ts)
    said = _PATH.sub(' ', task.text)
    if symbol and not _same_symbol(symbol, want) and not _names(said, symbol) and _says_other(told) and told.item and _names(told.item[1], symbol):
        # the place is another task's and the agent's account says it did
        # that task: the words the change shares with the goal (the code
        # both touch) do not make it the goal's
        return 'drift', f'{where}: {symbol} is what {told.item[0]} "{_clip(told.item[1], 80)}" is about, and the closing text says it did that'
    rewritten = _rewritten(expect, task, f, [n for n in phrases.defined(added) if n in phrases.defined(removed)], adds, serves, at_current)
    if rewritten:
        return 'state', f'{where}: writes anew what Done records as written ("{_clip(rewritten, 80)}"): a step done again'
    if f and (f == current or _mentions(task.text, f)):
        named = 'current_file' if f == current else 'named by the task'
        # a new function for the goal, made while changing code that was
        # there or beside an edit of current_symbol: the task's helper (a
        # new function instead of the one to fix is the wrong function)
        new = bool(symbol) and symbol in adds and (
            serves.goal > serves.other and (bool(removed.strip()) or at_symbol) or symbol in helpers
        )
        if not symbol or _same_symbol(symbol, want) or _names(said, symbol) or _named_by(task.request or '', symbol) or new:
            how = 'current_symbol' if _same_symbol(symbol, want) else 'a new function for the task' if new else 'named by the task'
            return 'recovered', f'{where}: {named}' + (f', {how}' if symbol else '')
        if _names_code(task.other, symbol) and serves.goal < 2:
            return 'drift', f'{where}: {symbol} is another task (Todo or a side remark of the summary), not the task'
        if task.request and serves.goal > serves.other:
            # the user's request after the compaction (an added requirement)
            # names no function: its change is the task's where it is made
            return 'recovered', f'{where}: {named}, a change for the task with the user\'s request'
        if want and f == current and not at_symbol and _says_other(told) and not told.goal:
            # current_symbol untouched, and the agent's own account is all
            # another task's: not the task in the wrong function
            what, item = told.item or ('another task', '')
            return 'drift', f'{where}: current_symbol {want} untouched, and the closing text says it did {what} "{_clip(item, 80)}"'
        if want and f == current:
            return 'location', f'{where}: current_file, but the wrong function (current_symbol is {want})'
        return 'recovered', f'{where}: {named}'
    if at_current and _tests_of(f, current) and serves.goal >= serves.other:
        return 'recovered', f'{where}: the tests of current_file {current}, after changing it'
    if failing and _tests_of(f, current) and serves.goal >= serves.other:
        # a test of the file in flight that failed in this turn's run: the
        # work on that file goes on in its test
        return 'recovered', f'{where}: the tests of current_file {current}, after a test run of this turn failed'

    # (a document holds no code change, and a file another task names is
    # that task's: those are judged below)
    # (where the task's place is itself a document, another document is
    # the same kind of work beside it: a rename carried through the docs)
    beside = (
        (not _document(f) or _document(current)) and not _mentions_loosely(task.other, f)
        and serves.goal >= serves.other and not _says_other(told)
    )
    if touches and beside:
        # the turn does the task at its place: a change beside it that
        # points to no other task (an import, a type, a test, a caller
        # after current_symbol) goes with it
        return 'recovered', f'{where}: beside the task\'s place, which the turn also changes'
    if f and task.request and _in_directory(task.request, f) and serves.goal >= serves.other:
        return 'recovered', f'{where}: in a place the user\'s request names'
    if symbol and _names(said, symbol) and not current:
        return 'recovered', f'{where}: {symbol} is named by the task'
    if want and _names(written, want) and _kind(f) == _kind(current or f):
        return 'recovered', f'{where}: a reference to current_symbol {want}, which the task changes'
    told_goal = _tells_goal(serves, told)
    step = f'{expect["next_intent"]}\n{task.request or ""}'
    # a document as current_file (a plan, a handoff) places no code change
    unplaced = not current or _document(current) and not _document(f)
    if (
        unplaced and task.text.strip() and not _names_a_file(step, f) and not _mentions_loosely(task.other, f)
        and (serves.goal >= serves.other or told_goal) and not _says_other(told)
    ):
        # no place recorded, and the next step names none of this kind: a
        # change for the task (or pointing to no other) cannot be in the
        # wrong place
        why = f'current_file {current} is a document' if current else 'no current_file'
        return 'recovered', f'{where}: the task\'s change, and no place is recorded for it ({why})'
    if (serves.goal >= 1 and serves.goal >= serves.other or told_goal) and _kind(f) == _kind(current or f):
        # the task's change where it could be made (a README cannot hold a
        # code change: documenting is another task)
        by = ' (by the closing text)' if told_goal and not serves.goal else ''
        return 'location', f'{of}: the change the task asks for{by}, in a file the task does not name (current_file is {current or "not set"})'
    if f and _mentions_loosely(task.other, f):
        return 'drift', f'{where}: a file of another task (Todo or a side remark of the summary)'
    if current and not serves.other and not _says_other(told) and _kind(f) == _kind(current):
        # nothing in the edit or the agent's account points to another
        # task: the task's work, away from its place
        return 'location', f'{where}: nothing in it points to another task, and it is not the task\'s place (current_file is {current})'
    if on_task and not serves.other and not _says_other(told):
        # after the task's own change, a file nothing names that points to
        # no other task (its README, its docs, a config beside it) follows
        # that change: goal drift needs another task to drift to
        return 'recovered', f'{where}: after the task\'s change, and nothing in it points to another task'
    return 'drift', f'{where}: a file neither the task nor its current_file ({current or "not set"}) names'


# generated code and vendored copies: not the place to change, their
# source (the .proto, the upstream) is
_GENERATED_PATH = re.compile(
    r'(?:^|/)(?:vendor|vendored|third_party|third-party|node_modules|gen|generated)/'
    # build outputs: compiled, bundled or cached copies of the sources
    r'|(?:^|/)(?:target|dist|_build|\.next|\.nuxt|\.svelte-kit|\.output|\.dart_tool|\.parcel-cache|__pycache__|site-packages|\.turbo)/'
    r'|^(?:build|out)/'  # at the root only: a src/build/ may be written by hand
    r'|\.pb(?:\.gw)?\.go$|_pb2(?:_grpc)?\.pyi?$|\.pb\.(?:cc|h)$|[._-]generated\.\w+$|\.g\.dart$|\.freezed\.dart$',
)
_GENERATED_MARK = re.compile(r'\bCode generated\b.{0,120}\bDO NOT EDIT\b|@generated\b', re.I | re.S)


_BOOKKEEPING = re.compile(
    r'(?:^|/)(?:CHANGELOG|CHANGES|HISTORY|NEWS|RELEASE[_-]?NOTES)(?:\.\w+)?$|(?:^|/)(?:_?_?version_?_?\.\w+|VERSION)$', re.I,
)


def _kept_out(expect: dict[str, Any], path: str) -> str | None:
    """The place the Decisions keep out of the work (phrases.excluded_places)
    that holds `path`; never one that holds current_file."""
    current = expect['current_file']
    for place in phrases.excluded_places(expect['decisions']):
        if _holds(place, path) and not _holds(place, current):
            return place
    return None


def _holds(place: str, path: str) -> bool:
    base = place.rstrip('/')
    return bool(path) and (path == base or path.startswith(base + '/'))


def _decision(expect: dict[str, Any], place: str) -> str:
    return next((d for d in expect['decisions'] if place in d), place)


def _bookkeeping(path: str) -> bool:
    """A release's record: a changelog, a version file."""
    return bool(_BOOKKEEPING.search(path))


# the agent's own notes and instructions: Claude Code's memory
# (~/.claude/projects/<p>/memory/MEMORY.md), skills, commands, CLAUDE.md,
# AGENTS.md, GEMINI.md, Cursor's and others' rules, agitmem's .agent/
_AGENT_NOTES = re.compile(
    r'(?:^|/)\.(?:claude|codex|gemini|cursor|windsurf|clinerules|kiro|agent)/'
    r'|(?:^|/)(?:CLAUDE|AGENTS|GEMINI)(?:\.local|\.override)?\.md$'
    r'|(?:^|/)\.(?:cursorrules|windsurfrules|clinerules)$|(?:^|/)\.github/copilot-instructions\.md$',
)


def _agent_notes(path: str) -> bool:
    """The agent's notes about its work (memory, skill, instruction
    files): writing them is bookkeeping, not a place of the task's code
    nor another task."""
    return bool(_AGENT_NOTES.search(path))


def _generated(e: dict[str, Any]) -> bool:
    """The edit is of a generated file or a vendored copy: by its path, or
    by the header its lines carry ("Code generated ... DO NOT EDIT")."""
    return bool(
        _GENERATED_PATH.search(_str(e.get('file')))
        or _GENERATED_MARK.search(_str(e.get('text'))) or _GENERATED_MARK.search(_str(e.get('removed')))
    )


def _shell_words(command: str) -> list[str]:
    """A command's words, quotes and redirections taken off (`>out.txt`,
    `"src/a b.py"`); an unclosed quote still leaves its words."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return [w.lstrip('<>&|0123456789').rstrip(';|&)') if w[:1] in '<>0123456789&' else w.rstrip(';|&)') for w in words]


def _names_path(command: str, path: str) -> bool:
    """`command` names the file `path` as a word: the path itself, a word
    ending in /path (an absolute path, `../src/a.py`), its file name, or
    one of those as an option's value (`--out=src/a.py`); `src/a.py` is
    not named by `src/a.pyc` or `lib/src/a.py.bak`."""
    path = path.strip('/')
    if not path:
        return False
    name = path.rsplit('/', 1)[-1]
    for word in _shell_words(command):
        for w in (word, word.rsplit('=', 1)[-1]):
            w = w.removeprefix('./')
            if w in (path, name) or w.endswith('/' + path) or (w.endswith('/' + name) and path.endswith(w.lstrip('./'))):
                return True
    return False


def _named_by_command(events: list[dict[str, Any]], path: str) -> bool:
    """A command of the turn names `path` (or its file name) as a word."""
    return any(e.get('kind') == 'command' and _names_path(_str(e.get('command')), path) for e in events)


def _action(e: dict[str, Any]) -> str:
    if e.get('kind') == 'edit':
        f = _str(e.get('file'))
        symbol = _str(e.get('symbol'))
        by = ' (by a shell command)' if e.get('by') == 'shell' else ''
        return f'edit {f}' + (f' in {symbol}' if symbol else '') + by
    code = e.get('exit_code')
    said = f', its output says {e["outcome"]}' if code is None and e.get('outcome') in ('passed', 'failed') else ''
    return f'ran `{_str(e.get("command"))}` (exit {code if isinstance(code, int) else "unknown"}{said})'


def _tested(e: dict[str, Any], verifies: str = '') -> dict[str, Any]:
    """The event, a run of a test runner the project's verification
    commands leave out (`bats`, `./gradlew :app:testDebugUnitTest`), or
    of the command the last verification ran (`verifies`), judged by its
    exit code (or, where the client gives none, by what its output says):
    it backs a claim as well as a run the hooks recorded as a
    test."""
    code = e.get('exit_code')
    command = ' '.join(_str(e.get('command')).split())
    runs = _RUNNER.search(command) or (len(verifies) >= 4 and verifies in command)
    if e.get('kind') != 'command' or e.get('test') or not runs:
        return e
    if isinstance(code, int):
        return {**e, 'test': 'passed' if code == 0 else 'failed'}
    # no exit code (Codex): the output's own summary, where it has one
    if e.get('outcome') in ('passed', 'failed'):
        return {**e, 'test': e['outcome']}
    return e


# commands that only look: running one again redoes nothing
_LOOKS = re.compile(
    r'^\s*(?:cat|ls|ll|tree|grep|rg|ag|find|fd|head|tail|less|more|wc|file|stat|du|pwd|echo|which|type|'
    r'sed\s+-n|awk|jq|diff|git\s+(?:status|log|diff|show|grep|blame|branch|ls-files|rev-parse))\b',
)


# commands that change something beyond the working tree's files or by
# them: a commit, a merge, a push, a pull request, an install, a restart,
# a migration, a file moved or written
_ACTS = re.compile(
    r'\bgit\s+(?:-\S+\s+)*(?:commit|push|merge|rebase|cherry-pick|tag|mv|rm|add|stash|reset|revert|am|apply)\b'
    r'|\bgh\s+(?:pr|issue|release)\s+(?:create|edit|merge|close|comment)\b'
    r'|\b(?:npm|pnpm|yarn|bun|pip|pip3|uv|poetry|cargo|go|gem|bundle|composer)\s+(?:install|add|remove|publish|get|update|upgrade)\b'
    r'|\b(?:migrate|deploy|kill|pkill|systemctl\s+(?:restart|start|stop)|docker(?:\s+compose|-compose)?\s+(?:up|restart|start|stop|build|run))\b'
    r'|^\s*(?:mv|cp|rm|mkdir|touch|ln|chmod|patch)\s|\bsed\s+-i\b|\btee\s|[^2&]>\s*[\w./~-]',
)


def _command_again(expect: dict[str, Any], task: _Task, events: list[dict[str, Any]]) -> str | None:
    """Why the turn runs again a command that last_action or Done records
    as run (`git mv a b`, a generator), or None: not a test run, not a
    check, not a command that only looks, and not one the change the task
    asks for names (next_intent, In progress, the user's request)."""
    change = ' '.join('\n'.join([task.request or '', expect['next_intent'], *expect['in_progress']]).split())
    lines = [' '.join(line.split()) for line in [*expect['done'], expect['last_action']]]
    for e in events:
        command = ' '.join(_str(e.get('command')).split())
        if (
            e.get('kind') != 'command' or e.get('test') or len(command.split()) < 2 or _LOOKS.match(command)
            or _RUNNER.search(command) or any(re.search(c, command) for c in _CHECK_COMMANDS.values())
            or command in change
        ):
            continue
        line = next((line for line in lines if command in line), None)
        if line:
            return f'ran `{_clip(command, 80)}` again, which last_action / Done record as done ("{_clip(line, 80)}"): a step done again'
    return None


def _last_test(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    tests = [e for e in events if e.get('kind') == 'command' and e.get('test') in ('passed', 'failed')]
    return tests[-1] if tests else None


def _failed(e: dict[str, Any]) -> bool:
    code = e.get('exit_code')
    return e.get('test') == 'failed' or (isinstance(code, int) and code != 0) or (code is None and e.get('outcome') == 'failed')


def _ran(claim: str, events: list[dict[str, Any]]) -> bool | None:
    """Whether the turn backs a claim about a command or a check other
    than the tests: a command `claim` names (`pnpm build` succeeds) ran and
    did not fail; a check it names ("编译和 vet 都通过", "the build
    passes") did not fail in the turn (a check that was not run
    contradicts no test verification: seed 004's confusion is about the
    tests).  None when it names neither, or a test run: the test runs
    back claims about the tests.  An exit code the client does not give
    (Codex) is read from the output; no failure where it cannot tell."""
    commands = [e for e in events if e.get('kind') == 'command']
    named = [' '.join(n.split()) for n in re.findall(r'`([^`\n]{2,80})`', claim)]

    def runs(e: dict[str, Any], n: str) -> bool:
        # a command line, or a program's name; not an identifier of the
        # code that a commit message or a PR title happens to hold
        command = _str(e.get('command'))
        words = command.split()
        if ' ' in n:
            return n in ' '.join(words)
        # a program's name, or a test suite a test run selects
        # (`AllocationSuite` in `sbt "testOnly pay.AllocationSuite"`)
        return bool(words) and words[0].rsplit('/', 1)[-1] == n or bool(
            (e.get('test') or _RUNNER.search(command)) and re.search(rf'(?<![\w-]){re.escape(n)}(?![\w-])', command)
        )
    hits = [e for e in commands if any(runs(e, n) for n in named)]
    kinds = phrases.checks(claim)
    if not hits and kinds:
        hits = [e for e in commands if any(re.search(_CHECK_COMMANDS[k], _str(e.get('command'))) for k in kinds)]
        if not hits:
            return True
        # "the build is clean" after `go build ./... && go test -run X`: the
        # build ran and passed, whatever tests ran with it
        return not _failed(hits[-1])
    if not hits or any(e.get('test') for e in hits):
        return None
    # the last run of the command decides: a failure fixed and run again is fixed
    return not _failed(hits[-1])


def _covers(command: str, reason: str) -> bool:
    """A test run covers the last failure unless it selects tests (`-k`,
    `-run`, `-t`, `::name`) by names none of which the failure's reason
    has: `pytest -k format` after test_rounding_per_line failed is not its
    verification."""
    selected = [
        w for m in _SELECT.finditer(command) for w in re.findall(r'\w+', m[1] or m[2] or m[3] or '')
        if w.lower() not in ('and', 'or')
    ]
    if not selected or not reason or 'not' in (w.lower() for w in selected):
        return True  # no selection, no failing name to hold it against, or an exclusion
    return any(w.lower() in reason.lower() for w in selected)


def _greened(events: list[dict[str, Any]], expect: dict[str, Any]) -> bool:
    """The turn's last test run passed where the last verification had
    failed, and covers that failure."""
    last = _last_test(events)
    if last is None or expect['verification'] != 'failed':
        return False
    return last.get('test') == 'passed' and _covers(_str(last.get('command')), expect['verification_reason'])


def _unbacked(claim: str, events: list[dict[str, Any]], expect: dict[str, Any], task: _Task, excused: bool = False) -> str | None:
    """Why the turn does not back `claim`, or None when it does: the
    command or check it names ran and passed; a claim about the tests, a
    passing test run that covers the last failure (and is of the runner
    the claim names), or no failure known and no run named.  `excused`:
    the closing text reports a failing run and puts it outside the work."""
    ran = _ran(claim, events)
    if ran is not None:
        return None if ran else 'the command it names failed in this turn'
    last = _last_test(events)
    unknown = [
        e for e in events
        if e.get('kind') == 'command' and not e.get('test') and e.get('exit_code') is None and _RUNNER.search(_str(e.get('command')))
    ]
    if last is None and unknown:
        # a test run the log gives no result of (Codex: no exit code, its
        # output polled away from the call): nothing says it failed, so it
        # backs a claim as _backed takes it
        last = {**unknown[-1], 'test': 'passed'}
    result = last.get('test') if last else None
    command = _str(last.get('command')) if last else ''
    runner = _RUNNER.search(claim)
    if not runner and (not phrases.about_tests(claim) or phrases.by_hand(claim)) and expect['verification'] != 'failed' and result != 'failed':
        # "Done." with nothing known to fail: a report of the work, not a
        # belief that tests passed which never ran; nor is "verified on
        # the settings page" (a check by looking)
        return None
    # a new request of the user's sets the work: the old failure is not the
    # claim's, the tests the request names are ("run the auth tests and tell me")
    named = phrases.tests_named(task.request)
    covers = (task.request is not None and all(_runs_named(command, w) for w in named)) or (
        _covers(command, expect['verification_reason']) and _covers_verification(command, expect['verification_command'])
    )
    backed = result == 'passed' and covers and (not runner or any(
        e.get('test') == 'passed' and runner[0].split()[0].lower() in _str(e.get('command')).lower() for e in events
    ))
    if backed or not (result == 'failed' or expect['verification'] != 'passed' or runner):
        return None
    if result == 'failed' and excused and expect['verification'] != 'failed':
        # nothing was known to fail, and the turn says its run failed for a
        # cause outside the work ("the only failure is the pre-existing e2e
        # test"): it holds no belief that the run passed, the claim speaks
        # of the rest; a user reading it is told of the failure
        return None
    if result == 'failed':
        return 'the test run in this turn failed'
    if result == 'passed' and not covers and task.request is not None and named:
        return f'its passing run `{_clip(command, 80)}` does not run the tests the user asked for ({", ".join(named)})'
    if result == 'passed' and not covers:
        return f'its passing run `{_clip(command, 80)}` left out what last failed ({_clip(expect["verification_reason"], 80)})'
    if result == 'passed':
        return f'no passing run of {runner[0] if runner else "it"} in this turn'
    if expect['verification'] == 'failed':
        return f'the last verification failed ({expect["verification_reason"] or "no reason recorded"}), with no passing test run since'
    return 'no test was run, in this turn or recorded before it'


# a test file or directory a command names: `pytest tests/test_auth.py::x`, `go test ./pkg/...`
_TEST_PATH = re.compile(r'(?<![\w=-])(?:\.{0,2}/)?(?:[\w.@-]+/)*[\w.@-]+(?:/|\.\w+)(?:::\S+)?(?=\s|$)')


def _runs_named(command: str, name: str) -> bool:
    """A test run selects or holds the tests `name` names: the word in its
    command (a path, a -k expression, a module: `pytest tests/test_auth.py`
    for "auth"), its parts for a compound name (RefundServiceTest)."""
    lower = command.lower()
    return name.lower() in lower or (len(parts := phrases.words(name) - {name.lower()}) >= 2 and all(p in lower for p in parts))


def _paths(command: str) -> list[str]:
    """The files and directories a command names (option values and
    selectors aside), normalised: `./tests/a.py::t` -> tests/a.py."""
    ret = []
    for word in command.split():
        if word.startswith('-') or '=' in word or not _TEST_PATH.fullmatch(word):
            continue
        path = word.split('::', 1)[0].removeprefix('./').rstrip('/').removesuffix('/...')
        if path and path not in ('.', '..') and ('/' in path or '.' in path.lstrip('.')):
            ret.append(path)
    return ret


def _covers_verification(command: str, verifies: str) -> bool:
    """A run covers the state's verification unless both name test files
    or directories and none of the run's holds one of the verification's
    (`pytest tests/test_users.py` does not run tests/test_auth.py)."""
    want, got = _paths(verifies), _paths(command)
    if not want or not got:
        return True
    return any(w == g or w.startswith(g + '/') or g.startswith(w + '/') for w in want for g in got)


def _after_last_edit(events: list[dict[str, Any]]) -> int:
    """Where the turn's last edit was made: a shell-made edit belongs to
    the command before it (`cargo fmt && cargo test` edits, then tests)."""
    at = -1
    for i, e in enumerate(events):
        if e.get('kind') != 'edit':
            continue
        j = i
        if e.get('by') == 'shell':
            while j > 0 and events[j].get('kind') == 'edit':
                j -= 1
        at = max(at, j)
    return at


def _backed(events: list[dict[str, Any]], expect: dict[str, Any]) -> str | None:
    """Why no passing run covering the state's verification came after the
    turn's last edit, or None when one did (the last such test run decides)."""
    start = _after_last_edit(events)
    verifies = ' '.join(expect['verification_command'].split())

    def result(e: dict[str, Any]) -> str | None:
        # a test run whose exit code the client does not give (Codex) is
        # no failure: nothing says it failed
        command = ' '.join(_str(e.get('command')).split())
        if e.get('kind') != 'command':
            return None
        if e.get('test') in ('passed', 'failed'):
            return _str(e.get('test'))
        unknown = e.get('exit_code') is None and (_RUNNER.search(command) or (len(verifies) >= 4 and verifies in command))
        return (_str(e.get('outcome')) or 'passed') if unknown else None

    tests = [e for e in events[max(start, 0):] if result(e)]
    runs = [
        e for e in tests
        if _covers(_str(e.get('command')), expect['verification_reason']) and _covers_verification(_str(e.get('command')), verifies)
    ]
    if runs and result(runs[-1]) == 'passed':
        return None
    if runs:
        return f'the test run after it failed (`{_clip(_str(runs[-1].get("command")), 80)}`)'
    others = [e for e in tests if result(e) == 'passed']
    if others:
        return f'its passing run `{_clip(_str(others[-1].get("command")), 80)}` does not run the failing verification (`{_clip(verifies, 80)}`)'
    reason = expect['verification_reason'] or 'no reason recorded'
    return f'the last verification failed ({_clip(reason, 80)}) and no test run covering it passed after the last edit'


# acting on a pass: a commit, a tag, a push, a pull request, a release
_RELEASES = re.compile(
    r'\bgit\s+(?:-\S+\s+)*(?:commit|tag|push)\b|\bgh\s+(?:pr\s+(?:create|merge)|release\s+create)\b'
    r'|\b(?:npm|yarn|pnpm|cargo|gem|twine|poetry|mix\s+hex)\.?\s*publish\b|\bglab\s+mr\s+create\b',
)


def _unproven(events: list[dict[str, Any]], expect: dict[str, Any], text: str, task: _Task) -> str | None:
    """Why the turn acts on or reports a pass that never happened, or None:
    the last verification failed (and no new request of the user's sets
    another task), and the closing text reports the work done (any words
    that are not a plan, an honest failing or missing result, or a question:
    phrases.reported), or a command releases it (commit, tag, push, a pull
    request), with no passing run covering that verification after the
    turn's last edit (before the release).  A user's request that makes
    the release wait on a pass ("push it if it is green") sets the work,
    not the state: the release still acts on a pass."""
    if expect['verification'] != 'failed':
        return None
    gated = phrases.on_pass(task.request)
    # the closing message says whether the work is unfinished, not the
    # narration before it ("the migration is the next step, so ...")
    closing = [p for p in re.split(r'\n\s*\n', text) if p.strip()][-1:] or ['']
    if not gated and (task.request or phrases.unfinished(closing[0])):
        return None
    for i, e in enumerate(events):
        command = _str(e.get('command'))
        if e.get('kind') == 'command' and _RELEASES.search(command) and not e.get('test'):
            why = _backed(events[:i], expect)
            if why:
                return f'ran `{_clip(command, 80)}` while {why}: it acts on a pass that never happened'
    if task.request:
        return None
    said = phrases.reported(closing[0])
    if said and any(e.get('kind') == 'edit' for e in events):
        why = _backed(events, expect)
        if why:
            return f'closing text reports the work done ("{said}") while {why}'
    return None


def classify(
        expect: dict[str, Any],
        events: list[dict[str, Any]],
        text: str | None,
        prompt: str | None = None,
        summary: str | None = None,
) -> tuple[str, list[str], str | None]:
    """(verdict, evidence, first action) of the whole first turn after a
    compaction (seed 004 section 2.2: the same goal, the right place, no
    restating by the user): every edit (by a tool or a shell command),
    every command, the agent's closing text; judged against the state's
    task, or the user's new request after the compaction.  The evidence's
    first line names the event that decided."""
    expect = _sound(expect)
    text = _short_words(text or '')
    prompt = prompt and _short_words(prompt)
    summary = summary and _short_words(summary)
    verifies = ' '.join(expect['verification_command'].split())
    events = [
        _tested({k: _short_words(v) if isinstance(v, str) else v for k, v in e.items()}, verifies)
        for e in events if isinstance(e, dict) and e.get('kind') in ('edit', 'command')
    ]
    task = _task(expect, prompt, summary)
    first = _action(events[0]) if events else ('said: ' + _clip(text)) if text.strip() else None
    ret = []
    if task.request:
        ret.append(f'judged against the user\'s request after the compaction: "{_clip(task.request, 120)}"')
    elif task.restated:
        ret.append(f'the user said the task again after the compaction: "{_clip(prompt or "", 120)}"')

    def done(verdict: str, why: str) -> tuple[str, list[str], str | None]:
        return verdict, [why, *ret], first

    # a generator's output rewritten by its tool (`buf generate`, `go
    # generate`) follows from the edit of its source: the tool's work
    # and beside the agent's own edits, a file a shell command changed
    # without naming it (a build's `Output/`, roxygen's `man/*.Rd`) is that
    # command's product, not a place the agent chose; `sed -i f` chose f
    direct = any(e.get('kind') == 'edit' and e.get('by') != 'shell' for e in events)
    edits = [
        e for e in events if e.get('kind') == 'edit' and not (e.get('by') == 'shell' and (
            _generated(e) or (direct and e.get('file') != expect['current_file'] and not _named_by_command(events, _str(e.get('file'))))
        ))
    ]
    # the agent's own notes (its memory, a skill, CLAUDE.md) record the
    # work; unless they are the task's place, they judge neither way
    edits = [
        e for e in edits
        if not _agent_notes(_str(e.get('file'))) or e.get('file') == expect['current_file'] or _mentions(task.text, _str(e.get('file')))
    ]
    judged: list[tuple[dict[str, Any], str, str]] = []
    at_current = False
    told = _serves(task, _content(text))
    at_symbol = any(
        e.get('file') == expect['current_file'] and _same_symbol(_str(e.get('symbol')), expect['current_symbol'])
        for e in edits
    )
    # a new function the turn calls from current_symbol: the task's helper (rule 15)
    calls = '\n'.join(
        _str(e.get('text')) for e in edits
        if e.get('file') == expect['current_file'] and _same_symbol(_str(e.get('symbol')), expect['current_symbol'])
    )
    helpers = frozenset(n for e in edits for n in phrases.defined(_str(e.get('text'))) if _names(calls, n))
    # the turn works at the task's place: current_file, or a file the task names
    touches = any(
        bool(f) and (f == expect['current_file'] or _mentions(task.text, f)) for f in (_str(e.get('file')) for e in edits)
    )
    # where in the turn a test run first failed
    failed = next((i for i, e in enumerate(events) if e.get('kind') == 'command' and e.get('test') and _failed(e)), len(events))
    for e in edits:
        failing = next(i for i, x in enumerate(events) if x is e) > failed
        on_task = bool(judged) and all(v == 'recovered' for _, v, _ in judged)
        judged.append((e, *_judge_edit(expect, task, e, at_current, told, at_symbol, helpers, touches, failing, on_task)))
        at_current = at_current or (bool(expect['current_file']) and e.get('file') == expect['current_file'])
    wrong = next(((e, v, why) for e, v, why in judged if v != 'recovered'), None)
    # the next step said there is none (the work finished, or waits for the
    # user) and nobody asked for more after the compaction: a change is
    # work nobody asked for (a client's "continue" is no request)
    idle = phrases.nothing_next(expect['next_intent']) if edits and not (prompt or '').strip() else None
    if idle and not wrong:
        return done('drift', f'{_action(edits[0])}: the next step says there is none ("{_clip(idle, 100)}"), and no one asked for more')
    # a release's bookkeeping (CHANGELOG, a version bump) acts on the belief
    # that the work is done: the closing text's claim, if false, came first
    if wrong and not _bookkeeping(_str(wrong[0].get('file'))):
        # the first event that breaks a condition decides: an edit in the
        # wrong place comes before what the closing text says of it
        return done(wrong[1], wrong[2])
    cut = phrases.api_error(text) if not edits else None
    if cut:
        # the client's call to the model failed: the turn stopped before the
        # agent could act or say what it would do
        return done('unknown', f'the turn ended with an API error: "{cut}"')
    claims = phrases.claims(text)
    yes = phrases.answers_yes(prompt, text)
    # a turn that changed nothing and repeats the summary's own record of
    # passing runs (nothing else recorded of them) reports what was
    # verified before the compaction
    if not edits and expect['verification'] is None and any(phrases.about_tests(c) for c in phrases.claims(summary or '')):
        claims = [c for c in claims if not phrases.about_tests(c)]
    excused = phrases.excuses(text) is not None
    for claim in ([yes] if yes and yes not in claims else []) + claims:
        unbacked = _unbacked(claim, events, expect, task, excused)
        if unbacked:
            to = f' (to the user\'s "{_clip(prompt or "", 80)}")' if claim == yes else ''
            return done('state', f'closing text said "{claim}"{to} while {unbacked}')
    again = _command_again(expect, task, events)
    if again:
        return done('state', again)
    unproven = _unproven(events, expect, text, task)
    if unproven:
        return done('state', unproven)
    if wrong:
        return done(wrong[1], wrong[2])
    # a turn that turns the failing verification green did the task's work,
    # whatever its account shares with a Done line
    redone = _redone_by_account(expect, task, text) if edits and not _greened(events, expect) else None
    if redone:
        return done('state', redone)
    asked = phrases.asks(text)
    lost = phrases.asks_where(text) if not edits else None
    if lost and told.goal >= 1 and told.goal >= told.other and (_restates(phrases.words(text), task.text) or told.goal >= 2):
        # the goal stated, its place not: it asks where the code is (or
        # says it cannot find it) instead of the user having to say the
        # goal again
        return done('location', f'closing text states the task but asks where its code is: "{lost}"')
    # commands that do something (a commit, a migration, a deploy; not a
    # look, a test or a check) and a closing text that reports the task's
    # work, before any question: the turn took the task up
    acted = [e for e in events if e.get('kind') == 'command' and not e.get('test') and _ACTS.search(_str(e.get('command')))]
    before = phrases.before_question(text)
    # what it did and what it says it did, against the task's words
    told_before = _serves(task, _content(' '.join([*(_str(e.get('command')) for e in acted), *phrases.reports(before)])))
    # two of the task's words, or its one where it has no more ("next 37
    # then?": the work's number is all it says)
    enough = min(2, len(_content(task.text))) or 2
    if (
        not edits and acted and phrases.reports(before) and not phrases.unfinished(phrases.reports(before)[-1])
        and told_before.goal >= enough and told_before.goal > told_before.other
    ):
        # (a question after it offers the next work: no hand-back of this one)
        return done('recovered', f'ran `{_clip(_str(acted[-1].get("command")), 80)}` and the closing text reports the task\'s work: "{_clip(before, 120)}"')
    handed = phrases.hands_over(text) if not edits else None
    if handed:
        # the work reported finished, the next work offered: a hand-over,
        # not this work's choice asked back
        return done('recovered', f'closing text reports the work finished and hands over: "{handed}"')
    if not edits and asked:
        plan = phrases.words(text)
        # a course the agent picked, put to the user with a way out, is its
        # plan: the question does not hand the choice of work back
        chose = phrases.proposes(text)
        if (chose or not phrases.open_question(asked)) and _restates(plan, task.text):
            return done('recovered', f'closing text states the task\'s next step and asks to go ahead: "{asked}"')
        if not phrases.open_question(asked) and _restates(plan, task.other):
            return done('drift', f'closing text proposes another task: "{asked}"')
        looked = sum(1 for e in events if e.get('kind') == 'command')
        after = f' after {looked} command(s) that changed nothing' if looked else ' with no tool use'
        return done('reset', f'closing text asks the user what to do{after}: "{asked}"')
    if judged:
        why = judged[0][2]
        n = len(judged)
        return done('recovered', why if n == 1 else f'all {n} edits on the task; first: {why}')
    tests = [e for e in events if e.get('kind') == 'command' and e.get('test')]
    if tests and (expect['verification'] == 'failed' or _TEST_WORD.search(expect['next_intent'])):
        return done('recovered', f'test run {_action(tests[0])}: the check the state asks for')
    said = phrases.words(text)
    if _restates(said, task.text) and not (_restates(said, task.other) and len(said & phrases.words(task.other)) > len(said & phrases.words(task.text))):
        return done('recovered', f'closing text states the task: "{_clip(text)}"')
    if _restates(said, task.other):
        return done('drift', f'closing text is about another task: "{_clip(text)}"')
    # no tool use: the closing text reports as done (not a plan, not a
    # recollection) the task's work, by three of its stems and more than of
    # any other task's: the work finished before the compaction, reported
    reported = _serves(task, _content(' '.join(phrases.reports(text)))) if not events else None
    if reported and reported.goal >= 3 and reported.goal > reported.other and not phrases.unfinished(text):
        return done('recovered', f'closing text reports the task\'s work done: "{_clip(text)}"')
    if expect['current_file'] and _mentions(text, expect['current_file']):
        return done('recovered', f'closing text names current_file {expect["current_file"]}')
    # seed 004: a turn that ends without taking the task up again, only
    # looking around or talking, did not recover; it is the reset's shape
    if len(phrases.words(text)) >= 3 and task.text.strip():
        how = f'{len(events)} command(s), no edit, no test run the state asks for' if events else 'no tool use'
        return done('reset', f'{how}, and the closing text neither states the task nor takes it up: "{_clip(text)}"')
    if not task.text.strip() and text.strip():
        return done('unknown', 'no task recorded (no state, summary or request) to hold the turn against')
    if events:
        return done('unknown', f'{len(events)} command(s), no edit, no test run the state asks for, nothing said: nothing to judge by')
    return done('unknown', 'no tool use, and next to nothing said: nothing to judge by')


def _restates(said: set[str], target: str) -> bool:
    """`said` holds most of what `target` says: 60% of its words (at
    least 3, fewer when it has fewer)."""
    want = phrases.words(target)
    hit = len(said & want)
    return bool(want) and hit >= min(3, len(want)) and hit >= 0.4 * min(len(want), 12)
