"""`agitmem recovery audit` over a large synthetic log set, in MB of log
per second, against `wc -l` of the same files in the same run.

    python bench/audit.py [--mb N] [--keep DIR]

The set: Claude Code sessions shaped like the pinned client's logs (an
Edit's record carrying the whole file before it, the CLI's copies of each
API request, attachments, Bash runs, a compaction every ~400 records with
its summary and agitmem's block), plus Codex rollouts and Gemini CLI chats
(10% each).  Issue 38's target: 1 GB in under a minute (~17 MB/s)."""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILE_MB = 32


class _Log:
    """A log file written a JSON record a line, counting its bytes."""

    def __init__(self, path: Path, base: dict[str, object] | None) -> None:
        self.f = open(path, 'w')
        self.base = base or {}
        self.written = 0

    def __enter__(self) -> _Log:
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()

    def put(self, rec: dict[str, object]) -> None:
        line = json.dumps({**self.base, **rec}) + '\n'
        self.f.write(line)
        self.written += len(line)


def _claude(out: Path, n: int, size: int) -> None:
    sid = f'00000000-0000-0000-0000-{n:012d}'
    base = {'sessionId': sid, 'version': '2.1.332', 'cwd': '/w/repo', 'isSidechain': False}
    source = ''.join(f'def f{i}(x):\n    return x + {i}\n\n' for i in range(400))
    k = 0
    with _Log(out, base) as log:
        put = log.put
        while log.written < size:
            k += 1
            t = f'2026-0{1 + k % 9}-1{k % 10}T10:00:{k % 60:02d}Z'
            put({'type': 'user', 'uuid': f'p{k}', 'timestamp': t, 'message': {'role': 'user', 'content': f'port step {k} of the loader'}})
            put({'type': 'api-request-blob', 'hash': str(k), 'content': [{'type': 'text', 'text': source}]})
            put({'type': 'attachment', 'attachment': {'type': 'file', 'content': source}})
            for j in range(3):
                tid = f't{k}-{j}'
                put({'type': 'assistant', 'uuid': f'a{k}{j}', 'message': {'content': [{'type': 'tool_use', 'id': tid, 'name': 'Edit', 'input': {
                    'file_path': '/w/repo/src/app.py', 'old_string': f'    return x + {j}\n', 'new_string': f'    return x - {j}\n'}}]}})
                put({'type': 'user', 'uuid': f'r{k}{j}', 'message': {'content': [{'type': 'tool_result', 'tool_use_id': tid, 'content': 'ok'}]},
                     'toolUseResult': {'originalFile': source, 'structuredPatch': [{'newStart': 3 * j + 2, 'newLines': 1, 'lines': [f'+    return x - {j}']}]}})
            put({'type': 'assistant', 'message': {'content': [{'type': 'tool_use', 'id': f'b{k}', 'name': 'Bash', 'input': {'command': 'pytest -q'}}]}})
            put({'type': 'user', 'message': {'content': [{'type': 'tool_result', 'tool_use_id': f'b{k}', 'is_error': True, 'content': 'Exit code 1\nFAILED tests/test_app.py::test_f - assert 1 == 2\n' * 20}]}})
            put({'type': 'assistant', 'message': {'content': [{'type': 'text', 'text': f'Step {k} is in progress in f{k % 400}.'}]}})
            put({'type': 'system', 'subtype': 'stop_hook_summary'})
            if k % 25 == 0:
                put({'type': 'system', 'subtype': 'compact_boundary', 'uuid': f'c{n}-{k}', 'timestamp': t, 'compactMetadata': {'trigger': 'auto'}})
                put({'type': 'user', 'isCompactSummary': True, 'message': {'content': '1. Primary Request and Intent:\n port the loader\n8. Current Work:\n f1 in src/app.py\n9. Optional Next Step:\n finish f1 in src/app.py\n'}})
                put({'type': 'attachment', 'attachment': {'type': 'hook_additional_context', 'content': [
                    '===== AGENT MEMORY BEGIN =====\n## STATE (step 3)\ncurrent_goal: port the loader\ncurrent_file: src/app.py\ncurrent_symbol: f1\n'
                    'next_intent: finish f1\n===== AGENT MEMORY END =====\n']}})


def _codex(out: Path, n: int, size: int) -> None:
    with _Log(out, None) as log:
        put = log.put
        put({'timestamp': '2026-03-01T00:00:00Z', 'type': 'session_meta', 'payload': {'id': f'c{n}', 'cwd': '/w/repo', 'cli_version': '0.171.0', 'instructions': 'x' * 20000}})
        k = 0
        while log.written < size:
            k += 1
            put({'timestamp': '2026-03-01T00:00:01Z', 'type': 'response_item', 'payload': {'type': 'message', 'role': 'user', 'content': [{'type': 'input_text', 'text': f'step {k}'}]}})
            put({'timestamp': '2026-03-01T00:00:01Z', 'type': 'response_item', 'payload': {'type': 'function_call', 'name': 'exec_command', 'call_id': f'x{k}', 'arguments': json.dumps({'cmd': 'cargo test'})}})
            put({'timestamp': '2026-03-01T00:00:01Z', 'type': 'response_item', 'payload': {'type': 'function_call_output', 'call_id': f'x{k}', 'output': 'Process exited with code 101\nOutput:\n' + 'test result: FAILED\n' * 200}})
            put({'timestamp': '2026-03-01T00:00:01Z', 'type': 'event_msg', 'payload': {'type': 'token_count', 'info': {'x': 'y' * 500}}})
            put({'timestamp': '2026-03-01T00:00:01Z', 'type': 'event_msg', 'payload': {'type': 'task_complete'}})
            if k % 40 == 0:
                put({'timestamp': '2026-03-01T00:00:02Z', 'type': 'compacted', 'payload': {'message': f'summary {k}'}})


def _gemini(out: Path, n: int, size: int) -> None:
    with _Log(out, None) as log:
        put = log.put
        put({'sessionId': f'g{n}', 'projectHash': 'h', 'startTime': '2026-04-01T00:00:00Z'})
        k = 0
        history: list[dict[str, object]] = [{'type': 'user', 'content': [{'text': '<session_context>\n- **Workspace Directories:**\n  - /w/repo\n</session_context>'}]}]
        while log.written < size:
            k += 1
            put({'id': f'u{k}', 'type': 'user', 'content': [{'text': f'step {k}'}]})
            call = {'id': f'call{k}', 'name': 'replace', 'status': 'success', 'args': {'file_path': 'src/app.py', 'old_string': 'a', 'new_string': 'b'},
                    'resultDisplay': {'fileDiff': '@@ -1,1 +1,1 @@\n-a\n+b\n', 'newContent': 'def f():\n    b\n' * 300}}
            put({'id': f'm{k}', 'type': 'gemini', 'content': f'done {k}', 'toolCalls': [call]})
            if k % 40 == 0:
                history = history[:1] + [{'type': 'user', 'content': [{'text': f'<state_snapshot><overall_goal>goal {k}</overall_goal></state_snapshot>'}]},
                                         {'type': 'gemini', 'content': [{'text': 'Got it. Thanks for the additional context!'}]}]
                put({'$set': {'messages': history}})


def make(root: Path, mb: int) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    files = []
    n = 0
    left = mb << 20
    while left > 0:
        size = min(FILE_MB << 20, left)
        kind = ('claude', 'claude', 'claude', 'claude', 'claude', 'claude', 'claude', 'claude', 'codex', 'gemini')[n % 10]
        path = root / f'{kind}-{n:04d}.jsonl'
        {'claude': _claude, 'codex': _codex, 'gemini': _gemini}[kind](path, n, size)
        files.append(path)
        left -= path.stat().st_size
        n += 1
    return files


def _timed(argv: list[str]) -> tuple[float, float, subprocess.CompletedProcess[bytes]]:
    """(wall seconds, CPU seconds of the child, the run): on a shared
    machine the CPU time says what the wall time would be on an idle one."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--mb', type=int, default=1024, help='size of the log set (default 1024)')
    p.add_argument('--keep', metavar='DIR', help='build the set in DIR and keep it')
    args = p.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix='agitmem-bench-audit-'))
    try:
        files = make(root / 'logs', args.mb)
        total = sum(f.stat().st_size for f in files) / (1 << 20)
        wc_s, wc_cpu, _ = _timed(['wc', '-l', *map(str, files)])
        agitmem = [str(Path(sys.executable).parent / 'agitmem')]
        audit_s, audit_cpu, proc = _timed([*agitmem, 'recovery', 'audit', '--json', str(root / 'logs')])
        if proc.returncode != 0:
            print(proc.stderr.decode(errors='replace'), file=sys.stderr)
            return 1
        found = json.loads(proc.stdout)
        print(f'{len(files)} logs, {total:.0f} MB, {len(found["compactions"])} compactions')
        print(f'load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
        print(f'{"":23} {"wall s":>8} {"MB/s":>8} {"CPU s":>8} {"MB/CPU s":>9}')
        for name, wall, cpu in (('wc -l', wc_s, wc_cpu), ('agitmem recovery audit', audit_s, audit_cpu)):
            print(f'{name:23} {wall:8.2f} {total / wall:8.1f} {cpu:8.2f} {total / max(cpu, 1e-3):9.1f}')
        print(f'audit / wc -l: {audit_s / wc_s:.0f}x wall')
        print(f'1 GB at this rate: {1024 * audit_s / total:.0f} s wall, {1024 * audit_cpu / total:.0f} s of CPU (target: under 60 s)')
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == '__main__':
    raise SystemExit(main())
