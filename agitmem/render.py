"""Untrusted text, made safe to show: the one place that renders memory,
payload and settings text for a terminal and for the injection (DESIGN.md
section 12).

A character a terminal or a reader would act on rather than show is
written as a JSON-style escape, `\\u` and four hex digits (a character
beyond the BMP as its UTF-16 surrogate pair): C0 controls but tab and
newline, DEL, C1 controls (`\\u009b` is a CSI), bidi controls (`\\u202e`),
zero-width and other format characters (`\\u200b`, tag characters), line
and paragraph separators, lone surrogates (bytes that were not UTF-8).
The same escape is valid inside a JSON string, so what is escaped for a
terminal stays valid JSON on stdout.

`text` and `line` are one-to-one: a backslash that would otherwise read as
the start of an escape (before `u`, `x`, another backslash or an
escaped character) is doubled, so the literal text `\\u001b` and a real
ESC never look the same.  Being one-to-one they are not idempotent: each
piece of untrusted text is rendered once, where it is formatted.
`controls` only escapes: it is the idempotent net under whole output
streams (text already rendered, repr()'d or JSON passes unchanged), and
the form for file content (`show REV:FILE`, `diff`, `review`), which it
keeps as it is where nothing needs escaping: a JSON layer stays the same
JSON, its own backslash escapes untouched.

The hooks import this on every edit and prompt: `re` is imported only
when something needs escaping (agitmem/jsontext.py says what it costs).
"""
from __future__ import annotations

# (mypy takes any name TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

# C0 but tab/newline, DEL, C1; Unicode's format characters (Cf: soft
# hyphen, bidi, zero-width, tags...), line/paragraph separators (Zl, Zp),
# surrogates (Cs: undecodable bytes kept by surrogateescape)
_CLASS = (
    '\x00-\x08\x0b-\x1f\x7f-\x9f'
    '\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e'
    '\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f'
    '\ud800-\udfff\ufeff\ufff9-\ufffb'
    '\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3'
    '\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f'
)
# what `text` rewrites: an unsafe character, or a backslash that would
# read as the start of an escape
_PATTERNS = {
    'controls': f'[{_CLASS}]',
    'controls_line': f'[\n{_CLASS}]',
    'text': rf'[{_CLASS}]|\\(?=[ux\\{_CLASS}])',
    'line': rf'[\n{_CLASS}]|\\(?=[ux\\\n{_CLASS}])',
}


_COMPILED: dict[str, re.Pattern[str]] = {}


def _pattern(name: str) -> re.Pattern[str]:
    # compiled on first use (a few ms): most output never needs it
    if name not in _COMPILED:
        import re
        _COMPILED[name] = re.compile(_PATTERNS[name])
    return _COMPILED[name]


def _plain(s: str) -> bool:
    """Nothing to escape: every unsafe character is one str.isprintable()
    refuses (as are tab and newline, which stay), so C speed decides the
    common case."""
    return s.isprintable() or s.replace('\n', '').replace('\t', '').isprintable()


def _escape(c: str) -> str:
    n = ord(c)
    if n == 0x5c:
        return '\\\\'
    if n > 0xffff:
        n -= 0x10000
        return f'\\u{0xd800 + (n >> 10):04x}\\u{0xdc00 + (n & 0x3ff):04x}'
    return f'\\u{n:04x}'


def _sub(m: re.Match[str]) -> str:
    return _escape(m.group())


def text(s: str) -> str:
    """Untrusted text for a terminal or the injection, its lines kept."""
    if '\\' not in s and _plain(s):
        return s
    return _pattern('text').sub(_sub, s)


def line(s: str) -> str:
    """Untrusted text on one line (a value, a name, a subject): a newline
    is escaped too, so it cannot start a forged line."""
    if '\\' not in s and '\n' not in s and _plain(s):
        return s
    return _pattern('line').sub(_sub, s)


def controls(s: str) -> str:
    """Only the unsafe characters escaped, nothing else touched: the net
    under every output stream (idempotent, keeps JSON valid)."""
    return s if _plain(s) else _pattern('controls').sub(_sub, s)


def controls_line(s: str) -> str:
    """`controls`, and a newline escaped: a message that must stay one line."""
    if '\n' not in s and _plain(s):
        return s
    return _pattern('controls_line').sub(_sub, s)


def command(verb: str, *names: str) -> str:
    """`agitmem VERB NAME...` as advice a user can paste: each name quoted
    for the shell, and after `--` when one reads as an option (a branch a
    remote named `-h` or `--output=x` was taken as one by argparse)."""
    import shlex
    words = [shlex.quote(n) for n in names]
    if any(n.startswith('-') for n in names):
        words.insert(0, '--')
    return ' '.join(['agitmem', verb, *words])
