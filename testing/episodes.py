"""Recovery episodes (tests/memory/episodes/*.yaml, format in its README)
turned into real runs: a git repository holding the episode's files and
memory, the compaction and the first turn after it sent through `agitmem
hook ...` as the episode's client sends them (its own payload shapes,
transcript and compaction signal), each tool event applied to the working
tree before its hook runs; then `agitmem recovery --json` read back.

Only what the installed hooks would see is sent: Claude Code and Gemini
CLI read files with tools agitmem does not hook, Codex reads with its
shell (sent as the shell command it would run)."""
from __future__ import annotations

import difflib
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from testing import labelled
from testing.util import agitmem
from testing.util import git
from testing.util import ok

PAYLOADS = Path(__file__).parent.parent / 'tests' / 'agents' / 'payloads'
# the labeller's words -> `agitmem recovery`'s verdicts
MANAGED = frozenset({'step', 'updated_at', 'tree'})

VERDICTS = {
    'recovered': 'recovered', 'goal drift': 'drift', 'location lost': 'location',
    'state confusion': 'state', 'full reset': 'reset',
}
CLASSES = ('recovered', 'drift', 'location', 'state', 'reset')
SESSION = 'episode-session'
# how a run starts agitmem: testing.util.agitmem, or a testing.zygote.Zygote's run
Cli = Callable[..., 'subprocess.CompletedProcess[str]']


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding='utf-8'))  # type: ignore[no-any-return]


def _payload(name: str) -> dict[str, Any]:
    return json.loads((PAYLOADS / f'{name}.json').read_text())  # type: ignore[no-any-return]


class Run:
    """One episode being played in `repo` by its client."""

    def __init__(self, episode: dict[str, Any], root: Path, cli: Cli = agitmem) -> None:
        self.cli = cli
        self.ep = episode
        self.client: str = episode['client']
        self.repo = root / 'repo'
        self.transcript = root / f'transcript-{self.client}.jsonl'
        self.files: dict[str, str] = {}

    # -- hooks ---------------------------------------------------------------
    def data(self, name: str, **changes: Any) -> dict[str, Any]:
        data = _payload(name)
        data.update(cwd=str(self.repo), session_id=SESSION, transcript_path=str(self.transcript))
        data.update(changes)
        return data

    def hook(self, event: str, data: dict[str, Any]) -> str:
        proc = self.cli('hook', event, '--agent', self.client, cwd=self.repo, input=json.dumps(data))
        assert proc.returncode == 0 and 'Traceback' not in proc.stderr, proc.stderr
        assert 'recovery log' not in proc.stderr, proc.stderr
        return proc.stdout

    def ok(self, *args: str) -> str:
        return ok(*args, cwd=self.repo, cli=self.cli)

    # -- the repository and its memory ------------------------------------------
    def setup(self) -> None:
        self.repo.mkdir()
        git('init', '-q', cwd=self.repo)
        for rel, content in (self.ep.get('repo') or {}).items():
            self.write(rel, content)
        git('add', '-A', cwd=self.repo)
        git('commit', '-q', '-m', 'the code before the turn', cwd=self.repo)
        self.ok('init')
        memory = self.ep.get('memory') or {}
        state = memory.get('state') or {}
        pairs = [
            f'{k}={v}' if isinstance(v, str) else f'{k}:={json.dumps(v)}'
            # step, updated_at and tree are agitmem's to set: `state set` refuses them
            for k, v in state.items() if v is not None and k not in MANAGED
        ]
        if pairs:
            self.ok('state', 'set', *pairs)
        if memory.get('snapshot'):
            (self.repo / '.agent' / 'memory' / 'snapshot.md').write_text(memory['snapshot'], encoding='utf-8')
            self.ok('save', '-m', 'snapshot before the compaction')

    def write(self, rel: str, content: str) -> None:
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding='utf-8')
        self.files[rel] = content

    # -- the compaction, as each client signals it ---------------------------------
    def compact(self) -> None:
        summary = self.ep.get('summary') or ''
        prompt = self.ep.get('user_prompt')
        getattr(self, f'_compact_{self.client}')(summary)
        if prompt is not None or self.client == 'gemini':
            self.prompt(prompt)

    def _compact_claude(self, summary: str) -> None:
        self.transcript.write_text('')
        trigger = 'auto' if self.ep.get('user_prompt') is None else 'manual'
        self.hook('pre-compact', self.data(f'claude_pre_compact_{trigger}'))
        post = self.data('claude/PostCompact', trigger=trigger, compact_summary=summary)
        self.hook('pre-compact', post)
        self.hook('session-start', self.data('claude_session_start_compact'))
        # Claude Code writes the boundary and the summary after SessionStart
        self.record({'type': 'system', 'subtype': 'compact_boundary', 'uuid': 'boundary-1'})
        self.record({'type': 'user', 'isCompactSummary': True, 'message': {'role': 'user', 'content': summary}})

    def _compact_codex(self, summary: str) -> None:
        lines = (PAYLOADS / 'codex' / 'rollout.jsonl').read_text().splitlines()
        at = next(i for i, line in enumerate(lines) if '"type": "compacted"' in line)
        record = json.loads(lines[at])
        record['payload']['message'] = summary
        self.transcript.write_text('\n'.join([*lines[:at], json.dumps(record)]) + '\n')
        trigger = 'auto' if self.ep.get('user_prompt') is None else 'manual'
        self.hook('pre-compact', self.data('codex/PreCompact_auto', trigger=trigger))
        self.hook('pre-compact', self.data('codex/PostCompact_auto', trigger=trigger))
        self.hook('session-start', self.data('codex/SessionStart_compact'))

    def _compact_gemini(self, summary: str) -> None:
        # the chat file before the compression, seen by a first prompt; then
        # the compression (`/compress`): its summary answered by GEMINI_ACK
        lines = (PAYLOADS / 'gemini' / 'chat-compress-manual.jsonl').read_text().splitlines()
        at = next(i for i, line in enumerate(lines) if 'Got it. Thanks for the additional context!' in line)
        self.transcript.write_text('\n'.join(lines[:at - 1]) + '\n')
        self.hook('prompt', self.data('gemini/BeforeAgent', prompt='Work on the task.'))
        record = json.loads(lines[at])
        messages = record['$set']['messages']
        ack = next(i for i, m in enumerate(messages) if m['type'] == 'gemini')
        messages[ack - 1]['content'] = [{'text': summary}]
        self.transcript.write_text('\n'.join([*lines[:at], json.dumps(record)]) + '\n')

    def prompt(self, text: str | None) -> None:
        if self.client == 'claude':
            self.hook('prompt', self.data('claude_real_user_prompt_submit', prompt=text))
            self.record({'type': 'user', 'message': {'role': 'user', 'content': text}})
        elif self.client == 'codex':
            self.hook('prompt', self.data('codex/UserPromptSubmit', prompt=text))
            self.record({'type': 'response_item', 'payload': {'type': 'message', 'role': 'user', 'content': [{'type': 'input_text', 'text': text}]}})
        else:
            # Gemini sees a compression at the next prompt (BeforeAgent); a
            # user who said nothing new has said "go on"
            said = text if text is not None else 'Continue.'
            self.hook('prompt', self.data('gemini/BeforeAgent', prompt=said))
            self.record({'id': 'prompt-1', 'type': 'user', 'content': [{'text': said}]})

    def record(self, obj: dict[str, Any]) -> None:
        """A line of the client's transcript, as it writes it."""
        with self.transcript.open('a') as f:
            f.write(json.dumps(obj, ensure_ascii=False) + '\n')

    def say(self, text: str) -> None:
        if self.client == 'claude':
            self.record({'type': 'assistant', 'isSidechain': False, 'message': {
                'id': f'msg-{len(text)}', 'role': 'assistant', 'content': [{'type': 'text', 'text': text}],
            }})
        elif self.client == 'codex':
            self.record({'type': 'response_item', 'payload': {
                'type': 'message', 'role': 'assistant', 'content': [{'type': 'output_text', 'text': text}],
            }})
        else:
            self.record({'id': f'said-{len(text)}', 'type': 'gemini', 'content': text})

    # -- the first turn -------------------------------------------------------------
    def play(self) -> None:
        said = None
        for step in self.ep.get('turn') or ():
            (kind, arg), = step.items()
            if kind == 'say':
                said = arg
                self.say(arg)
            elif kind == 'read':
                if self.client == 'codex':  # Codex reads with its shell
                    self._shell({'command': f"sed -n '1,200p' {arg['path']}", 'exit_code': 0, 'output': self.files.get(arg['path'], '')})
            elif kind == 'edit':
                old_text = self.files[arg['path']]
                assert old_text.count(arg['old']) == 1, (arg['path'], arg['old'])
                self._changed(arg['path'], old_text, old_text.replace(arg['old'], arg['new'], 1), arg['old'], arg['new'])
            elif kind == 'write':
                self._changed(arg['path'], self.files.get(arg['path']), arg['content'], None, arg['content'])
            elif kind == 'shell':
                for rel, content in (arg.get('changes') or {}).items():
                    self.write(rel, content)
                self._shell(arg)
            else:
                raise AssertionError(f'unknown turn step {kind}')
        self.stop(said)

    def _changed(self, rel: str, before: str | None, after: str, old: str | None, new: str) -> None:
        self.write(rel, after)
        getattr(self, f'_edit_{self.client}')(rel, before, after, old, new)

    def _edit_claude(self, rel: str, before: str | None, after: str, old: str | None, new: str) -> None:
        target = str(self.repo / rel)
        hunks = _hunks(before or '', after) if before is not None else []
        if old is not None:
            data = self.data('claude_real_post_tool_use_edit')
            data['tool_input'] = {'file_path': target, 'old_string': old, 'new_string': new, 'replace_all': False}
            data['tool_response'].update(filePath=target, oldString=old, newString=new, originalFile=before, structuredPatch=hunks)
        else:
            data = self.data('claude_real_post_tool_use_write')
            data['tool_input'] = {'file_path': target, 'content': after}
            data['tool_response'].update(
                type='create' if before is None else 'update', filePath=target, content=after,
                originalFile=before, structuredPatch=hunks,
            )
        self.hook('post-edit', data)

    def _edit_codex(self, rel: str, before: str | None, after: str, old: str | None, new: str) -> None:
        if before is None:
            body = ''.join(f'+{line}\n' for line in after.splitlines())
            patch = f'*** Begin Patch\n*** Add File: {rel}\n{body}*** End Patch\n'
        else:
            diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm='', n=3)
            body = '\n'.join(
                '@@' if line.startswith('@@') else line
                for line in list(diff)[2:]
            )
            patch = f'*** Begin Patch\n*** Update File: {rel}\n{body}\n*** End Patch\n'
        data = self.data('codex/PostToolUse_apply_patch', tool_input={'command': patch})
        data['tool_response'] = f'Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n{"A" if before is None else "M"} {rel}\n'
        self.hook('post-edit', data)

    def _edit_gemini(self, rel: str, before: str | None, after: str, old: str | None, new: str) -> None:
        diff = ''.join(difflib.unified_diff(
            (before or '').splitlines(keepends=True), after.splitlines(keepends=True),
            fromfile=rel.rsplit('/', 1)[-1], tofile=rel.rsplit('/', 1)[-1],
        ))
        display = {
            'fileDiff': f'Index: {rel}\n' + '=' * 67 + '\n' + diff, 'fileName': rel.rsplit('/', 1)[-1],
            'filePath': str(self.repo / rel), 'originalContent': before, 'newContent': after,
            'isNewFile': before is None,
        }
        if old is not None:
            data = self.data('gemini/AfterTool-replace')
            data['tool_input'] = {'file_path': rel, 'old_string': old, 'new_string': new, 'instruction': 'edit'}
            data['tool_response'] = {'llmContent': f'Successfully modified file: {self.repo / rel} (1 replacements).', 'returnDisplay': display}
        else:
            data = self.data('gemini/AfterTool-write_file')
            data['tool_input'] = {'file_path': rel, 'content': after}
            data['tool_response'] = {'llmContent': f'Successfully wrote to file: {self.repo / rel}.', 'returnDisplay': display}
        self.hook('post-edit', data)

    def _shell(self, arg: dict[str, Any]) -> None:
        command, code, output = arg['command'], arg.get('exit_code'), arg.get('output') or ''
        if self.client == 'claude':
            if code in (0, None):
                data = self.data('claude/PostToolUse_Bash', tool_input={'command': command, 'description': 'run'})
                data['tool_response'] = {'stdout': output, 'stderr': '', 'interrupted': False, 'isImage': False, 'noOutputExpected': False}
            else:
                data = self.data('claude/PostToolUseFailure_Bash', tool_input={'command': command, 'description': 'run'})
                data['error'] = f'Exit code {code}\n{output}'
        elif self.client == 'codex':
            # Codex's PostToolUse gives the output alone, never the exit code
            data = self.data('codex/PostToolUse_Bash', tool_input={'command': command}, tool_response=output)
        else:
            text = f'Output: {output or "(empty)"}\n'
            if code not in (0, None):
                text += f'Exit Code: {code}\n'
            data = self.data('gemini/AfterTool-run_shell_command', tool_input={'command': command, 'description': 'run'})
            data['tool_response'] = {'llmContent': f'<untrusted_context>\n{text}Process Group PGID: 4242\n</untrusted_context>', 'returnDisplay': output}
        self.hook('post-edit', data)

    def stop(self, said: str | None) -> None:
        if self.client == 'claude':
            self.hook('stop', self.data('claude_real_stop', last_assistant_message=said))
        elif self.client == 'codex':
            self.hook('stop', self.data('codex/Stop', last_assistant_message=said))
        else:
            self.hook('stop', self.data('gemini/AfterAgent', prompt_response=said))


def _hunks(before: str, after: str) -> list[dict[str, Any]]:
    """Claude Code's structuredPatch of `before` -> `after`."""
    a, b = before.splitlines(), after.splitlines()
    ret = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines = []
        for tag, x1, x2, y1, y2 in group:
            if tag == 'equal':
                lines += [' ' + s for s in a[x1:x2]]
            else:
                lines += ['-' + s for s in a[x1:x2]] + ['+' + s for s in b[y1:y2]]
        ret.append({'oldStart': i1 + 1, 'oldLines': i2 - i1, 'newStart': j1 + 1, 'newLines': j2 - j1, 'lines': lines})
    return ret


def play(episode: dict[str, Any], root: Path, cli: Cli = agitmem) -> dict[str, Any]:
    """The recovery log's row for the episode, once played in `root`."""
    run = Run(episode, root, cli)
    run.setup()
    run.compact()
    run.play()
    rows = json.loads(run.ok('recovery', '--json'))['compactions']
    assert len(rows) == 1, rows
    row: dict[str, Any] = rows[0]
    row['shown'] = run.ok('recovery', 'show', '1')
    shutil.rmtree(root / 'repo', ignore_errors=True)
    return row


# -- agreement ------------------------------------------------------------------------

def scores(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """Agreement, Cohen's kappa, per-class recall and precision."""
    return labelled.scores(pairs, CLASSES)


def report(pairs: list[tuple[str, str]], title: str) -> str:
    return labelled.report(pairs, CLASSES, title)
