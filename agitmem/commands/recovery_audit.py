"""`agitmem recovery audit [PATH ...] [--client C] [--since DATE] [--json]
[--html FILE]`: the compactions in the clients' own session logs, each
judged as `agitmem recovery` judges the hooks' records.  With no PATH:
this repository's sessions where each client keeps them; with PATHs, any
logs, no repository needed."""
from __future__ import annotations

import datetime
import json
import os
import sys

from agitmem import render
from agitmem.agents import logdirs
from agitmem.agents import logread
from agitmem.errors import AgitmemError
from agitmem.memory import recovery_log
from agitmem.porcelain import log_episodes

CLIENTS = ('claude', 'codex', 'gemini')
_TITLES = {**recovery_log.TITLES, 'unjudgeable': 'unjudgeable'}


def _date(since: str | None) -> datetime.date | None:
    if since is None:
        return None
    try:
        return datetime.date.fromisoformat(since)
    except ValueError:
        raise AgitmemError(f'--since {since}: not a date (YYYY-MM-DD)')


def _root() -> str:
    from agitmem import repo as repo_mod
    out = repo_mod.git('rev-parse', '--show-toplevel', cwd=os.getcwd(), check=False)
    if out.returncode != 0 or not out.stdout.strip():
        raise AgitmemError('recovery audit: not in a git repository; name the logs to read (recovery audit PATH ...)')
    return out.stdout.strip()


def _pct(value: object) -> str:
    return f'{value:5.1f}%' if isinstance(value, (int, float)) else '     -'


def _mask(value: object) -> object:
    """`value` with credentials masked in each string, before it is
    serialized: masking the JSON text instead cut a key block's mask
    short of its escaped newlines, or ran it past the closing quote."""
    from agitmem import secrets
    if isinstance(value, str):
        return secrets.redact(value)
    if isinstance(value, dict):
        return {_mask(k): _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _write(path: str, data: bytes) -> None:
    """The page at `path`: a regular file, created or overwritten, never
    written through a symlink (a cloned repository's page.html may point
    at ~/.bashrc) nor into a FIFO or a device (which would block or never
    end); nothing is truncated before the file is known to be one."""
    import errno
    from agitmem import repo as repo_mod
    where = f'--html {render.line(path)}'
    try:
        fd, _ = repo_mod.open_regular(path, os.O_WRONLY | os.O_CREAT, follow=False)
    except repo_mod.NotRegularFile as e:
        raise AgitmemError(f'{where}: {e.kind}, not a file to write the page to')
    except OSError as e:
        why = {
            errno.ELOOP: 'a symbolic link, not followed',
            errno.ENXIO: 'a FIFO, not a file to write the page to',  # with no reader yet
        }.get(e.errno or 0, e.strerror)
        raise AgitmemError(f'{where}: cannot write: {why}')
    except ValueError as e:  # a NUL in the path
        raise AgitmemError(f'{where}: cannot write: {e}')
    try:
        os.ftruncate(fd, 0)
        with os.fdopen(fd, 'wb') as out:
            out.write(data)
    except OSError as e:
        raise AgitmemError(f'{where}: cannot write: {e.strerror}')


def audit(paths: list[str], client: str | None, since: str | None, as_json: bool, html_file: str | None) -> int:
    if client is not None and client not in CLIENTS:
        raise AgitmemError(f'--client {client}: one of {", ".join(CLIENTS)}')
    if html_file == '':
        # (before the logs are read: not a whole audit then nothing written)
        raise AgitmemError('--html: the name of the page to write is empty')
    date = _date(since)
    for p in paths:
        if not os.path.lexists(p):
            raise AgitmemError(f'recovery audit: {render.line(p)}: no such file or directory')
    if paths:
        files, short = log_episodes.logs_under(paths)
        if short:
            print(f'agitmem: recovery audit: {", ".join(render.line(p) for p in paths)}: {short}; '
                  'the logs found are audited (name the directory that holds them)', file=sys.stderr)
        logs = [(client, f) for f in files]
    else:
        root = _root()
        log_episodes.configure(root)
        logs = [(c, f) for c, f in logdirs.find(root, client)]
    found: list[log_episodes.Found] = []
    seen: set[str] = set()
    skipped = read = 0
    for c, f in logs:
        try:
            result = log_episodes.audit_file(f, c, seen)
        except logread.Refused as e:
            if f in paths:  # named by the user: no log to read there
                raise AgitmemError(f'recovery audit: {render.line(f)}: {e}')
            print(f'agitmem: recovery audit: {render.line(f)}: skipped ({e})', file=sys.stderr)
            skipped += 1
            continue
        if result.client is None or (client is not None and result.client != client):
            continue  # no client's log (a project's own *.jsonl)
        read += 1
        found += result.found
    found = log_episodes.since(found, date)
    if html_file:
        from agitmem.porcelain import audit_page
        text = audit_page.page(found)  # each text from a log masked there
        _write(html_file, text.encode('utf-8', 'backslashreplace'))
    if as_json:
        listed = [
            {
                'file': f.file, 'session': f.session, 'index': f.index, 'timestamp': f.timestamp,
                'client': f.client, 'client_version': f.client_version, 'verdict': f.verdict,
                'evidence': f.evidence, 'agitmem': f.agitmem, 'state_from': f.state_from,
                'first_action': f.first_action,
            }
            for f in found
        ]
        summary = {name: row for name, row in log_episodes.table(found)}
        report = {'compactions': listed, 'summary': summary, 'logs': read, 'skipped': skipped}
        print(json.dumps(_mask(report), indent=2, ensure_ascii=False))
        return 0
    print(f'{len(found)} compaction(s) in {read} session log(s)' + (f' ({skipped} skipped)' if skipped else ''))
    if found:
        head = f'{"":22} {"n":>5} ' + ' '.join(f'{_TITLES[v]:>15}' for v in log_episodes.VERDICTS)
        print(head)
        for name, row in log_episodes.table(found):
            print(f'{render.line(name):22} {row["n"]:>5} ' + ' '.join(f'{_pct(row[v]):>15}' for v in log_episodes.VERDICTS))
    if html_file:
        print(f'page written: {render.line(html_file)}')
    return 0
