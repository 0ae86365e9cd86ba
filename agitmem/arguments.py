"""The command line's parser (argparse): every command's arguments, their
usage and help.  Built once a command needs it: the installed agent hooks
(`hook EVENT --agent A`) and `load [--after-compact] [--json]` are read by
cli.py without it, and never load this module (argparse, its parser's
code: a third of cli.py's bytecode)."""
from __future__ import annotations

import os
import sys
import types

from agitmem import __version__ as VERSION

# typing is not imported at run time (mypy takes any name TYPE_CHECKING as
# true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any
    from typing import NoReturn
    import argparse


def _columns() -> int:
    """The terminal's width as shutil.get_terminal_size finds it."""
    try:
        columns = int(os.environ['COLUMNS'])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _untranslated(argparse: types.ModuleType) -> None:
    """argparse's messages as they are where gettext has no catalog for
    them (Python ships none): each of a parser's calls to gettext looks
    for the catalog again, four missing files a call for a language like
    en_US.UTF-8; a hundred calls were most of the time the whole parser
    takes to build (10 of 13 ms), twelve most of one command's.  Where a
    catalog exists, argparse asks gettext as before."""
    import gettext
    domain = gettext.textdomain()
    if gettext.find(domain, gettext.bindtextdomain(domain)) is None:
        argparse._ = _same  # type: ignore[attr-defined]
        argparse.ngettext = _plural  # type: ignore[attr-defined]


def _same(message: str) -> str:
    return message


def _plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


def _parser_class() -> type[argparse.ArgumentParser]:
    """argparse's parser, made once it is needed: the installed agent hooks
    (`hook EVENT --agent A`) never need it, nor its import."""
    import argparse
    _untranslated(argparse)

    class _Formatter(argparse.HelpFormatter):
        """argparse's own, told the width: argparse asks shutil for it as each
        argument is added, and importing shutil (zlib, bz2, lzma) is a
        noticeable part of a hook's run time."""

        def __init__(
                self, prog: str, indent_increment: int = 2,
                max_help_position: int = 24, width: int | None = None,
        ) -> None:
            super().__init__(
                prog, indent_increment, max_help_position,
                _columns() - 2 if width is None else width,
            )


    class _Parser(argparse.ArgumentParser):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault('formatter_class', _Formatter)
            super().__init__(*args, **kwargs)

        def error(self, message: str) -> NoReturn:
            # one line, not argparse's usage block: agents read stderr too
            self.exit(2, f'agitmem: {message} (see `{self.prog} --help`)\n')

    return _Parser


def _add_ref(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        '--ref',
        help='memory ref to use (default: refs/agitmem/heads/<branch>)',
    )


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument('--json', action='store_true', help='machine-readable output')


def _add_no_save(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        '--no-save', dest='save', action='store_false',
        help='write the file but do not commit it to the memory ref',
    )


def build(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `command` only: building all of
    them is a noticeable part of a hook's run time.  Errors, usage and help
    of one command are the same either way."""
    def want(name: str) -> bool:
        return command is None or name == command

    import argparse
    parser = _parser_class()(
        prog='agitmem',
        description="Keep an AI coding agent's memory in git, across "
                    'context compaction.',
    )
    parser.add_argument('--version', action='version', version=f'agitmem {VERSION}')
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True

    if want('init'):
        p = sub.add_parser('init', help='create .agent/ and the first memory commit')
        _add_ref(p)

    if want('save'):
        p = sub.add_parser('save', help='commit .agent/memory to the memory ref')
        p.add_argument('-m', '--message', help='what this save records')
        _add_ref(p)

    if want('status'):
        p = sub.add_parser('status', help='unsaved memory changes, state age')
        _add_ref(p)
        _add_json(p)

    if want('log'):
        p = sub.add_parser('log', help='memory history')
        p.add_argument('-n', type=int, metavar='N', help='at most N commits')
        _add_ref(p)
        _add_json(p)

    if want('show'):
        p = sub.add_parser('show', help='a memory file at a memory revision')
        p.add_argument(
            'spec', nargs='?', default='@', metavar='[REV][:FILE]',
            help='e.g. @, @~2:state.json, :tattoo.md, archive:2026-11-30',
        )
        _add_ref(p)
        _add_json(p)

    if want('diff'):
        p = sub.add_parser('diff', help='memory diff (working tree vs saved)')
        p.add_argument('revs', nargs='*', metavar='REV')
        _add_ref(p)
        _add_json(p)

    if want('rollback'):
        p = sub.add_parser('rollback', help='restore memory, recorded as a new commit')
        p.add_argument('rev', nargs='?', metavar='REV', help='default: @~1')
        p.add_argument('--file', metavar='F', help='restore only this memory file')
        _add_ref(p)

    if want('archive'):
        p = sub.add_parser('archive', help='archive the finished snapshot and reset it')
        _add_ref(p)

    if want('state'):
        p = sub.add_parser('state', help='read or update state.json')
        state_sub = p.add_subparsers(dest='state_command', metavar='show|set')
        state_sub.required = True
        ps = state_sub.add_parser('show', help='print the state block')
        _add_ref(ps)
        _add_json(ps)
        ps = state_sub.add_parser('set', help='set KEY=VALUE (or KEY:=JSON)')
        ps.add_argument('pairs', nargs='+', metavar='KEY=VALUE')
        _add_ref(ps)
        _add_no_save(ps)

    if want('verify'):
        p = sub.add_parser('verify', help='run a command and record the result')
        p.add_argument('cmd', nargs=argparse.REMAINDER, metavar='-- CMD')
        _add_ref(p)
        _add_no_save(p)

    if want('note'):
        p = sub.add_parser('note', help='append a note')
        p.add_argument('text', nargs='+')
        _add_ref(p)
        _add_no_save(p)

    if want('promote'):
        p = sub.add_parser('promote', help='recurring notes as tattoo candidates; move one into tattoo.md')
        p.add_argument(
            'what', nargs='?', metavar='N|TEXT',
            help='the number of a candidate (or the text of a note) to move into tattoo.md',
        )
        _add_ref(p)
        _add_json(p)

    if want('recovery'):
        p = sub.add_parser(
            'recovery', help='compactions and how the agent recovered from each',
            description='With no action: the report (the verdict table of a 430-compaction study). '
            '`show N`: one compaction in full. `mark N ok|drift|location|state|reset`: '
            'your verdict, which overrides the heuristic. `audit [PATH ...]`: the compactions '
            'in the clients\' own session logs (this repository\'s, or the logs named), judged alike.',
        )
        p.add_argument('words', nargs='*', metavar='show N | mark N VERDICT | audit [PATH ...]')
        p.add_argument('--since', metavar='DATE', help='only compactions from DATE (YYYY-MM-DD) on')
        p.add_argument('--client', metavar='C', help='audit: only claude, codex or gemini logs')
        p.add_argument('--html', metavar='FILE', help='audit: also write the report as one self-contained page')
        _add_ref(p)
        _add_json(p)

    if want('fragment'):
        p = sub.add_parser('fragment', help='memory fragments')
        frag_sub = p.add_subparsers(dest='fragment_command', metavar='add')
        frag_sub.required = True
        pf = frag_sub.add_parser('add', help='append a self-contained fragment')
        pf.add_argument('--goal', required=True)
        pf.add_argument('--next', required=True, dest='next_')
        pf.add_argument('--basis')
        pf.add_argument('--action')
        pf.add_argument('--result')
        pf.add_argument(
            '--refs', default='', help='comma-separated fragment ids, e.g. A-001,A-004',
        )
        _add_ref(pf)
        _add_no_save(pf)

    if want('load'):
        p = sub.add_parser('load', help='print the injection block and write injected_context.txt')
        p.add_argument(
            '--after-compact', action='store_true',
            help='the form given after a compaction (restate goal and next intent)',
        )
        _add_ref(p)
        _add_json(p)

    if want('recall'):
        p = sub.add_parser('recall', help='search the whole memory history (notes, fragments, decisions, archives, tattoo)')
        p.add_argument('query', metavar='QUERY', help='words to look for, or a fragment id (A-014)')
        p.add_argument('-n', type=int, default=10, metavar='N', help='at most N hits (default: 10)')
        p.add_argument('--all-branches', action='store_true', help="every memory ref too: other branches', remote copies, the attic")
        _add_ref(p)
        _add_json(p)

    if want('check'):
        p = sub.add_parser('check', help='consistency checks of memory and code')
        p.add_argument('--staged', action='store_true', help='check what is staged for commit')
        p.add_argument('--commit-msg', metavar='FILE', help='check a commit message file')
        _add_ref(p)
        _add_json(p)

    if want('hook'):
        p = sub.add_parser('hook', help='agent and git hook entry points')
        p.add_argument('event', metavar='EVENT')
        p.add_argument('--agent', help='claude, codex, gemini or shell (default: detect)')
        p.add_argument('hook_args', nargs='*', metavar='ARG')

    for name in ('install', 'uninstall'):
        if not want(name):
            continue
        p = sub.add_parser(name, help=f'{name} hooks for an agent or git')
        p.add_argument('target', metavar='AGENT', help='claude, codex, gemini or git')
        p.add_argument(
            '--command', dest='hook_command',
            help=(
                'how hooks call agitmem (default: agitmem-hook, else agitmem, when the login shell '
                'finds this one\'s, else this python -P -m agitmem)'
            ),
        )
        p.add_argument(
            '--scope', choices=('local', 'project', 'user'),
            help='agents: local (default; a file git ignores), project (shared '
                 'with the team) or user (every project)',
        )
        p.add_argument(
            '--mcp', action='store_true',
            help=(
                'also register agitmem mcp in the agent\'s MCP configuration at that scope'
                if name == 'install' else
                'take out only the MCP server entry, not the hooks'
            ),
        )

    for name, what in (('push', 'send memory refs to a remote'),
                       ('fetch', 'fetch memory refs from a remote'),
                       ('pull', 'fetch and merge the remote memory')):
        if not want(name):
            continue
        p = sub.add_parser(name, help=what)
        p.add_argument('remote', nargs='?', metavar='REMOTE')
        _add_ref(p)

    if want('merge'):
        p = sub.add_parser('merge', help="merge another branch's memory into this one")
        p.add_argument('branch', metavar='BRANCH')
        _add_ref(p)

    if want('prune'):
        p = sub.add_parser('prune', help='retire the memory of branches deleted on the remote')
        p.add_argument('remote', nargs='?', metavar='REMOTE')
        _add_ref(p)

    if want('land'):
        p = sub.add_parser('land', help="a pull request merged on the forge: merge its branch's memory into the base's")
        p.add_argument('branch', metavar='BRANCH', help='the pull request\'s branch')
        p.add_argument('--into', required=True, metavar='BASE', help='the branch it was merged into')
        p.add_argument('--pr', required=True, metavar='ID', help='the pull request, e.g. #12 or !12')
        p.add_argument('--commit', required=True, metavar='SHA', help='the code commit it landed as')
        p.add_argument('--remote', default=None, metavar='REMOTE', help='default: origin')
        _add_ref(p)

    if want('review'):
        p = sub.add_parser('review', help='what changed in memory over a code range')
        p.add_argument('range', nargs='?', metavar='BASE..HEAD')
        p.add_argument('--markdown', action='store_true', help='ready to post on a pull request')
        _add_ref(p)
        _add_json(p)

    if want('doctor'):
        p = sub.add_parser('doctor', help='check the whole setup; print the fix for each problem')
        _add_json(p)

    if want('mcp'):
        sub.add_parser('mcp', help='serve the memory tools over MCP on stdio (needs agitmem[mcp])')

    if want('demo'):
        p = sub.add_parser('demo', help='walk through agitmem on a scratch repository')
        p.add_argument('dir', nargs='?', help='where to build it (default: a temp dir)')

    return parser
