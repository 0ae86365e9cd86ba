"""One byte that is not UTF-8 in a cloned memory ref's file (issue 37):
the rest of the memory still reaches the agent, the file is named once,
the byte shown escaped; what agitmem does not rewrite is saved back as the
ref holds it, and state.json, which it rewrites, is refused in one line."""
from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest

from testing.util import agitmem
from testing.util import bad
from testing.util import git
from testing.util import ok

REF = 'refs/agitmem/heads/main'
# each file as a remote could send it: valid but for one byte 0xe9 (Latin-1 é)
BAD = {
    'notes.md': b'- a note on caf\xe9\n',
    'tattoo.md': b'- rule one\n- never touch caf\xe9.py\n',
    'snapshot.md': b'## Goal\nship caf\xe9\n\n## In progress\n\n## Decisions\n\n## Done\n',
    'state.json': b'{"current_goal": "fix caf\xe9", "next_intent": "run the tests", "step": 3}\n',
    'fragments.jsonl': b'{"id": "A-001", "goal": "caf\xe9 loader", "next": "go on"}\n',
    'config.yaml': b'# caf\xe9\nbudget_tokens: 800\n',
}


def _put(repo: Path, name: str, data: bytes) -> None:
    """A memory commit on REF with name's bytes, made with git's plumbing
    as a teammate's broken editor and a push would leave it."""
    pr = pygit2.Repository(str(repo))
    top = pr.references[REF].peel(pygit2.Commit)
    tb = pr.TreeBuilder(top.tree)
    tb.insert(name, pr.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
    sig = pygit2.Signature('Teammate', 'mate@example.com')
    msg = 'save: an edit\n\nAgitmem-Event: save\nCode-Branch: main\n'
    pr.references.create(REF, pr.create_commit(None, sig, sig, msg, tb.write(), [top.id]), force=True)


@pytest.fixture
def origin(memrepo: Path) -> Path:
    ok('state', 'set', 'current_goal=ship the loader', 'next_intent=run the tests', cwd=memrepo)
    tattoo = memrepo / '.agent' / 'memory' / 'tattoo.md'
    tattoo.write_text(tattoo.read_text() + '- rule one\n')
    ok('save', cwd=memrepo)
    return memrepo


def _clone(origin: Path, tmp_path: Path) -> Path:
    dest = tmp_path / 'clone'
    git('clone', '-q', str(origin), str(dest), cwd=tmp_path)
    ok('init', cwd=dest)
    return dest


@pytest.mark.parametrize('name', list(BAD))
def test_one_bad_byte_in_a_cloned_memory_file(origin: Path, tmp_path: Path, name: str) -> None:
    _put(origin, name, BAD[name])
    clone = _clone(origin, tmp_path)
    where = '.agent/config.yaml' if name == 'config.yaml' else f'.agent/memory/{name}'
    assert (clone / where).read_bytes() == BAD[name]  # the bytes as the ref has them
    said = f'{where}: 1 byte(s) not UTF-8 (the first on line'
    proc = agitmem('load', cwd=clone)
    assert proc.returncode == 0, proc.stderr
    block = proc.stdout
    # the rest of the memory is there
    assert '- rule one' in block
    assert '## STATE (step' in block
    assert 'current_goal: fix caf\\udce9' in block if name == 'state.json' else 'current_goal: ship the loader' in block
    # the bad file named once, on stderr and (a memory file) in the block
    assert proc.stderr.count(said) == 1
    assert block.count(said) == (0 if name == 'config.yaml' else 1)
    if name not in ('config.yaml', 'snapshot.md'):  # a snapshot's Goal is not shown beside the state
        assert 'caf\\udce9' in block
    assert '\udce9' not in block and '\ufffd' not in block
    # the agent's hook after a compaction injects it too
    payload = {'session_id': 's', 'cwd': str(clone), 'hook_event_name': 'SessionStart', 'source': 'compact'}
    hook = agitmem('hook', 'session-start', '--agent', 'claude', input=json.dumps(payload), cwd=clone)
    assert hook.returncode == 0
    context = json.loads(hook.stdout)['hookSpecificOutput']['additionalContext']
    assert '- rule one' in context and 'Your context was just compacted' in context
    blob = git('rev-parse', f'{REF}:{name}', cwd=clone).strip()
    if name == 'state.json':
        # agitmem rewrites state.json: it does not carry the byte, nor drop it
        line = bad('state', 'set', 'next_intent=x', cwd=clone)
        assert line == 'agitmem: .agent/memory/state.json:1: not UTF-8 (byte 0xe9); save it as UTF-8'
        assert (clone / where).read_bytes() == BAD[name]
        return
    ok('state', 'set', 'next_intent=fix the loader', cwd=clone)
    # the file goes back to the ref as it was: no damage written, none repaired
    assert git('rev-parse', f'{REF}:{name}', cwd=clone).strip() == blob
    assert '"next_intent": "fix the loader"' in git('show', f'{REF}:state.json', cwd=clone)


def test_a_bad_byte_written_here_is_still_refused_on_save(memrepo: Path) -> None:
    """The bytes a save refuses are new ones: an edit made here that is not
    UTF-8 (the ref never held it) is refused in one line, as it was."""
    (memrepo / '.agent' / 'memory' / 'notes.md').write_bytes(b'- ok\n- caf\xe9\n')
    assert bad('save', cwd=memrepo) == 'agitmem: .agent/memory/notes.md:2: not UTF-8 (byte 0xe9); save it as UTF-8'
    # shown all the same
    block = ok('load', cwd=memrepo)
    assert '- caf\\udce9' in block
    assert 'NOTE: .agent/memory/notes.md: 1 byte(s) not UTF-8 (the first on line 2), shown as \\udce9' in block


# -- issue 38: a summary a stage behind, a user who asked to wait ----------------

def _hook(repo: Path, event: str, payload: dict[str, object]) -> str:
    proc = agitmem('hook', event, '--agent', 'claude', input=json.dumps(payload), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_after_compaction_wait_first_and_done_over_the_summary(memrepo: Path) -> None:
    ok('state', 'set', 'current_goal=move the config loader into index.ts',
       'last_action=deleted loadConfig from loader.ts', 'next_intent=update the README', cwd=memrepo)
    base = {'session_id': 's', 'cwd': str(memrepo)}
    _hook(memrepo, 'prompt', {**base, 'hook_event_name': 'UserPromptSubmit',
                              'prompt': 'Finish the move, then wait for my go-ahead before touching the README.'})
    summary = 'Pending Tasks:\n- Delete loadConfig from loader.ts\n- Update the README\n'
    _hook(memrepo, 'pre-compact', {**base, 'hook_event_name': 'PostCompact', 'compact_summary': summary})
    out = _hook(memrepo, 'session-start', {**base, 'hook_event_name': 'SessionStart', 'source': 'compact'})
    block = json.loads(out)['hookSpecificOutput']['additionalContext']
    lines = block.splitlines()
    # WAIT comes first, ahead of the instruction to go on from next_intent
    assert lines[1] == (
        'WAIT: the user asked you to wait for their decision before acting (their last '
        'request: "Finish the move, then wait for my go-ahead before touching the README."); '
        'ask, do not act. This comes before next_intent.'
    )
    assert lines[2].startswith('Your context was just compacted.')
    (done,) = [ln for ln in lines if ln.startswith('The summary calls')]
    assert done.startswith(
        "The summary calls 'deleted loadConfig from loader.ts' pending; STATE (step 1, ",
    )
    assert done.endswith(') records it done: it is done.')
    # a plain load (no compaction) says neither
    plain = ok('load', cwd=memrepo)
    assert 'WAIT:' not in plain and 'The summary calls' not in plain
