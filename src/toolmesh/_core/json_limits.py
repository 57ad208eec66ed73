"""Bounded JSON reading: how deep untrusted JSON text nests is measured before any object is built.

``json.loads`` recurses once per level of nested arrays and objects: text nested a few
thousand levels deep (a few kilobytes) ends in a ``RecursionError`` half-way through
building the value, and a shallower value deeper than the code after it expects can
still recurse too far later. ``parse_json`` scans the text first and refuses it with
``JsonTooDeep`` when it nests deeper than asked; only then is it parsed.

The scan is linear in the length of the text and never recurses. It works on the UTF-8
bytes with the built-in bytes operations (an escaped backslash or quote cannot end a
string, so those escapes are dropped first; the bytes between unescaped quotes are
string content; the brackets outside strings give the depth): a small document costs a
few ``bytes.count`` calls, a large one at worst about as long as parsing it. Where the
text is not valid JSON the count may be too high, never too low for the part the parser
would read.

Sizes are bounded where the bytes are read (a request body, a reply, a file), before
they are even buffered; this module bounds the nesting.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import accumulate
from typing import Any

__all__ = ["DEFAULT_MAX_DEPTH", "JsonTooDeep", "nesting_exceeds", "parse_json"]

DEFAULT_MAX_DEPTH = 128
"""The deepest nesting of arrays and objects read by default (serde_json's default recursion limit too)."""

_CHUNK = 1 << 16
"""Bytes scanned at a time: bounds the pieces a split makes, and lets a deep text stop early."""

_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_STEP = [0] * 256
for _byte in b"[{":
    _STEP[_byte] = 1
for _byte in b"]}":
    _STEP[_byte] = -1


class JsonTooDeep(ValueError):
    """JSON text refused unparsed: its arrays and objects nest deeper than ``limit`` levels."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the JSON is nested too deeply (more than {limit} levels of arrays and objects)")
        self.limit = limit


def _utf8(text: bytes | bytearray | memoryview | str) -> bytes:
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    return bytes(text)


def nesting_exceeds(text: bytes | bytearray | memoryview | str, max_depth: int) -> bool:
    """Whether JSON ``text`` nests arrays and objects more than ``max_depth`` levels deep.

    Brackets inside strings do not count. Linear time, no recursion; bytes are read as
    UTF-8 (whose multi-byte characters hold no ASCII byte).

    Example:
        >>> nesting_exceeds('{"a": [[1]], "b": "[[[["}', 3), nesting_exceeds('[[[[]]]]', 3)
        (False, True)
    """
    if isinstance(text, str) and text.count("[") + text.count("{") <= max_depth:
        return False  # the common case, small arguments: no copy at all
    raw = _utf8(text)
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return False
    raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")  # now every quote opens or closes a string
    depth = 0
    inside = False
    for start in range(0, len(raw), _CHUNK):
        parts = raw[start : start + _CHUNK].split(b'"')
        outside = b"".join(parts[1 if inside else 0 :: 2]).translate(None, _NOT_BRACKETS)
        if len(parts) % 2 == 0:
            inside = not inside
        opens = outside.count(b"[") + outside.count(b"{")
        if depth + opens > max_depth and max(accumulate(map(_STEP.__getitem__, outside), initial=depth)) > max_depth:
            return True
        depth += 2 * opens - len(outside)
        if depth < 0:
            return False  # a bracket closing nothing: the parser stops there
    return False


def parse_json(
    text: bytes | bytearray | memoryview | str,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """``json.loads(text)``, refused before parsing when it nests deeper than ``max_depth``.

    Bytes must be UTF-8 (RFC 8259 for JSON exchanged between systems).

    Raises:
        JsonTooDeep: nested deeper than ``max_depth`` (a ``ValueError``).
        ValueError: not JSON (``json.JSONDecodeError``), bytes that are not UTF-8
            (``UnicodeDecodeError``), an integer of more digits than Python converts, or
            what ``parse_constant`` raises.
    """
    if nesting_exceeds(text, max_depth):
        raise JsonTooDeep(max_depth)
    decoded = text if isinstance(text, str) else bytes(text).decode("utf-8")
    return json.loads(decoded, parse_constant=parse_constant)
