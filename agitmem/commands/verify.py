from __future__ import annotations

import sys

from agitmem.porcelain import verifying
from agitmem.porcelain.context import Context


def _echo(chunk: bytes) -> None:
    sys.stdout.buffer.write(chunk)
    sys.stdout.buffer.flush()


def verify(ctx: Context, cmd: list[str], save: bool) -> int:
    done = verifying.run(ctx, cmd, save=save, echo=_echo)
    print(f'agitmem: verification {done.result} (exit {done.exit_code}): {done.reason}')
    return 0 if done.exit_code == 0 else 1
