"""A test run's outcome: which commands count as one, and the specific
reason it failed (shared by `agitmem verify` and the observed test runs of
the agent hooks).  Standard library only: the hooks run it."""
from __future__ import annotations

# patterns as text: re compiles (and caches) each on its first use, so a
# run that passes, or a hook that sees no test run, compiles none of them;
# re (and shlex, which imports it) imported where used: `verify` imports
# this module before its command runs
_ANSI = r'\x1b\[[0-9;]*[A-Za-z]'
# most specific first: a named failing test with its error, then the error
# line itself, then anything that says error or failed
_FAILED_TEST = r'^(?:FAILED|ERROR) (\S+::\S+.*)$'  # pytest summary
_ASSERTION = r'^E\s+(\S.*)$'  # pytest assertion detail
_FAILURE_PATTERNS = (
    _FAILED_TEST,
    r'^(\S+\.\w+:\d+(?::\d+)?:? .*(?:[Ee]rror|[Ff]ail).*)$',
    _ASSERTION,
    r'^\s*●\s+(.+)$',  # jest
    r'^--- FAIL: (.+)$',  # go test
    r'^(\w*(?:Error|Exception)\b.*)$',
    r'(?i)^(.*\b(?:error|failed|failure|FAIL)\b.*)$',
)
_MAX_REASON = 240

# config `verification_commands`: a command counts as a test run when one of
# its parts starts with one of these (after env assignments and wrappers)
DEFAULT_COMMANDS = (
    'pytest', 'tox', 'nox', 'npm test', 'npm run test', 'yarn test',
    'yarn run test', 'pnpm test', 'pnpm run test', 'jest', 'vitest',
    'go test', 'cargo test', 'mvn test', 'gradle test', './gradlew test',
    'make test', 'ctest', 'rspec',
    # the test runners of more languages (Elixir, Haskell, Swift, Dart, Lua,
    # PHP, .NET, Scala, Ruby, shell, Django, Terraform, Bun, Deno)
    'mix test', 'cabal test', 'stack test', 'swift test', 'dart test', 'flutter test', 'busted',
    'php artisan test', 'phpunit', 'dotnet test', 'sbt test', 'bazel test', 'rake test', 'bats',
    'manage.py test', 'terraform test', 'bun test', 'deno test',
    # task runners' test tasks (`mise run test:ci`, `just test`, `task test`:
    # a pattern's last word `test` also names `test:ci` or `test-unit`)
    'mise run test', 'mise test', 'just test', 'task test',
)
# words that run the next one: `python -m pytest`, `npx jest`, `uv run tox`
_WRAPPERS = frozenset((
    'python', 'python3', 'py', '-m', 'npx', 'uv', 'uvx', 'poetry', 'pipenv',
    'hatch', 'pdm', 'run', 'bundle', 'exec', 'time', 'env', 'nice', 'command',
    'xvfb-run', 'bunx',
))
_SEPARATORS = r'&&|\|\||[;|\n]'
_ASSIGNMENT = r'^[A-Za-z_][A-Za-z0-9_]*='
# a result read from output alone (Codex hooks get no exit code)
_SAYS_FAILED = (
    # "0 failed" and "0 errors" are a pass (cargo: "7 passed; 0 failed")
    r'\b(?:[1-9]\d* failed|FAILED|FAIL\b|failures?:|[1-9]\d* errors?\b|'
    r'Tests?: .*\bfailed|test result: FAILED|BUILD FAILURE)'
    # "3 tests, 1 failures" (eunit, mix, rspec's "1 failure"), JUnit's
    # "Failures: 1", dotnet's "Failed!", Gradle's "BUILD FAILED", TAP's
    # "not ok 3", a compiler's or a tool's "error:" / "Error:", a panic,
    # a traceback, rebar3's "===> Error running tests", npm's "npm ERR!"
    r'|\b[1-9]\d* (?:failures?|failing)\b|\b(?:Failures|Errors|Failed): [1-9]|^Failed!|\bBUILD FAILED\b'
    r'|^not ok \d|(?i:^\s*(?:error(?:\[\w+\])?|fatal|panic):)|\bpanicked at\b|^Traceback \(most recent call last\)'
    # sbt's "Failed: Total 5, Failed 4, Errors 0" and "[error] Failed tests:"
    r'|\bFailed: Total \d+, Failed [1-9]|^\[error\] (?:Failed tests:|\(.*\) sbt\.TestsFailedException)'
    r'|^===> (?:Error|Failed)|^npm ERR!|^\*\* \(\w+Error\)|\bSegmentation fault\b|: command not found$'
)
# ... and a pass, where nothing says it failed: a runner's own summary
_SAYS_PASSED = (
    r'\b[1-9]\d* passed\b|\b[1-9]\d* passing\b|^ok\s+\S+|^PASS\b|\btest result: ok\b|\bBUILD SUCCESS(?:FUL)?\b'
    r'|\bTests run: [1-9]\d*, Failures: 0, Errors: 0\b|^Passed!|\b\d+ (?:tests?|examples?|properties), 0 failures\b'
    r'|\bAll \d+ tests passed\b|^OK(?: \(\d+ tests?|$)|\bExecuted [1-9]\d* tests?, with 0 failures\b|\b100% tests passed\b'
    r'|\bSuite result: ok\b|^ok \d+\b'
    # sbt's summary: "Passed: Total 5, Failed 0, Errors 0, Passed 5"
    r'|\bPassed: Total [1-9]\d*, Failed 0, Errors 0\b'
)


def reason(output: str, exit_code: int) -> str:
    """The most specific line of the output that says why it failed (or,
    when it passed, its last summary line)."""
    import re
    ansi = re.compile(_ANSI)
    lines = [ansi.sub('', ln).rstrip() for ln in output.splitlines()]
    lines = [ln for ln in lines if ln.strip()]
    if exit_code == 0:
        found = lines[-1].strip(' =') if lines else 'exit 0'
        return found[:_MAX_REASON]
    for pattern in _FAILURE_PATTERNS:
        match = re.compile(pattern).match
        hits = [m[1].strip() for ln in lines if (m := match(ln))]
        if hits:
            found = hits[0]
            # a pytest FAILED line says which test; its "E" line says why
            if pattern == _FAILED_TEST:
                assertion = re.compile(_ASSERTION).match
                detail = [m[1].strip() for ln in lines if (m := assertion(ln))]
                if detail and detail[0] not in found:
                    found = f'{found} ({detail[0]})'
            return found[:_MAX_REASON]
    tail = lines[-1].strip() if lines else ''
    return (tail or f'exit code {exit_code}')[:_MAX_REASON]


def failed_by_output(output: str) -> bool:
    """Whether a test run's output says it failed (when no exit code came)."""
    return outcome(output) == 'failed'


def outcome(output: str) -> str | None:
    """A run's result read from its output alone (the client gave no exit
    code): 'failed' where a runner, a compiler or the shell says so,
    'passed' where a runner's summary says so and nothing says it failed,
    None where the output cannot tell."""
    import re
    text = re.sub(_ANSI, '', output)
    if re.search(_SAYS_FAILED, text, re.M):
        return 'failed'
    if re.search(_SAYS_PASSED, text, re.M):
        return 'passed'
    return None


def _words(part: str) -> list[str]:
    import shlex
    try:
        return shlex.split(part)
    except ValueError:  # an unclosed quote: the words still tell
        return part.split()


def is_test_run(command: str, patterns: list[str] | tuple[str, ...]) -> bool:
    """Whether shell `command` runs one of `patterns` (each a command's
    leading words, e.g. "go test")."""
    import re
    wanted = [p.split() for p in patterns if p.strip()]
    for part in re.split(_SEPARATORS, command):
        words = _words(part)
        i = 0
        while i < len(words) and (
                re.match(_ASSIGNMENT, words[i]) or
                words[i].rsplit('/', 1)[-1].rstrip('0123456789.') in _WRAPPERS
        ):
            i += 1
        rest = words[i:]
        if not rest:
            continue
        first = rest[0] if rest[0].startswith('./') else rest[0].rsplit('/', 1)[-1]
        rest = [first, *rest[1:]]
        if any(rest[:len(w)] == w or _task_of(rest[:len(w)], w) for w in wanted):
            return True
    return False


def _task_of(words: list[str], pattern: list[str]) -> bool:
    """`words` run a task of the pattern's test task: `npm run test:ci`
    for `npm run test`, `just test-unit` for `just test`."""
    import re
    return (
        len(words) == len(pattern) >= 2 and pattern[-1] == 'test' and words[:-1] == pattern[:-1]
        and re.match(r'test[:-]\w', words[-1]) is not None
    )
