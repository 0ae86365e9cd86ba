"""Where each client keeps its session logs, and which of them are a
project's (docs/recovery-audit.md).

- Claude Code: `$CLAUDE_CONFIG_DIR` or `~/.claude`, `projects/<the
  project's path with every character but A-Z, a-z, 0-9 made '-'>/*.jsonl`
  (a session started in a subdirectory has that directory's name).
- Codex: `$CODEX_HOME` or `~/.codex`, `sessions/YYYY/MM/DD/rollout-*.jsonl`
  (and `archived_sessions/`), a project's by its `session_meta` cwd.
- Gemini CLI: `$GEMINI_CLI_HOME` (its home) or `~`, `.gemini/tmp/<id>/
  chats/`, `<id>` the name `.gemini/projects.json` gives the project's
  path (0.61), or older, the sha256 of the path, which every chat's first
  record holds as `projectHash`."""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from agitmem.agents import logread

_FIRST_LINE = 1 << 20  # a Codex session_meta line carries its instructions


def _home() -> Path:
    return Path(os.environ.get('HOME') or os.path.expanduser('~'))


def claude_base() -> Path:
    return Path(os.environ.get('CLAUDE_CONFIG_DIR') or _home() / '.claude')


def codex_base() -> Path:
    return Path(os.environ.get('CODEX_HOME') or _home() / '.codex')


def gemini_base() -> Path:
    return Path(os.environ.get('GEMINI_CLI_HOME') or _home()) / '.gemini'


def claude_name(root: str) -> str:
    return re.sub(r'[^A-Za-z0-9]', '-', root)


def _first(path: str) -> dict[str, object]:
    try:
        for line in logread.lines(path, _FIRST_LINE):
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                return {}
            return obj if isinstance(obj, dict) else {}
    except logread.Refused:
        return {}
    return {}


def _within(cwd: object, root: str) -> bool:
    return isinstance(cwd, str) and (cwd == root or cwd.startswith(root.rstrip('/') + '/'))


def _files(d: Path, pattern: str) -> list[str]:
    try:
        return sorted(str(p) for p in d.glob(pattern) if not p.is_symlink() and p.is_file())
    except OSError:
        return []


def claude(root: str) -> list[str]:
    projects = claude_base() / 'projects'
    name = claude_name(root)
    ret = _files(projects / name, '*.jsonl')
    try:
        others = sorted(p for p in projects.iterdir() if p.name.startswith(name + '-') and p.is_dir() and not p.is_symlink())
    except OSError:
        others = []
    for d in others:  # a subdirectory's sessions, or a sibling's of a longer name
        for f in _files(d, '*.jsonl'):
            if _within(_first_cwd(f), root):
                ret.append(f)
    return ret


def _first_cwd(path: str) -> object:
    """The cwd of a Claude Code log's first records (the first may be a
    queue or summary record without one)."""
    try:
        for n, line in enumerate(logread.lines(path, _FIRST_LINE)):
            if n > 20:
                break
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict) and isinstance(obj.get('cwd'), str):
                return obj['cwd']
    except logread.Refused:
        pass
    return None


def codex(root: str) -> list[str]:
    base = codex_base()
    ret = []
    for d in ('sessions', 'archived_sessions'):
        for f in _files(base / d, '**/rollout-*.jsonl'):
            meta = _first(f)
            payload = meta.get('payload') if isinstance(meta.get('payload'), dict) else {}
            assert isinstance(payload, dict)
            if _within(payload.get('cwd'), root):
                ret.append(f)
    return ret


def gemini(root: str) -> list[str]:
    base = gemini_base()
    digest = hashlib.sha256(root.encode('utf-8', 'surrogateescape')).hexdigest()
    names = {digest}
    try:
        projects = json.loads(logread.document(str(base / 'projects.json'), 1 << 20) or b'{}')
        named = projects.get('projects') if isinstance(projects, dict) else None
        if isinstance(named, dict) and isinstance(named.get(root), str):
            names.add(named[root])
    except (logread.Refused, ValueError, RecursionError):
        pass
    ret = []
    for name in sorted(names):
        if '/' in name or name in ('', '.', '..'):
            continue
        for f in _files(base / 'tmp' / name / 'chats', 'session-*.json*'):
            first = _first(f) if f.endswith('.jsonl') else {}
            if f.endswith('.json') or first.get('projectHash') in (None, digest):
                ret.append(f)
    return ret


def find(root: str, client: str | None) -> list[tuple[str, str]]:
    """(client, log file) of every session of the project at `root`."""
    ret: list[tuple[str, str]] = []
    for name, fn in (('claude', claude), ('codex', codex), ('gemini', gemini)):
        if client in (None, name):
            ret += [(name, f) for f in fn(root)]
    return ret
