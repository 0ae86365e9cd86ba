from __future__ import annotations

import json
import sys

from agitmem import render
from agitmem.porcelain import commits
from agitmem.porcelain.context import Context
from agitmem.errors import AgitmemError


def show(ctx: Context, spec: str, as_json: bool) -> int:
    commit = commits.show(ctx, spec)
    files, path = commit.files, commit.path
    if path is None:
        if as_json:
            print(json.dumps({
                'id': commit.id,
                'message': commit.message,
                'date': commit.date,
                'event': commit.event,
                'files': sorted(files),
            }, indent=2))
        else:
            print(f'memory commit {commit.id}')
            print(f'Date: {commit.date}')
            print()
            print(render.text(commit.message.rstrip()))
            print()
            for name in sorted(files):
                print(f'  {render.line(name)}')
        return 0
    if path not in files:
        raise AgitmemError(
            f'no {render.line(path)} in memory at {commit.id[:12]} (files: '
            f'{", ".join(render.line(f) for f in sorted(files) if "/" not in f)})',
        )
    data = files[path]
    if as_json:
        print(json.dumps({
            'id': commit.id, 'path': path,
            'content': data.decode('utf-8', 'replace'),
        }, indent=2, ensure_ascii=False))
    else:
        # the file as it is, but what a terminal would act on escaped,
        # always: it may come from a cloned memory ref (a JSON layer stays
        # the same JSON; `git cat-file -p` gives the exact bytes)
        sys.stdout.write(render.controls(data.decode('utf-8', 'surrogateescape')))
    return 0
