"""The clients' own session logs, read back as what the hooks would have
seen: prompts, the agent's texts, finished tool calls (as hook payloads,
for agents/tools.py), compactions with their summaries, agitmem's
injections, the ends of turns.

Formats (docs/recovery-audit.md has the sources):

- Claude Code `~/.claude/projects/<cwd, every non-alphanumeric -> '-'>/
  <session>.jsonl`: `user` / `assistant` records (`message.content`
  blocks; `tool_use` answered by a `tool_result` whose record has
  `toolUseResult`), `{"type": "system", "subtype": "compact_boundary"}`
  then a user record `isCompactSummary: true` (older versions: the summary
  record alone), `isSidechain` records are sub-agents', hooks' context in
  `attachment` records (`hook_additional_context`), the end of a turn
  `{"type": "system", "subtype": "stop_hook_summary"}`.
- Codex `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`: `session_meta`
  (cwd, cli_version), `response_item` (messages, `function_call` /
  `custom_tool_call` and their outputs), `compacted` (`payload.message`,
  the summary), `event_msg` (`task_complete`: the end of a turn).
- Gemini CLI `~/.gemini/tmp/<project>/chats/session-*.jsonl`: a metadata
  line, `user` / `gemini` messages (`toolCalls` with their results),
  `{"$set": {"messages": [...]}}` rewrites; a compression is a rewrite
  whose summary (the user turn answered by GEMINI_ACK) was not seen before.
  Older versions wrote one JSON document `session-*.json`.

Logs are untrusted and large: read a line at a time (agents/logread.py),
only lines that can matter parsed, unknown records skipped."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from typing import NamedTuple

from agitmem.agents import logread
from agitmem.agents import transcript

CLIENTS = ('claude', 'codex', 'gemini')
BEGIN = '===== AGENT MEMORY BEGIN ====='
# tool calls waiting for their results, at most (a log that never answers
# them must not grow this)
PENDING = 256
# what of a text is kept: a turn's closing account, a summary
TEXT_CHARS = 64 * 1024


class Item(NamedTuple):
    """One thing the log says happened.  kind: meta (session, version,
    cwd), prompt, text, tool (a hook payload: tool_name, tool_input,
    tool_response), compaction (key, at, trigger), summary, injection,
    end (the agent handed back), new (the user started something else)."""
    kind: str
    data: dict[str, Any]


def _user_request(text: str) -> bool:
    """A user message that is a request: not the client's own context
    (`<environment_context>`, AGENTS.md instructions)."""
    return bool(text.strip()) and not text.lstrip().startswith('<') and not text.startswith('# AGENTS.md')


def _last_request(history: list[Any]) -> str:
    """The last request of the user's in a Codex compaction's kept history:
    a "go on" or "try again" names no work, the request before it does."""
    from agitmem.memory import phrases
    bare = ''
    for m in reversed(history[-200:]):
        m = _dict(m)
        text = _texts(m.get('content'))
        if m.get('type', 'message') == 'message' and m.get('role') == 'user' and _user_request(text):
            if not phrases.goes_on(text):
                return text[:TEXT_CHARS]
            bare = bare or text[:TEXT_CHARS]
    return bare


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: object) -> str:
    return value if isinstance(value, str) else ''


def _texts(content: object, kinds: tuple[str, ...] = ('text', 'input_text', 'output_text')) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return '\n'.join(
            p['text'] for p in content
            if isinstance(p, dict) and isinstance(p.get('text'), str) and p.get('type', 'text') in kinds
        )
    return ''


def _key(text: str) -> str:
    """A compaction's key from a log's text: 'surrogatepass', as JSON's
    \\ud800 decodes to a lone surrogate no codec of utf-8 takes else."""
    import hashlib
    return hashlib.sha1(text.encode('utf-8', 'surrogatepass')).hexdigest()[:16]


def _claude_key(o: dict[str, Any]) -> str | None:
    """The record's uuid; without one, its session and time (copies of
    one compaction in a resumed session's or a crafted log's files are
    one compaction)."""
    uid = o.get('uuid')
    if isinstance(uid, str):
        return f'claude:{uid}'
    at, session = _str(o.get('timestamp')), _str(o.get('sessionId'))
    return f'claude:{_key(session + chr(0) + at)}' if at or session else None


def _block(text: str) -> str | None:
    """agitmem's injection block in `text`, from its first line on."""
    at = text.find(BEGIN)
    return text[at:at + TEXT_CHARS] if at >= 0 else None


def _strings(obj: object, depth: int = 0) -> Iterator[str]:
    """Every string in a record (bounded depth): where a hook's output
    lands differs by client and version."""
    if depth > 12:
        return
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v, depth + 1)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v, depth + 1)


def _injection(obj: object) -> Item | None:
    for s in _strings(obj):
        if BEGIN not in s or s.lstrip().startswith('{'):  # (a hook's JSON output, as text)
            continue
        block = _block(s)
        if block is not None:
            # Gemini CLI escapes < and > in a hook's context
            return Item('injection', {'text': block.replace('&lt;', '<').replace('&gt;', '>')})
    return None


# -- which client wrote a file ---------------------------------------------------

def client_of(first: dict[str, Any]) -> str | None:
    """The client a log's first record says wrote it."""
    if first.get('type') == 'session_meta' or ('payload' in first and 'timestamp' in first and 'type' in first):
        return 'codex'
    if 'instructions' in first and 'id' in first and 'timestamp' in first:
        return 'codex'  # an early Codex rollout: a bare header, then bare items
    if 'sessionId' in first and ('projectHash' in first or 'startTime' in first or 'messages' in first):
        return 'gemini'
    if 'sessionId' in first or first.get('type') in (
            'user', 'assistant', 'system', 'summary', 'queue-operation', 'attachment', 'file-history-snapshot',
    ):
        return 'claude'
    return None


# -- Claude Code -----------------------------------------------------------------

_CLAUDE_SKIP = re.compile(r'\A\s*<(?:local-command-|command-name>|command-message>|command-args>|system-reminder>|bash-)')
_CLAUDE_NEW = re.compile(r'<command-name>/(clear|new|reset)</command-name>')
# the tools agitmem's post-edit hook is installed for (agents/claude.py)
_CLAUDE_TOOLS = frozenset(('Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'Bash'))
_CONTINUED = 'This session is being continued from a previous conversation'


class _Claude:
    def __init__(self) -> None:
        self.pending: dict[str, tuple[str, dict[str, Any]]] = {}
        self.meta = False
        self.boundary = False  # a compact_boundary whose summary record is still to come

    def feed(self, o: dict[str, Any]) -> Iterator[Item]:
        kind = o.get('type')
        if o.get('isSidechain') is True:
            return  # a sub-agent's turn, not the main thread's
        if not self.meta and isinstance(o.get('sessionId'), str):
            # the first records (a queue operation) may lack version and cwd
            self.meta = bool(o.get('version') and o.get('cwd'))
            yield Item('meta', {'session': o['sessionId'], 'version': _str(o.get('version')), 'cwd': _str(o.get('cwd'))})
        if kind == 'system':
            sub = o.get('subtype')
            if sub == 'compact_boundary':
                meta = _dict(o.get('compactMetadata'))
                self.boundary = True
                yield Item('compaction', {'key': _claude_key(o), 'at': _str(o.get('timestamp')), 'trigger': _str(meta.get('trigger'))})
            elif sub == 'stop_hook_summary':
                yield Item('end', {})
            found = _injection(o)
            if found:
                yield found
            return
        if kind == 'attachment':
            att = _dict(o.get('attachment'))
            if str(att.get('type', '')).startswith('hook'):
                found = _injection(att)
                if found:
                    yield found
            return
        message = _dict(o.get('message'))
        content = message.get('content')
        if kind == 'user':
            if o.get('isCompactSummary') is True or (
                    isinstance(content, str) and content.startswith(_CONTINUED) and not o.get('isMeta')
            ):
                if not self.boundary:  # an older version: the summary alone marks it
                    yield Item('compaction', {
                        'key': _claude_key(o),
                        'at': _str(o.get('timestamp')), 'trigger': '',
                    })
                self.boundary = False
                yield Item('summary', {'text': _texts(content)[:TEXT_CHARS]})
                return
            self.boundary = False
            if isinstance(content, list):
                for p in content:
                    if isinstance(p, dict) and p.get('type') == 'tool_result':
                        yield from self._result(o, p)
            text = _texts(content)
            if o.get('isMeta') or not text.strip() or o.get('repeatsCompactSummary'):
                found = _injection(o) if BEGIN in text else None
                if found:
                    yield found
                return
            new = _CLAUDE_NEW.search(text)
            if new:
                yield Item('new', {'why': f'the user ran /{new[1]}'})
                return
            if BEGIN in text:
                found = _injection(o)
                if found:
                    yield found
            if _CLAUDE_SKIP.match(text):
                return
            yield Item('prompt', {'text': text[:TEXT_CHARS], 'at': _str(o.get('timestamp'))})
        elif kind == 'assistant':
            if not isinstance(content, list):
                return
            for p in content:
                if not isinstance(p, dict):
                    continue
                if p.get('type') == 'text' and isinstance(p.get('text'), str) and p['text'].strip():
                    yield Item('text', {'text': p['text'][:TEXT_CHARS]})
                elif p.get('type') == 'tool_use' and isinstance(p.get('id'), str) and isinstance(p.get('name'), str):
                    if len(self.pending) >= PENDING:
                        self.pending.pop(next(iter(self.pending)))
                    self.pending[p['id']] = (p['name'], _dict(p.get('input')))

    def _result(self, o: dict[str, Any], part: dict[str, Any]) -> Iterator[Item]:
        call = self.pending.pop(_str(part.get('tool_use_id')), None)
        if call is None:
            return
        name, tin = call
        if name not in _CLAUDE_TOOLS:
            return  # reads, searches, sub-agents: what the hooks' matcher leaves out
        result = o.get('toolUseResult')
        raw: dict[str, Any] = {'tool_name': name, 'tool_input': tin, 'hook_event_name': 'PostToolUse'}
        if part.get('is_error') is True:
            raw['hook_event_name'] = 'PostToolUseFailure'
            raw['error'] = _texts(part.get('content')) if not isinstance(part.get('content'), str) else part['content']
            if name in ('Edit', 'Write', 'MultiEdit', 'NotebookEdit'):
                return  # the edit did not happen
        else:
            raw['tool_response'] = result if isinstance(result, dict) else {'stdout': _texts(part.get('content'))}
        path = tin.get('file_path') or tin.get('notebook_path')
        after = None
        if isinstance(result, dict):
            after = _claude_after(name, tin, result)
        yield Item('tool', {'raw': raw, 'paths': (path,) if isinstance(path, str) else (), 'after': after})


def _claude_after(name: str, tin: dict[str, Any], result: dict[str, Any]) -> str | None:
    """The file's text after an edit, where the log has it: a Write's
    content, an Edit's or MultiEdit's `originalFile` with the edits made."""
    if name == 'Write':
        content = tin.get('content')
        return content if isinstance(content, str) else None
    original = result.get('originalFile')
    if not isinstance(original, str):
        return None
    pairs = [(tin.get('old_string'), tin.get('new_string'), tin.get('replace_all'))] if name == 'Edit' else [
        (e.get('old_string'), e.get('new_string'), e.get('replace_all')) for e in tin.get('edits') or () if isinstance(e, dict)
    ]
    text = original
    for old, new, every in pairs:
        if not isinstance(old, str) or not isinstance(new, str) or not old:
            return None
        text = text.replace(old, new) if every is True else text.replace(old, new, 1)
    return text


# -- Codex -------------------------------------------------------------------------

_CODEX_ITEMS = frozenset((
    'message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output',
    'local_shell_call', 'local_shell_call_output', 'reasoning',
))
_CODEX_CODE = re.compile(r'(?m)^(?:Exit code: |Process exited with code )(\d+)')
_CODEX_OUTPUT = re.compile(r'(?ms)^Output:\n?(.*)\Z')


class _Codex:
    def __init__(self) -> None:
        self.pending: dict[str, tuple[str, Any]] = {}
        self.meta = False
        self.last_prompt: str | None = None

    def feed(self, o: dict[str, Any]) -> Iterator[Item]:
        kind = o.get('type')
        if 'payload' not in o:
            if 'instructions' in o and not self.meta:  # an early rollout's header
                self.meta = True
                yield Item('meta', {'session': _str(o.get('id')), 'version': '', 'cwd': ''})
                return
            if kind in _CODEX_ITEMS:  # an early rollout's bare item
                o = {'type': 'response_item', 'payload': o}
                kind = 'response_item'
        p = _dict(o.get('payload'))
        if kind == 'session_meta':
            if not self.meta:
                self.meta = True
                sid = p.get('id') or p.get('session_id')
                yield Item('meta', {'session': _str(sid), 'version': _str(p.get('cli_version')), 'cwd': _str(p.get('cwd'))})
            return
        if kind == 'compacted':
            message = _str(p.get('message'))
            key = 'codex:' + _key(_str(o.get('timestamp')) + message)
            # a remote compaction's summary is sealed (an empty message); the
            # history it keeps holds the user's requests, the last one in flight
            history = p.get('replacement_history')
            request = '' if message.strip() or not isinstance(history, list) else _last_request(history)
            yield Item('compaction', {'key': key, 'at': _str(o.get('timestamp')), 'trigger': '', 'request': request})
            yield Item('summary', {'text': message[:TEXT_CHARS]})
            return
        if kind == 'event_msg':
            if p.get('type') in ('task_complete', 'turn_aborted'):
                yield Item('end', {})
            return
        if kind != 'response_item':
            return
        ptype = p.get('type')
        if ptype == 'message':
            role = p.get('role')
            text = _texts(p.get('content'))
            if BEGIN in text:
                found = _injection(p)
                if found:
                    yield found
                return
            if role == 'assistant' and text.strip():
                yield Item('text', {'text': text[:TEXT_CHARS]})
            elif role == 'user' and _user_request(text):
                yield Item('prompt', {'text': text[:TEXT_CHARS], 'at': _str(o.get('timestamp'))})
        elif ptype in ('function_call', 'custom_tool_call', 'local_shell_call'):
            cid = _str(p.get('call_id') or p.get('id'))
            args: Any = p.get('arguments') if ptype == 'function_call' else p.get('input') if ptype == 'custom_tool_call' else p.get('action')
            if len(self.pending) >= PENDING:
                self.pending.pop(next(iter(self.pending)))
            self.pending[cid] = (_str(p.get('name')) or 'shell', args)
        elif ptype in ('function_call_output', 'custom_tool_call_output', 'local_shell_call_output'):
            call = self.pending.pop(_str(p.get('call_id')), None)
            if call is not None:
                yield from self._tool(*call, p.get('output'))

    def _tool(self, name: str, args: Any, output: object) -> Iterator[Item]:
        if name == 'exec' and isinstance(args, str) and 'tools.' in args:
            yield from _scripted(args, output)
            return
        if name == 'apply_patch' and isinstance(args, str):
            yield Item('tool', {'raw': {'tool_name': 'apply_patch', 'tool_input': {'command': args}}, 'paths': ()})
            return
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except (ValueError, RecursionError):
                return
        args = _dict(args)
        command = args.get('cmd') if 'cmd' in args else args.get('command')
        if isinstance(command, list):
            words = [w for w in command if isinstance(w, str)]
            if words[:1] == ['apply_patch'] and len(words) > 1:
                # its paths are relative to the call's workdir, where it has one
                yield Item('tool', {
                    'raw': {'tool_name': 'apply_patch', 'tool_input': {'command': words[1]}}, 'paths': (),
                    'cwd': _str(args.get('workdir')),
                })
                return
            # ["bash", "-lc", "the command"]: the command
            command = words[-1] if len(words) >= 3 and words[1] in ('-lc', '-c') else ' '.join(words)
        if not isinstance(command, str) or not command.strip():
            return
        text = _str(output)
        if isinstance(output, dict) or text.lstrip().startswith('{'):
            try:
                doc = output if isinstance(output, dict) else json.loads(text)
            except (ValueError, RecursionError):
                doc = None
            if isinstance(doc, dict):
                code = _dict(doc.get('metadata')).get('exit_code')
                out = _str(doc.get('output'))
                yield Item('tool', {'run': (command, code if isinstance(code, int) else None, out)})
                return
        m = _CODEX_CODE.search(text[:4096])
        said = _CODEX_OUTPUT.search(text)
        yield Item('tool', {'run': (command, int(m[1]) if m else None, said[1] if said else text)})


# Codex's scripted tool (`exec`): a script whose calls are the tools
# (`tools.exec_command({cmd: "go test ./..."})`, `tools.apply_patch(patch)`);
# read, never run: the commands' and patches' string literals are taken
# from its text.  Bounded: the first SCRIPT_CHARS of it.
SCRIPT_CHARS = 65536
_LITERAL = r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\''
_SCRIPT_CMD = re.compile(rf'\btools\.exec_command\s*\(\s*\{{[^{{}}]*?\bcmd\s*:\s*({_LITERAL})')
_SCRIPT_PATCH = re.compile(r'"\*\*\* Begin Patch(?:[^"\\]|\\.)*"')
_SCRIPT_HEAD = re.compile(r'\A(?:Script \w+[^\n]*\n)?(?:Wall time[^\n]*\n)?(?:Output:\n)?')
_SCRIPT_CODE = re.compile(r'"exit_code"\s*:\s*(\d+)')


def _literal(text: str) -> str | None:
    """A JS string literal's value (double- or single-quoted), or None."""
    body = text[1:-1]
    if text[0] == "'":
        body = re.sub(r"\\'", "'", body).replace('"', '\\"')
    try:
        value = json.loads(f'"{body}"')
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def _scripted(script: str, output: object) -> Iterator[Item]:
    """The commands and patches of one scripted call; its output is the
    one command's (its exit code where the script printed it), else no
    command's own: unknown."""
    script = script[:SCRIPT_CHARS]
    for m in _SCRIPT_PATCH.finditer(script):
        patch = _literal(m[0])
        if patch:
            yield Item('tool', {'raw': {'tool_name': 'apply_patch', 'tool_input': {'command': patch}}, 'paths': ()})
    commands = [c for c in (_literal(m[1]) for m in _SCRIPT_CMD.finditer(script)) if c and c.strip()]
    text = _SCRIPT_HEAD.sub('', _texts(output))
    for command in commands:
        if len(commands) > 1:
            yield Item('tool', {'run': (command, None, '')})
            continue
        code = _SCRIPT_CODE.search(text[:4096]) or _CODEX_CODE.search(text[:4096])
        yield Item('tool', {'run': (command, int(code[1]) if code else None, text)})


# -- Gemini CLI ----------------------------------------------------------------------

_WORKSPACE = re.compile(r'Workspace Directories:\**\s*\n\s*-\s*(\S[^\n]*)|working in the directory:?\s*(?:`|\*\*)?([^\n`*]+)')
_HOOK_CONTEXT = re.compile(r'(?s)<hook_context>.*?</hook_context>')
_GEMINI_EDITS = frozenset(('replace', 'write_file', 'edit', 'smart_edit'))
_GEMINI_SHELL = frozenset(('run_shell_command', 'shell'))


class _Gemini:
    def __init__(self) -> None:
        self.meta = False
        self.seen: set[str] = set()  # summaries seen: a rewrite repeats them
        self.calls: set[str] = set()  # tool calls reported: a message is re-appended
        self.said: set[str] = set()  # ids of messages whose text was reported
        self.cwd = ''

    def feed(self, o: dict[str, Any]) -> Iterator[Item]:
        if not self.meta and isinstance(o.get('sessionId'), str):
            self.meta = True
            yield Item('meta', {'session': o['sessionId'], 'version': '', 'cwd': ''})
        messages = _dict(o.get('$set')).get('messages')
        if isinstance(messages, list):
            yield from self._rewrite(messages, _str(_dict(o.get('$set')).get('lastUpdated')))
            return
        if isinstance(o.get('messages'), list):  # an older version's whole-session document
            for m in o['messages']:
                if isinstance(m, dict):
                    yield from self.feed(m)
            return
        yield from self._message(o)

    def _rewrite(self, messages: list[Any], at: str) -> Iterator[Item]:
        if not self.cwd and messages and isinstance(messages[0], dict):
            # the preamble names the workspace: edits' paths are relative to it
            m = _WORKSPACE.search(_texts(messages[0].get('content'))[:8192])
            if m:
                self.cwd = (m[1] or m[2]).strip()
                yield Item('meta', {'session': '', 'version': '', 'cwd': self.cwd})
        for before, after in zip(messages, messages[1:]):
            if not (isinstance(before, dict) and isinstance(after, dict)):
                continue
            if before.get('type') == 'user' and after.get('type') == 'gemini' and \
                    _texts(after.get('content')).strip() == transcript.GEMINI_ACK:
                summary = _texts(before.get('content'))
                key = f'gemini:{_key(summary)}'
                if key in self.seen:
                    continue
                self.seen.add(key)
                yield Item('compaction', {'key': key, 'at': _str(before.get('timestamp')) or at, 'trigger': ''})
                yield Item('summary', {'text': summary[:TEXT_CHARS]})
        # the messages themselves were seen as they were appended

    def _message(self, o: dict[str, Any]) -> Iterator[Item]:
        kind = o.get('type')
        mid = _str(o.get('id'))
        text = _texts(o.get('content'))
        if kind == 'user':
            if mid and mid in self.said:
                return
            self.said.add(mid)
            if BEGIN in text:
                found = _injection(o)
                if found:
                    yield found
                # the prompt the block was put before
                text = _HOOK_CONTEXT.sub('', text).split('===== AGENT MEMORY END =====', 1)[-1]
            if text.strip() and not text.lstrip().startswith('<session_context>'):
                if text.strip().startswith('/'):
                    word = text.strip().split()[0]
                    if word in ('/clear', '/new'):
                        yield Item('new', {'why': f'the user ran {word}'})
                    return
                yield Item('prompt', {'text': text[:TEXT_CHARS], 'at': _str(o.get('timestamp'))})
        elif kind == 'gemini':
            if text.strip() and text.strip() != transcript.GEMINI_ACK and (not mid or mid not in self.said):
                self.said.add(mid)
                yield Item('text', {'text': text[:TEXT_CHARS]})
            for call in o.get('toolCalls') or ():
                if isinstance(call, dict):
                    yield from self._call(call)

    def _call(self, call: dict[str, Any]) -> Iterator[Item]:
        cid = _str(call.get('id'))
        status = call.get('status')
        if status not in ('success', 'error') or (cid and cid in self.calls):
            return  # not finished yet: it comes again with its result
        self.calls.add(cid)
        name = _str(call.get('name'))
        args = _dict(call.get('args'))
        display = call.get('resultDisplay')
        if name in _GEMINI_SHELL and isinstance(args.get('command'), str):
            output = '\n'.join(
                _str(_dict(_dict(r.get('functionResponse')).get('response')).get('output'))
                for r in call.get('result') or () if isinstance(r, dict)
            )
            raw = {'tool_name': 'run_shell_command', 'tool_input': {'command': args['command']}, 'tool_response': {'llmContent': output}}
            yield Item('tool', {'raw': raw, 'paths': ()})
        elif name in _GEMINI_EDITS and status == 'success':
            path = args.get('file_path') or args.get('absolute_path') or args.get('path')
            disp = _dict(display)
            raw = {'tool_name': 'write_file' if name == 'write_file' else 'replace', 'tool_input': args, 'tool_response': {'returnDisplay': disp}}
            after = disp.get('newContent') if isinstance(disp.get('newContent'), str) else (
                args.get('content') if name == 'write_file' and isinstance(args.get('content'), str) else None
            )
            yield Item('tool', {'raw': raw, 'paths': (path,) if isinstance(path, str) else (), 'after': after})


# -- reading ---------------------------------------------------------------------------

# a line that can matter holds one of these (the rest, most of a log by size,
# is not parsed): Claude's records of a turn, Codex's, Gemini's
_WANTED = (
    b'"user"', b'"assistant"', b'compact_boundary', b'stop_hook_summary', b'isCompactSummary',
    b'"response_item"', b'"compacted"', b'"session_meta"', b'task_complete', b'turn_aborted',
    b'"gemini"', b'"$set"', b'"sessionId"', b'AGENT MEMORY BEGIN',
)
# records that repeat what other records said (Claude Code's copies of each
# API request): never parsed
_COPIES = (b'"type":"api-request', b'"type": "api-request')
# Claude Code records that never matter, by their type near the start of
# the line (hooks' and tools' progress is a large part of a real log)
_NOISE = (b'"type":"progress"', b'"type":"file-history-snapshot"', b'"type":"queue-operation"', b'"type":"api-request')


# a Codex record's type comes first: the ones the audit reads
_CODEX_READ = (
    b'"type":"response_item"', b'"type":"compacted"', b'"type":"session_meta"',
    # an early rollout's bare items
    b'"type":"function_call', b'"type":"custom_tool_call', b'"type":"local_shell_call', b'"type":"message"',
)
_CODEX_ENDS = (b'"task_complete"', b'"turn_aborted"')
_CODEX_SKIP = (b'"type":"turn_context"', b'"type":"world_state"', b'"type":"token_usage_record"')


def _wanted(line: bytes, client: str | None = None) -> bool:
    if client == 'codex':
        head = line[:160].replace(b'": "', b'":"')
        if any(t in head for t in _CODEX_READ):
            return True
        if b'"type":"event_msg"' in head:
            return any(e in line[:400] for e in _CODEX_ENDS)
        if any(t in head for t in _CODEX_SKIP):
            return False
    head = line[:1024]
    if any(n in head for n in _NOISE) or any(c in line[:4096] for c in _COPIES):
        return False
    return any(w in line for w in _WANTED)


def items(path: str, client: str | None = None) -> Iterator[tuple[str, Item]]:
    """(client, item) of each thing the log at `path` records, in order;
    `client` None: told from its first record.  Raises logread.Refused
    for a path that is no regular file."""
    reader: _Claude | _Codex | _Gemini | None = None
    if path.endswith('.json'):  # an older Gemini CLI's whole-session document
        doc = _load(logread.document(path))
        if doc is not None and isinstance(doc.get('messages'), list):
            for item in _Gemini().feed(doc):
                yield 'gemini', item
        return
    for raw in logread.lines(path):
        if reader is None:
            if not raw.strip():
                continue
            first = _load(raw)
            if first is None:
                if client is None:
                    continue  # a damaged first line: the next tells
                first = {}
            client = client or client_of(first)
            if client is None:
                return
            reader = _Claude() if client == 'claude' else _Codex() if client == 'codex' else _Gemini()
            for item in reader.feed(first):
                yield client, item
            continue
        if not _wanted(raw, client):
            continue
        obj = _load(raw)
        if obj is not None:
            for item in reader.feed(obj):
                yield client or '?', item


def _load(raw: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):  # damaged, cut, or nested past the parser's depth
        return None
    return obj if isinstance(obj, dict) else None
