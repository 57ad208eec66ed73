"""Tool-call arguments: accepted shapes, and feedback the model can act on when they are wrong.

Every row family uses this one module, so a bad argument reads the same whether the
row is a Python function, a dynamic tool or an MCP server's tool.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from typing import Any

import pydantic

from .errors import ErrorKind, ToolExecutionError
from .json_limits import JsonTooDeep, parse_json
from .problems import field_path, json_type

_NULLISH = frozenset({"", "null"})

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects accepted in arguments (dynamic and MCP rows).

Deeper values are refused before any schema check, which recurses once per level and
would otherwise end in a ``RecursionError``; real tool arguments are far shallower."""
MAX_WIRE_INTEGER = 2**53 - 1
"""The largest integer magnitude sent to an MCP server.

I-JSON (RFC 7493) and the JSON RFC's interoperability note: integers beyond 2**53 - 1
are not exact in the many JSON parsers that read numbers as IEEE-754 doubles, which
include those of the TypeScript SDK's servers. A larger integer would reach the tool
silently changed, so it is refused before the wire; send it as a string instead."""


_MAX_INTEGER_BITS = 13_000
"""Larger integers have more digits than Python turns into text (``sys.get_int_max_str_digits()``,
4,300 by default), which a validator's error message would need."""


_JSON_DEPTH_LIMIT = 200
"""How deep pydantic's JSON parser (jiter) reads nested arrays and objects in a native tool's arguments."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A ``\\uD800``-``\\uDFFF`` escape: valid JSON syntax, but pydantic refuses a lone one as bad JSON."""


def is_empty_arguments(text: str) -> bool:
    """Whether JSON text means "no arguments" (empty, blank or ``null``)."""
    return len(text) < 8 and text.strip() in _NULLISH


def invalid_arguments(tool: str, detail: str, parameters: Mapping[str, Any] | None) -> ToolExecutionError:
    """The ``invalid_arguments`` error for ``tool``, naming what was wrong and what is expected."""
    text = f"Invalid arguments for tool {tool!r}: {detail}"
    if parameters is not None:
        text += f" Expected parameters: {describe_parameters(parameters)}."
    return ToolExecutionError(text, kind=ErrorKind.INVALID_ARGUMENTS)


def not_an_object(tool: str, value: object, parameters: Mapping[str, Any] | None) -> ToolExecutionError:
    """The error for arguments that are valid JSON but not an object."""
    return invalid_arguments(
        tool,
        f"arguments must be a JSON object of named parameters, got {json_type(value)}.",
        parameters,
    )


def parse_object(
    tool: str, arguments: str | Mapping[str, Any] | None, parameters: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Arguments as a dict: JSON text, a mapping or None (``{}``); anything else is an error.

    Raises:
        ToolExecutionError: kind ``invalid_arguments``, for malformed JSON or a non-object.
    """
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        if is_empty_arguments(arguments):
            return {}
        try:
            value = decode_json(arguments)
        except ValueError as exc:
            raise invalid_arguments(tool, f"{exc}.", parameters) from None
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise not_an_object(tool, value, parameters)
        return value
    if isinstance(arguments, Mapping):
        return dict(arguments)
    raise not_an_object(tool, arguments, parameters)


def _short(text: str) -> str:
    return text if len(text) <= 120 else text[:117] + "..."


def unsendable(data: Mapping[str, Any], *, wire: bool) -> str | None:
    """Why arguments cannot be checked or sent, naming the path; None when they can.

    Always: nesting deeper than ``MAX_DEPTH``, and strings or keys that are not valid
    Unicode (lone surrogates such as ``"\\ud800"``, which ``json.loads`` lets through
    from a ``\\ud800`` escape and no UTF-8 encoder takes back). With ``wire`` (arguments
    for an MCP server): NaN and infinities (JSON has no such numbers), integers beyond
    ``MAX_WIRE_INTEGER``, object keys that are not strings, and values that are not JSON
    at all.
    """
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        kind = type(value)
        if kind is str:
            if not value.isascii():
                try:
                    value.encode()
                except UnicodeEncodeError:
                    return f"{field_path(loc)}: the string is not valid Unicode (it has a lone surrogate)"
            continue
        if kind is dict or isinstance(value, Mapping):
            if len(loc) >= MAX_DEPTH:
                return f"{field_path(loc)}: nested too deeply (at most {MAX_DEPTH} levels)"
            for key, item in value.items():
                if not isinstance(key, str):
                    if wire:
                        return f"{field_path(loc)}: object keys must be strings, got {json_type(key)}"
                    key = str(key)
                elif not key.isascii():
                    try:
                        key.encode()
                    except UnicodeEncodeError:
                        return f"{field_path(loc)}: a key is not valid Unicode (it has a lone surrogate)"
                stack.append((item, (*loc, key)))
        elif kind is list or kind is tuple:
            if len(loc) >= MAX_DEPTH:
                return f"{field_path(loc)}: nested too deeply (at most {MAX_DEPTH} levels)"
            stack.extend((item, (*loc, index)) for index, item in enumerate(value))
        elif kind is bool or value is None:
            continue
        elif isinstance(value, int):
            if wire and not -MAX_WIRE_INTEGER <= value <= MAX_WIRE_INTEGER:
                return (
                    f"{field_path(loc)}: the integer is too large to send exactly (at most {MAX_WIRE_INTEGER} in "
                    "magnitude); send it as a string"
                )
            if value.bit_length() > _MAX_INTEGER_BITS:
                return f"{field_path(loc)}: the integer has too many digits to check"
        elif not wire:
            continue
        elif isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                return f"{field_path(loc)}: {value!r} is not a JSON number"
        else:
            return f"{field_path(loc)}: a {type(value).__name__} is not a JSON value"
    return None


_ASCII_SAFE_SCALARS = frozenset({int, float, bool, type(None)})


def plain_ascii(data: Mapping[str, Any]) -> bool:
    """True when ``data`` is one level of ASCII keys and ASCII strings or numbers: nothing ``unsendable`` could refuse
    without ``wire`` but an integer too large (pydantic reads those fine). One loop, one flag test per string;
    anything else is for ``unsendable``.
    """
    for key, value in data.items():
        if type(key) is not str or not key.isascii():
            return False
        kind = type(value)
        if kind is str:
            if not value.isascii():
                return False
        elif kind not in _ASCII_SAFE_SCALARS:
            return False
    return True


def from_validation_error(
    tool: str,
    exc: pydantic.ValidationError,
    arguments: object,
    parameters: Mapping[str, Any],
) -> ToolExecutionError:
    """Condense pydantic's errors into one line per problem, in the model's terms."""
    problems: list[str] = []
    for error in exc.errors(include_url=False, include_input=False):
        kind = error["type"]
        loc = tuple(error["loc"])
        if kind == "json_invalid":
            if "escape" in error["msg"] and isinstance(arguments, str) and _SURROGATE_ESCAPE.search(arguments):
                detail = "a string holds a lone surrogate escape (such as \\ud800), which is not valid Unicode."
                return invalid_arguments(tool, detail, parameters)
            if "recursion limit" in error["msg"]:
                detail = (
                    f"arguments are nested more than {_JSON_DEPTH_LIMIT} levels deep, deeper than they can be "
                    "read; send flatter arguments."
                )
                return invalid_arguments(tool, detail, parameters)
            return invalid_arguments(tool, f"arguments are not valid JSON ({error['msg'][14:]}).", parameters)
        if not loc and kind in ("model_type", "dict_type", "model_attributes_type"):
            value = json.loads(arguments) if isinstance(arguments, str) else arguments
            return not_an_object(tool, value, parameters)
        path = field_path(loc)
        if kind == "missing":
            problems.append(f"{path}: missing required field")
        elif kind == "extra_forbidden":
            problems.append(f"{path}: unknown field")
        else:
            problems.append(f"{path}: {error['msg']}")
    return invalid_arguments(tool, "; ".join(problems) + ".", parameters)


_DESCRIBE_DEPTH = 4


def _json_text(value: object) -> str:
    try:
        return _short(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return "?"


def _type_of(schema: object, defs: Mapping[str, Any], depth: int = 0) -> str:
    """A short type description; bounded, since a server's schema may be malformed or cyclic."""
    if not isinstance(schema, Mapping) or depth > _DESCRIBE_DEPTH:
        return "any"
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        target = defs.get(name)
        return _type_of(target, defs, depth + 1) if isinstance(target, Mapping) else name
    if isinstance(schema.get("enum"), list):
        return "one of " + "/".join(_json_text(v) for v in schema["enum"])
    if "type" in schema:
        kind = schema["type"]
        if kind == "array" and isinstance(schema.get("items"), Mapping):
            return f"array of {_type_of(schema['items'], defs, depth + 1)}"
        return "/".join(map(str, kind)) if isinstance(kind, list) else str(kind)
    if "const" in schema:
        return _json_text(schema["const"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return " or ".join(_type_of(option, defs, depth + 1) for option in schema[key])
    return "any"


def describe_parameters(parameters: Mapping[str, Any]) -> str:
    """A one-line summary of an object schema: ``a (integer, required), b (string)``.

    Never fails: parts of a malformed schema (a server's) read as ``any``.
    """
    properties = parameters.get("properties")
    if not properties or not isinstance(properties, Mapping):
        return "none"
    required = parameters.get("required")
    required = set(required) if isinstance(required, list) and all(isinstance(r, str) for r in required) else set()
    defs = parameters.get("$defs") or parameters.get("definitions")
    defs = defs if isinstance(defs, Mapping) else {}
    parts = []
    for name, schema in properties.items():
        flag = ", required" if name in required else ""
        parts.append(f"{name} ({_type_of(schema, defs)}{flag})")
    return ", ".join(parts)


def _no_constant(name: str) -> Any:
    raise ValueError(f"arguments are not valid JSON: they hold {name}, which JSON does not allow")


def _too_large(exc: ValueError) -> bool:
    return "integer string conversion" in str(exc)


def _digits() -> str:
    return f"an integer with too many digits (more than {sys.get_int_max_str_digits()} digits)"


def decode_json(text: str) -> Any:
    """Parse arguments JSON text; every way it can fail is a ``ValueError`` saying what was wrong.

    Stricter than ``json.loads`` where JSON is: ``NaN`` and ``Infinity`` are refused.
    Text nested deeper than any row reads (200 levels, as pydantic's parser reads a
    native tool's arguments) is refused before it is parsed, and text holding an integer
    Python will not convert (more than ``sys.get_int_max_str_digits()`` digits) with that
    reason instead of the interpreter's advice.

    Raises:
        ValueError: with a message the model can act on.
    """
    try:
        return parse_json(text, max_depth=_JSON_DEPTH_LIMIT, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON ({exc.msg} at position {exc.pos})") from None
    except JsonTooDeep:
        raise ValueError(
            f"arguments are nested too deeply to parse (more than {_JSON_DEPTH_LIMIT} levels); send flatter arguments"
        ) from None
    except ValueError as exc:
        if _too_large(exc):
            raise ValueError(f"arguments hold {_digits()}") from None
        raise


def _plain(value: object) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"a value of type {type(value).__name__} is not JSON")


_OPTIONS: dict[str, Any] = {"separators": (",", ":"), "sort_keys": True, "allow_nan": False, "default": _plain}
_ENCODER = json.JSONEncoder(ensure_ascii=False, **_OPTIONS)
"""``encode_json``'s encoder, made once (``json.dumps`` with options makes one per call)."""
_ASCII_ENCODER = json.JSONEncoder(ensure_ascii=True, **_OPTIONS)
"""The same, escaping every non-ASCII character (for text UTF-8 cannot carry)."""


def _non_finite(value: object) -> str:
    """How JSON text spells a NaN or infinity in ``value``, so both paths name it as ``decode_json`` does."""
    pending = [value]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Mapping):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return "NaN or Infinity"


def encode_json(value: object) -> str:
    """Canonical JSON text of arguments: compact, keys sorted, always valid JSON that UTF-8 can carry.

    Mappings and tuples are taken as objects and arrays. Lone surrogates in strings
    are written as ``\\ud800`` escapes, so the text can be encoded.

    Raises:
        ValueError: for values JSON cannot carry (NaN, Infinity, too many digits, too
            deep, not JSON types, keys that cannot be sorted), saying which.
    """
    try:
        text = _ENCODER.encode(value)
    except RecursionError:
        raise ValueError("arguments are nested too deeply to encode as JSON") from None
    except ValueError as exc:
        if _too_large(exc):
            raise ValueError(f"arguments hold {_digits()}") from None
        if "Out of range float" in str(exc):
            raise ValueError(f"arguments hold {_non_finite(value)}, which JSON does not allow") from None
        raise ValueError(f"arguments cannot be encoded as JSON ({exc})") from None
    except TypeError as exc:
        raise ValueError(f"arguments cannot be encoded as JSON ({exc})") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _ASCII_ENCODER.encode(value)
    return text
