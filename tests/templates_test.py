from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_review_workflow_installs_agitmem_from_its_repository() -> None:
    workflow = yaml.safe_load((ROOT / 'templates' / 'github' / 'agitmem-review.yml').read_text())
    source = workflow['env']['AGITMEM_SOURCE']
    assert source.startswith('git+https://') and source.endswith('/agitmem@v0.1.0')
    steps = workflow['jobs']['memory-review']['steps']
    [install] = [s for s in steps if s.get('name') == 'install agitmem']
    assert install['run'] == 'python -m pip install "$AGITMEM_SOURCE"'
    # no step installs a package name from an index
    assert not any('pip install agitmem' in s.get('run', '') for s in steps)
