"""The `agitmem` program (the console script and `python -m agitmem`):
what the command will wait on from git is begun before the rest of
agitmem imports (agitmem/ahead.py)."""
from __future__ import annotations

import sys

from agitmem import ahead


def main() -> int:
    ahead.begin(sys.argv[1:])
    from agitmem.cli import main as cli_main
    return cli_main()


if __name__ == '__main__':
    raise SystemExit(main())
