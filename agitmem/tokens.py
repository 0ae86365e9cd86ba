"""A token estimate good enough for budgets: ~4 ASCII characters or one CJK
character per token (the seed's rule of thumb; no tokenizer needed)."""
from __future__ import annotations

# Claude Code moves hook output over 10,000 characters to a file the model
# never reads in full: the injection stays under this, whatever the budget
INJECTION_MAX_CHARS = 9500
# the tattoo's share of it: the rest is the state's (never cut) and the
# block's own lines, so a long tattoo can never push the state out
TATTOO_MAX_CHARS = 6000

_WIDE = (
    '[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff'
    '\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff]'
)


def estimate(text: str) -> int:
    # ASCII text (the common case) has no wide character: no regex to
    # compile (its big character class is a noticeable part of a load)
    if text.isascii():
        wide = 0
    else:
        import re  # here only: re is not imported on load's path (agitmem/jsontext.py)
        wide = len(re.findall(_WIDE, text))
    # a quarter rounded up, in whole numbers (math, a shared library, is
    # not loaded for it on every load)
    return wide - (wide - len(text)) // 4
