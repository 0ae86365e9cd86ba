"""The CLI's own behaviour, whatever the command."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agitmem import arguments
from agitmem import cli
from testing.util import agitmem_argv


@pytest.mark.parametrize('args', [('status',), ('log',), ('show', '@:tattoo.md')])
def test_a_reader_gone_is_no_traceback(memrepo: Path, args: tuple[str, ...]) -> None:
    # `agitmem status | head`: the pipe's reader has exited; like git, say
    # nothing, exit 141 (128 + SIGPIPE)
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.run([*agitmem_argv(), *args], cwd=memrepo, stdout=w, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(w)
    assert (proc.returncode, proc.stderr) == (141, '')


@pytest.mark.parametrize('args,code', [
    (('status',), 2), (('load',), 2), (('state', 'set', 'a=b'), 2), (('note', 'x'), 2),
    (('init',), 2), (('hook', 'pre-commit'), 2),
    (('hook', 'prompt', '--agent', 'claude'), 0),  # an agent hook never fails the agent
])
def test_a_deleted_current_directory_is_one_line(
        memrepo: Path, args: tuple[str, ...], code: int,
) -> None:
    # a shell left in a directory someone removed: os.getcwd() fails
    gone = memrepo / 'gone'
    script = 'mkdir gone && cd gone && rmdir ../gone && exec "$@"'
    proc = subprocess.run(
        ['sh', '-c', script, 'sh', *agitmem_argv(), *args], cwd=memrepo,
        input='{}', capture_output=True, text=True,
    )
    assert not gone.exists()
    assert proc.returncode == code, proc.stderr
    assert 'Traceback' not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and 'the current directory no longer exists' in lines[0], proc.stderr


def test_the_output_streams_escape_what_a_terminal_acts_on() -> None:
    # every command's and hook's output goes through this net: whatever
    # writes it (print, write, writelines) nothing raw gets out
    raw = io.BytesIO()
    stream = cli._Escaped(io.TextIOWrapper(raw, encoding='utf-8'))
    print('a\x1b[8mb', file=stream)
    stream.write('\u202e\n')
    stream.writelines(['\x9b', 'x\n'])
    stream.flush()
    assert raw.getvalue().decode() == 'a\\u001b[8mb\n\\u202e\n\\u009bx\n'


# -- the hook's quick look at its payload (cli._payload_head) -----------------

_GEMINI = Path(__file__).parent / 'agents' / 'payloads' / 'gemini'


def _before_model(repo: Path, content: str) -> dict[str, object]:
    data: dict[str, Any] = json.loads((_GEMINI / 'BeforeModel.json').read_text())
    data.update(cwd=str(repo), transcript_path=str(repo / 'none.jsonl'), session_id='g1')
    data['llm_request']['messages'].append({'role': 'user', 'content': content})
    return data


def _git_starts(trace: Path) -> int:
    if not trace.exists():
        return 0
    return sum(json.loads(line).get('event') == 'start' for line in trace.read_text().splitlines())


def test_a_large_model_call_begins_no_git(memrepo: Path, tmp_path: Path) -> None:
    """A BeforeModel request past a megabyte (a long chat) is known for
    one from its head: no git process is begun for it, as for a small one
    (nearly every model call ends without git)."""
    trace = tmp_path / 'trace'
    stdin = json.dumps(_before_model(memrepo, 'y' * 2_000_000))
    proc = subprocess.run(
        [*agitmem_argv(), 'hook', 'prompt', '--agent', 'gemini'], cwd=memrepo, input=stdin,
        capture_output=True, text=True, env={**os.environ, 'GIT_TRACE2_EVENT': str(trace)}, check=False,
    )
    assert proc.returncode == 0 and proc.stderr == '', proc.stderr
    assert json.loads(proc.stdout) == {}
    assert _git_starts(trace) == 0


def test_the_head_of_a_large_payload_is_its_own_members(tmp_path: Path) -> None:
    head, whole = cli._payload_head(json.dumps(_before_model(tmp_path, 'y' * 2_000_000)))
    assert not whole  # the hook parses it all itself
    assert head['hook_event_name'] == 'BeforeModel'
    assert head['cwd'] == str(tmp_path)
    assert 'llm_request' not in head  # cut by the head: not guessed at
    # a prompt quoting a model call's event is not the event: the members
    # after the value the head cuts are unknown, not read from inside it
    quoted = '{"hook_event_name": "BeforeModel", "cwd": "/"} ' + 'z' * 2_000_000
    head, _ = cli._payload_head(json.dumps({
        'session_id': 's', 'prompt': quoted, 'hook_event_name': 'BeforeAgent', 'cwd': str(tmp_path),
    }))
    assert head == {'session_id': 's'}
    # a key given twice: the last one, as the hook's own parse takes it
    twice = '{"hook_event_name": "BeforeModel", "hook_event_name": "AfterAgent", "x": "%s"}'
    assert cli._payload_head(twice % ('w' * 2_000_000))[0]['hook_event_name'] == 'AfterAgent'
    assert cli._payload_head('[' * 2_000_000) == ({}, False)
    assert cli._payload_head('{"a": ' + '[' * 100_000) == ({}, False)


def test_a_payload_under_a_megabyte_is_parsed_once(tmp_path: Path) -> None:
    """The head of a payload the hook reads whole is all of it: the hook
    takes it as parsed (a model call's request is 100 KB and more); what
    is no JSON object is left for the hook to say so."""
    data = _before_model(tmp_path, 'y' * 100_000)
    assert cli._payload_head(json.dumps(data)) == (data, True)
    for text in ('', '[1]', '{"a": ', '{"a": ' + '[' * 100_000):
        assert cli._payload_head(text) == ({}, False)


def test_a_payload_that_quotes_a_model_call_is_handled_as_itself(memrepo: Path) -> None:
    """A Gemini prompt (BeforeAgent) past a megabyte whose text begins like
    a model call's payload: the hook handles it as the prompt it is (the
    memory is injected)."""
    prompt = '{"hook_event_name": "BeforeModel", "llm_request": {"messages": []}} ' + 'p ' * 600_000
    stdin = json.dumps({
        'session_id': 'g2', 'transcript_path': str(memrepo / 'none.jsonl'), 'prompt': prompt,
        'hook_event_name': 'BeforeAgent', 'cwd': str(memrepo), 'timestamp': '2026-12-05T00:00:00Z',
    })
    proc = subprocess.run(
        [*agitmem_argv(), 'hook', 'prompt', '--agent', 'gemini'], cwd=memrepo, input=stdin,
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    observed = json.loads((memrepo / '.git' / 'agitmem' / 'observed.json').read_text())
    assert observed['requests'][-1]['text'].startswith('{"hook_event_name": "BeforeModel"')


@pytest.mark.parametrize('argv', [
    ['load'], ['load', '--json'], ['load', '--after-compact'], ['load', '--json', '--after-compact', '--json'],
])
def test_load_read_without_argparse_as_argparse_reads_it(argv: list[str]) -> None:
    fast = cli._load_call(argv)
    assert fast is not None
    assert vars(fast) == vars(arguments.build('load').parse_args(argv))


@pytest.mark.parametrize('argv', [
    ['load', '--ref', 'refs/agitmem/heads/x'], ['load', '--ref=x'], ['load', '-h'], ['load', 'extra'],
    ['load', '--jso'], ['state', 'show'],
])
def test_anything_else_is_left_to_argparse(argv: list[str]) -> None:
    assert cli._load_call(argv) is None


@pytest.mark.parametrize('argv', [
    ['state', 'set', 'a=b'], ['state', 'set', 'current_goal=x y', 'n:=1', 'k=-v', 'e='],
])
def test_state_set_read_without_argparse_as_argparse_reads_it(argv: list[str]) -> None:
    fast = cli._state_set_call(argv)
    assert fast is not None
    assert vars(fast) == vars(arguments.build('state').parse_args(argv))


@pytest.mark.parametrize('argv', [
    ['state', 'set'], ['state', 'set', '--no-save', 'a=b'], ['state', 'set', 'a=b', '--ref', 'x'],
    ['state', 'set', '-h'], ['state', 'set', '--', 'a=b'], ['state', 'show'], ['load'],
])
def test_any_other_state_call_is_left_to_argparse(argv: list[str]) -> None:
    assert cli._state_set_call(argv) is None


@pytest.mark.parametrize('argv', [
    ['verify', '--', 'true'], ['verify', '--', 'sh', '-c', 'exit 3'], ['verify', '--', '--no-save'],
    ['verify', '--', 'pytest', '--ref', 'x', '-h'], ['verify', '--', '--'],
])
def test_verify_read_without_argparse_as_argparse_reads_it(argv: list[str]) -> None:
    fast = cli._verify_call(argv)
    assert fast is not None
    assert vars(fast) == vars(arguments.build('verify').parse_args(argv))


@pytest.mark.parametrize('argv', [
    ['verify'], ['verify', '--'], ['verify', 'true'], ['verify', '--no-save', '--', 'true'],
    ['verify', '--ref', 'x', '--', 'true'], ['verify', '-h'],
])
def test_any_other_verify_call_is_left_to_argparse(argv: list[str]) -> None:
    assert cli._verify_call(argv) is None


def test_hook_read_without_argparse_as_argparse_reads_it() -> None:
    """`hook EVENT --agent A` is read without argparse: wherever that read
    takes the command line, argparse takes it alike, or refuses only what
    the hook refuses (arguments an agent event takes not).  `--agent -x`
    was taken for the agent `-x`, which argparse refuses: now left to it."""
    import contextlib
    import itertools
    words = ['stop', '--agent', 'claude', '-x', '--agent=', '--agent=-x', '', '-', '--', 'x', '-1', '--ag', '-h']
    for n in range(1, 4):
        for rest in itertools.product(words, repeat=n):
            argv = ['hook', *rest]
            fast = cli._hook_call(argv)
            if fast is None:
                continue
            try:
                with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                    ns = arguments.build('hook').parse_args(argv)
            except SystemExit:
                # refused by argparse: arguments after the agent, which the
                # hook refuses too
                assert fast[2], argv
                continue
            assert (ns.event, ns.agent, ns.hook_args) == fast, argv


@pytest.mark.parametrize('args', [
    ('stop', '--agent', '-x'), ('stop', '--agent'), ('stop', '--agent', 'claude', '--bogus'),
    ('stop', '--agent', 'claude', 'extra'),
])
def test_a_hook_command_line_refused_fails_no_agent(tmp_path: Path, args: tuple[str, ...]) -> None:
    """A hook's command line argparse refuses ended in exit 2 (a blocked
    prompt, tool call or stop) when an agent called it: exit 0 and its one
    line then; typed at a terminal, exit 2 (hook_test's _typed)."""
    proc = subprocess.run([*agitmem_argv(), 'hook', *args], cwd=tmp_path, input='{}', capture_output=True, text=True)
    assert proc.returncode == 0 and len(proc.stderr.splitlines()) == 1, proc
    assert 'Traceback' not in proc.stderr
    gemini = subprocess.run(
        [*agitmem_argv(), 'hook', 'stop', '--agent', 'gemini', '--bogus'], cwd=tmp_path, input='{}', capture_output=True, text=True,
    )
    assert (gemini.returncode, gemini.stdout) == (0, '{}\n'), gemini


@pytest.mark.parametrize(('argv', 'same_as'), [
    (['audit', '--since', '2026-01-01', 'a.jsonl'], ['--since', '2026-01-01', 'audit', 'a.jsonl']),
    # argparse's abbreviations take their value as the whole option does
    (['audit', '--sin', '2026-01-01', 'a.jsonl'], ['--since', '2026-01-01', 'audit', 'a.jsonl']),
    (['audit', 'a.jsonl', '--cl', 'codex'], ['--client', 'codex', 'audit', 'a.jsonl']),
    (['audit', '--ht', 'page.html', 'a.jsonl'], ['--html', 'page.html', 'audit', 'a.jsonl']),
    (['audit', '--js', 'a.jsonl', '--since=2026-01-01'], ['--json', '--since=2026-01-01', 'audit', 'a.jsonl']),
])
def test_recovery_audit_options_after_words_read_as_argparse_reads_them(
        argv: list[str], same_as: list[str],
) -> None:
    parser = arguments.build('recovery')
    got = parser.parse_args(cli._options_first(['recovery', *argv]))
    assert vars(got) == vars(parser.parse_args(['recovery', *same_as]))


def test_recovery_audit_html_empty_is_refused(tmp_path: Path) -> None:
    # an empty --html was taken for none: the audit ran, no page, exit 0
    log = tmp_path / 'rollout-2026-07-20T09-00-00-s.jsonl'
    log.write_text('{}\n')
    proc = subprocess.run(
        [*agitmem_argv(), 'recovery', 'audit', '--html', '', str(log)], cwd=tmp_path,
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2 and proc.stdout == '', proc
    assert proc.stderr == 'agitmem: --html: the name of the page to write is empty\n'


def _mo(catalog: dict[str, str]) -> bytes:
    """A GNU gettext catalog (the .mo format gettext reads)."""
    import struct
    keys = sorted(catalog)
    ids = b''.join(k.encode() + b'\0' for k in keys)
    strs = b''.join(catalog[k].encode() + b'\0' for k in keys)
    start = 7 * 4 + 16 * len(keys)
    table_ids, table_strs, off = [], [], 0
    for k in keys:
        table_ids += [len(k.encode()), start + off]
        off += len(k.encode()) + 1
    off = 0
    for k in keys:
        table_strs += [len(catalog[k].encode()), start + len(ids) + off]
        off += len(catalog[k].encode()) + 1
    head = struct.pack('Iiiiiii', 0x950412de, 0, len(keys), 28, 28 + 8 * len(keys), 0, 0)
    return head + struct.pack(f'{len(table_ids)}i', *table_ids) + struct.pack(f'{len(table_strs)}i', *table_strs) + ids + strs


_REQUIRED = 'the following arguments are required: %s'
_PARSE = 'import sys; from agitmem import arguments; arguments.build("note").parse_args(["note"])'


def test_argparse_messages_without_a_catalog_are_as_gettext_gives(tmp_path: Path) -> None:
    # no catalog anywhere (Python ships none): argparse's own words
    proc = subprocess.run(
        [sys.executable, '-c', _PARSE], capture_output=True, text=True,
        env={**os.environ, 'LANGUAGE': 'xx'},
    )
    assert proc.returncode == 2
    assert 'the following arguments are required: text' in proc.stderr


def test_argparse_messages_keep_a_catalog_that_exists(tmp_path: Path) -> None:
    # a catalog for argparse's domain (a host that ships one): still read
    (tmp_path / 'xx' / 'LC_MESSAGES').mkdir(parents=True)
    (tmp_path / 'xx' / 'LC_MESSAGES' / 'messages.mo').write_bytes(_mo({_REQUIRED: 'il faut: %s'}))
    code = f'import gettext; gettext.bindtextdomain("messages", {str(tmp_path)!r}); {_PARSE}'
    proc = subprocess.run(
        [sys.executable, '-c', code], capture_output=True, text=True,
        env={**os.environ, 'LANGUAGE': 'xx'},
    )
    assert proc.returncode == 2
    assert 'il faut: text' in proc.stderr, proc.stderr


def test_a_parser_looks_for_argparse_catalog_once() -> None:
    # each lookup stats four missing files: one for the whole parser
    code = (
        'import gettext; n = [0]; find = gettext.find\n'
        'def counted(*a, **k):\n    n[0] += 1; return find(*a, **k)\n'
        'gettext.find = counted\n'
        'from agitmem import arguments; arguments.build(None); print(n[0])'
    )
    proc = subprocess.run(
        [sys.executable, '-c', code], capture_output=True, text=True, check=True,
        env={**os.environ, 'LANGUAGE': 'en_US.UTF-8'},
    )
    assert int(proc.stdout) == 1
