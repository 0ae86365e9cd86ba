"""`size`: a memory file over `max_file_kb` (save refuses it)."""
from __future__ import annotations

from agitmem.checks import Finding

ID = 'size'


def check(sizes: dict[str, int], *, max_file_kb: int) -> list[Finding]:
    """sizes: shown path -> size in bytes of each memory file."""
    limit = max_file_kb * 1024
    return [
        Finding(
            ID, 'error',
            f'{size / 1024:.0f} KB, over max_file_kb ({max_file_kb} KB); '
            f'trim it (or `agitmem archive` a finished snapshot) or raise '
            f'max_file_kb in .agent/config.yaml',
            path=path,
        )
        for path, size in sizes.items() if size > limit
    ]
