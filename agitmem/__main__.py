from __future__ import annotations

from agitmem.cli import main

if __name__ == '__main__':
    raise SystemExit(main())
