from __future__ import annotations

import json
import sys

from agitmem import audit
from agitmem import render
from agitmem import store
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError


def show(ctx: Context, spec: str, as_json: bool) -> int:
    pr = store.open_repo(ctx.repo)
    if spec.startswith('archive:'):
        commit = store.resolve(pr, ctx.ref, '@')
        path: str | None = store.find_archive(pr, commit, spec[len('archive:'):])
    else:
        rev, sep, file = spec.partition(':')
        commit = store.resolve(pr, ctx.ref, rev or '@')
        path = store.memory_path(file) if sep else None
    files = store.tree_files(pr, commit.tree)
    audit.log(ctx.repo.agent_dir, 'read show', f'{str(commit.id)[:12]}:{path or ""}')
    if path is None:
        t = store.trailers(commit)
        if as_json:
            print(json.dumps({
                'id': str(commit.id),
                'message': commit.message,
                'date': store.commit_time(commit).isoformat(),
                'event': t.get('Agitmem-Event', ''),
                'files': sorted(files),
            }, indent=2))
        else:
            print(f'memory commit {commit.id}')
            print(f'Date: {store.commit_time(commit).isoformat()}')
            print()
            print(render.text(commit.message.rstrip()))
            print()
            for name in sorted(files):
                print(f'  {render.line(name)}')
        return 0
    if path not in files:
        raise AgitmemError(
            f'no {render.line(path)} in memory at {str(commit.id)[:12]} (files: '
            f'{", ".join(render.line(f) for f in sorted(files) if "/" not in f)})',
        )
    data = files[path]
    if as_json:
        print(json.dumps({
            'id': str(commit.id), 'path': path,
            'content': data.decode('utf-8', 'replace'),
        }, indent=2, ensure_ascii=False))
    else:
        # the file as it is, but what a terminal would act on escaped,
        # always: it may come from a cloned memory ref (a JSON layer stays
        # the same JSON; `git cat-file -p` gives the exact bytes)
        sys.stdout.write(render.controls(data.decode('utf-8', 'surrogateescape')))
    return 0
