"""What a tool event says happened: the shell command run and its exit
status, the lines an edit wrote.  Each client reports these differently
(see docs/clients-*.md); standard library only, on the post-edit path."""
from __future__ import annotations


# typing is not imported at run time: the agent hooks import this module
# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from agitmem.tuples import NamedTuple

SHELL_TOOLS = frozenset(('Bash', 'run_shell_command', 'shell', 'exec_command'))


class ShellRun(NamedTuple):
    command: str
    exit_code: int | None  # None: the client does not say (Codex)
    output: str


class Edit(NamedTuple):
    path: str
    start: int | None  # 1-based lines of the new text; None: not known
    end: int | None
    text: str  # the text written, to find it in the file when lines are unknown
    removed: str = ''  # the text it replaced, where the tool says


# patterns, compiled (and cached by re) the first time an event needs one
# an exit code is at most 10 digits: a longer number in a payload's text is
# none (int() refuses one past 4,300 digits, and no process exits with it)
_CLAUDE_ERROR = r'\AExit code (\d{1,10})(?!\d)\n?'
_CODEX_EXEC = r'(?m)\AExit code: (\d{1,10})\n(?:.*\n)*?Output:\n?'
_GEMINI_EXIT = r'(?m)^Exit Code: (\d{1,10})(?!\d)'
_GEMINI_OUTPUT = r'(?ms)^Output: (.*?)(?=^(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID):|\Z)'
_HUNK = r'(?m)^@@ -\d+(?:,\d+)? \+(\d{1,10})(?:,(\d{1,10}))? @@'

# what a hook examines of a shell's output: its start, where the clients
# write the exit code and a crash shows first, and its end, where test
# runners sum up (a 20 MB output was read whole by every failure pattern:
# 10 s in the post-edit hook, and ten times that for 200 MB)
OUTPUT_HEAD = 256 * 1024
OUTPUT_TAIL = 1024 * 1024


def bounded(text: str) -> str:
    """`text`, or its first and last whole lines within OUTPUT_HEAD and
    OUTPUT_TAIL characters with a line "…" between them."""
    if len(text) <= OUTPUT_HEAD + OUTPUT_TAIL:
        return text
    head = text[:OUTPUT_HEAD]
    tail = text[-OUTPUT_TAIL:]
    # whole lines, where the window holds a line break to cut at
    head = head.rpartition('\n')[0] or head
    tail = tail.partition('\n')[2] or tail
    return f'{head}\n…\n{tail}'


def _command(raw: dict[str, object]) -> str | None:
    tool_input = raw.get('tool_input')
    command = tool_input.get('command') if isinstance(tool_input, dict) else None
    return command if isinstance(command, str) and command.strip() else None


def shell_run(raw: dict[str, object]) -> ShellRun | None:
    """The shell command of a tool event, with its exit code and output."""
    if raw.get('tool_name') not in SHELL_TOOLS:
        return None
    command = _command(raw)
    if command is None:
        return None
    import re  # a shell tool's only: not on an edit's path (agitmem/jsontext.py)
    event = raw.get('hook_event_name')
    response = raw.get('tool_response')
    if event == 'PostToolUseFailure':  # Claude Code: "Exit code N\n<output>"
        error = raw.get('error')
        text = bounded(error) if isinstance(error, str) else ''
        m = re.match(_CLAUDE_ERROR, text)
        if raw.get('is_interrupt') is True:
            return ShellRun(command, None, text)
        return ShellRun(command, int(m[1]) if m else 1, text[m.end():] if m else text)
    if isinstance(response, dict) and 'llmContent' in response:  # Gemini
        content = response.get('llmContent')
        text = bounded(content) if isinstance(content, str) else ''
        text = text.replace('<untrusted_context>\n', '').replace('\n</untrusted_context>', '')
        code = re.search(_GEMINI_EXIT, text)
        out = re.search(_GEMINI_OUTPUT, text)
        output = out[1].strip() if out else text
        return ShellRun(command, int(code[1]) if code else 0, '' if output == '(empty)' else output)
    if isinstance(response, dict):  # Claude Code PostToolUse: it succeeded
        parts = [response.get('stdout'), response.get('stderr')]
        output = '\n'.join(bounded(p) for p in parts if isinstance(p, str) and p)
        return ShellRun(command, None if response.get('interrupted') is True else 0, output)
    if isinstance(response, str):
        response = bounded(response)
        # Codex gives the output alone; its own exec format names the code
        m = re.match(_CODEX_EXEC, response)
        if m:
            return ShellRun(command, int(m[1]), response[m.end():])
        return ShellRun(command, None, response)
    return ShellRun(command, None, '')


def _changed(start: int, body: list[str]) -> list[int]:
    """New-file line numbers a hunk changes: its context lines (" ") are
    not the edit, and a deletion counts at the line that follows it."""
    at, ret = start, []
    for line in body:
        if line.startswith('+'):
            ret.append(at)
            at += 1
        elif line.startswith('-'):
            ret.append(at)
        else:
            at += 1
    return ret


def _span(start: int, count: int, body: list[str]) -> tuple[int, int]:
    changed = _changed(start, body)
    if changed:
        return min(changed), max(changed)
    return start, start + max(count, 1) - 1


def _hunk_lines(diff: str) -> tuple[int, int] | None:
    import re  # here only: not on the hooks' paths (agitmem/jsontext.py)
    spans = []
    heads = list(re.finditer(_HUNK, diff))
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(diff)
        body = diff[m.end():end].split('\n')[1:]
        body = [b for b in body if b[:1] in ('+', '-', ' ')]
        spans.append(_span(int(m[1]), int(m[2] or 1), body))
    if not spans:
        return None
    return min(s for s, _ in spans), max(e for _, e in spans)


_PATCH_HEAD = r'(?m)^\*\*\* .*$'
# of each file's part of a patch, what is read: the edit's text is kept as
# a clip far shorter (a 30 MB patch was read line by line: 4 s)
_BODY_CHARS = 256 * 1024


def _patch_edits(patch: str) -> list[Edit]:
    """Codex apply_patch: each file's added lines (the patch has no line
    numbers: they are found in the file afterwards)."""
    import re  # here only: not on the hooks' paths (agitmem/jsontext.py)
    ret: list[Edit] = []
    heads = list(re.finditer(_PATCH_HEAD, patch))
    for i, m in enumerate(heads):
        line = m[0].rstrip('\r')
        if line.startswith('*** Move to: ') and ret:
            last = ret.pop()
            ret.append(Edit(line[len('*** Move to: '):].strip(), None, None, last.text, last.removed))
            continue
        path = None
        for head in ('*** Update File: ', '*** Add File: '):
            if line.startswith(head):
                path = line[len(head):].strip()
        if path is None:
            continue
        end = heads[i + 1].start() if i + 1 < len(heads) else len(patch)
        body = patch[m.end():end][:_BODY_CHARS].splitlines()
        added = [b[1:] for b in body if b.startswith('+')]
        gone = [b[1:] for b in body if b.startswith('-')]
        ret.append(Edit(path, None, None, '\n'.join(added), '\n'.join(gone)))
    return ret


def edits(raw: dict[str, object], paths: tuple[str, ...]) -> list[Edit]:
    """The edits of a tool event whose written files are `paths`."""
    tool_input = raw.get('tool_input')
    tin = tool_input if isinstance(tool_input, dict) else {}
    response = raw.get('tool_response')
    resp = response if isinstance(response, dict) else {}
    if raw.get('tool_name') == 'apply_patch' and isinstance(tin.get('command'), str):
        return _patch_edits(str(tin['command']))
    if not paths:
        return []
    text = next((v for k in ('new_string', 'content', 'new_source') if isinstance(v := tin.get(k), str)), '')
    lines: tuple[int, int] | None = None
    patch = resp.get('structuredPatch')
    if isinstance(patch, list) and patch:  # Claude Code
        spans = [
            _span(h['newStart'], h.get('newLines', 1), [b for b in h.get('lines') or () if isinstance(b, str)])
            for h in patch
            if isinstance(h, dict) and isinstance(h.get('newStart'), int) and isinstance(h.get('newLines', 1), int)
            and isinstance(h.get('lines', []), list)
        ]
        if spans:
            lines = min(s for s, _ in spans), max(e for _, e in spans)
    display = resp.get('returnDisplay')
    if lines is None and isinstance(display, dict) and isinstance(display.get('fileDiff'), str):
        lines = _hunk_lines(display['fileDiff'])  # Gemini
    removed = tin.get('old_string') if isinstance(tin.get('old_string'), str) else ''
    if isinstance(tin.get('edits'), list):  # MultiEdit
        removed = '\n'.join(e['old_string'] for e in tin['edits'] if isinstance(e, dict) and isinstance(e.get('old_string'), str))
    if lines is None and isinstance(tin.get('edits'), list):
        text = '\n'.join(e['new_string'] for e in tin['edits'] if isinstance(e, dict) and isinstance(e.get('new_string'), str))
    if lines is None and tin.get('content') is not None and raw.get('tool_name') in ('Write', 'write_file'):
        lines = (1, max(text.count('\n') + (0 if text.endswith('\n') else 1), 1))
    if lines is None:
        return [Edit(paths[0], None, None, text, str(removed))]
    return [Edit(paths[0], lines[0], lines[1], text, str(removed))]
