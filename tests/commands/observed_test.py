"""Observed state: the hooks record edits, commands, test runs and requests
from real recorded payloads, without a memory commit."""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from agitmem.agents import tools
from agitmem.memory import verification
from agitmem.porcelain import observed
from testing.util import agitmem
from testing.util import git
from testing.util import mem
from testing.util import ok
from testing.util import tip

PAYLOADS = Path(__file__).parent.parent / 'agents' / 'payloads'
APP = 'import os\n\n\ndef load_config(path):\n    data = open(path).read()\n    return data\n'


def payload(name: str, repo: Path, **changes: Any) -> str:
    data = json.loads((PAYLOADS / f'{name}.json').read_text())
    data['cwd'] = str(repo)
    data.update(changes)
    return json.dumps(data)


def hook(repo: Path, event: str, stdin: str) -> str:
    proc = agitmem('hook', event, cwd=repo, input=stdin)
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
    assert 'not observed' not in proc.stderr, proc.stderr
    return proc.stdout


def seen(repo: Path) -> dict[str, Any]:
    path = Path(git('rev-parse', '--absolute-git-dir', cwd=repo).strip()) / 'agitmem' / 'observed.json'
    return json.loads(path.read_text())  # type: ignore[no-any-return]


@pytest.fixture
def agentrepo(memrepo: Path) -> Path:
    (memrepo / 'src').mkdir(exist_ok=True)
    (memrepo / 'src' / 'app.py').write_text(APP)
    ok('state', 'set', 'current_goal=read config as TOML', 'current_file=src/app.py', cwd=memrepo)
    return memrepo


def test_claude_edit_records_lines_and_symbol(agentrepo: Path) -> None:
    target = str(agentrepo / 'src' / 'app.py')
    data = json.loads((PAYLOADS / 'claude_real_post_tool_use_edit.json').read_text())
    data['tool_response']['structuredPatch'][0].update(newStart=5, newLines=2)
    data.update(cwd=str(agentrepo), tool_input={**data['tool_input'], 'file_path': target})
    data['tool_response']['filePath'] = target
    before = tip(agentrepo)
    hook(agentrepo, 'post-edit', json.dumps(data))
    edit, = seen(agentrepo)['edits']
    # the hunk replaces one line: 5, whatever its header spans
    assert (edit['file'], edit['lines'], edit['symbol']) == ('src/app.py', [5, 5], 'load_config')
    assert tip(agentrepo) == before


def test_claude_hunk_context_lines_are_not_the_edit(agentrepo: Path) -> None:
    # Claude Code's hunks carry 3 lines of context each side: the edit is
    # the changed line inside load_config, not the blank line above it
    target = str(agentrepo / 'src' / 'app.py')
    data = json.loads((PAYLOADS / 'claude_real_post_tool_use_edit.json').read_text())
    data['tool_response']['structuredPatch'] = [{
        'oldStart': 2, 'oldLines': 6, 'newStart': 2, 'newLines': 6,
        'lines': ['', '', ' def load_config(path):', '-    data = open(path).read()', '+    data = open(path).read()  # x', '     return data'],
    }]
    data.update(cwd=str(agentrepo), tool_input={**data['tool_input'], 'file_path': target})
    hook(agentrepo, 'post-edit', json.dumps(data))
    edit, = seen(agentrepo)['edits']
    assert (edit['lines'], edit['symbol']) == ([5, 5], 'load_config')


def test_a_new_function_is_credited_to_itself(agentrepo: Path) -> None:
    # the hunk starts at the blank line above the new def: the definition
    # it writes is the edit's, not load_config above it
    (agentrepo / 'src' / 'app.py').write_text(APP + '\n\ndef validate(path):\n    return path\n')
    target = str(agentrepo / 'src' / 'app.py')
    data = json.loads((PAYLOADS / 'claude_real_post_tool_use_edit.json').read_text())
    data['tool_response']['structuredPatch'] = [{
        'oldStart': 5, 'oldLines': 2, 'newStart': 5, 'newLines': 6,
        'lines': ['     data = open(path).read()', '     return data', '+', '+', '+def validate(path):', '+    return path'],
    }]
    data.update(cwd=str(agentrepo), tool_input={**data['tool_input'], 'file_path': target})
    hook(agentrepo, 'post-edit', json.dumps(data))
    edit, = seen(agentrepo)['edits']
    assert (edit['lines'], edit['symbol']) == ([7, 10], 'validate')


@pytest.mark.parametrize(('lines', 'start', 'end', 'symbol'), (
    (['def a():', '    x = 1', '', 'def b():', '    pass'], 2, 2, 'a'),  # inside a: a
    (['def a():', '    x = 1', '', 'def b():', '    pass'], 3, 5, 'b'),  # writes b
    (['def a():', '    x = 1', '    def inner():', '        pass'], 2, 4, 'a'),  # a's body, not the nested def
    (['import os', 'import sys'], 2, 2, None),  # no definition at all
))
def test_defined_in(lines: list[str], start: int, end: int, symbol: str | None) -> None:
    assert observed.defined_in(lines, start, end, 'py') == symbol


def test_a_definition_written_twice_is_seen() -> None:
    lines = ['def load(p):', '    pass', '', 'def load(p):', '    pass']
    assert observed.twice(lines, 'load', 'py')
    assert not observed.twice(lines[:2], 'load', 'py')
    assert not observed.twice(lines, None, 'py')


def test_methods_of_one_name_in_two_classes_are_not_written_twice() -> None:
    # a client class and its caching wrapper both define fetch: the edit of
    # one of them does no step again
    lines = [
        'class Client:', '    async def fetch(self, key):', '        return await self.http.get(key)', '',
        'class CachedClient:', '    def __init__(self, inner):', '        self.inner = inner', '',
        '    async def fetch(self, key):', '        return await self.inner.fetch(key)',
    ]
    assert not observed.twice(lines, 'fetch', 'py')
    # ... but one class holding it twice has it written again
    assert observed.twice([*lines, '', '    async def fetch(self, key):', '        pass'], 'fetch', 'py')
    go = ['func (c *Client) Get(k string) string {', '}', 'func (c *Cached) Get(k string) string {', '}']
    assert not observed.twice(go, 'Get', 'go')
    assert observed.twice([*go, 'func (c *Cached) Get(k string) string {', '}'], 'Get', 'go')


def test_an_edit_is_what_it_added_and_took_out() -> None:
    # an edit tool's new text repeats the lines around the change; a
    # realigned line is no change
    old = 'type Cache struct {\n\tmu sync.Mutex\n\tm  map[string]entry\n}'
    new = 'type Cache struct {\n\tmu     sync.Mutex\n\tm      map[string]entry\n\thits   uint64\n}'
    assert observed.changed(new, old) == ('\thits   uint64', '')
    assert observed.changed('x = 2\n', 'x = 1\n') == ('x = 2', 'x = 1')
    assert observed.changed('def f():\n    pass\n', '') == ('def f():\n    pass', '')


def test_codex_apply_patch_lines_found_in_the_file(agentrepo: Path) -> None:
    patch = '*** Begin Patch\n*** Update File: src/app.py\n@@\n-    return data\n+    return data\n*** End Patch\n'
    hook(agentrepo, 'post-edit', payload('codex/PostToolUse_apply_patch', agentrepo, tool_input={'command': patch}))
    edit, = seen(agentrepo)['edits']
    assert (edit['file'], edit['lines'], edit['symbol']) == ('src/app.py', [6, 6], 'load_config')


def test_gemini_replace_lines_from_its_diff(agentrepo: Path) -> None:
    data = json.loads(payload('gemini/AfterTool-replace', agentrepo))
    data['tool_response']['returnDisplay']['fileDiff'] = '@@ -5,1 +5,1 @@\n-x\n+    data = open(path).read()\n'
    hook(agentrepo, 'post-edit', json.dumps(data))
    edit, = seen(agentrepo)['edits']
    assert (edit['file'], edit['lines'], edit['symbol']) == ('src/app.py', [5, 5], 'load_config')


def test_claude_failed_pytest_is_an_observed_verification(agentrepo: Path) -> None:
    step = json.loads(mem(agentrepo, 'state.json').read_text())['step']
    before = tip(agentrepo)
    hook(agentrepo, 'post-edit', payload('claude/PostToolUseFailure_Bash', agentrepo))
    state = json.loads(mem(agentrepo, 'state.json').read_text())
    lv = state['last_verification']
    assert (lv['result'], lv['exit_code'], lv['observed']) == ('failed', 1, True)
    assert lv['reason'] == 'test_a.py::test_a - AssertionError: ConfigError is not defined'
    assert lv['command'] == 'python3 -m pytest -q test_a.py'
    assert lv['tree'] == git('write-tree', cwd=agentrepo).strip() or len(lv['tree']) == 40
    assert state['step'] == step  # a fact, not progress
    assert tip(agentrepo) == before  # never a commit by itself
    assert seen(agentrepo)['commands'][-1]['exit_code'] == 1
    assert 'no unsaved changes' in ok('status', cwd=agentrepo)
    assert json.loads(ok('status', '--json', cwd=agentrepo))['changed'] == []
    # the next save carries it
    ok('save', cwd=agentrepo)
    assert '"observed": true' in git('show', f'{tip(agentrepo)}:state.json', cwd=agentrepo)


def test_a_test_run_with_a_lone_surrogate_is_observed(agentrepo: Path) -> None:
    # a command and output with bytes that are not UTF-8 (kept as surrogate
    # escapes): state.json could not be encoded, and the run was not observed
    data = json.loads(payload('claude/PostToolUseFailure_Bash', agentrepo))
    data['tool_input']['command'] = 'python3 -m pytest -q test_\udcff.py'
    data['error'] = 'Exit code 1\nFAILED test_\udcff.py::test_a - AssertionError'
    hook(agentrepo, 'post-edit', json.dumps(data))
    lv = json.loads(mem(agentrepo, 'state.json').read_text())['last_verification']
    assert (lv['command'], lv['result']) == ('python3 -m pytest -q test_\udcff.py', 'failed')
    assert 'no unsaved changes' in ok('status', cwd=agentrepo)
    ok('save', cwd=agentrepo)


def test_claude_successful_bash_is_a_command_not_a_test(agentrepo: Path) -> None:
    hook(agentrepo, 'post-edit', payload('claude/PostToolUse_Bash', agentrepo))
    cmd, = seen(agentrepo)['commands']
    assert (cmd['command'], cmd['exit_code']) == ('echo ok && true', 0)
    assert json.loads(mem(agentrepo, 'state.json').read_text())['last_verification'] is None


def test_codex_bash_has_no_exit_code_the_output_decides(agentrepo: Path) -> None:
    out = '..F\nFAILED tests/a_test.py::test_x - assert 1 == 2\n1 failed, 2 passed in 0.1s\n'
    hook(agentrepo, 'post-edit', payload('codex/PostToolUse_Bash_failed', agentrepo,
                                         tool_input={'command': 'pytest -q'}, tool_response=out))
    lv = json.loads(mem(agentrepo, 'state.json').read_text())['last_verification']
    assert (lv['result'], lv['exit_code'], lv['reason']) == ('failed', None, 'tests/a_test.py::test_x - assert 1 == 2')
    hook(agentrepo, 'post-edit', payload('codex/PostToolUse_Bash', agentrepo,
                                         tool_input={'command': 'go test ./...'}, tool_response='ok  \tpkg\t0.01s\n'))
    lv = json.loads(mem(agentrepo, 'state.json').read_text())['last_verification']
    assert (lv['result'], lv['command']) == ('passed', 'go test ./...')


def test_gemini_shell_command_and_exit_code(agentrepo: Path) -> None:
    hook(agentrepo, 'post-edit', payload('gemini/AfterTool-run_shell_command', agentrepo))
    cmd, = seen(agentrepo)['commands']
    assert (cmd['command'], cmd['exit_code']) == ('echo shell-ran > shell.txt', 0)
    failed = {'llmContent': 'Output: FAIL src/a.test.ts\n  ● adds\nError: (none)\nExit Code: 1\nProcess Group PGID: 9',
              'returnDisplay': ''}
    hook(agentrepo, 'post-edit', payload('gemini/AfterTool-run_shell_command', agentrepo,
                                         tool_input={'command': 'npx jest'}, tool_response=failed))
    lv = json.loads(mem(agentrepo, 'state.json').read_text())['last_verification']
    assert (lv['result'], lv['exit_code'], lv['reason']) == ('failed', 1, 'adds')


def test_prompts_last_three_cut_and_redacted(agentrepo: Path) -> None:
    token = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'
    for text in ('first', 'second', f'use {token} to push', 'x' * 400):
        hook(agentrepo, 'prompt', payload('claude_real_user_prompt_submit', agentrepo, prompt=text, transcript_path=None))
    requests = [r['text'] for r in seen(agentrepo)['requests']]
    assert requests[0] == 'second'
    assert token not in requests[1] and requests[1].startswith('use [redacted ')
    assert len(requests[2]) == observed.REQUEST_CHARS


@pytest.mark.parametrize('text,hidden', [
    # what the gate before the scanner must not let by (secret_words.may_hold)
    # (each split in two here, so this file itself holds no key: the self-scan)
    ('the DB PASS' 'WORD=hunter2-hunter2 is set', 'hunter2-hunter2'),  # a keyword in capitals
    ('log in with https://deploy:' 's3cr3t-v4lue@ci.example.com', 's3cr3t-v4lue'),  # a URL's password
    ('the token\\nghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'),  # an escape
])
def test_a_request_a_rule_could_match_is_redacted(agentrepo: Path, text: str, hidden: str) -> None:
    hook(agentrepo, 'prompt', payload('claude_real_user_prompt_submit', agentrepo, prompt=text, transcript_path=None))
    kept, = [r['text'] for r in seen(agentrepo)['requests']]
    assert hidden not in kept and '[redacted ' in kept


def test_observed_test_run_never_loses_a_concurrent_state_set(agentrepo: Path) -> None:
    fail = payload('claude/PostToolUseFailure_Bash', agentrepo)
    errors: list[str] = []

    def observe() -> None:
        for _ in range(4):
            proc = agitmem('hook', 'post-edit', cwd=agentrepo, input=fail)
            if 'not observed' in proc.stderr:
                errors.append(proc.stderr)

    t = threading.Thread(target=observe)
    t.start()
    for i in range(4):
        ok('state', 'set', f'last_action=step {i}', cwd=agentrepo)
    t.join()
    assert errors == []
    state = json.loads(mem(agentrepo, 'state.json').read_text())
    assert state['last_action'] == 'step 3'
    assert state['last_verification']['observed'] is True


def test_progress_not_updated_ignores_an_observed_test_run(agentrepo: Path) -> None:
    (agentrepo / '.agent' / 'config.yaml').write_text('require_progress_update: true\n')
    ok('save', cwd=agentrepo)
    git('add', '-A', cwd=agentrepo)
    git('commit', '-qm', 'app', cwd=agentrepo)
    ok('hook', 'post-commit', cwd=agentrepo)
    (agentrepo / 'src' / 'app.py').write_text(APP + '\n# more\n')
    git('add', 'src/app.py', cwd=agentrepo)
    hook(agentrepo, 'post-edit', payload('claude/PostToolUseFailure_Bash', agentrepo))
    proc = agitmem('check', '--staged', cwd=agentrepo)
    assert proc.returncode == 1 and 'progress-not-updated' in proc.stdout
    ok('save', cwd=agentrepo)  # a checkpoint carrying the observation is no progress either
    assert 'progress-not-updated' in agitmem('check', '--staged', cwd=agentrepo).stdout


@pytest.mark.parametrize(('ext', 'text', 'line', 'symbol'), (
    ('py', 'class A:\n    def f(self):\n        x = 1\n', 3, 'f'),
    ('py', 'def f():\n    pass\n\nx = 1\n', 4, None),
    ('ts', 'export async function loadConfig(p: string) {\n  return p;\n}\n', 2, 'loadConfig'),
    ('js', 'const parse = (s) => {\n  return s;\n};\n', 2, 'parse'),
    ('go', 'func (s *Server) Handle(w http.ResponseWriter) {\n\tw.Write(nil)\n}\n', 2, 'Handle'),
    ('rs', 'impl Parser {\n    pub fn parse(&self) -> u8 {\n        1\n    }\n}\n', 3, 'parse'),
    ('java', 'public class App {\n    public static int run(String a) {\n        return 1;\n    }\n}\n', 3, 'run'),
    ('kt', 'class App {\n    suspend fun fetch(id: Int): String {\n        return ""\n    }\n}\n', 3, 'fetch'),
    ('c', 'static int add(int a, int b)\n{\n    return a + b;\n}\n', 3, 'add'),
    ('cpp', 'int Parser::parse(const char *s) {\n    if (s) {\n        return 1;\n    }\n}\n', 3, 'Parser::parse'),
    ('rb', 'module M\n  def self.call(x)\n    x\n  end\nend\n', 3, 'call'),
))
def test_enclosing_definition(ext: str, text: str, line: int, symbol: str | None) -> None:
    assert observed.enclosing(text.splitlines(), line, ext) == symbol


@pytest.mark.parametrize(('command', 'is_test'), (
    ('python3 -m pytest -q test_a.py', True),
    ('cd web && npm test -- --watch=false', True),
    ('CI=1 npx vitest run', True),
    ('go test ./...', True),
    ('./gradlew test', True),
    ('uv run tox -e py312', True),
    ('cargo build', False),
    ('echo pytest', False),
    ('git commit -m "make test pass"', False),
    # task runners' test tasks, as real sessions run them
    ('mise run test:ci 2>&1 | tail -50', True),
    ('mise run fmt && mise run lint && mise run test:ci', True),
    ('npm run test:unit', True),
    ('just test-all', True),
    ('mise run testing-notes', False),
    ('mise run lint', False),
))
def test_default_verification_commands(command: str, is_test: bool) -> None:
    assert verification.is_test_run(command, verification.DEFAULT_COMMANDS) is is_test


def test_configured_verification_commands_replace_the_default(agentrepo: Path) -> None:
    (agentrepo / '.agent' / 'config.yaml').write_text('verification_commands: [just check]\n')
    hook(agentrepo, 'post-edit', payload('claude/PostToolUseFailure_Bash', agentrepo))
    assert json.loads(mem(agentrepo, 'state.json').read_text())['last_verification'] is None
    fail = json.loads(payload('claude/PostToolUseFailure_Bash', agentrepo))
    fail['tool_input']['command'] = 'just check'
    hook(agentrepo, 'post-edit', json.dumps(fail))
    assert json.loads(mem(agentrepo, 'state.json').read_text())['last_verification']['command'] == 'just check'


def test_claude_bash_response_parse() -> None:
    data = json.loads((PAYLOADS / 'claude' / 'PostToolUseFailure_Bash.json').read_text())
    run = tools.shell_run(data)
    assert run is not None and run.exit_code == 1 and run.output.startswith('F ')


def test_a_number_no_process_exits_with_is_no_exit_code() -> None:
    """A payload's text naming an exit code of 5,000 digits (int() refuses
    one past 4,300) or of 11: none is read, and the run is still observed."""
    huge = '9' * 5000
    claude = {'hook_event_name': 'PostToolUseFailure', 'tool_name': 'Bash',
              'tool_input': {'command': 'pytest'}, 'error': f'Exit code {huge}\nF boom'}
    gemini = {'hook_event_name': 'AfterTool', 'tool_name': 'run_shell_command', 'tool_input': {'command': 'pytest'},
              'tool_response': {'llmContent': f'Output: F boom\nExit Code: {huge}'}}
    codex = {'hook_event_name': 'PostToolUse', 'tool_name': 'Bash', 'tool_input': {'command': 'pytest'},
             'tool_response': f'Exit code: {huge}\nWall time: 1s\nOutput:\nF boom'}
    for raw, code in ((claude, 1), (gemini, 0), (codex, None)):
        run = tools.shell_run(raw)
        assert run is not None and run.exit_code == code and 'F boom' in run.output, raw['hook_event_name']
    claude['error'] = 'Exit code 12345678901\nF boom'
    run = tools.shell_run(claude)
    assert run is not None and run.exit_code == 1
    claude['error'] = 'Exit code 2\nF boom'
    run = tools.shell_run(claude)
    assert run is not None and run.exit_code == 2 and run.output == 'F boom'
    edit = {'tool_name': 'Edit', 'tool_input': {'file_path': '/r/a.py'},
            'tool_response': {'structuredPatch': [{'oldStart': 1, 'oldLines': 1, 'newStart': 1, 'newLines': 1,
                                                   'lines': ['-a', '+b']}]}}
    tools.edits(edit, ('/r/a.py',))
    patch = {'tool_name': 'apply_patch', 'tool_input': {
        'command': f'*** Begin Patch\n*** Update File: a.py\n@@ -1 +{huge} @@\n-a\n+b\n*** End Patch\n'}}
    tools.edits(patch, ('a.py',))


def test_injection_has_an_observed_section_and_the_disagreement(agentrepo: Path) -> None:
    (agentrepo / 'src' / 'b.py').write_text('def parse_toml(text):\n    return text\n')
    data = json.loads((PAYLOADS / 'claude_real_post_tool_use_edit.json').read_text())
    target = str(agentrepo / 'src' / 'b.py')
    data['tool_response']['structuredPatch'][0].update(newStart=2, newLines=1)
    data.update(cwd=str(agentrepo), tool_input={**data['tool_input'], 'file_path': target})
    ok('state', 'set', 'current_file=src/a.py', cwd=agentrepo)
    hook(agentrepo, 'post-edit', json.dumps(data))
    hook(agentrepo, 'post-edit', json.dumps(data))
    hook(agentrepo, 'post-edit', payload('claude/PostToolUseFailure_Bash', agentrepo))
    hook(agentrepo, 'prompt', payload('claude_real_user_prompt_submit', agentrepo, prompt='make b.py parse TOML', transcript_path=None))
    out = hook(agentrepo, 'session-start', payload('claude_session_start_compact', agentrepo))
    text = json.loads(out)['hookSpecificOutput']['additionalContext']
    observed_at = text.index('## OBSERVED')
    assert text.index('## STATE') < observed_at
    assert '- edited src/b.py:2-2 in parse_toml' in text
    assert '- last test run: failed `python3 -m pytest -q test_a.py`: test_a.py::test_a - AssertionError' in text
    assert "- user's last request: make b.py parse TOML" in text
    assert "state says current_file src/a.py (step 2, less than a minute ago), but the last 2 edits were to src/b.py" in text


@pytest.mark.parametrize(('output', 'failed'), (
    ('test result: ok. 7 passed; 0 failed; 0 ignored; 0 measured', False),  # cargo
    ('=== 12 passed, 0 errors in 0.4s ===', False),
    ('test result: FAILED. 6 passed; 1 failed', True),
    ('=== 1 failed, 11 passed in 0.5s ===', True),
    ('--- FAIL: TestGet (0.00s)', True),
    ('2 errors during collection', True),
))
def test_a_result_read_from_output_alone(output: str, failed: bool) -> None:
    assert verification.failed_by_output(output) is failed


def test_observed_facts_linked_out_are_not_read(agentrepo: Path, tmp_path: Path) -> None:
    """agitmem replaces its observed facts whole, so a symlink there is
    none of its own: what it points at (outside the repository) is not
    read, neither into the agent's context nor copied in."""
    outside = tmp_path / 'elsewhere.json'
    outside.write_text(json.dumps({'requests': [{'text': 'OUTSIDE-SECRET', 'at': '2026-12-05T00:00:00Z', 'session': 's'}]}))
    path = Path(git('rev-parse', '--absolute-git-dir', cwd=agentrepo).strip()) / 'agitmem' / 'observed.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    path.symlink_to(outside)
    out = hook(agentrepo, 'session-start', payload('gemini_session_start_startup', agentrepo))
    assert 'AGENT MEMORY BEGIN' in out and 'OUTSIDE-SECRET' not in out
    hook(agentrepo, 'prompt', payload('gemini_prompt', agentrepo, prompt='next'))
    assert not path.is_symlink() and 'OUTSIDE-SECRET' not in path.read_text()
    assert 'OUTSIDE-SECRET' in outside.read_text()


def test_an_observed_test_run_never_reads_a_fifo_state(agentrepo: Path) -> None:
    """state.json a FIFO (or a link to /dev/zero): recording an observed
    test run read it through pathlib, which blocked the post-edit hook
    until the client killed it (a link to /dev/zero: until the memory ran
    out).  Now it is not read: one line, exit 0, in time."""
    import os
    import subprocess

    from testing.util import agitmem_argv
    state = mem(agentrepo, 'state.json')
    state.unlink()
    os.mkfifo(state)
    proc = subprocess.run(
        [*agitmem_argv(), 'hook', 'post-edit'], cwd=agentrepo, text=True, capture_output=True,
        input=payload('claude/PostToolUseFailure_Bash', agentrepo), timeout=30,
    )
    assert proc.returncode == 0 and 'Traceback' not in proc.stderr
    assert 'state.json: not a regular file' in proc.stderr and len(proc.stderr.splitlines()) == 1
