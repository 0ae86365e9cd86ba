"""A token estimate good enough for budgets: ~4 ASCII characters or one CJK
character per token (the seed's rule of thumb; no tokenizer needed)."""
from __future__ import annotations

import math
import re

_WIDE = re.compile(
    '[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff'
    '\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]',
)


def estimate(text: str) -> int:
    wide = len(_WIDE.findall(text))
    return wide + math.ceil((len(text) - wide) / 4)
