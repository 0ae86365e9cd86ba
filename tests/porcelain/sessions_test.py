"""Hook state per agent session (porcelain/sessions.py): a session id comes
from the agent's payload, of any length."""
from __future__ import annotations

import json
from pathlib import Path

from agitmem.porcelain import sessions
from testing.util import ok


def _prompt(repo: Path, session_id: str) -> str:
    return json.dumps({
        'hook_event_name': 'UserPromptSubmit', 'session_id': session_id, 'cwd': str(repo),
        'transcript_path': str(repo / 'none.jsonl'), 'prompt': 'go on',
    })


def test_a_long_session_id_keeps_its_state_small(memrepo: Path) -> None:
    """A 5 MB session id was stored whole: the session's state passed the
    4 MB a cache is read up to, so it read as a new session at every
    prompt (the prompt count never grew), and each observed request
    carried the id again."""
    sid = 'x' * 5_000_000
    for _ in range(3):
        ok('hook', 'prompt', '--agent', 'claude', cwd=memrepo, input=_prompt(memrepo, sid))
    [state] = (memrepo / '.git' / 'agitmem' / 'sessions').glob('*.json')
    assert state.stat().st_size < 4096
    assert json.loads(state.read_text())['prompts'] == 3
    assert (memrepo / '.git' / 'agitmem' / 'observed.json').stat().st_size < 64 * 1024


def test_long_session_ids_never_share_a_key() -> None:
    a, b = 'a' * 200, 'a' * 199 + 'b'  # the same first 64 (and 128) characters
    ka, kb = sessions.session_key('claude', a), sessions.session_key('claude', b)
    assert ka != kb
    assert len(ka) < 200
    # an id written as another's digested key is not that key: it is longer
    # than any id kept whole, so it is digested in its turn
    forged = ka.partition('\0')[2]
    assert sessions.session_key('claude', forged) != ka
    # ids up to the bound are kept as they are
    assert sessions.session_key('claude', 'u' * 128) == 'claude\0' + 'u' * 128
