"""The import rules that keep commands near their floors (issue 14): the
hot hooks never import pygit2 (nor filelock, nor yaml without a config that
needs it), and commands that do not scan never import the secret scanner.
Each command runs in its own interpreter, as `agitmem` would, and reports
what it imported."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import run
from testing.util import tip

def _probe(before: str, kept: str, entry: str = 'agitmem.cli') -> str:
    """A script that runs `entry`'s main as the console script does, after
    the lines `before`, then writes the lines the expression `kept` makes
    to the file named by argv[1] (not with json: the probe's own imports
    would hide the command's)."""
    return (
        f'import sys\n{before}\n'
        "out, sys.argv = sys.argv[1], ['agitmem', *sys.argv[2:]]\n"
        f'from {entry} import main\n'
        'try:\n    rc = main()\n'
        f"finally:\n    with open(out, 'w') as f:\n        f.write('\\n'.join({kept}))\n"
        'sys.exit(rc)\n'
    )


# the names of the modules it imported (only what agitmem imported:
# coverage, started before it under CI, has its own imports already in
# sys.modules)
_MODULES = ('before = set(sys.modules)', 'sorted(set(sys.modules) - before)')

SCANNER = ('agitmem.secrets', 'agitmem.checks.secrets')


# the probe without the site module: what a venv's .pth files import at
# start (an editable install's finder imports pathlib, importlib and
# urllib.parse; coverage more) is then not taken for loaded already.
# agitmem's source and the site directories are put on the path by hand,
# without their .pth files (os as site loads it: `python -c pass` has it)
_CLEAN = '''
import os, sys
sys.path[:0] = [{src!r}]
sys.path += {sites!r}
'''


def imported(repo: Path, *args: str, stdin: str = '', clean: bool = False, entry: str = 'agitmem.cli') -> set[str]:
    """entry: the module whose `main` runs (agitmem.__main__'s begins git
    ahead of the imports, as the console script does)."""
    out = repo.parent / 'modules.json'
    probe = _probe(*_MODULES, entry=entry)
    if clean:
        import agitmem
        import site
        src = str(Path(agitmem.__file__).parent.parent)
        argv = [sys.executable, '-S', '-c', _CLEAN.format(src=src, sites=site.getsitepackages()) + probe]
    else:
        argv = [sys.executable, '-c', probe]
    proc = subprocess.run(
        [*argv, str(out), *args],
        cwd=repo, input=stdin, capture_output=True, text=True,
    )
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    assert 'Traceback' not in proc.stderr, proc.stderr
    return set(out.read_text().split())


def _payload(repo: Path, event: str, **fields: object) -> str:
    return json.dumps({
        'session_id': 's', 'transcript_path': None, 'cwd': str(repo),
        'hook_event_name': event, **fields,
    })


def _work(repo: Path) -> None:
    (repo / 'src.py').write_text('def f():\n    return 1\n')
    ok('state', 'set', 'current_goal=move the loader', 'next_intent=edit src.py', cwd=repo)
    ok('note', 'a note', cwd=repo)
    ok('fragment', 'add', '--goal', 'g', '--next', 'n', cwd=repo)
    mem(repo, 'snapshot.md').write_text('## Goal\nmove the loader\n## In progress\n- src.py\n')
    ok('save', cwd=repo)


@pytest.fixture
def worked(tmp_path: Path, made: Callable[[Path, str, Callable[[Path], None]], None]) -> Path:
    """A memory with every layer written and saved, and code to edit."""
    made(tmp_path / 'repo', 'worked', _work)
    return tmp_path / 'repo'


def _edit_payload(repo: Path) -> str:
    return _payload(
        repo, 'PostToolUse', tool_name='Edit',
        tool_input={'file_path': str(repo / 'src.py'), 'old_string': '1', 'new_string': '2'},
    )


@pytest.mark.parametrize('event,payload', [
    ('post-edit', _edit_payload),
    ('prompt', lambda repo: _payload(repo, 'UserPromptSubmit', prompt='go on')),
])
def test_hot_hooks_import_no_pygit2(worked: Path, event: str, payload: object) -> None:
    stdin = payload(worked)  # type: ignore[operator]
    modules = imported(worked, 'hook', event, '--agent', 'claude', stdin=stdin, clean=True)
    assert 'agitmem.commands.hook' in modules  # the probe ran the hook
    # typing: a quarter of the interpreter's start (agitmem/tuples.py);
    # subprocess: git is begun by posix_spawn (platforms.Child);
    # unicodedata: a shared library, for precomposing file systems only
    for name in (
            'pygit2', 'filelock', 'yaml', 'dataclasses', 'tempfile', 'argparse', 'hashlib', 'typing', 'subprocess',
            'unicodedata', *NEVER_ON_THE_HOOKS,
    ):
        assert name not in modules, f'hook {event} imports {name}'


# pathlib imports urllib.parse (with ipaddress), fnmatch and ntpath: a tenth
# of a hook's run (repo.Repo's places are strings there); datetime.py is
# two thousand lines of Python over the C classes it re-exports
# (memory/state.py); importlib is not loaded with the interpreter
NEVER_ON_THE_HOOKS = ('pathlib', 'urllib.parse', 'ipaddress', 'fnmatch', 'datetime', 'importlib')

@pytest.mark.parametrize('name,args,payload', [
    ('session-start', ('hook', 'session-start', '--agent', 'claude'),
     lambda repo: _payload(repo, 'SessionStart', source='startup')),
    ('load', ('load',), lambda repo: ''),
])
def test_the_injection_imports_neither_json_nor_re(
        worked: Path, name: str, args: tuple[str, ...], payload: Callable[[Path], str],
) -> None:
    # the tattoo's keys and the snapshot's headings are read by str's methods
    modules = imported(worked, *args, stdin=payload(worked), clean=True, entry='agitmem.__main__')
    assert 'agitmem.inject' in modules  # the probe made the injection
    for never in ('json', 're', 'enum'):
        assert never not in modules, f'{name} imports {never}'


@pytest.mark.parametrize('name,args,payload', [
    ('post-edit', ('hook', 'post-edit', '--agent', 'claude'), _edit_payload),
    ('prompt', ('hook', 'prompt', '--agent', 'claude'), lambda repo: _payload(repo, 'UserPromptSubmit', prompt='go on')),
    ('stop', ('hook', 'stop', '--agent', 'claude'), lambda repo: _payload(repo, 'Stop', stop_hook_active=False)),
    ('before-model', ('hook', 'prompt', '--agent', 'gemini'), lambda repo: _model_call(repo)),
])
def test_the_agent_hooks_import_neither_json_nor_re(
        worked: Path, name: str, args: tuple[str, ...], payload: Callable[[Path], str],
) -> None:
    # json imports re, and re enum, functools and collections: 9 ms, two
    # thirds of `python -c pass` (agitmem/jsontext.py reads and writes
    # JSON by json's own C parts)
    modules = imported(worked, *args, stdin=payload(worked), clean=True, entry='agitmem.__main__')
    assert 'agitmem.jsontext' in modules  # the probe ran the hook
    for never in ('json', 're', 'enum', 'collections'):
        assert never not in modules, f'{name} imports {never}'


# all that each agent hook and `load` import, agitmem's modules and the
# standard library's: a module more is paid on every edit, prompt, turn
# and model call (issue 41).  Not json, nor the re it imports (the agent
# hooks' program, scripts/agitmem-hook, imports neither: agitmem/jsontext.py)
_ENTRY = {
    'agitmem', 'agitmem.__main__', 'agitmem.ahead', 'agitmem.platforms', 'agitmem.cli', 'agitmem.errors',
    'agitmem.tuples', 'agitmem.commands', 'agitmem.porcelain', 'agitmem.agents', 'agitmem.jsontext',
    '__future__', 'atexit', 'gc', '_json',
    '_collections',  # its C field getters, not collections (agitmem/tuples.py)
}

# what escapes the text a command prints: not imported by a hook with
# nothing to say (Claude Code's post-edit, prompt and stop, nearly always)
_PRINTS = {'agitmem.render'}
# (its own client's module only: the others, the shell shims' and what
# answers Gemini's calls around every model call are not imported for a
# Claude Code hook)
_HOOK = _ENTRY | {
    'agitmem.commands.hook', 'agitmem.porcelain.notices',
    *(f'agitmem.agents.{m}' for m in ('clients', 'envelopes', 'payload')),
}
_AGENT_HOOK = _HOOK | {'agitmem.agents.claude'}
# where the repository is, its config and the session's hook state (select:
# only when git has not ended by the time its answer is read)
_WHERE = _AGENT_HOOK | {
    'agitmem.repo', 'agitmem.config', 'agitmem.caches', 'agitmem.memory', 'agitmem.porcelain.agent_hooks',
    'agitmem.porcelain.context', 'agitmem.porcelain.sessions', '_sha1', 'select',
}
# what checkpoints before a compaction and reminds of a stale state: not
# stop's (nor the audit log, written when a hook has something to say)
_CHECKPOINTS = {'agitmem.porcelain.checkpoints'}
# what the hooks saw the agent do (porcelain/observed.py), and what reads
# an edit's tool call and finds the definition it is in
_OBSERVED = {'agitmem.porcelain.observed', 'agitmem.memory.state'}
_EDITS = {'agitmem.paths', 'agitmem.agents.tools', 'agitmem.memory.definitions', 'errno'}
PINNED = {
    'post-edit': _WHERE | _CHECKPOINTS | _OBSERVED | _EDITS,
    # the transcript looked at for a compaction; the request kept, looked
    # at for what the secret scanner could find (nothing in `go on`)
    'prompt': _WHERE | _CHECKPOINTS | _OBSERVED | {
        'agitmem.agents.transcript', 'agitmem.porcelain.compactions', 'agitmem.secret_words',
    },
    'stop': _WHERE,
    # (Gemini CLI wants `{}` on stdout, always)
    'before-model': _HOOK | _PRINTS | {
        'agitmem.agents.gemini', 'agitmem.porcelain.model_calls', 'agitmem.agents.transcript',
    },
    # (the working tree's tree, for the state's freshness: trees.py)
    'load': _ENTRY | _PRINTS | {
        'agitmem.commands.load', 'agitmem.repo', 'agitmem.trees', 'agitmem.config', 'agitmem.caches', 'agitmem.audit',
        'agitmem.porcelain.context', 'agitmem.porcelain.read', 'agitmem.inject', 'agitmem.tokens',
        'agitmem.memory', *(f'agitmem.memory.{m}' for m in ('fragments', 'notes', 'snapshot', 'state', 'tattoo')),
        *_OBSERVED, '_datetime', '_sha1', 'select',
        'types',  # (load's arguments, read without argparse: cli._load_call)
    },
}


def test_load_after_the_hooks_compiles_no_escaping_pattern(worked: Path) -> None:
    """What the hooks observed is shown escaped, but the session key each
    entry holds (`agent NUL id`) is not in the block: an ordinary memory
    and observed file need none of render's patterns (a millisecond to
    compile on every load)."""
    ok('hook', 'post-edit', '--agent', 'claude', cwd=worked, input=_edit_payload(worked))
    ok('hook', 'prompt', '--agent', 'claude', cwd=worked, input=_payload(worked, 'UserPromptSubmit', prompt='go on'))
    code = (
        'import sys; sys.argv = ["agitmem", "load"]; from agitmem import cli, render; rc = cli.main(); '
        'print(len(render._COMPILED), file=sys.stderr); sys.exit(rc)'
    )
    proc = subprocess.run([sys.executable, '-c', code], cwd=worked, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert '- edited src.py' in proc.stdout and "user's last request: go on" in proc.stdout
    assert proc.stderr.split()[-1] == '0', proc.stderr


def test_a_request_that_may_hold_a_credential_is_scanned(worked: Path) -> None:
    """The other side of the prompt's pinned set: a request a rule could
    match is redacted by the scanner before it is kept."""
    stdin = _payload(worked, 'UserPromptSubmit', prompt='the password is hunter2')
    assert 'agitmem.secrets' in imported(worked, 'hook', 'prompt', '--agent', 'claude', stdin=stdin, clean=True)


@pytest.mark.parametrize('name,args,payload', [
    ('post-edit', ('hook', 'post-edit', '--agent', 'claude'), _edit_payload),
    ('prompt', ('hook', 'prompt', '--agent', 'claude'), lambda repo: _payload(repo, 'UserPromptSubmit', prompt='go on')),
    ('stop', ('hook', 'stop', '--agent', 'claude'), lambda repo: _payload(repo, 'Stop', stop_hook_active=False)),
    ('before-model', ('hook', 'prompt', '--agent', 'gemini'), lambda repo: _model_call(repo)),
    ('load', ('load',), lambda repo: ''),
])
def test_each_hook_and_load_import_only_their_pinned_modules(
        worked: Path, name: str, args: tuple[str, ...], payload: Callable[[Path], str],
) -> None:
    if name == 'load':
        # the code committed and the working tree's tree cached (a first load
        # after a save computes it by git's plumbing, with subprocess; a file
        # written within two seconds is never cached): as for every load after
        git('add', 'src.py', cwd=worked)
        git('commit', '-q', '-m', 'code', cwd=worked)
        ok('load', cwd=worked)
    modules = imported(worked, *args, stdin=payload(worked), clean=True)
    # the probe ran the command: its own module is there
    assert {'load': 'agitmem.commands.load', 'before-model': 'agitmem.porcelain.model_calls'}.get(
        name, 'agitmem.porcelain.agent_hooks') in modules
    assert modules <= PINNED[name], sorted(modules - PINNED[name])
    for never in NEVER_ON_THE_HOOKS:
        assert never not in modules, f'{name} imports {never}'


# after a compaction, the first turn's hooks add its events to the
# recovery log; only its end (stop, or the next prompt) judges it, with the
# classifier and its phrase lists: tens of milliseconds of regexes, which
# the hooks of every edit, prompt and checkpoint of that turn never pay

CLASSIFIER = ('agitmem.memory.recovery', 'agitmem.memory.phrases', 'agitmem.memory.directives')
PAYLOADS = Path(__file__).parent / 'agents' / 'payloads'


def _claude(repo: Path, name: str, **fields: object) -> str:
    data = json.loads((PAYLOADS / f'{name}.json').read_text())
    data.update(cwd=str(repo), session_id='s', transcript_path=None, **fields)
    return json.dumps(data)


def _compacted(repo: Path) -> Path:
    """A /compact in Claude Code: the record of its first turn is open."""
    ok('hook', 'pre-compact', '--agent', 'claude', cwd=repo, input=_claude(repo, 'claude_pre_compact_manual'))
    ok('hook', 'session-start', '--agent', 'claude', cwd=repo, input=_claude(repo, 'claude_session_start_compact'))
    return repo


def _edit(repo: Path) -> str:
    (repo / 'src.py').write_text('def f():\n    return 2\n')
    return _payload(
        repo, 'PostToolUse', tool_name='Edit',
        tool_input={'file_path': str(repo / 'src.py'), 'old_string': '1', 'new_string': '2'},
    )


@pytest.mark.parametrize('event,payload', [
    ('post-edit', _edit),
    ('post-edit', lambda repo: _payload(
        repo, 'PostToolUse', tool_name='Bash', tool_input={'command': 'ls'},
        tool_response={'stdout': 'src.py', 'stderr': '', 'interrupted': False},
    )),
    ('prompt', lambda repo: _payload(repo, 'UserPromptSubmit', prompt='go on with the loader')),
    ('pre-compact', lambda repo: _claude(repo, 'claude_pre_compact_auto')),
    ('pre-compact', lambda repo: _claude(repo, 'claude/PostCompact', compact_summary='we moved the loader')),
])
def test_the_first_turns_hooks_after_a_compaction_import_no_classifier(
        worked: Path, event: str, payload: object,
) -> None:
    stdin = payload(_compacted(worked))  # type: ignore[operator]
    modules = imported(worked, 'hook', event, '--agent', 'claude', stdin=stdin)
    assert 'agitmem.porcelain.recovery' in modules  # the probe added to the open record
    for name in CLASSIFIER:
        assert name not in modules, f'hook {event} imports {name}'


def test_the_end_of_the_first_turn_judges_it(worked: Path) -> None:
    """The other side: the stop hook at the end of the turn classifies
    what the hooks before it recorded (the edit, without the classifier)."""
    _compacted(worked)
    assert 'agitmem.memory.phrases' not in imported(worked, 'hook', 'post-edit', '--agent', 'claude', stdin=_edit(worked))
    modules = imported(worked, 'hook', 'stop', '--agent', 'claude', stdin=_payload(
        worked, 'Stop', stop_hook_active=False, last_assistant_message='Moved the loader: src.py returns 2.',
    ))
    assert 'agitmem.memory.recovery' in modules
    row = json.loads(ok('recovery', 'show', '1', '--json', cwd=worked))
    assert row['verdict'] and 'src.py' in json.dumps(row['events'])


# outside a compaction, an edit's and a turn's end hooks read no
# transcript and open no record: what handles a compaction is imported
# where one can be seen (each client's recorded payload, its transcript
# there to be read)

COMPACTION_HANDLING = (
    'agitmem.porcelain.compactions', 'agitmem.porcelain.records',
    'agitmem.agents.transcript', 'agitmem.porcelain.recovery', *CLASSIFIER,
)


def _recorded(repo: Path, name: str) -> str:
    text = (PAYLOADS / f'{name}.json').read_text()
    data = json.loads(text.replace('/home/user/proj', str(repo)).replace('<cwd>', str(repo)))
    transcript = repo.parent / 'transcript.jsonl'
    transcript.write_text('')
    data.update(cwd=str(repo), session_id='s', transcript_path=str(transcript))
    return json.dumps(data)


@pytest.mark.parametrize('agent,event,name', [
    ('claude', 'post-edit', 'claude_real_post_tool_use_edit'),
    ('codex', 'post-edit', 'codex_post_edit_apply_patch'),
    ('gemini', 'post-edit', 'gemini_post_edit_replace'),
    ('claude', 'stop', 'claude_real_stop'),
    ('codex', 'stop', 'codex_stop'),
    ('gemini', 'stop', 'gemini_stop'),
])
def test_edit_and_stop_hooks_outside_a_compaction_import_no_compaction_handling(
        worked: Path, agent: str, event: str, name: str,
) -> None:
    modules = imported(worked, 'hook', event, '--agent', agent, stdin=_recorded(worked, name))
    assert 'agitmem.porcelain.agent_hooks' in modules  # the probe ran the hook
    for module in (*COMPACTION_HANDLING, 'typing', 'subprocess'):
        assert module not in modules, f'hook {event} ({agent}) imports {module}'


@pytest.mark.parametrize('agent,name', [
    ('claude', 'claude_real_user_prompt_submit'), ('codex', 'codex_prompt'), ('gemini', 'gemini_prompt'),
])
def test_a_prompt_outside_a_compaction_opens_no_record(worked: Path, agent: str, name: str) -> None:
    # it reads the transcript (for a compaction) but has no record to keep
    modules = imported(worked, 'hook', 'prompt', '--agent', agent, stdin=_recorded(worked, name))
    assert 'agitmem.porcelain.compactions' in modules  # the probe looked for a compaction
    for module in ('agitmem.porcelain.records', 'agitmem.porcelain.recovery', *CLASSIFIER, 'typing'):
        assert module not in modules, f'hook prompt ({agent}) imports {module}'


# Gemini CLI fires BeforeModel and PreCompress around every model call: a
# call with nothing to do (no compression summary in its request) is a look
# at the request, without the hooks' machinery, the memory or the session,
# and without git (no process begun, not even subprocess imported)

HOOK_MACHINERY = (
    'agitmem.porcelain.agent_hooks', 'agitmem.porcelain.sessions', 'agitmem.porcelain.context',
    'agitmem.config', 'agitmem.memory', 'agitmem.audit', 'agitmem.repo', 'subprocess',
    'typing',  # (agitmem/tuples.py)
)


def _model_call(repo: Path, *, summary: bool = False) -> str:
    data = json.loads((PAYLOADS / 'gemini' / 'BeforeModel.json').read_text())
    messages = [{'role': 'user', 'content': 'move the loader'}, {'role': 'model', 'content': 'on it'}]
    if summary:
        from agitmem.agents.transcript import GEMINI_ACK
        messages[:0] = [{'role': 'user', 'content': '<state_snapshot>we moved it</state_snapshot>'},
                        {'role': 'model', 'content': GEMINI_ACK}]
    data.update(cwd=str(repo), session_id='g', transcript_path=None)
    data['llm_request']['messages'] = messages
    return json.dumps(data)


@pytest.mark.parametrize('event,payload', [
    ('prompt', _model_call),
    ('pre-compact', lambda repo: _recorded(repo, 'gemini/PreCompress-auto')),
])
def test_gemini_calls_around_every_model_call_import_no_hook_machinery(
        worked: Path, event: str, payload: object,
) -> None:
    modules = imported(worked, 'hook', event, '--agent', 'gemini', stdin=payload(worked))  # type: ignore[operator]
    assert 'agitmem.porcelain.model_calls' in modules  # the probe ran the hook
    for module in HOOK_MACHINERY:
        assert module not in modules, f'hook {event} (gemini) imports {module}'


def test_a_model_call_after_a_compression_is_handled(worked: Path) -> None:
    """The other side: a request that holds a compression summary is looked
    up in the session (here the chat file shows none: nothing injected)."""
    modules = imported(worked, 'hook', 'prompt', '--agent', 'gemini', stdin=_model_call(worked, summary=True))
    assert 'agitmem.porcelain.agent_hooks' in modules and 'agitmem.porcelain.sessions' in modules


# what the hot hooks write of their own (the session's hook state, the
# observed facts: caches a reader takes for empty when damaged) is not
# fsynced on every edit and prompt; memory is

_FSYNCS = _probe('''import os
calls = []
real = os.fsync
def fsync(fd):
    calls.append(os.readlink(f'/proc/self/fd/{fd}') if os.path.exists(f'/proc/self/fd/{fd}') else str(fd))
    return real(fd)
os.fsync = fsync''', 'calls')


def fsynced(repo: Path, *args: str, stdin: str) -> list[str]:
    out = repo.parent / 'fsyncs.txt'
    proc = subprocess.run(
        [sys.executable, '-c', _FSYNCS, str(out), *args], cwd=repo, input=stdin, capture_output=True, text=True,
    )
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    return [line for line in out.read_text().splitlines() if line]


@pytest.mark.skipif(not os.path.isdir('/proc/self/fd'), reason='names the files by /proc')
def test_hot_hooks_fsync_no_cache_of_their_own(worked: Path) -> None:
    assert fsynced(worked, 'hook', 'post-edit', '--agent', 'claude', stdin=_edit(worked)) == []
    assert fsynced(worked, 'hook', 'prompt', '--agent', 'claude', stdin=_payload(worked, 'UserPromptSubmit', prompt='go on')) == []
    assert (worked / '.git' / 'agitmem' / 'observed.json').exists()  # the hooks wrote their caches
    # an agent's edit of memory is saved (to the ref, by git), with no
    # record of agitmem's own fsynced: the memory base, the shim's list
    mem(worked, 'notes.md').write_text('- edited by the agent\n')
    assert fsynced(worked, 'hook', 'post-edit', '--agent', 'claude', stdin=_payload(
        worked, 'PostToolUse', tool_name='Write', tool_input={'file_path': str(mem(worked, 'notes.md')), 'content': '-'},
    )) == []
    assert 'edited by the agent' in git('show', 'refs/agitmem/heads/main:notes.md', cwd=worked)
    # the other side: a memory file agitmem writes is written durably
    saved = fsynced(worked, 'state', 'set', 'next_intent=go on', stdin='')
    assert [os.path.basename(p).split('.')[1:3] for p in saved] == [['state', 'json']], saved


def test_a_write_imports_no_filelock_when_nobody_holds_the_lock(worked: Path) -> None:
    # filelock is only for waiting on another writer
    assert 'filelock' not in imported(worked, 'note', 'x')


@pytest.mark.parametrize('args', [
    ('status',), ('log', '-n', '20'), ('load',), ('state', 'show'),
    ('show', ':state.json'), ('diff',),
])
def test_commands_that_do_not_scan_import_no_scanner(worked: Path, args: tuple[str, ...]) -> None:
    modules = imported(worked, *args)
    assert f'agitmem.commands.{args[0]}' in modules  # the probe ran it
    for name in SCANNER:
        assert name not in modules, f'{" ".join(args)} imports {name}'


def test_load_and_state_show_import_no_pygit2(worked: Path) -> None:
    for args in (('load',), ('state', 'show')):
        modules = imported(worked, *args)
        assert 'pygit2' not in modules, f'{" ".join(args)} imports pygit2'
        assert 'filelock' not in modules, f'{" ".join(args)} imports filelock'


@pytest.mark.parametrize('args', [('load',), ('load', '--json'), ('load', '--after-compact')])
def test_load_imports_no_argparse_nor_typing(worked: Path, args: tuple[str, ...]) -> None:
    # its arguments read without argparse (cli._load_call); typing's
    # names only for mypy (agitmem/tuples.py): each is milliseconds of
    # an interpreter's start on every session start's shim
    # (after a compaction RELATED reads the history through pygit2, which
    # imports typing itself)
    modules = imported(worked, *args)
    assert 'agitmem.commands.load' in modules  # the probe ran it
    for name in ('argparse', *(('typing',) if '--after-compact' not in args else ())):
        assert name not in modules, f'{" ".join(args)} imports {name}'


def test_state_set_imports_no_typing_nor_subprocess(worked: Path) -> None:
    """`state set` (an agent runs it at every step) saves by git's
    plumbing, begun by posix_spawn (repo.git and git_bytes, as the reads
    ahead are): no subprocess, and typing's names only for mypy."""
    (worked / 'src.py').write_text('def f():\n    return 4\n')  # the state's tree: hashed
    modules = imported(worked, 'state', 'set', 'next_intent=go on', clean=True, entry='agitmem.__main__')
    assert 'agitmem.porcelain.write' in modules  # the probe ran it
    # (its arguments read without argparse: cli._state_set_call)
    for name in ('typing', 'subprocess', 'pygit2', 'argparse', 'pathlib'):
        assert name not in modules, name
    assert 'go on' in git('show', 'refs/agitmem/heads/main:state.json', cwd=worked)


def test_verify_reads_its_arguments_without_argparse(worked: Path) -> None:
    """`verify -- CMD`: its command waits on everything imported before it,
    and its tree on the command (cli._verify_call)."""
    modules = imported(worked, 'verify', '--', sys.executable, '-c', 'pass', clean=True, entry='agitmem.__main__')
    assert 'agitmem.porcelain.verifying' in modules  # the probe ran it
    assert 'argparse' not in modules
    assert json.loads(git('show', 'refs/agitmem/heads/main:state.json', cwd=worked))['last_verification']['result'] == 'passed'


# the imports and process starts it made, in order
_ORDER_PROBE = _probe('''events = []
def hook(event, args):
    if event == 'import':
        events.append('import ' + args[0])
    elif event in ('os.posix_spawn', 'subprocess.Popen'):
        events.append('start ' + ' '.join(map(str, args[1])))
sys.addaudithook(hook)''', 'events', entry='agitmem.__main__')


def test_verify_begins_the_tree_as_its_command_ends(worked: Path) -> None:
    """The status of the tree the command left is begun before anything
    else: the command as recorded imports shlex (and re), 4 ms that the
    status, the longest part of verify, would otherwise wait on."""
    (worked / 'src.py').write_text('def f():\n    return 5\n')
    out = worked.parent / 'order.txt'
    proc = subprocess.run(
        [sys.executable, '-c', _ORDER_PROBE, str(out), 'verify', '--', 'true'],
        cwd=worked, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    events = out.read_text().splitlines()
    command = events.index('start true')
    status = next(i for i, e in enumerate(events) if e.startswith('start git') and ' status ' in e)
    assert command < status
    assert status < events.index('import shlex')


def test_reads_import_no_filelock(worked: Path) -> None:
    for args in (('status',), ('log',)):
        assert 'filelock' not in imported(worked, *args), f'{args[0]} imports filelock'


def test_a_save_scans(worked: Path) -> None:
    """The other side of the rule: the probe does see the scanner where it
    is used (a write refuses credentials)."""
    mem(worked, 'notes.md').write_text('- one more\n')
    assert 'agitmem.secrets' in imported(worked, 'save')


@pytest.mark.parametrize('args', [
    ('note', 'x'), ('state', 'set', 'next_intent=y'), ('fragment', 'add', '--goal', 'g', '--next', 'n'),
    ('verify', '--', 'true'), ('save',),
])
def test_writes_import_no_datetime(worked: Path, args: tuple[str, ...]) -> None:
    # a timestamp is time.strftime's: datetime is for the ages log and show print
    modules = imported(worked, *args)
    assert 'agitmem.porcelain.write' in modules  # the probe ran a write
    assert 'datetime' not in modules, f'{" ".join(args)} imports datetime'


@pytest.mark.parametrize('args', [
    ('note', 'x'), ('state', 'set', 'next_intent=y'), ('fragment', 'add', '--goal', 'g', '--next', 'n'),
    ('verify', '--', 'true'), ('save',),
])
def test_writes_import_no_pygit2(worked: Path, args: tuple[str, ...]) -> None:
    # the memory commit is written by git's plumbing (store.plain_commit):
    # pygit2's import is 60-70 ms of CPU, as much as `git status` on 20,000
    # files (issue 23)
    mem(worked, 'notes.md').write_text('- edited by hand, for `save`\n')
    before = tip(worked, git('for-each-ref', '--format=%(refname)', 'refs/agitmem/heads/', cwd=worked).strip())
    modules = imported(worked, *args)
    ref = git('for-each-ref', '--format=%(refname)', 'refs/agitmem/heads/', cwd=worked).strip()
    assert tip(worked, ref) != before  # the probe wrote a memory commit
    assert 'pygit2' not in modules, f'{" ".join(args)} imports pygit2'
    assert run('git', 'fsck', '--strict', cwd=worked).returncode == 0


def test_a_write_after_the_ref_moved_elsewhere_uses_pygit2(worked: Path) -> None:
    """The other side: the ref moved past this worktree's memory (another
    worktree, a merge elsewhere): the write merges, by pygit2."""
    ref = git('for-each-ref', '--format=%(refname)', 'refs/agitmem/heads/', cwd=worked).strip()
    elsewhere = git('commit-tree', f'{ref}^{{tree}}', '-p', ref, '-m', 'elsewhere', cwd=worked).strip()
    git('update-ref', ref, elsewhere, cwd=worked)
    modules = imported(worked, 'note', 'y')
    assert 'pygit2' in modules
    assert git('rev-parse', f'{ref}^', cwd=worked).strip() == elsewhere


def test_check_staged_imports_no_hashlib(worked: Path) -> None:
    # blob ids are the interpreter's own SHA-1 (hashlib loads OpenSSL)
    (worked / 'src.py').write_text('def f():\n    return 2\n')
    git('add', 'src.py', cwd=worked)
    modules = imported(worked, 'check', '--staged')
    assert 'agitmem.checks.progress_not_updated' in modules  # compared blob ids
    assert 'hashlib' not in modules


@pytest.mark.parametrize('args', [('--help',), ('status',), ('load',), ('install', '--help')])
def test_other_commands_import_no_mcp_sdk(worked: Path, args: tuple[str, ...]) -> None:
    # `agitmem --help` exits through SystemExit: the probe still records
    out = worked.parent / 'modules.json'
    subprocess.run([sys.executable, '-c', _probe(*_MODULES), str(out), *args], cwd=worked, capture_output=True)
    modules = set(out.read_text().split())
    assert 'agitmem.cli' in modules
    assert not {m for m in modules if m.split('.')[0] in ('mcp', 'mcp_types', 'anyio', 'pydantic')}


# the git hooks a commit runs (issue 23): each imports what its own work
# needs, no more

COMMIT_HOOKS_NEVER = (
    'pygit2', 'filelock', 'yaml', 'argparse', 'hashlib', 'dataclasses',
    'tempfile', 'shutil', 'agitmem.store', 'agitmem.porcelain.write',
)


def _staged(repo: Path) -> Path:
    (repo / 'src.py').write_text('def f():\n    return 3\n')
    git('add', 'src.py', cwd=repo)
    return repo


def test_pre_commit_hook_imports_the_checks_only(worked: Path) -> None:
    modules = imported(_staged(worked), 'hook', 'pre-commit')
    assert 'agitmem.checks.run' in modules  # the probe ran every check
    for name in COMMIT_HOOKS_NEVER:
        assert name not in modules, f'hook pre-commit imports {name}'


def test_pre_commit_hook_reads_the_memory_without_re(worked: Path) -> None:
    # every check that reads the memory's text has something to read (a
    # negative rule's term used, a `key: value` rule, a symbol, a path in
    # In progress, a conflict marker's look-alike): json, re and the enum,
    # functools and collections they import are a fifth of the hook's own
    # run, on every commit (agitmem/textmatch.py)
    mem(worked, 'tattoo.md').write_text(
        '# Tattoo\n- never use `var` in src/\n- indent: 4 spaces\n- MUST NOT push to `main`\n',
    )
    mem(worked, 'snapshot.md').write_text(
        '## Goal\nmove the loader\n## Decisions\n1. indent: 4 spaces\n'
        '## In progress\n- `var` in `src/gone.py:12` and `t/a_test.py::test_x`\n'
        '- <<<<<<<< not a marker\n',
    )
    ok('state', 'set', 'current_file=src.py', 'current_symbol=mod.g', cwd=worked)
    ok('save', cwd=worked)
    _staged(worked)
    modules = imported(worked, 'hook', 'pre-commit', clean=True, entry='agitmem.__main__')
    assert 'agitmem.checks.run' in modules  # the probe ran every check
    for never in ('json', 're', 'enum', 'collections', 'functools'):
        assert never not in modules, f'hook pre-commit imports {never}'
    said = agitmem('hook', 'pre-commit', cwd=worked).stdout
    assert 'uses `var`, which tattoo rule "never use `var` in src/"' in said
    assert 'In progress names `src/gone.py:12`, which does not exist' in said
    assert '`t/a_test.py::test_x`' in said  # (the suffix is not the file)
    assert 'current_symbol' in said and 'contradicts' not in said and 'merge conflict' not in said


def test_pre_commit_hook_scans_no_memory_scanned_before(worked: Path) -> None:
    # the saves scanned what they committed; the first hook what was left
    _staged(worked)
    assert 'agitmem.checks.run' in imported(worked, 'hook', 'pre-commit')
    modules = imported(worked, 'hook', 'pre-commit')
    assert 'agitmem.checks.run' in modules  # the probe ran every check
    for name in SCANNER:
        assert name not in modules, f'hook pre-commit imports {name}'
    # the other side: an edit is scanned
    with open(mem(worked, 'notes.md'), 'a') as f:
        f.write('- one more\n')
    assert 'agitmem.secrets' in imported(worked, 'hook', 'pre-commit')


def test_commit_msg_hook_imports_the_message_rules_only(worked: Path) -> None:
    msg = worked / '.git' / 'COMMIT_EDITMSG'
    msg.write_text('CFG-1 a message\n')
    modules = imported(worked, 'hook', 'commit-msg', str(msg))
    assert 'agitmem.checks.commit_msg' in modules  # the probe ran the stage
    # no rule at all: not even the rules' module
    for name in (*COMMIT_HOOKS_NEVER, 'agitmem.checks.run', 'agitmem.checks.enforce', *SCANNER, 'agitmem.diffs'):
        assert name not in modules, f'hook commit-msg imports {name}'
    with open(mem(worked, 'tattoo.md'), 'a') as f:
        f.write('- commit messages start with a ticket id\n')
    (worked / '.agent' / 'config.yaml').write_text(
        'enforce:\n- rule: commit messages start with a ticket id\n'
        '  commit_msg: "^[A-Z]+-[0-9]+ "\n',
    )
    modules = imported(worked, 'hook', 'commit-msg', str(msg))
    assert 'agitmem.checks.enforce' in modules
    for name in ('pygit2', 'agitmem.checks.run', *SCANNER, 'agitmem.store'):
        assert name not in modules, f'hook commit-msg imports {name}'


def test_post_commit_hook_with_nothing_to_save_imports_no_pygit2(worked: Path) -> None:
    git('commit', '-q', '-m', 'code', cwd=_staged(worked))
    modules = imported(worked, 'hook', 'post-commit')
    assert 'agitmem.porcelain.saved' in modules  # the probe ran the hook
    for name in (*COMMIT_HOOKS_NEVER, *SCANNER, 'agitmem.checks.run', 'agitmem.diffs'):
        assert name not in modules, f'hook post-commit imports {name}'
    # the other side: a memory edit is saved (by git's plumbing: no
    # pygit2 either, issue 23)
    with open(mem(worked, 'notes.md'), 'a') as f:
        f.write('- one more\n')
    modules = imported(worked, 'hook', 'post-commit')
    assert 'agitmem.porcelain.write' in modules
    assert 'pygit2' not in modules
    assert 'one more' in git('show', 'refs/agitmem/heads/main:notes.md', cwd=worked)


def test_pre_commit_hook_without_enforce_rules_imports_no_patch_reader(worked: Path) -> None:
    # no rule reads the change's lines: neither the patch nor its reader
    modules = imported(_staged(worked), 'hook', 'pre-commit')
    assert 'agitmem.checks.run' in modules  # the probe ran every check
    for name in ('agitmem.checks.enforce', 'agitmem.diffs', 'agitmem.redos'):
        assert name not in modules, f'hook pre-commit imports {name}'
    with open(mem(worked, 'tattoo.md'), 'a') as f:
        f.write('- no prints\n')
    (worked / '.agent' / 'config.yaml').write_text(
        'enforce:\n- rule: no prints\n  forbid: "print\\\\("\n',
    )
    assert 'agitmem.checks.enforce' in imported(worked, 'hook', 'pre-commit')


_ENFORCE = (
    'enforce:\n'
    '- rule: no prints\n  forbid: "print\\\\("\n  files: ["*.py"]\n'
    '- rule: no new dependencies\n  dependencies: [requests]\n'
    '- rule: ticket ids\n  commit_msg: "^[A-Z]+-[0-9]+ "\n'
)


@pytest.mark.parametrize('args', [
    ('hook', 'pre-commit'), ('check', '--staged'), ('check', '--json', '--staged'),
])
def test_the_checks_with_enforce_rules_import_only_what_they_read(worked: Path, args: tuple[str, ...]) -> None:
    """With enforce's patterns, globs and allow-lists (a team's usual
    config), the staged checks import the regex engine, the patch reader
    and the ReDoS guard, not typing, pathlib, threading (the guard's alarm),
    json (package.json's, where none is staged) or argparse (`check
    --staged` is read without it)."""
    with open(mem(worked, 'tattoo.md'), 'a') as f:
        f.write('- no prints\n- no new dependencies\n- ticket ids\n')
    (worked / '.agent' / 'config.yaml').write_text(_ENFORCE)
    (worked / 'requirements.txt').write_text('requests\n')
    git('add', 'requirements.txt', cwd=worked)
    agitmem(*args, cwd=_staged(worked))  # (config.yaml's cache written: a commit's usual case)
    modules = imported(worked, *args, clean=True, entry='agitmem.__main__')
    for name in ('agitmem.checks.enforce', 'agitmem.diffs', 'agitmem.redos'):
        assert name in modules, name  # the probe ran the rules
    unused = ('typing', 'pathlib', 'threading', 'argparse', 'subprocess')
    for name in unused if '--json' in args else (*unused, 'json'):
        assert name not in modules, f'{" ".join(args)} imports {name}'


def test_check_staged_read_without_argparse_is_the_check_argparse_reads(worked: Path) -> None:
    """`check --staged [--json]` (read by hand) and the same with an option
    only argparse reads say the same."""
    (worked / '.agent' / 'config.yaml').write_text(_ENFORCE)
    (worked / 'src.py').write_text('print(1)\n')
    git('add', 'src.py', cwd=worked)
    for extra in ((), ('--json',)):
        fast = agitmem('check', '--staged', *extra, cwd=worked)
        slow = agitmem('check', '--staged', *extra, '--ref', 'refs/agitmem/heads/main', cwd=worked)
        assert (fast.returncode, fast.stdout) == (slow.returncode, slow.stdout)
        assert fast.returncode == 1 and 'no prints' in fast.stdout


# what each commit hook imports of agitmem and how many git processes it
# starts, run by its shim as git runs it (at the top of the working tree,
# GIT_INDEX_FILE set), a code change staged and a verification recorded:
# a module or a process more is a cost on every commit (issue 23)

PRE_COMMIT_MODULES = {
    'agitmem.tuples',  # (typing's NamedTuple, without typing)
    'agitmem', 'agitmem.__main__', 'agitmem.ahead', 'agitmem.platforms', 'agitmem.cli', 'agitmem.errors',
    'agitmem.repo', 'agitmem.trees', 'agitmem.config', 'agitmem.caches', 'agitmem.commands',
    'agitmem.commands.githook', 'agitmem.porcelain', 'agitmem.porcelain.context',
    'agitmem.porcelain.checking', 'agitmem.render', 'agitmem.findings', 'agitmem.memory',
    'agitmem.memory.state', 'agitmem.memory.snapshot', 'agitmem.memory.tattoo',
    'agitmem.memory.fragments', 'agitmem.tokens', 'agitmem.checks', 'agitmem.checks.run', 'agitmem.jsontext',
    'agitmem.textmatch',
    *(f'agitmem.checks.{c}' for c in (
        'staged', 'commit_msg', 'merge_conflict', 'progress_not_updated', 'scanned',
        'schema', 'size', 'state_vs_worktree', 'tattoo_size', 'tattoo_vs_snapshot',
        'verification_stale',
    )),
}
POST_COMMIT_MODULES = {
    'agitmem', 'agitmem.__main__', 'agitmem.ahead', 'agitmem.platforms', 'agitmem.cli', 'agitmem.errors',
    'agitmem.tuples',  # (typing's NamedTuple, without typing)
    'agitmem.repo', 'agitmem.config', 'agitmem.caches', 'agitmem.commands',
    'agitmem.commands.githook', 'agitmem.porcelain', 'agitmem.porcelain.context',
    'agitmem.porcelain.saved', 'agitmem.memory', 'agitmem.memory.files',
    'agitmem.post_commit_idle',  # (the list the shim checks, kept when the memory is saved as it is)
}


def _by_shim(repo: Path, hook: str, *args: str) -> tuple[set[str], list[list[str]]]:
    """(agitmem modules imported, argv of each git process started) of one
    run of the installed shim of `hook`."""
    modules, gits, _ = _traced(repo, hook, *args)
    return _ours(modules), gits


def _ours(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split('.')[0] == 'agitmem'}


def _traced(repo: Path, hook: str, *args: str) -> tuple[set[str], list[list[str]], list[str]]:
    """(every module imported, the standard library's too; argv of each git
    process started; the verbs of those that read an index: git's trace
    says how many entries each read) of one run of the shim of `hook`."""
    trace = repo.parent / f'{hook}.trace'
    trace.unlink(missing_ok=True)
    env = {
        **os.environ, 'PYTHONPROFILEIMPORTTIME': '1', 'GIT_TRACE2_EVENT': str(trace),
        'GIT_INDEX_FILE': '.git/index',
    }
    env.pop('PYTHONDONTWRITEBYTECODE', None)
    proc = subprocess.run(
        [str(repo / '.git' / 'hooks' / hook), *args], cwd=repo, env=env,
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    modules = {
        line.rsplit('|', 1)[1].strip() for line in proc.stderr.splitlines()
        if line.startswith('import time:') and 'cumulative' not in line
    }
    events = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
    gits = [e['argv'][2:] for e in events if e['event'] == 'start']
    verbs = {e['sid']: e['argv'][2] for e in events if e['event'] == 'start'}
    readers = [
        verbs[e['sid']] for e in events
        if e['event'] == 'data' and e.get('key') == 'read/cache_nr' and e['sid'] in verbs
    ]
    return modules, gits, readers


def test_commit_hooks_import_and_start_only_what_the_commit_needs(worked: Path) -> None:
    ok('install', 'git', cwd=worked)
    ok('verify', '--', 'true', cwd=worked)
    msg = worked / '.git' / 'COMMIT_EDITMSG'
    msg.write_text('a message\n')
    ok('hook', 'commit-msg', str(msg), cwd=worked)  # (records that it has no rule)
    _staged(worked)

    everything, gits, readers = _traced(worked, 'pre-commit')
    modules = _ours(everything)
    assert 'agitmem.checks.run' in modules  # the probe ran the checks
    # the whole index read once, by the staged diff: diff-tree (which
    # reads it for attributes raw output never uses) is given none
    assert readers == ['diff-index'], readers
    assert modules <= PRE_COMMIT_MODULES, sorted(modules - PRE_COMMIT_MODULES)
    # where the repository is and HEAD; the index against HEAD (begun with
    # it); the memory's history near HEAD; HEAD against the verified tree;
    # the progress files' ids recorded at HEAD (without stdin: no subprocess)
    assert sorted(g[0] for g in gits) == ['diff-index', 'diff-tree', 'log', 'ls-tree', 'rev-parse'], gits
    # the history 16 commits back, not 500
    assert [g for g in gits if g[0] == 'log'][0][1] == '-n16'

    assert _by_shim(worked, 'commit-msg', str(msg)) == (set(), [])  # the shim alone

    git('-c', 'core.hooksPath=/dev/null', 'commit', '-q', '-m', 'code', cwd=worked)
    # (the list the saves kept gone: the hook finds the memory saved)
    shutil.rmtree(worked / '.git' / 'agitmem' / 'post-commit-idle')
    everything, gits, readers = _traced(worked, 'post-commit')
    modules = _ours(everything)
    assert readers == [], readers
    assert 'agitmem.porcelain.saved' in modules  # the probe ran the hook
    assert modules <= POST_COMMIT_MODULES, sorted(modules - POST_COMMIT_MODULES)
    # where the repository is and HEAD; the memory ref's tip and HEAD's
    # parents; the saved tree's files
    assert sorted(g[0] for g in gits) == ['ls-tree', 'rev-parse', 'rev-parse'], gits
    # it found the memory saved as it is: from now on the shim alone, the
    # files' ids and the refs read, no Python (no module at all)
    git('-c', 'core.hooksPath=/dev/null', 'commit', '-q', '--allow-empty', '-m', 'more', cwd=worked)
    everything, gits, readers = _traced(worked, 'post-commit')
    assert (everything, readers) == (set(), [])
    # (each argv past `git hash-object` and `git rev-parse`)
    assert gits == [
        ['--no-filters', '--stdin-paths'],
        ['refs/agitmem/heads/main^{commit}', 'HEAD^@', '--symbolic-full-name', 'HEAD'],
    ], gits


def test_pre_commit_imports_no_typing_subprocess_or_pathlib(worked: Path) -> None:
    ok('verify', '--', 'true', cwd=worked)
    _staged(worked)  # (a code change: progress-not-updated reads the memory's history)
    modules = imported(worked, 'hook', 'pre-commit', clean=True, entry='agitmem.__main__')
    assert 'agitmem.checks.progress_not_updated' in modules  # the probe ran the checks
    # typing (agitmem/tuples.py), subprocess (git begun by posix_spawn) and
    # pathlib (with urllib.parse and ipaddress): a third of the hook's own
    # imports, paid on every commit (issue 41)
    for name in ('typing', 'subprocess', *NEVER_ON_THE_HOOKS):
        assert name not in modules, f'hook pre-commit imports {name}'


def test_load_reads_the_index_once(worked: Path) -> None:
    """load's STALE paths (the state's tree against the working tree's)
    are a diff-tree, which is given no index: the status is the one
    process that reads it (issue 23)."""
    (worked / 'src.py').write_text('def f():\n    return 2\n')
    trace = worked.parent / 'load.trace'
    env = {**os.environ, 'GIT_TRACE2_EVENT': str(trace)}
    proc = subprocess.run(
        [sys.executable, '-m', 'agitmem', 'load'], cwd=worked, env=env,
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert 'src.py' in proc.stdout  # the changed path, from the diff-tree
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    verbs = {e['sid']: _verb(e['argv']) for e in events if e['event'] == 'start'}
    assert 'diff-tree' in verbs.values(), verbs
    readers = [
        verbs[e['sid']] for e in events
        if e['event'] == 'data' and e.get('key') == 'read/cache_nr'
    ]
    assert readers == ['status'], readers


def _verb(argv: list[str]) -> str:
    """The git command of argv (`git --no-optional-locks -c k=v status`)."""
    words = iter(argv[1:])
    for word in words:
        if word == '-c':
            next(words)
        elif not word.startswith('-'):
            return word
    return ''


def test_a_session_start_and_a_load_hash_an_edit_without_typing_or_subprocess(worked: Path) -> None:
    """A session's start (no compaction) and a `load` right after an edit:
    the working tree's tree is computed from the status, the edited files
    hashed and HEAD's trees read by git fed on its stdin, begun by
    posix_spawn (platforms.Child); the recovery log's module (and its
    typing) only after a compaction."""
    (worked / 'src.py').write_text('def f():\n    return 3\n')  # written now: hashed, never cached
    for args, stdin in (
            (('hook', 'session-start', '--agent', 'claude'), _claude(worked, 'claude_session_start_startup')),
            (('load',), ''),
    ):
        modules = imported(worked, *args, stdin=stdin, clean=True, entry='agitmem.__main__')
        assert 'agitmem.trees' in modules, args
        for name in ('typing', 'subprocess', 'agitmem.porcelain.records'):
            assert name not in modules, (args, name)
    assert 'src.py' in ok('load', cwd=worked)  # the edit is seen: the state is stale
