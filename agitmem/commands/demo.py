"""`agitmem demo`: a scratch repository walked through agitmem's main job,
printing every command and what it answered."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from agitmem.errors import AgitmemError

_LOADER = '''export function loadConfig(path: string) {
  return JSON.parse(readFileSync(path, "utf8"));
}
'''
_SNAPSHOT = '''# Snapshot

## Goal
Move loader.ts's read logic into index.ts; loader.ts goes away.

## Done
- read loader.ts and its callers

## In progress
- copying `loadConfig` into `src/config/index.ts`

## Todo
- delete the original in loader.ts
- update the imports

## Decisions
- error type: ConfigError from src/errors.ts
'''
_TATTOO_RULES = '''- indent: 2 spaces
- Never use `any` in TypeScript.
- Keep the public signature `loadConfig(path: string)`.
'''
_TESTS = '''import sys
print("tests/config_test.py::test_load PASSED")
print("E   ReferenceError: ConfigError is not defined")
print("FAILED tests/config_test.py::test_index - ReferenceError: ConfigError is not defined")
print("1 failed, 1 passed")
sys.exit(1)
'''
_BAD_SNAPSHOT = '''## Goal
Rewrite the whole config system in Rust.
'''


class _Demo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = dict(os.environ)
        for key in ('GIT_DIR', 'GIT_INDEX_FILE', 'GIT_WORK_TREE', 'AGITMEM_REF'):
            self.env.pop(key, None)
        # a scratch repo must work on a machine with no git identity
        self.env.setdefault('GIT_AUTHOR_NAME', 'agitmem demo')
        self.env.setdefault('GIT_AUTHOR_EMAIL', 'demo@example.com')
        self.env.setdefault('GIT_COMMITTER_NAME', 'agitmem demo')
        self.env.setdefault('GIT_COMMITTER_EMAIL', 'demo@example.com')
        self.n = 0

    def step(self, title: str) -> None:
        self.n += 1
        print(f'\n== {self.n}. {title}', flush=True)

    def say(self, text: str) -> None:
        print(f'   # {text}', flush=True)

    def run(
            self, *cmd: str, ok_codes: tuple[int, ...] = (0,),
            stdin: str | None = None, quiet: bool = False,
    ) -> str:
        shown = shlex.join(cmd)
        print(f'$ {shown}', flush=True)
        exe = [sys.executable, '-m', 'agitmem', *cmd[1:]] if cmd[0] == 'agitmem' else list(cmd)
        proc = subprocess.run(
            exe, cwd=self.root, env=self.env, capture_output=True, text=True,
            input=stdin,
        )
        out = (proc.stderr if quiet else proc.stdout + proc.stderr).rstrip()
        if out:
            print('\n'.join(f'  {line}' for line in out.splitlines()), flush=True)
        if proc.returncode not in ok_codes:
            raise AgitmemError(
                f'demo step failed: `{shown}` exited {proc.returncode}',
            )
        return proc.stdout

    def write(self, rel: str, text: str, *, append: bool = False) -> None:
        verb = 'appends to' if append else 'writes'
        self.say(f'the agent {verb} {rel}')
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, 'a' if append else 'w') as f:
            f.write(text)


def _first_turn(d: _Demo, session_id: str) -> None:
    """The turn an automatic compaction interrupted goes on: the agent
    edits the state's current_file, in its current_symbol, and stops."""
    path = d.root / 'src' / 'config' / 'loader.ts'
    added = '  // moved to index.ts: delete once the imports are updated'
    d.write('src/config/loader.ts', _LOADER.replace('{\n', '{\n' + added + '\n', 1))
    edit = {
        'session_id': session_id, 'transcript_path': None, 'cwd': str(d.root),
        'hook_event_name': 'PostToolUse', 'tool_name': 'Edit',
        'tool_input': {'file_path': str(path), 'old_string': '{\n', 'new_string': '{\n' + added + '\n'},
        'tool_response': {'filePath': str(path), 'structuredPatch': [{
            'oldStart': 1, 'oldLines': 1, 'newStart': 1, 'newLines': 2,
            'lines': [' export function loadConfig(path: string) {', '+' + added],
        }]},
    }
    d.say('Claude Code runs the PostToolUse hook: agitmem observes the edit (file, lines, symbol)')
    d.run('agitmem', 'hook', 'post-edit', '--agent', 'claude', stdin=json.dumps(edit))
    stop = {
        'session_id': session_id, 'transcript_path': None, 'cwd': str(d.root),
        'hook_event_name': 'Stop', 'stop_hook_active': False,
        'last_assistant_message': 'Marked the original loadConfig in loader.ts for deletion; next, the imports.',
    }
    d.say('the turn ends (Stop hook): its first action is judged against what the state said')
    d.run('agitmem', 'hook', 'stop', '--agent', 'claude', stdin=json.dumps(stop))


def demo(directory: str | None) -> int:
    if directory is None:
        root = Path(tempfile.mkdtemp(prefix='agitmem-demo-'))
    else:
        root = Path(directory).resolve()
        if root.exists() and not root.is_dir():
            raise AgitmemError(f'{directory}: exists and is not a directory; give a new or empty directory')
        if root.exists() and any(root.iterdir()):
            raise AgitmemError(f'{directory}: exists and is not empty; give a new or empty directory')
        root.mkdir(parents=True, exist_ok=True)
    print(f'agitmem demo in {root}')
    d = _Demo(root)

    d.step('a project with some code')
    d.run('git', 'init', '-q', '-b', 'main')
    d.write('src/config/loader.ts', _LOADER)
    d.run('git', 'add', '.')
    d.run('git', 'commit', '-q', '-m', 'initial code')

    d.step('agitmem init: memory files under .agent/, versioned on a git ref')
    d.run('agitmem', 'init')
    d.run('git', 'status', '--short')
    d.say('nothing to commit: .agent/ is excluded from the code branch')

    d.step('the agent records its rules, task and plan as it works')
    d.write('.agent/memory/tattoo.md', _TATTOO_RULES, append=True)
    d.write('.agent/memory/snapshot.md', _SNAPSHOT)
    d.run('agitmem', 'save', '-m', 'plan the loader move')
    d.run(
        'agitmem', 'state', 'set',
        "current_goal=move loader.ts's read logic into index.ts",
        'current_file=src/config/loader.ts',
        'current_symbol=loadConfig',
        "last_action=copied loadConfig's body into index.ts",
        'next_intent=delete the original in loader.ts and update the imports',
    )
    d.write('run_tests.py', _TESTS)
    d.run('agitmem', 'verify', '--', 'python3' if shutil.which('python3') else sys.executable,
          'run_tests.py', ok_codes=(1,))
    d.run('agitmem', 'note', 'loader.ts is also imported by scripts/migrate.ts')
    d.run('agitmem', 'fragment', 'add', '--goal', 'move loadConfig',
          '--action', 'copied the body into index.ts',
          '--result', 'test_index fails: ConfigError not imported',
          '--next', 'import ConfigError in index.ts')
    d.run('agitmem', 'status')

    d.step('the context fills up and Claude Code compacts it')
    d.run('agitmem', 'install', 'claude')
    d.write('src/config/index.ts', 'export { loadConfig } from "./loader";\n')
    d.say('the code changed after the last verification ran: it is now STALE')
    d.write('.agent/memory/notes.md', '- index.ts re-exports loadConfig for now\n', append=True)
    payload = {
        'session_id': 'demo', 'transcript_path': None, 'cwd': str(root),
        'hook_event_name': 'PreCompact', 'trigger': 'auto', 'custom_instructions': None,
    }
    d.say('Claude Code runs the PreCompact hook: memory is checkpointed')
    d.run('agitmem', 'hook', 'pre-compact', '--agent', 'claude', stdin=json.dumps(payload))
    payload.update({'hook_event_name': 'SessionStart', 'source': 'compact'})
    del payload['trigger'], payload['custom_instructions']
    d.say('then SessionStart with source "compact": this envelope is what the agent is given')
    out = d.run('agitmem', 'hook', 'session-start', '--agent', 'claude', stdin=json.dumps(payload), quiet=True)
    envelope = json.loads(out)
    context = envelope['hookSpecificOutput'].pop('additionalContext')
    envelope['hookSpecificOutput']['additionalContext'] = '<the block below>'
    print('  ' + json.dumps(envelope))
    print('\n'.join(f'  | {line}' for line in context.splitlines()), flush=True)

    d.step('did the agent recover? its first turn after the compaction is judged')
    _first_turn(d, 'demo')
    d.run('agitmem', 'recovery')

    d.step('a bad snapshot is saved ...')
    d.write('.agent/memory/snapshot.md', _BAD_SNAPSHOT)
    d.run('agitmem', 'save', '-m', 'oops')
    d.run('agitmem', 'diff', '@~1', '@')

    d.step('... and undone with one command')
    d.run('agitmem', 'rollback')
    d.run('agitmem', 'show', ':snapshot.md')

    d.step('agitmem doctor: is everything wired?')
    d.run('agitmem', 'doctor', ok_codes=(1,))
    d.say('the git hooks are missing: run the fix doctor names')
    d.run('agitmem', 'install', 'git')
    d.run('agitmem', 'doctor')

    d.step('git refuses a commit where memory contradicts itself')
    d.write('.agent/memory/snapshot.md', '- indent: tabs\n', append=True)
    d.run('git', 'add', 'src/config/index.ts')
    d.run('git', 'commit', '-q', '-m', 'index.ts re-exports loadConfig', ok_codes=(1,))
    d.say('the snapshot says tabs, the tattoo says 2 spaces: fix the memory, then commit')
    snap = root / '.agent' / 'memory' / 'snapshot.md'
    snap.write_text(snap.read_text().replace('- indent: tabs', '- indent: 2 spaces'))
    d.run('git', 'commit', '-q', '-m', 'index.ts re-exports loadConfig')
    d.say('the post-commit hook recorded the memory with the new code commit')
    d.run('git', 'log', '-1', '--format=%B', 'refs/agitmem/heads/main')

    d.step('a feature branch: its memory forks, is reviewed, and merges back')
    d.run('git', 'checkout', '-q', '-b', 'feature')
    d.write('.agent/memory/tattoo.md', '- Validate config files with `zod` schemas.\n', append=True)
    d.run('agitmem', 'save', '-m', 'rule: validate config with zod')
    d.write('src/config/schema.ts', 'export const schema = {};\n')
    d.run('git', 'add', 'src/config/schema.ts')
    d.run('git', 'commit', '-q', '-m', 'config schema')
    d.run('agitmem', 'review', 'main..feature', '--markdown')
    d.run('git', 'checkout', '-q', 'main')
    d.say("back on main: main's memory is checked out, without the feature's rule")
    d.run('git', 'grep', '--no-index', '-c', 'zod', '.agent/memory/tattoo.md', ok_codes=(1,))
    d.run('git', 'merge', '-q', '--no-edit', 'feature')
    d.say('the merge brought the rule into main\'s memory')
    d.run('git', 'grep', '--no-index', 'zod', '.agent/memory/tattoo.md')

    d.step('the task is finished: archive the snapshot')
    d.run('agitmem', 'state', 'set', 'last_action=imports updated, loader.ts deleted',
          'next_intent=none: task done')
    d.run('agitmem', 'archive')

    d.step('the memory history')
    d.run('agitmem', 'log')
    d.run('git', 'log', '--oneline', '--decorate', 'refs/agitmem/heads/main', '-n', '3')
    print(f'\ndone: the scratch repository is {root}')
    return 0
