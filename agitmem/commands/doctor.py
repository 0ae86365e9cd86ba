"""`agitmem doctor [--json]`: check the whole setup; for each problem, the
command that fixes it.  Exit 1 when something is wrong (warnings inform)."""
from __future__ import annotations

import json
from dataclasses import asdict

from agitmem import audit
from agitmem import render
from agitmem import repo as repo_mod
from agitmem.errors import CheckFailed
from agitmem.porcelain import doctor as doctor_mod


def doctor(as_json: bool) -> int:
    repo = repo_mod.find()
    findings = doctor_mod.diagnose(repo)
    errors = [f for f in findings if f.level == doctor_mod.ERROR]
    warnings = [f for f in findings if f.level == doctor_mod.WARNING]
    if repo.agent_dir.is_dir():
        audit.log(repo.agent_dir, 'read doctor', f'{len(errors)} errors, {len(warnings)} warnings')
    if as_json:
        print(json.dumps({
            'ok': not errors,
            'findings': [asdict(f) for f in findings],
        }, indent=2))
    else:
        for f in findings:
            # each finding one line, whatever text of a settings file, hook
            # or memory ref its message quotes (rendered there already:
            # controls_line only escapes what is left, a line break)
            print(f'{f.level:8} {f.check:14} {render.controls_line(f.message)}')
            if f.fix and f.level != doctor_mod.OK:
                print(f'{"":24}fix: {render.controls_line(f.fix)}')
        if errors:
            print(f'doctor: {len(errors)} problem(s), {len(warnings)} warning(s)')
        else:
            print(f'doctor: all good ({len(warnings)} warning(s))')
    if errors:
        raise CheckFailed()
    return 0
