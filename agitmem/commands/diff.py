from __future__ import annotations

import difflib
import json

from agitmem import audit
from agitmem import store
from agitmem.context import Context


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode('utf-8', 'replace').splitlines(keepends=True)


def unified(old: store.Files, new: store.Files) -> list[tuple[str, str, str]]:
    """(path, status, unified diff text) for each file that differs."""
    ret = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        status = 'added' if a is None else 'deleted' if b is None else 'modified'
        text = ''.join(difflib.unified_diff(
            _lines(a), _lines(b),
            '/dev/null' if a is None else f'a/{path}',
            '/dev/null' if b is None else f'b/{path}',
        ))
        if text and not text.endswith('\n'):
            text += '\n\\ No newline at end of file\n'
        ret.append((path, status, text))
    return ret


def diff(ctx: Context, revs: list[str], as_json: bool) -> int:
    pr = store.open_repo(ctx.repo)
    if len(revs) == 2:
        old_c = store.resolve(pr, ctx.ref, revs[0])
        new = store.tree_files(pr, store.resolve(pr, ctx.ref, revs[1]).tree)
    else:
        if revs:
            old_c = store.resolve(pr, ctx.ref, revs[0])
        else:
            old_c = store.base(ctx.repo, pr) or store.resolve(pr, ctx.ref, '@')
        new = store.read_memory(ctx.repo, max_file_kb=ctx.cfg['max_file_kb'])
    old = store.tree_files(pr, old_c.tree)
    changes = unified(old, new)
    audit.log(ctx.repo.agent_dir, 'read diff', f'{" ".join(revs) or "worktree"}: {len(changes)} files')
    if as_json:
        print(json.dumps(
            [{'path': p, 'status': s, 'diff': d} for p, s, d in changes],
            indent=2, ensure_ascii=False,
        ))
    else:
        print(''.join(d for _, _, d in changes), end='')
    return 0
