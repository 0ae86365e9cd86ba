"""JSON on the hooks' paths, by the standard library's own C scanner and
encoder (`_json`) without the `json` package: `import json` imports `re`
for json.decoder's and json.scanner's patterns, and `re` imports enum,
functools and collections, about 9 ms, two thirds of `python -c pass`, on
every agent hook (docs/benchmarks.md).  The answers are json.loads' and
json.dumps' (tests/jsontext_test.py compares them on hypothesis's
values); an error is json's own JSONDecodeError (json is imported then,
and only then).  Where `_json` is missing (another Python than CPython),
json itself does the work."""
from __future__ import annotations

# not typing's: it is not imported at run time (mypy takes any name
# TYPE_CHECKING as true; agitmem/tuples.py)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover (CPython builds it)
    _json = None  # type: ignore[assignment]

_WHITESPACE = ' \t\n\r'
_CONSTANTS = {'-Infinity': float('-inf'), 'Infinity': float('inf'), 'NaN': float('nan')}


class _Context:
    """What json.decoder.JSONDecoder gives its C scanner, by default."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}

    def __init__(self, parse_constant: Callable[[str], Any]) -> None:
        self.parse_constant = parse_constant


def _error(msg: str, text: str, pos: int) -> ValueError:
    import json
    return json.JSONDecodeError(msg, text, pos)


def _skip(text: str, i: int) -> int:
    return len(text) - len(text[i:].lstrip(_WHITESPACE))


def raw_decode(
        text: str, i: int = 0, parse_constant: Callable[[str], Any] | None = None,
) -> tuple[Any, int]:
    """(the value that begins at `i`, where it ends): json.JSONDecoder's
    raw_decode."""
    return scanner(parse_constant)(text, i)


def scanner(parse_constant: Callable[[str], Any] | None = None) -> Callable[[str, int], tuple[Any, int]]:
    """json.JSONDecoder(parse_constant=...).raw_decode, made once for many
    calls: (the value that begins at i, where it ends), json's error where
    none does."""
    if _json is None:  # pragma: no cover
        import json
        return json.JSONDecoder(parse_constant=parse_constant).raw_decode
    scan = _json.make_scanner(_Context(parse_constant or _CONSTANTS.__getitem__))  # type: ignore[arg-type]

    def value_at(text: str, i: int) -> tuple[Any, int]:
        try:
            return _c(scan, text, i)  # type: ignore[no-any-return]
        except StopIteration as e:
            raise _error('Expecting value', text, e.value) from None
    return value_at


def _c(call: Callable[..., Any], *args: object) -> Any:
    """A call of _json's.  Its errors are json.decoder's JSONDecodeError,
    which the C code looks up in sys.modules without importing it: before
    json.decoder is imported it fails with a SystemError instead.  Then
    json.decoder is imported and the call made again, for json's error."""
    try:
        return call(*args)
    except SystemError:
        import json.decoder  # noqa: F401
        return call(*args)


def _utf8(data: bytes) -> bool:
    """Whether json.detect_encoding would say UTF-8: no byte order mark,
    no NUL in the first two bytes."""
    if data.startswith((b'\xef\xbb\xbf', b'\xff\xfe', b'\xfe\xff')):
        return False
    if len(data) == 2 or len(data) >= 4:
        return bool(data[0] and data[1])
    return True


def loads(text: str | bytes, *, parse_constant: Callable[[str], Any] | None = None) -> Any:
    """json.loads(text, parse_constant=...)."""
    if isinstance(text, bytes) and _utf8(text):
        text = text.decode('utf-8', 'surrogatepass')  # as json.loads decodes it
    if _json is None or not isinstance(text, str):  # UTF-16 or -32: json finds which
        import json
        return json.loads(text, parse_constant=parse_constant)
    return decoder(parse_constant)(text)


def decoder(parse_constant: Callable[[str], Any] | None = None) -> Callable[[str], Any]:
    """json.loads(text, parse_constant=...) for many texts, one scanner
    for them all: each line of a JSONL file its own value (joined into one
    array, lines could pair up: `{"a": 1` and `"b": 2}` read as one object,
    `{...}, {...}` as two)."""
    if _json is None:  # pragma: no cover
        return lambda text: loads(text, parse_constant=parse_constant)
    value_at = scanner(parse_constant)

    def decode(text: str) -> Any:
        if text.startswith('\ufeff'):
            raise _error('Unexpected UTF-8 BOM (decode using utf-8-sig)', text, 0)
        value, end = value_at(text, _skip(text, 0))
        if end != len(text):
            end = _skip(text, end)
            if end != len(text):
                raise _error('Extra data', text, end)
        return value
    return decode


def scanstring(text: str, end: int) -> tuple[str, int]:
    """(the string whose opening quote is before `end`, where it ends):
    json.decoder.scanstring."""
    if _json is None:  # pragma: no cover
        import json.decoder
        return json.decoder.scanstring(text, end)
    return _c(_json.scanstring, text, end)  # type: ignore[no-any-return]


def _default(value: object) -> object:
    raise TypeError(f'Object of type {value.__class__.__name__} is not JSON serializable')


def dumps(
        value: object, *, ensure_ascii: bool = True, sort_keys: bool = False,
        separators: tuple[str, str] = (', ', ': '),
) -> str:
    """json.dumps(value, ensure_ascii=..., sort_keys=..., separators=...)
    (on one line: what writes with an indent uses json)."""
    if _json is None:  # pragma: no cover
        import json
        return json.dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=separators)
    encode = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    if isinstance(value, str):
        return encode(value)
    item, key = separators
    chunks = _json.make_encoder({}, _default, encode, None, key, item, sort_keys, False, True)(value, 0)
    return ''.join(chunks)


# how deep a memory layer's value may nest: json reads up to Python's
# recursion limit (about 1,000), but what shows a value (the injection's
# escaping, repr) recurses a frame or two a level with the caller's frames
# below: 600 deep read fine and then ended on a RecursionError
MAX_DEPTH = 100


def too_deep(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether value nests lists and objects more than limit deep, walked
    level by level (no recursion of its own)."""
    level: list[dict[Any, Any] | list[Any]] = [value] if isinstance(value, (dict, list)) else []
    for _ in range(limit):
        nested = [
            x for v in level for x in (v.values() if isinstance(v, dict) else v)
            if isinstance(x, (dict, list))
        ]
        if not nested:
            return False
        level = nested
    return bool(level)


def where(e: Exception) -> tuple[str, int, int] | None:
    """(json's message, line, column) of a JSONDecodeError; None for
    another error (a number past int's digit limit, bytes that are not
    UTF-8, a RecursionError)."""
    msg, line, col = getattr(e, 'msg', None), getattr(e, 'lineno', None), getattr(e, 'colno', None)
    return (msg, line, col) if isinstance(msg, str) and isinstance(line, int) and isinstance(col, int) else None
