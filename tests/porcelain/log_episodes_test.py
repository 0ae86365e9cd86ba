"""`agitmem recovery audit`: compactions read back from the clients' own
session logs (tests/agents/logs/, written by the real clients in the e2e
tests) and judged as the hooks judged them, driven as a user runs it."""
from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
from pathlib import Path

import pytest
import yaml

from agitmem.porcelain import log_episodes
from testing.util import agitmem_argv
from testing.util import bad
from testing.util import git
from testing.util import ok
from testing.util import run

LOGS = Path(__file__).parent.parent / 'agents' / 'logs'
CLAUDE = LOGS / 'claude-four-compactions.jsonl'
CODEX = LOGS / 'codex-auto-compaction.jsonl'
GEMINI = LOGS / 'gemini-auto-compression.jsonl'
OLD_ROOT = {
    CLAUDE: '/tmp/t38a-e2e/claude/test_recovery_report_classifie0/repo',
    CODEX: '/tmp/t38a-e2e/codex/test_auto_compaction_reinjects0/repo',
    GEMINI: '/tmp/t38a-e2e/gemini/gemini-headless0/repo',
}
REALSET = Path(__file__).resolve().parents[1] / 'corpus' / 'realset'


def _audit(*args: str, cwd: Path, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    return json.loads(ok('recovery', 'audit', '--json', *args, cwd=cwd, env=env))['compactions']  # type: ignore[no-any-return]


def test_claude_log_gets_the_hooks_verdicts(tmp_path: Path) -> None:
    found = _audit(str(CLAUDE), cwd=tmp_path)  # outside any repository
    assert [(f['index'], f['verdict']) for f in found] == [(0, 'recovered'), (1, 'drift'), (2, 'reset'), (3, 'state')]
    first = found[0]
    assert first['client'] == 'claude' and first['client_version'] == '2.1.332'
    assert first['session'] == '83e0edc7-05c5-4622-81b7-9882d36ba14b'
    assert first['timestamp'] == '2026-12-04T23:35:11.570Z'
    assert first['agitmem'] is True and first['state_from'] == 'agitmem state'
    assert first['evidence'] == ['edit src/app.py in load_config: current_file, current_symbol']


def test_codex_and_gemini_logs(tmp_path: Path) -> None:
    (codex,) = _audit(str(CODEX), cwd=tmp_path)
    assert (codex['client'], codex['client_version'], codex['index'], codex['verdict']) == ('codex', '0.171.0', 0, 'unjudgeable')
    assert codex['timestamp'] == '2026-12-04T23:36:45.154Z' and codex['agitmem'] is True
    (gemini,) = _audit(str(GEMINI), cwd=tmp_path)
    assert (gemini['client'], gemini['index'], gemini['verdict']) == ('gemini', 0, 'unjudgeable')
    # the compression's first turn: the command the agent ran after it, not the one before
    assert gemini['first_action'] == 'ran `echo after-compression` (exit 0)'


def test_a_resumed_copy_is_counted_once(tmp_path: Path) -> None:
    """Claude Code copies a session's records into the file of a session
    resumed or forked from it: a compaction is one, whatever file holds it."""
    logs = tmp_path / 'logs'
    logs.mkdir()
    (logs / 'a.jsonl').write_bytes(CLAUDE.read_bytes())
    (logs / 'b.jsonl').write_bytes(CLAUDE.read_bytes())
    found = _audit(str(logs), cwd=tmp_path)
    assert [(Path(str(f['file'])).name, f['index']) for f in found] == [('a.jsonl', i) for i in range(4)]


def test_sidechain_records_are_not_the_turn(tmp_path: Path) -> None:
    """A sub-agent's records (isSidechain) between the compaction and the
    main thread's answer are not the main thread's first turn."""
    lines = CLAUDE.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"text": "Continuing in load_config."' in line or 'Continuing in load_config.' in line)
    side = json.loads(lines[at])
    side['isSidechain'] = True
    side['message']['content'] = [{'type': 'text', 'text': 'Tests all pass, the work is complete and verified.'}]
    log = tmp_path / 's.jsonl'
    log.write_text(''.join([*lines[:at], json.dumps(side) + '\n', *lines[at:]]))
    assert _audit(str(log), cwd=tmp_path)[0]['verdict'] == 'recovered'


def _moved(log: Path, root: Path) -> str:
    return log.read_text().replace(OLD_ROOT[log], str(root))


def _repo_with_claude_home(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(repository, HOME, the folder Claude Code keeps its sessions in):
    the project's path with every character but A-Z, a-z, 0-9 made '-',
    as the pinned client names it."""
    root = tmp_path / 'repo'
    root.mkdir()
    git('init', '-q', cwd=root)
    home = tmp_path / 'home'
    sessions = home / '.claude' / 'projects' / re.sub(r'[^A-Za-z0-9]', '-', str(root))
    sessions.mkdir(parents=True)
    return root, home, sessions


def test_no_path_finds_this_repositorys_sessions(tmp_path: Path) -> None:
    """In a repository, with no PATH: each client's sessions of this
    repository, where the client keeps them (a fake HOME; CODEX_HOME and
    the Gemini CLI's projects.json honoured), and no other project's."""
    root, home, claude_dir = _repo_with_claude_home(tmp_path)
    (claude_dir / 's.jsonl').write_text(_moved(CLAUDE, root))
    other = home / '.claude' / 'projects' / '-elsewhere'
    other.mkdir()
    (other / 'o.jsonl').write_text(_moved(CLAUDE, Path('/elsewhere')))
    codex_home = tmp_path / 'codex-home'
    day = codex_home / 'sessions' / '2026' / '12' / '04'
    day.mkdir(parents=True)
    (day / 'rollout-2026-12-04T23-36-40-x.jsonl').write_text(_moved(CODEX, root))
    (day / 'rollout-2026-12-04T23-36-41-y.jsonl').write_text(_moved(CODEX, Path('/elsewhere')).replace('01a2436a', '01a2436b'))
    chats = home / '.gemini' / 'tmp' / 'repo' / 'chats'
    chats.mkdir(parents=True)
    (home / '.gemini' / 'projects.json').write_text(json.dumps({'projects': {str(root): 'repo'}}))
    text = _moved(GEMINI, root).replace(
        '877741f8c6aa55c0770bdb490c51ed5d8cb9194c0b52fe0c84176302146d5002', hashlib.sha256(str(root).encode()).hexdigest(),
    )
    (chats / 'session-2026-12-04T23-37-a154cbe2.jsonl').write_text(text)
    env = {'HOME': str(home), 'CODEX_HOME': str(codex_home)}
    env.pop('CLAUDE_CONFIG_DIR', None)
    found = _audit(cwd=root, env={**env, 'CLAUDE_CONFIG_DIR': str(home / '.claude')})
    assert sorted({str(f['client']) for f in found}) == ['claude', 'codex', 'gemini']
    assert len(found) == 6, found
    assert [f['verdict'] for f in found if f['client'] == 'claude'] == ['recovered', 'drift', 'reset', 'state']
    only = _audit('--client', 'codex', cwd=root, env=env)
    assert [f['client'] for f in only] == ['codex']
    table = ok('recovery', 'audit', cwd=root, env=env)
    assert table.splitlines()[0] == '6 compaction(s) in 3 session log(s)'
    assert re.search(r'^client claude\s+4\s+25\.0%\s+25\.0%\s+0\.0%\s+25\.0%\s+25\.0%\s+0\.0%$', table, re.M), table
    assert re.search(r'^with agitmem\s+6\s', table, re.M), table
    assert re.search(r'^month 2026-12\s+6\s', table, re.M), table


def test_html_page_is_self_contained_and_escaped(tmp_path: Path) -> None:
    log = tmp_path / 's.jsonl'
    key = 'ghp_' + '4Fq9ZrT2mXw8LpN3vB7cK1dS6hJ0yU5eR2aQ'  # no key in this file's own text
    text = CLAUDE.read_text().replace(
        'I am not sure where we are. What would you like me to work on?',
        f'<script>alert(1)</script> \\u001b[31m {key} What would you like me to work on?',
    )
    log.write_text(text)
    out = ok('recovery', 'audit', str(log), '--html', 'page.html', '--since', '2026-12-01', cwd=tmp_path)
    assert 'page written: page.html' in out
    page = (tmp_path / 'page.html').read_text()
    assert '<script' not in page and 'http://' not in page.replace('http://www.w3.org/2000/svg', '')
    assert '&lt;script&gt;' in page and '\x1b' not in page and key not in page
    assert '<svg' in page and 'with agitmem' in page
    assert key not in ok('recovery', 'audit', str(log), '--json', cwd=tmp_path)


def test_since_leaves_out_older_compactions(tmp_path: Path) -> None:
    assert _audit(str(CLAUDE), '--since', '2027-01-01', cwd=tmp_path) == []
    assert len(_audit(str(CLAUDE), '--since', '2026-12-04', cwd=tmp_path)) == 4


@pytest.mark.parametrize(('args', 'says'), [
    (('--since', '2026-13-01'), '--since 2026-13-01: not a date (YYYY-MM-DD)'),
    (('no-such.jsonl',), 'no-such.jsonl: no such file or directory'),
    (('--client', 'cursor', str(CLAUDE)), '--client cursor: one of claude, codex, gemini'),
    ((), 'not in a git repository'),
])
def test_bad_usage_is_one_line(tmp_path: Path, args: tuple[str, ...], says: str) -> None:
    assert says in bad('recovery', 'audit', *args, cwd=tmp_path)


def test_over_long_lines_are_skipped_not_held(tmp_path: Path) -> None:
    """A line past the cap is read past a chunk at a time; the records
    around it are read."""
    from agitmem.agents import logread
    log = tmp_path / 'big.jsonl'
    log.write_bytes(b'{"a": 1}\n' + b'x' * (3 << 20) + b'\n{"b": 2}\n' + b'{"c": 3}')
    assert list(logread.lines(str(log), max_line=1 << 20)) == [b'{"a": 1}', b'{"b": 2}', b'{"c": 3}']


@pytest.fixture(scope='module')
def realset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both parts of tests/corpus/realset/ (real public sessions, each
    compaction labelled blind), unpacked."""
    into = tmp_path_factory.mktemp('realset')
    for part in ('dev', 'holdout'):
        with tarfile.open(REALSET / f'{part}.tar.gz') as tar:
            tar.extractall(into, filter='data')
    return into


@pytest.mark.parametrize('part', ['dev', 'holdout'])
def test_real_sessions_parse_and_their_compactions_are_found(realset: Path, part: str, tmp_path: Path) -> None:
    """Every real log parses, and the compactions found are the
    labeller's, file by file and in order (the labels' verdicts are not
    read here: bench/realset.py compares them)."""
    logs = sorted((realset / part / 'logs').glob('*.jsonl'))
    proc = json.loads(ok('recovery', 'audit', '--json', str(realset / part / 'logs'), cwd=tmp_path))
    assert proc['skipped'] == 0 and proc['logs'] == len(logs)
    labelled = yaml.safe_load((realset / part / 'labels.yaml').read_text())
    want = {(str(row['file']), int(row['index'])) for row in labelled}
    got = {(os.path.basename(str(f['file'])), int(f['index'])) for f in proc['compactions']}
    assert got == want


def test_the_judge_agrees_with_the_read_real_sessions(realset: Path, tmp_path: Path) -> None:
    """The dev part (read while tuning): agreement 0.84 when this floor
    was set, 0.98 after the round on real recoveries called failures; with
    the set grown to 130 compactions (66 of them unread while the judge
    was tuned), 0.85, then 0.88 after the agent's
    notes, hand-overs, API errors and tests of the file in flight, 0.92
    after the classes of the round on failures put outside the work,
    files after the task's change, whole checks and remarks that say the
    task again, 0.95 after the round on the summary's pending list, the
    work's numbers, paths resolved against the cwd, file names of several
    dots, documents as places and copies of the place: the floor is that
    less 0.02.  The held-out part is measured by
    bench/realset.py, not held to a floor its disagreements would have to
    be read to keep."""
    found = json.loads(ok('recovery', 'audit', '--json', str(realset / 'dev' / 'logs'), cwd=tmp_path))['compactions']
    verdicts = {(os.path.basename(str(f['file'])), int(f['index'])): f['verdict'] for f in found}
    labelled = yaml.safe_load((realset / 'dev' / 'labels.yaml').read_text())
    agree = sum(
        1 for row in labelled
        if verdicts[(str(row['file']), int(row['index']))] == row['label']
    )
    assert agree / len(labelled) >= 0.93, agree


def _claude_log(root: Path, records: list[dict[str, object]]) -> str:
    base = {'sessionId': 's1', 'version': '2.1.50', 'cwd': str(root), 'isSidechain': False}
    return ''.join(json.dumps({**base, **r}) + '\n' for r in records)


def test_a_repositorys_own_test_commands_count(tmp_path: Path) -> None:
    """With no PATH, the repository's `verification_commands` say which
    commands are test runs, as they do for its hooks: a claim backed by
    `./ci/check` is no state confusion there."""
    root, home, d = _repo_with_claude_home(tmp_path)
    run: dict[str, object] = {'type': 'assistant', 'message': {'content': [{'type': 'tool_use', 'id': 't1', 'name': 'Bash', 'input': {'command': './ci/check'}}]}}
    ran: dict[str, object] = {'type': 'user', 'message': {'content': [{'type': 'tool_result', 'tool_use_id': 't1', 'content': 'ok'}]},
           'toolUseResult': {'stdout': 'ok', 'stderr': '', 'interrupted': False}}
    (d / 's1.jsonl').write_text(_claude_log(root, [
        {'type': 'user', 'timestamp': '2026-02-01T10:00:00Z', 'message': {'role': 'user', 'content': 'fix the date parser in src/dates.py'}},
        {'type': 'system', 'subtype': 'compact_boundary', 'uuid': 'b1', 'timestamp': '2026-02-01T11:00:00Z', 'compactMetadata': {'trigger': 'auto'}},
        {'type': 'user', 'isCompactSummary': True, 'message': {'role': 'user', 'content': 'Summary:\n1. Primary Request and Intent:\n fix the date parser in src/dates.py\n'}},
        run, ran,
        {'type': 'assistant', 'message': {'content': [{'type': 'text', 'text': 'All tests pass.'}]}},
        {'type': 'system', 'subtype': 'stop_hook_summary'},
    ]))
    env = {'HOME': str(home), 'CLAUDE_CONFIG_DIR': str(home / '.claude')}
    (found,) = _audit(cwd=root, env=env)
    assert found['verdict'] == 'state', found  # `./ci/check` is no test run by default
    (root / '.agent').mkdir()
    (root / '.agent' / 'config.yaml').write_text('verification_commands:\n  - ./ci/check\n')
    (found,) = _audit(cwd=root, env=env)
    assert found['verdict'] != 'state', found


def test_the_task_from_a_summary_without_agitmem() -> None:
    """Without agitmem's block, the yardstick is the client's summary:
    Claude Code's sections, Gemini CLI's <state_snapshot> plan; the file
    in flight only where the summary names one edited before."""
    from agitmem.porcelain import log_episodes as le
    before = le._Before()
    before.edits = [('src/other.py', 'helper'), ('src/dates.py', 'parse_date')]
    claude = (
        'Summary:\n1. Primary Request and Intent:\n   Fix the date parser.\n'
        '8. Current Work:\n   Editing parse_date in src/dates.py to accept ISO weeks.\n'
        '7. Pending Tasks:\n   - Update the changelog\n'
        '9. Optional Next Step:\n   Run the date tests after finishing parse_date.\n'
    )
    expect = le.from_summary(claude, before)
    assert expect['current_goal'] == 'Fix the date parser.'
    assert expect['next_intent'] == 'Run the date tests after finishing parse_date.'
    assert (expect['current_file'], expect['current_symbol']) == ('src/dates.py', 'parse_date')
    assert 'Update the changelog' in expect['in_progress'] and expect['todo'] == []
    gemini = (
        '<state_snapshot><overall_goal>Port the loader to TOML.</overall_goal>'
        '<current_plan>1. [DONE] Read the loader.\n2. [IN PROGRESS] Replace configparser.\n3. [TODO] Delete the INI parser.</current_plan>'
        '</state_snapshot>'
    )
    expect = le.from_summary(gemini, le._Before())
    assert expect['current_goal'] == 'Port the loader to TOML.'
    assert expect['next_intent'] == 'Replace configparser.'
    assert expect['done'] == ['Read the loader.'] and expect['todo'] == ['Delete the INI parser.']
    assert expect['current_file'] == ''


def test_a_file_the_summary_only_lists_is_not_the_place_in_flight() -> None:
    """A step the summary reports finished left its file as the last one
    edited, and its file list names it: the work in flight (current
    work, next step, pending tasks) names no file, so no place is taken
    for it, and the next task's new file is not "the wrong place"."""
    from agitmem.porcelain import log_episodes as le
    before = le._Before()
    before.edits = [('test/screens/login_screen_test.dart', None)]
    claude = (
        'Summary:\n1. Primary Request and Intent:\n   Write the widget and migration tests.\n'
        '3. Files and Code Sections:\n   - test/screens/login_screen_test.dart: the widget tests, all passing\n'
        '7. Pending Tasks:\n   - Integration test for the profile migration\n'
        '8. Current Work:\n   Just finished the login screen widget tests; 10 pass.\n'
        '9. Optional Next Step:\n   Write the profile migration integration test.\n'
    )
    assert le.from_summary(claude, before)['current_file'] == ''


def test_a_summarys_file_names_of_several_dots_are_whole() -> None:
    """`login.e2e.test.ts`, `api.d.ts`: the summary names the file, not
    `login.e2e` (the task's change in it is in a file the task names)."""
    from agitmem.porcelain import log_episodes as le
    claude = (
        'Summary:\n1. Primary Request and Intent:\n   Make the live login tests use their own database.\n'
        '3. Files and Code Sections:\n   - `web/src/login.e2e.test.ts:88` - the inline config\n   - types/api.d.ts\n'
        '8. Current Work:\n   Pointing the inline configs at the per-test database.\n'
    )
    expect = le.from_summary(claude, le._Before())
    files = next(p for p in expect['in_progress'] if p.startswith('files: '))
    assert files == 'files: web/src/login.e2e.test.ts, types/api.d.ts'
    from agitmem.porcelain import recovery as judging
    edit = {'kind': 'edit', 'file': 'web/src/login.e2e.test.ts', 'symbol': None, 'text': "database: `${db}`,", 'removed': "database: 'default',"}
    verdict, evidence, _, _ = judging.judge(expect, [edit], 'The inline configs use the per-test database now.', None, claude)
    assert verdict == 'recovered', evidence
    # a run of dots is read once (a possessive match), not from each dot
    assert le._files_named('a.' * 200_000 + 'py') == []  # no file's name
    assert le._files_named('see ' + 'x' * 900 + '.e2e.test.ts') == ['x' * 900 + '.e2e.test.ts']


def test_windows_paths_are_made_relative() -> None:
    from agitmem.porcelain import log_episodes as le
    assert le._relative('D:\\repo\\website\\src\\a.css', 'D:\\repo') == 'website/src/a.css'
    assert le._relative('/w/repo/src/a.py', '/w/repo') == 'src/a.py'
    assert le._relative('/elsewhere/a.py', '/w/repo') == '/elsewhere/a.py'


def _one_compaction(path: Path, closing: list[str], summary: str = 'Summary: fix parser.py') -> None:
    records = [
        {'type': 'user', 'sessionId': 's1', 'version': '2.1.0', 'cwd': '/w', 'uuid': 'u1',
         'timestamp': '2026-01-02T10:00:00Z', 'message': {'role': 'user', 'content': 'fix the parser'}},
        {'type': 'system', 'subtype': 'compact_boundary', 'uuid': 'b1', 'sessionId': 's1',
         'timestamp': '2026-01-02T10:05:00Z'},
        {'type': 'user', 'isCompactSummary': True, 'sessionId': 's1', 'message': {'role': 'user', 'content': summary}},
        {'type': 'user', 'sessionId': 's1', 'message': {'role': 'user', 'content': 'go on'}},
        *({'type': 'assistant', 'sessionId': 's1', 'message': {'content': [{'type': 'text', 'text': t}]}} for t in closing),
    ]
    path.write_text(''.join(json.dumps(r) + '\n' for r in records))


def test_a_private_key_in_the_closing_text_is_redacted_whole(tmp_path: Path) -> None:
    """The key block, not its header line: the evidence quotes the text's
    tail and the first action its flattened start, both past the header."""
    import base64
    body = base64.b64encode(hashlib.sha512(b'k').digest() * 6).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    key = '\n'.join(['-----BEGIN ' + 'PRIVATE KEY-----', *lines, '-----END ' + 'PRIVATE KEY-----'])
    _one_compaction(tmp_path / 's.jsonl', [f'Here is the key:\n{key}\nWhat would you like me to do next?'])
    out = ok('recovery', 'audit', 's.jsonl', '--json', '--html', 'page.html', cwd=tmp_path)
    page = (tmp_path / 'page.html').read_text()
    assert 'redacted private key block' in out
    for line in lines:
        assert line[:20] not in out and line[:20] not in page


def test_a_first_turn_of_many_texts_is_held_bounded() -> None:
    """A million texts in one turn: its first and its last ones kept, up
    to SAID_CHARS, not the lot (memory, and the judge's time on it)."""
    from agitmem.porcelain import log_episodes
    ep = log_episodes._Episode(0, {}, log_episodes._Before())
    for i in range(200_000):
        ep.say(f'text {i} ' + 'w' * (i % 50))
    kept = ep.texts
    assert kept[0] == 'text 0 ' and kept[-1].startswith('text 199999 ')
    assert sum(map(len, kept)) <= 2 * log_episodes.SAID_CHARS
    ep.say(kept[-1])  # a repeat of the last is not kept twice
    assert ep.texts == kept


def test_a_key_block_in_a_field_is_masked_before_it_is_serialized(tmp_path: Path) -> None:
    """A session id holding a key block cut short (no end line): masked
    whole in the field, so --json stays JSON and the page's escaped
    newlines do not hide the block's lines from the mask."""
    import base64
    body = base64.b64encode(hashlib.sha512(b'k').digest() * 3).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    session = '\n'.join(['-----BEGIN RSA ' + 'PRIVATE KEY-----', *lines])
    _one_compaction(tmp_path / 's.jsonl', ['What would you like me to do next?'])
    log = tmp_path / 's.jsonl'
    log.write_text(log.read_text().replace('"sessionId": "s1"', f'"sessionId": {json.dumps(session)}', 1))
    out = ok('recovery', 'audit', 's.jsonl', '--json', '--html', 'page.html', cwd=tmp_path)
    (found,) = json.loads(out)['compactions']
    assert found['session'] == '[redacted private key block]'
    page = (tmp_path / 'page.html').read_text()
    assert '[redacted private key block]' in page
    for line in lines:
        assert line[:20] not in out and line[:20] not in page


def test_a_sealed_codex_summary_leaves_the_users_last_request_as_the_task(tmp_path: Path) -> None:
    """A remote compaction of Codex's keeps its summary sealed (an empty
    message) and the user's messages in its history: the last request
    there is the task, though the log before it does not hold it."""
    def line(kind: str, payload: dict[str, object]) -> str:
        return json.dumps({'timestamp': '2026-06-18T02:40:00Z', 'type': kind, 'payload': payload}) + '\n'

    def user(text: str) -> dict[str, object]:
        return {'type': 'message', 'role': 'user', 'content': [{'type': 'input_text', 'text': text}]}
    log = tmp_path / 'rollout-2026-06-18T02-33-46-s1.jsonl'
    log.write_text(
        line('session_meta', {'id': 's1', 'cwd': str(tmp_path), 'cli_version': '0.140.0'})
        + line('compacted', {'message': '', 'replacement_history': [
            user('list the open issues about the retry policy'),
            user('<environment_context><cwd>/x</cwd></environment_context>'),
            user('now write the retry backoff design into the tracking issue and split it into subtasks'),
            {'type': 'compaction', 'encrypted_content': 'sealed'},
        ]})
        + line('event_msg', {'type': 'context_compacted'})
        + line('response_item', {'type': 'message', 'role': 'assistant', 'content': [{'type': 'output_text', 'text': (
            'Wrote the retry backoff design into the tracking issue and split it into four subtasks.'
        )}]})
        + line('event_msg', {'type': 'task_complete'}),
    )
    (found,) = log_episodes.audit_file(str(log)).found
    assert found.verdict == 'recovered', found.evidence


def _codex_line(kind: str, payload: dict[str, object]) -> str:
    return json.dumps({'timestamp': '2026-07-20T09:00:00Z', 'type': kind, 'payload': payload}) + '\n'


def _codex_user(text: str) -> dict[str, object]:
    return {'type': 'message', 'role': 'user', 'content': [{'type': 'input_text', 'text': text}]}


def _codex_said(text: str) -> str:
    return _codex_line('response_item', {'type': 'message', 'role': 'assistant', 'content': [{'type': 'output_text', 'text': text}]})


def test_a_retry_is_no_request_the_one_before_it_is_the_task(tmp_path: Path) -> None:
    # the user's last message before a sealed compaction was "Try again"
    # (after an interrupted call): the work is the request before it
    log = tmp_path / 'rollout-2026-07-20T09-00-00-s2.jsonl'
    log.write_text(
        _codex_line('session_meta', {'id': 's2', 'cwd': str(tmp_path), 'cli_version': '0.145.0'})
        + _codex_line('compacted', {'message': '', 'replacement_history': [
            _codex_user('rebase the payments branch onto main and resolve the ledger conflicts'),
            _codex_user('Try again'),
            {'type': 'compaction', 'encrypted_content': 'sealed'},
        ]})
        + _codex_line('event_msg', {'type': 'context_compacted'})
        + _codex_said('Rebased the payments branch onto main; the ledger conflicts are resolved.')
        + _codex_line('event_msg', {'type': 'task_complete'}),
    )
    (found,) = log_episodes.audit_file(str(log)).found
    assert found.verdict == 'recovered', found.evidence


def test_codexs_scripted_tool_calls_are_read_as_its_commands(tmp_path: Path) -> None:
    # newer Codex runs its tools from a script (the `exec` tool calling
    # tools.exec_command); the commands in it are the turn's, read, not run
    script = (
        'const r = await tools.exec_command({\n  cmd: "go test ./internal/ledger/...",\n'
        '  workdir: "/home/u/payments", yield_time_ms: 10000\n});\ntext(JSON.stringify(r, null, 2));'
    )
    log = tmp_path / 'rollout-2026-07-20T09-00-00-s3.jsonl'
    log.write_text(
        _codex_line('session_meta', {'id': 's3', 'cwd': str(tmp_path), 'cli_version': '0.145.0'})
        + _codex_line('compacted', {'message': '', 'replacement_history': [
            _codex_user('make the ledger rounding tests pass'),
            {'type': 'compaction', 'encrypted_content': 'sealed'},
        ]})
        + _codex_line('event_msg', {'type': 'context_compacted'})
        + _codex_line('response_item', {'type': 'custom_tool_call', 'call_id': 'c1', 'name': 'exec', 'input': script})
        + _codex_line('response_item', {'type': 'custom_tool_call_output', 'call_id': 'c1', 'output': [
            {'type': 'input_text', 'text': 'Script completed\nWall time 2.1 seconds\nOutput:\n'},
            {'type': 'input_text', 'text': '{\n  "exit_code": 0,\n  "output": "ok  payments/internal/ledger 0.4s"\n}'},
        ]})
        + _codex_said('The ledger rounding tests pass now; all tests pass.')
        + _codex_line('event_msg', {'type': 'task_complete'}),
    )
    (found,) = log_episodes.audit_file(str(log)).found
    assert found.verdict == 'recovered', found.evidence
    assert found.first_action == 'ran `go test ./internal/ledger/...` (exit 0)'
    # a script's string is never run: a command in it is only read
    assert not (tmp_path / 'payments').exists()


def test_an_edits_path_is_resolved_against_the_sessions_cwd() -> None:
    from agitmem.porcelain import log_episodes as le
    # `.` and `..` resolved by name; inside the cwd relative, outside absolute
    assert le._relative('../../src/a.py', '/w/repo/pkg/sub') == '/w/repo/src/a.py'
    assert le._relative('/w/repo/pkg/../src/a.py', '/w/repo') == 'src/a.py'
    assert le._relative('./src/a.py', '/w/repo') == 'src/a.py'
    # relative to the tool call's own workdir, where it names one
    assert le._relative('../src/a.py', '/w/repo', '/w/repo/tools') == 'src/a.py'
    assert le._relative('..\\src\\a.css', 'D:\\repo', 'D:\\repo\\web') == 'src/a.css'
    # no cwd to resolve against: as given
    assert le._relative('../x.py', '') == '../x.py'


def test_a_relative_workdir_is_taken_from_the_sessions_cwd() -> None:
    """Codex takes a tool call's `workdir` from the session's cwd
    (TurnContext.resolve_path: cwd.join(workdir)), so `pkg` is <cwd>/pkg;
    a patch's `main.go` from there was compared as the cwd's main.go."""
    from agitmem.porcelain import log_episodes as le
    assert le._relative('main.go', '/w/repo', 'pkg') == 'pkg/main.go'
    assert le._relative('../src/a.py', '/w/repo', 'tools') == 'src/a.py'
    assert le._relative('../../x.py', '/w/repo', 'tools') == '/w/x.py'
    assert le._relative('..\\..\\x.css', 'D:\\repo', 'web') == 'D:/x.css'
    assert le._relative('a.css', 'D:\\repo', 'web') == 'web/a.css'
    # an absolute workdir is itself
    assert le._relative('a.py', '/w/repo', '/w/other') == '/w/other/a.py'


def test_a_windows_session_on_a_share_and_its_memory_in_any_case() -> None:
    """A session whose cwd is a share (`\\\\srv\\share\\repo`) is a Windows
    one, as one on a drive is: its edits are compared inside it (they were
    taken for POSIX names no cwd holds).  Its file system folds case:
    `.AGENT\\memory\\notes.md` is memory, not the work; on Linux `.AGENT/`
    is a directory of its own."""
    from agitmem.porcelain import log_episodes as le
    share = '\\\\srv\\share\\repo'
    assert le._relative('\\\\srv\\share\\repo\\src\\a.py', share) == 'src/a.py'
    assert le._relative('src\\a.py', share) == 'src/a.py'
    assert le._relative('..\\x.py', share) == '//srv/share/x.py'
    assert le._is_memory(le._relative('.AGENT\\memory\\notes.md', 'D:\\repo'), 'D:\\repo')
    assert le._is_memory(le._relative('.Agent\\log\\memory.log', share), share)
    assert le._is_memory('.agent/memory/notes.md', '/w/repo')
    assert not le._is_memory('.AGENT/notes.md', '/w/repo')
    assert not le._is_memory('src/agent/x.py', 'D:\\repo')


def test_a_codex_patch_from_another_workdir_is_at_the_tasks_place(tmp_path: Path) -> None:
    """Codex's apply_patch names its files relative to the call's workdir
    (`../src/ledger.py` from tools/) or absolutely: the same file as the
    task's place, compared and shown as the session's cwd makes it."""
    def patch(path: str, body: str) -> str:
        return f'*** Begin Patch\n*** Update File: {path}\n@@\n def round_half(x):\n-    return x\n+    {body}\n*** End Patch'

    def call(cid: str, path: str, body: str, workdir: str) -> str:
        args = json.dumps({'command': ['apply_patch', patch(path, body)], 'workdir': workdir})
        return (
            _codex_line('response_item', {'type': 'function_call', 'call_id': cid, 'name': 'shell', 'arguments': args})
            + _codex_line('response_item', {'type': 'function_call_output', 'call_id': cid, 'output': 'Success.'})
        )
    log = tmp_path / 'rollout-2026-07-20T09-00-00-s5.jsonl'
    log.write_text(
        _codex_line('session_meta', {'id': 's5', 'cwd': '/w/ledger', 'cli_version': '0.145.0'})
        + _codex_line('response_item', _codex_user('make round_half in src/ledger.py round half to even'))
        + call('c1', '/w/ledger/src/ledger.py', 'return x  # TODO', '/w/ledger')
        + _codex_line('compacted', {'message': 'Working on round_half in src/ledger.py: it must round half to even.'})
        + _codex_line('event_msg', {'type': 'context_compacted'})
        + call('c2', '../src/ledger.py', 'return round_even(x)', '/w/ledger/tools')
        + _codex_said('round_half in src/ledger.py now rounds half to even.')
        + _codex_line('event_msg', {'type': 'task_complete'}),
    )
    (found,) = log_episodes.audit_file(str(log)).found
    assert found.verdict == 'recovered', found.evidence
    assert found.first_action is not None and found.first_action.startswith('edit src/ledger.py'), found.first_action
    assert '..' not in found.evidence[0]


def test_a_hostile_codex_script_is_read_not_run(tmp_path: Path) -> None:
    # a lone surrogate, escapes, an unterminated literal, a patch out of the
    # tree and a script far past the bound: read safely, nothing run or written
    script = (
        'await tools.exec_command({cmd: "go test \\ud800 ./... \\u001b[31m"}); await tools.exec_command({cmd: "unterminated});'
        ' const p = "*** Begin Patch\\n*** Add File: ../../outside.txt\\n+\\ud800\\n*** End Patch"; await tools.apply_patch(p);'
        + ' ' * 200_000 + 'await tools.exec_command({cmd: "touch past-the-bound"});'
    )
    work = tmp_path / 'w'
    work.mkdir()
    log = work / 'rollout-2026-07-20T09-00-00-s4.jsonl'
    log.write_text(
        _codex_line('session_meta', {'id': 's4', 'cwd': str(work), 'cli_version': '0.145.0'})
        + _codex_line('compacted', {'message': '', 'replacement_history': [
            _codex_user('fix the ledger tests'), {'type': 'compaction', 'encrypted_content': 'sealed'},
        ]})
        + _codex_line('event_msg', {'type': 'context_compacted'})
        + _codex_line('response_item', {'type': 'custom_tool_call', 'call_id': 'c1', 'name': 'exec', 'input': script})
        + _codex_line('response_item', {'type': 'custom_tool_call_output', 'call_id': 'c1', 'output': 'Script completed\nOutput:\n'})
        + _codex_said('Fixed the ledger tests.')
        + _codex_line('event_msg', {'type': 'task_complete'}),
    )
    out = json.loads(ok('recovery', 'audit', '--json', str(log), cwd=work))
    (row,) = out['compactions']
    assert row['verdict'] in ('recovered', 'location', 'drift', 'state', 'reset', 'unjudgeable')
    assert sorted(p.name for p in work.iterdir()) == [log.name]
    assert not (tmp_path / 'outside.txt').exists()
    assert 'past-the-bound' not in json.dumps(out)


def test_the_walk_of_a_directory_named_is_bounded(tmp_path: Path) -> None:
    """`recovery audit /` walked the whole machine (every entry, however
    deep, for as long as it took).  The walk stops past its entries or its
    time and looks no deeper than its depth, and says so in one line."""
    logs = tmp_path / 'logs'
    deep = logs.joinpath(*['d'] * (log_episodes.WALK_DEPTH + 2))
    deep.mkdir(parents=True)
    (deep / 'deep.jsonl').write_text('{}\n')
    (logs / 'top.jsonl').write_text('{}\n')
    files, why = log_episodes.logs_under([str(logs)])
    assert files == [str(logs / 'top.jsonl')]
    assert why == f'looked no deeper than {log_episodes.WALK_DEPTH} directories'
    wide = tmp_path / 'wide'
    wide.mkdir()
    for i in range(50):
        (wide / f'{i:02}.jsonl').write_text('{}\n')
    files, why = log_episodes.logs_under([str(wide)], entries=10)
    assert len(files) == 10 and why == 'stopped after 10 entries'
    assert log_episodes.logs_under([str(wide)], seconds=0) == ([], 'stopped after 0 s')
    assert log_episodes.logs_under([str(wide)]) == ([str(wide / f'{i:02}.jsonl') for i in range(50)], None)
    out = run(*agitmem_argv(), 'recovery', 'audit', str(logs), cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.startswith('0 compaction(s)'), out
    assert out.stderr.splitlines() == [
        f'agitmem: recovery audit: {logs}: looked no deeper than {log_episodes.WALK_DEPTH} directories; '
        'the logs found are audited (name the directory that holds them)',
    ]
