from __future__ import annotations

import gc
import io
import os
import sys

from agitmem import __version__
from agitmem import ahead
from agitmem.errors import AgitmemError
from agitmem.errors import CheckFailed

# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from collections.abc import Iterable
    from collections.abc import Sequence
    from typing import Any
    import argparse
    import types

    from agitmem.porcelain.context import Context

VERSION = __version__


COMMANDS = (
    'init', 'save', 'status', 'log', 'show', 'diff', 'rollback', 'archive',
    'state', 'verify', 'note', 'promote', 'recovery', 'fragment', 'recall', 'load', 'check', 'hook',
    'install', 'uninstall', 'push', 'fetch', 'pull', 'merge', 'review',
    'prune', 'land', 'doctor', 'demo', 'mcp',
)

WRITES = ('save', 'note', 'fragment', 'verify', 'rollback', 'archive')


def _writes(args: argparse.Namespace | types.SimpleNamespace) -> bool:
    """A command that commits memory (`--no-save` writes the file only)."""
    if getattr(args, 'save', True) is False:
        return False
    if args.command == 'state':
        return bool(args.state_command == 'set')
    return args.command in WRITES


def _run(args: argparse.Namespace | types.SimpleNamespace) -> int:
    # imports per command: the hot hook paths must not pay for pygit2
    cmd = args.command
    if cmd == 'init':
        from agitmem.commands.init import init
        return init(args.ref)
    if cmd == 'doctor':
        from agitmem.commands.doctor import doctor
        return doctor(args.json)
    if cmd == 'demo':
        from agitmem.commands.demo import demo
        return demo(args.dir)
    if cmd == 'mcp':
        from agitmem.commands.mcp import mcp
        return mcp(VERSION)
    if cmd == 'recovery' and args.words[:1] == ['audit']:
        # a client's logs, from anywhere: no repository needed
        from agitmem.commands.recovery_audit import audit
        return audit(args.words[1:], args.client, args.since, args.json, args.html)
    if cmd == 'recovery' and (args.client or args.html):
        raise AgitmemError('--client and --html are for `recovery audit`')
    if cmd in ('install', 'uninstall'):
        from agitmem.commands.install import install
        return install(
            args.target, remove=cmd == 'uninstall', command=args.hook_command,
            scope=args.scope, mcp=args.mcp,
        )

    # the first git reads start now, on the other core, while Python
    # imports what the command needs (pygit2, for a write)
    from agitmem import repo as repo_mod
    writes = _writes(args)
    repo_mod.start_early(identity=writes)
    if writes and cmd != 'verify':
        # (verify imports it after its command has run, beside the tree's
        # git processes)
        import agitmem.porcelain.write  # noqa: F401
    # the command's modules are imported before its context waits for git
    run = _command(args)
    from agitmem.porcelain import context
    # review and land read and write the memory refs only: they run in CI,
    # where no .agent/ is
    return run(context.get(args.ref, need_memory=cmd not in ('review', 'land')))


def _command(args: argparse.Namespace | types.SimpleNamespace) -> Callable[[Context], int]:
    """The command to run in its context, its modules imported."""
    cmd = args.command
    if cmd == 'save':
        from agitmem.commands.save import save
        return lambda ctx: save(ctx, args.message)
    elif cmd == 'status':
        from agitmem.commands.status import status
        return lambda ctx: status(ctx, args.json)
    elif cmd == 'log':
        from agitmem.commands.log import log
        if args.n is not None and args.n < 1:
            raise AgitmemError('-n must be at least 1')
        return lambda ctx: log(ctx, args.n, args.json)
    elif cmd == 'show':
        from agitmem.commands.show import show
        return lambda ctx: show(ctx, args.spec, args.json)
    elif cmd == 'diff':
        from agitmem.commands.diff import diff
        if len(args.revs) > 2:
            raise AgitmemError('diff takes at most two revisions')
        return lambda ctx: diff(ctx, args.revs, args.json)
    elif cmd == 'rollback':
        from agitmem.commands.rollback import rollback
        return lambda ctx: rollback(ctx, args.rev, args.file)
    elif cmd == 'archive':
        from agitmem.commands.archive import archive
        return archive
    elif cmd == 'state':
        from agitmem.commands import state
        if args.state_command == 'show':
            return lambda ctx: state.state_show(ctx, args.json)
        return lambda ctx: state.state_set(ctx, args.pairs, args.save)
    elif cmd == 'verify':
        from agitmem.commands.verify import verify
        command = args.cmd[1:] if args.cmd[:1] == ['--'] else args.cmd
        return lambda ctx: verify(ctx, command, args.save)
    elif cmd == 'load':
        from agitmem.commands.load import load
        return lambda ctx: load(ctx, after_compact=args.after_compact, as_json=args.json)
    elif cmd == 'check':
        from agitmem.commands.check import check
        return lambda ctx: check(
            ctx, staged=args.staged, commit_msg_file=args.commit_msg, as_json=args.json,
        )
    elif cmd == 'push':
        from agitmem.commands.push import push
        return lambda ctx: push(ctx, args.remote)
    elif cmd == 'fetch':
        from agitmem.commands.fetch import fetch
        return lambda ctx: fetch(ctx, args.remote)
    elif cmd == 'pull':
        from agitmem.commands.pull import pull
        return lambda ctx: pull(ctx, args.remote)
    elif cmd == 'merge':
        from agitmem.commands.merge import merge
        return lambda ctx: merge(ctx, args.branch)
    elif cmd == 'prune':
        from agitmem.commands.prune import prune
        return lambda ctx: prune(ctx, args.remote)
    elif cmd == 'land':
        from agitmem.commands.land import land
        return lambda ctx: land(ctx, args.branch, args.into, args.pr, args.commit, args.remote)
    elif cmd == 'review':
        from agitmem.commands.review import review
        return lambda ctx: review(ctx, args.range, args.markdown, args.json)
    elif cmd == 'recovery':
        from agitmem.commands.recovery import recovery
        return lambda ctx: recovery(ctx, args.words, args.since, args.json)
    elif cmd == 'promote':
        from agitmem.commands.promote import promote
        return lambda ctx: promote(ctx, args.what, args.json)
    elif cmd == 'recall':
        from agitmem.commands.recall import recall
        if args.n < 1:
            raise AgitmemError('-n must be at least 1')
        if not args.query.strip():
            raise AgitmemError('recall: the query is empty; give words to look for or a fragment id')
        return lambda ctx: recall(ctx, args.query, args.n, args.all_branches, args.json)
    elif cmd == 'note':
        from agitmem.commands.note import note
        return lambda ctx: note(ctx, ' '.join(args.text), args.save)
    else:
        assert cmd == 'fragment', cmd
        from agitmem.commands.fragment import fragment_add
        refs = [r.strip() for r in args.refs.split(',') if r.strip()]
        return lambda ctx: fragment_add(
            ctx, goal=args.goal, next_=args.next_, basis=args.basis,
            action=args.action, result=args.result, refs=refs, save=args.save,
        )


GIT_EVENTS = (
    'pre-commit', 'commit-msg', 'post-commit', 'pre-push', 'post-checkout',
    'post-merge', 'post-rewrite',
)


def _hook(event: str, agent: str | None, hook_args: list[str]) -> int:
    # where the repository is, asked on the other core while the hook's
    # modules import
    if event in GIT_EVENTS:
        from agitmem import repo as repo_mod
        # of git's hooks only pre-push and post-rewrite get stdin: never
        # wait on another's
        lines = ''
        if event in ('pre-push', 'post-rewrite'):
            lines = _stdin(None) or ''
        if event == 'commit-msg':
            repo_mod.start_find(None)  # (its rules need no HEAD)
        else:
            repo_mod.start_early(identity=False)
        from agitmem.commands.githook import githook
        return githook(event, hook_args, lines)
    typed = sys.stdin is not None and sys.stdin.isatty()
    stdin = _stdin(HOOK_INPUT_BYTES)
    data, whole = _payload_head(stdin or '')
    if data.get('hook_event_name') not in MODEL_CALLS:
        from agitmem import repo as repo_mod
        if event == 'session-start':
            # its injection's freshness waits for git status: begun now too
            repo_mod.start_session(_payload_cwd(data))
        else:
            repo_mod.start_find(_payload_cwd(data))
    from agitmem.commands.hook import hook
    try:
        # the payload parsed once (a model call's request is 100 KB and more)
        return hook(event, agent, stdin, args=hook_args, typed=typed, parsed=data if whole else None)
    except (BrokenPipeError, _Unwritable) as e:
        # the client is gone or its pipe fails: nothing to tell it, and a
        # hook never fails the agent
        _output_lost(e, f'agitmem hook {event}')
        return 0


# an agent's payload is read up to this: /dev/zero on stdin ends the hook,
# not the machine's memory.  A model call's whole request is a few MB; a
# shell's output in a post-edit payload is observed up to 200 MB
# (tests/security/post_edit_test.py), so the bound is above that
HOOK_INPUT_BYTES = 256 << 20


def _stdin(limit: int | None) -> str | None:
    """What stdin holds ('' for a terminal), None when it holds more than
    `limit` bytes (not read further).  Decoded as the C locale does
    whatever the user's is: bytes that are not UTF-8 are kept as
    surrogate escapes, not an error a strict locale's reader would raise."""
    if sys.stdin is None or sys.stdin.isatty():
        return ''
    stream = getattr(sys.stdin, 'buffer', None)
    if stream is None:  # (a replaced stdin, in tests): text already
        text = str(sys.stdin.read() if limit is None else sys.stdin.read(limit + 1))
        return None if limit is not None and len(text) > limit else text
    data = bytes(stream.read() if limit is None else stream.read(limit + 1))
    if limit is not None and len(data) > limit:
        return None
    return data.decode('utf-8', 'surrogateescape')


# Gemini CLI's events around every model call: nearly all end without git
# (porcelain/model_calls.py), so none is begun for them
MODEL_CALLS = ('BeforeModel', 'PreCompress')


# characters of a payload past a megabyte read for its head: the clients
# put the event and cwd before the request or the output that makes it large
HEAD_CHARS = 64 * 1024


def _payload_head(stdin: str) -> tuple[dict[str, Any], bool]:
    """The payload, parsed for where it runs and which event it is (a
    guess only: a wrong one costs an unused git process, or none begun),
    and whether that is all of it (the hook takes it as parsed).  A
    payload past a megabyte (a model call's whole request, a shell's
    whole output) is not parsed twice for it: its members before the
    first its first HEAD_CHARS cut are."""
    from agitmem import jsontext
    if len(stdin) > 1024 * 1024:
        return _members(stdin[:HEAD_CHARS]), False
    try:
        data = jsontext.loads(stdin)
    except (ValueError, RecursionError):
        return {}, False  # (the hook says what is wrong with it)
    return (data, True) if isinstance(data, dict) else ({}, False)


def _members(head: str) -> dict[str, Any]:
    """The top-level members of the JSON object `head` begins, up to the
    first value it cuts: the payload's own keys, never a string inside a
    value that looks like one (a prompt quoting `"hook_event_name":
    "BeforeModel"`).  A key given twice: the last seen, as json.loads."""
    from agitmem import jsontext
    value_at = jsontext.scanner()  # one for every member, as one JSONDecoder was
    ret: dict[str, Any] = {}

    def skip(i: int) -> int:
        while head[i:i + 1] in (' ', '\t', '\n', '\r'):
            i += 1
        return i

    i = skip(0)
    if head[i:i + 1] != '{':
        return {}
    i = skip(i + 1)
    while head[i:i + 1] == '"':
        try:
            key, i = jsontext.scanstring(head, i + 1)
            i = skip(i)
            if head[i:i + 1] != ':':
                break
            value, i = value_at(head, skip(i + 1))
        except (ValueError, RecursionError):
            break  # cut here (or not JSON): what came before is the head
        ret[key] = value
        i = skip(i)
        if head[i:i + 1] != ',':
            break
        i = skip(i + 1)
    return ret


def _payload_cwd(data: dict[str, Any]) -> str | None:
    """The directory the payload names, as the hook will take it."""
    cwd = data.get('cwd')
    return cwd if isinstance(cwd, str) and cwd and os.path.isdir(cwd) else None


def _hook_call(argv: list[str]) -> tuple[str, str | None, list[str]] | None:
    """(event, agent, args) of `hook EVENT [--agent A] [ARG...]` as the
    installed hooks call it, read without argparse (it runs on every edit
    and prompt); None for anything else, which argparse reads."""
    if len(argv) < 2 or argv[0] != 'hook' or argv[1].startswith('-'):
        return None
    event, rest, agent = argv[1], argv[2:], None
    if rest[:1] == ['--agent'] and len(rest) >= 2:
        if rest[1].startswith('-'):
            return None  # argparse takes it for an option, not the value
        agent, rest = rest[1], rest[2:]
    elif rest[:1] and rest[0].startswith('--agent='):
        agent, rest = rest[0].partition('=')[2], rest[1:]
    if any(a.startswith('-') for a in rest):
        return None
    return event, agent, rest


# `load`'s flags that take no value: read without argparse
LOAD_FLAGS = ('--after-compact', '--json')


def _load_call(argv: list[str]) -> types.SimpleNamespace | None:
    """The arguments of `load [--after-compact] [--json]` as argparse would
    give them, read without it (its import and the parser are a third of
    a load's own time); None for anything else, which argparse reads."""
    if argv[:1] != ['load'] or any(a not in LOAD_FLAGS for a in argv[1:]):
        return None
    import types  # load's: not the hooks'
    return types.SimpleNamespace(
        command='load', after_compact='--after-compact' in argv, json='--json' in argv, ref=None,
    )


def _state_set_call(argv: list[str]) -> types.SimpleNamespace | None:
    """The arguments of `state set KEY=VALUE ...` as argparse would give
    them, read without it (an agent's every step: argparse, gettext and
    locale are milliseconds of it); None for anything else (an option, no
    pair, a pair beginning with `-`), which argparse reads."""
    if argv[:2] != ['state', 'set'] or len(argv) < 3 or any(a.startswith('-') for a in argv[2:]):
        return None
    import types
    return types.SimpleNamespace(command='state', state_command='set', pairs=argv[2:], ref=None, save=True)


def _verify_call(argv: list[str]) -> types.SimpleNamespace | None:
    """The arguments of `verify -- CMD...` as argparse would give them
    (`--` kept: the command strips it), read without it: argparse's import
    comes before the command can run, and verify's tree waits on it."""
    if argv[:2] != ['verify', '--'] or len(argv) < 3:
        return None
    import types
    return types.SimpleNamespace(command='verify', cmd=argv[1:], ref=None, save=True)


def _check_call(argv: list[str]) -> types.SimpleNamespace | None:
    """The arguments of `check [--staged] [--json]` as argparse would give
    them, read without it (its import is a tenth of `check --staged` on
    a big repository); None for anything else, which argparse reads."""
    if argv[:1] != ['check'] or any(a not in ahead.CHECK_FLAGS for a in argv[1:]):
        return None
    import types
    return types.SimpleNamespace(
        command='check', staged='--staged' in argv, commit_msg=None, json='--json' in argv, ref=None,
    )


def _parsed(command: str | None, argv: list[str]) -> argparse.Namespace:
    """argv by the parser of `command` (None: of every command)."""
    from agitmem import arguments
    return arguments.build(command).parse_args(argv)


class _Escaped:
    """An output stream whose text has its control characters escaped
    (render.controls): whatever a command or hook prints, memory, payload
    or settings text cannot drive the terminal (DESIGN.md section 12).
    Untrusted values are rendered where they are formatted; this is the
    net under all of them, and a no-op on text already rendered."""

    def __init__(self, stream: io.TextIOWrapper) -> None:
        self._stream = stream

    def write(self, s: str) -> int:
        from agitmem import render
        try:
            return self._stream.write(render.controls(s))
        except BrokenPipeError:
            raise  # the reader is gone: said by nobody (main)
        except OSError as e:
            # a full disk, a device that fails (`> /dev/full`): one line
            raise _Unwritable(e.errno, e.strerror) from None

    def writelines(self, lines: Iterable[str]) -> None:
        for s in lines:
            self.write(s)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Unwritable(OSError):
    """The output could not be written (not a closed pipe)."""


def _output_lost(e: OSError, who: str) -> None:
    """stdout failed: what is left in its buffer goes to /dev/null (the
    flush at exit would fail again); one line says why, unless the reader
    is just gone (a closed pipe) or stderr fails too."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if isinstance(e, _Unwritable):
        try:
            print(f'{who}: cannot write the output: {e.strerror}', file=sys.stderr)
        except OSError:
            pass


def _printable_streams() -> None:
    """Names git gives us may hold bytes that are not UTF-8 (a branch
    `caf\\xe9`, kept as surrogate escapes): print them escaped rather than
    fail on them; and no control character reaches the terminal raw.
    Started with stdout closed (`>&-`), what is printed goes nowhere, as
    it would to a reader gone, and the command still does its work."""
    if sys.stdout is None:
        sys.stdout = open(os.devnull, 'w')
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors='backslashreplace')
        sys.stdout = _Escaped(sys.stdout)
    if isinstance(sys.stderr, io.TextIOWrapper):
        sys.stderr.reconfigure(errors='backslashreplace')
        sys.stderr = _Escaped(sys.stderr)


# `recovery`'s long options, and those of them that take a value
RECOVERY_OPTIONS = ('--since', '--client', '--html', '--ref', '--json', '--help')
RECOVERY_VALUED = RECOVERY_OPTIONS[:4]


def _takes_value(a: str) -> bool:
    """Whether argparse reads the next argument as `a`'s value: one of
    RECOVERY_VALUED or its abbreviation (`--sin`), as argparse expands it
    (an ambiguous one, `--h`, is left for argparse to refuse)."""
    named = [o for o in RECOVERY_OPTIONS if o.startswith(a)] if a.startswith('--') else []
    return a in RECOVERY_VALUED or len(named) == 1 and named[0] in RECOVERY_VALUED


def _options_first(argv: list[str]) -> list[str]:
    """`recovery audit PATH --json --since D PATH`: its options before the
    words (argparse takes no positional after an option)."""
    words, options, rest = argv[:2], [], iter(argv[2:])
    for a in rest:
        if a == '--':
            words += list(rest)
            break
        if _takes_value(a):
            options += [a, next(rest, '')]
        elif a.startswith('-') and a != '-':
            options.append(a)
        else:
            words.append(a)
    return [words[0], *options, *words[1:]]


def main(argv: Sequence[str] | None = None) -> int:
    # a short run that allocates much as it imports (pygit2 alone makes
    # thousands of objects) and frees by reference counting: the cyclic
    # collector's passes are pure cost here (about 3% of a write); what
    # cycles there are go at exit
    gc.disable()
    ahead.absolute_path()  # (done already when run as agitmem/__main__.py)
    _printable_streams()
    argv = sys.argv[1:] if argv is None else list(argv)
    called = _hook_call(argv)
    if called is not None:
        return _hook(*called)
    # the command's own parser only, when the first word names one (an
    # option or a typo first: the whole parser, for its message)
    only = argv[0] if argv and argv[0] in COMMANDS else None
    if argv[:1] in (['load'], ['verify']) or argv[:2] == ['state', 'set']:
        # what these wait for is begun before even the arguments are read
        # (what is begun for arguments argparse then refuses is stopped at
        # exit): where the repository is and HEAD, a save's identities, and
        # the state's tree (the load's freshness); verify's tree is the one
        # its command leaves, begun once that has ended
        from agitmem import repo as repo_mod
        if argv[0] != 'verify':
            repo_mod.start_tree(None)
        own = argv[:argv.index('--')] if '--' in argv else argv
        repo_mod.start_early(identity=argv[0] != 'load' and '--no-save' not in own)
    if argv[:2] == ['recovery', 'audit']:
        argv = _options_first(argv)
    try:
        args = (
            _load_call(argv) or _state_set_call(argv) or _verify_call(argv) or _check_call(argv) or
            _parsed(only, argv)
        )
    except SystemExit as e:
        if e.code != 2 or argv[:1] != ['hook'] or sys.stdin is None or sys.stdin.isatty():
            raise
        # a hook's command line argparse refused (its one line said why),
        # called by an agent, not typed: exit 2 would block the agent's
        # prompt, tool call or stop (`hook` in docs/hooks.md)
        from agitmem.commands.hook import answered_nothing
        return answered_nothing('gemini' if 'gemini' in argv or '--agent=gemini' in argv else None)
    if args.command == 'hook':
        return _hook(args.event, args.agent, args.hook_args)
    try:
        return _run(args)
    except AgitmemError as e:
        from agitmem import render
        # one line, whatever value the message quotes
        print(f'agitmem: {render.controls_line(str(e))}', file=sys.stderr)
        return 2
    except CheckFailed:
        return 1
    except UnicodeEncodeError as e:
        if e.reason != 'surrogates not allowed':
            raise
        # bytes that are not UTF-8 in an argument (argv decodes them as
        # lone surrogates): memory and settings are UTF-8 text, and the
        # encode fails before the write, so nothing was written
        print('agitmem: an argument holds bytes that are not UTF-8; agitmem writes UTF-8 text only',
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # ^C reached no process begun in a group of its own (git, a login
        # shell doctor began): stopped here, or they would run on
        from agitmem import platforms
        platforms.stop_grouped()
        print('agitmem: interrupted', file=sys.stderr)
        return 130
    except BrokenPipeError as e:
        # `agitmem log | head`: the reader is gone, as with git, say nothing
        _output_lost(e, 'agitmem')
        return 141
    except _Unwritable as e:
        _output_lost(e, 'agitmem')
        return 2


if __name__ == '__main__':
    raise SystemExit(main())
