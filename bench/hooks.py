"""Hot hook paths against their floors, measured in the same run.

    python bench/hooks.py [--runs N]

Targets (issues 14 and 41): `hook post-edit`, `hook prompt` and `hook
stop` <= 2x `python -c pass`; `load` <= 2.5x `python -c pass`.  The memory is realistic:
20 tattoo rules, a 300-line snapshot, 1,000 notes, 500 fragments."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as c  # noqa: E402


def realistic_repo() -> Path:
    root = c.tmpdir('agitmem-bench-hooks-')
    c.sh('git', 'init', '-q', '-b', 'main', cwd=root)
    for i in range(200):
        d = root / 'src' / f'pkg{i % 10}'
        d.mkdir(parents=True, exist_ok=True)
        (d / f'm{i}.py').write_text(f'def f{i}():\n    return {i}\n')
    c.sh('git', 'add', '.', cwd=root)
    c.sh('git', 'commit', '-q', '-m', 'code', cwd=root)
    c.sh(*c.AGITMEM, 'init', cwd=root)
    mem = root / '.agent' / 'memory'
    (mem / 'tattoo.md').write_text(''.join(f'- rule {i}: keep the {i}th convention\n' for i in range(20)))
    lines = ['# Snapshot', '## Goal', 'move the config loader', '## In progress']
    lines += [f'- step {i} in `src/pkg{i % 10}/m{i}.py`' for i in range(100)]
    lines += ['## Decisions'] + [f'- decision {i}: value {i}' for i in range(100)]
    lines += ['## Todo'] + [f'- todo {i}' for i in range(93)]
    (mem / 'snapshot.md').write_text('\n'.join(lines) + '\n')
    (mem / 'notes.md').write_text(''.join(
        f'- 2026-11-30 10:{i % 60:02d} note {i}: something learned about module {i % 200}\n' for i in range(1000)
    ))
    (mem / 'fragments.jsonl').write_text(''.join(json.dumps({
        'id': f'A-{i:03d}', 'at': '2026-11-30T10:00:00Z', 'goal': f'goal {i}',
        'basis': 'read the code', 'action': f'edited m{i}.py', 'result': 'tests pass',
        'next': f'next {i}', 'refs': [],
    }) + '\n' for i in range(1, 501)))
    c.sh(*c.AGITMEM, 'save', cwd=root)
    c.sh(*c.AGITMEM, 'state', 'set', 'current_goal=move the loader', 'next_intent=update imports',
         'current_file=src/pkg0/m0.py', cwd=root)
    return root


def payloads(root: Path) -> tuple[str, str]:
    """Claude Code's PostToolUse (an edit of code) and UserPromptSubmit."""
    edit = json.dumps({
        'session_id': 's', 'transcript_path': None, 'cwd': str(root),
        'hook_event_name': 'PostToolUse', 'tool_name': 'Edit',
        'tool_input': {'file_path': str(root / 'src' / 'pkg0' / 'm0.py')},
    })
    prompt = json.dumps({
        'session_id': 's', 'transcript_path': None, 'cwd': str(root),
        'hook_event_name': 'UserPromptSubmit', 'prompt': 'go on',
    })
    return edit, prompt


def stop_payload(root: Path) -> str:
    """Claude Code's Stop, at the end of every turn."""
    return json.dumps({
        'session_id': 's', 'transcript_path': None, 'cwd': str(root),
        'hook_event_name': 'Stop', 'stop_hook_active': False,
    })


def before_model_payload(root: Path) -> str:
    """Gemini CLI's BeforeModel on a call with no compression behind it
    (nearly every call): a request of 60 messages, about 120 KB of text."""
    messages = [
        {'role': 'user' if i % 2 == 0 else 'model', 'content': f'turn {i}: ' + 'lorem ipsum dolor sit amet ' * 70}
        for i in range(60)
    ]
    return json.dumps({
        'session_id': 's', 'transcript_path': None, 'cwd': str(root),
        'hook_event_name': 'BeforeModel', 'timestamp': '2026-12-01T00:00:00.000Z',
        'llm_request': {'model': 'gemini-3.8-flash', 'messages': messages},
    })


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--runs', type=int, default=15)
    args = parser.parse_args(argv)
    root = realistic_repo()
    edit, prompt = payloads(root)
    m = c.medians({
        'python -c pass': (c.FLOOR_PASS, root, None),
        'python -c "import pygit2"': (c.FLOOR_PYGIT2, root, None),
        'agitmem hook post-edit': (c.launch(['hook', 'post-edit', '--agent', 'claude']), root, edit),
        'agitmem hook prompt': (c.launch(['hook', 'prompt', '--agent', 'claude']), root, prompt),
        'agitmem hook stop': (c.launch(['hook', 'stop', '--agent', 'claude']), root, stop_payload(root)),
        'agitmem hook prompt (Gemini BeforeModel)': (
            c.launch(['hook', 'prompt', '--agent', 'gemini']), root, before_model_payload(root)),
        'agitmem load': ([*c.AGITMEM, 'load'], root, None),
    }, args.runs)
    print(c.table([
        ('agitmem hook post-edit (target <= 2x)', m['agitmem hook post-edit'], 'python -c pass', m['python -c pass']),
        ('agitmem hook prompt (target <= 2x)', m['agitmem hook prompt'], 'python -c pass', m['python -c pass']),
        ('agitmem hook stop (target <= 2x)', m['agitmem hook stop'], 'python -c pass', m['python -c pass']),
        ('agitmem hook prompt, Gemini BeforeModel (target <= 2x)', m['agitmem hook prompt (Gemini BeforeModel)'],
         'python -c pass', m['python -c pass']),
        ('agitmem load (target <= 2.5x)', m['agitmem load'], 'python -c pass', m['python -c pass']),
        ('python -c "import pygit2"', m['python -c "import pygit2"'], 'python -c pass', m['python -c pass']),
    ]))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
