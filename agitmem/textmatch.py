"""What the checks' patterns matched, by str's methods: `re` (with the
enum it imports) is a fifth of the pre-commit hook's own run, and the
hook runs at every commit.  Each function is property-tested against the
pattern it replaces (tests/textmatch_test.py)."""
from __future__ import annotations


def is_word(ch: str, also: str = '') -> bool:
    """Whether ch is a character `\\w` matches (str.isalnum()'s, and
    `_`), or one of `also`; False for ''."""
    return bool(ch) and (ch.isalnum() or ch == '_' or ch in also)


def backticked(text: str) -> list[str]:
    """What re.findall(r'`([^`\\n]+)`', text) finds: each backticked
    term, on one line."""
    found = []
    at = text.find('`')
    while at != -1:
        end = text.find('`', at + 1)
        if end == -1:
            break
        term = text[at + 1:end]
        if term and '\n' not in term:
            found.append(term)
            at = text.find('`', end + 1)
        else:
            at = end  # no match begins before the next backtick
    return found


# occurrences of a term looked at one by one before the C regex engine
# takes over: a one-letter symbol in an 8 MB file
_FOUND_MAX = 256


def occurs(text: str, term: str, *, left: bool = True, right: bool = True, also: str = '') -> bool:
    """Whether term occurs in text with no word character (nor one of
    `also`) just before it (when `left`) and just after it (when `right`):
    what `(?<![\\w<also>])<term>(?![\\w<also>])` searched, each side only
    when asked."""
    at = text.find(term)
    seen = 0
    while at != -1:
        end = at + len(term)
        if not (left and at and is_word(text[at - 1], also)) and not (
                right and is_word(text[end:end + 1], also)
        ):
            return True
        seen += 1
        if seen > _FOUND_MAX:
            return _occurs_by_re(text, term, left=left, right=right, also=also, start=at + 1)
        at = text.find(term, at + 1)
    return False


def _occurs_by_re(text: str, term: str, *, left: bool, right: bool, also: str, start: int) -> bool:
    import re
    word = '\\w' + re.escape(also)
    pattern = (f'(?<![{word}])' if left else '') + re.escape(term) + (f'(?![{word}])' if right else '')
    return re.compile(pattern).search(text, start) is not None
