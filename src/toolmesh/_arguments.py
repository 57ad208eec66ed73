"""Tool-call arguments: accepted shapes, and feedback the model can act on when they are wrong.

Every row family uses this one module, so a bad argument reads the same whether the
row is a Python function, a dynamic tool or an MCP server's tool.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

import pydantic

from .errors import ErrorKind, ToolExecutionError

_NULLISH = frozenset({"", "null"})


def is_empty_arguments(text: str) -> bool:
    """Whether JSON text means "no arguments" (empty, blank or ``null``)."""
    return len(text) < 8 and text.strip() in _NULLISH


def _json_type_name(value: object) -> str:
    match value:
        case list():
            return "an array"
        case str():
            return "a string"
        case bool():
            return "a boolean"
        case int() | float():
            return "a number"
        case None:
            return "null"
    return type(value).__name__


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
        f"arguments must be a JSON object of named parameters, got {_json_type_name(value)}.",
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
            value = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise invalid_arguments(
                tool, f"arguments are not valid JSON ({exc.msg} at position {exc.pos}).", parameters
            ) from None
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise not_an_object(tool, value, parameters)
        return value
    if isinstance(arguments, Mapping):
        return dict(arguments)
    raise not_an_object(tool, arguments, parameters)


def _path(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(arguments)"


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
            return invalid_arguments(tool, f"arguments are not valid JSON ({error['msg'][14:]}).", parameters)
        if not loc and kind in ("model_type", "dict_type", "model_attributes_type"):
            value = json.loads(arguments) if isinstance(arguments, str) else arguments
            return not_an_object(tool, value, parameters)
        path = _path(loc)
        if kind == "missing":
            problems.append(f"{path}: missing required field")
        elif kind == "extra_forbidden":
            problems.append(f"{path}: unknown field")
        else:
            problems.append(f"{path}: {error['msg']}")
    return invalid_arguments(tool, "; ".join(problems) + ".", parameters)


def _type_of(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1])
        return _type_of(target, defs) if isinstance(target, Mapping) else str(schema["$ref"]).rsplit("/", 1)[-1]
    if "enum" in schema:
        return "one of " + "/".join(json.dumps(v) for v in schema["enum"])
    if "type" in schema:
        kind = schema["type"]
        if kind == "array" and isinstance(schema.get("items"), Mapping):
            return f"array of {_type_of(schema['items'], defs)}"
        return "/".join(kind) if isinstance(kind, list) else str(kind)
    if "const" in schema:
        return json.dumps(schema["const"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type_of(option, defs) for option in schema[key])
    return "any"


def describe_parameters(parameters: Mapping[str, Any]) -> str:
    """A one-line summary of an object schema: ``a (integer, required), b (string)``."""
    properties = parameters.get("properties") or {}
    if not properties:
        return "none"
    required = set(parameters.get("required") or ())
    defs = parameters.get("$defs") or parameters.get("definitions") or {}
    parts = []
    for name, schema in properties.items():
        flag = ", required" if name in required else ""
        parts.append(f"{name} ({_type_of(schema, defs) if isinstance(schema, Mapping) else 'any'}{flag})")
    return ", ".join(parts)


def _no_constant(name: str) -> Any:
    raise ValueError(f"arguments hold {name}, which JSON does not allow")


def _too_large(exc: ValueError) -> bool:
    return "integer string conversion" in str(exc)


def _digits() -> str:
    return f"an integer with more than {sys.get_int_max_str_digits()} digits"


def decode_json(text: str) -> Any:
    """Parse arguments JSON text; every way it can fail is a ``ValueError`` saying what was wrong.

    Stricter than ``json.loads`` where JSON is: ``NaN`` and ``Infinity`` are refused.
    Text nested too deeply for the parser, or holding an integer Python will not
    convert (more than ``sys.get_int_max_str_digits()`` digits), is refused with that
    reason instead of a ``RecursionError`` or the interpreter's advice.

    Raises:
        ValueError: with a message the model can act on.
    """
    try:
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON ({exc.msg} at position {exc.pos})") from None
    except RecursionError:
        raise ValueError("arguments are nested too deeply to parse") from None
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


def encode_json(value: object) -> str:
    """Canonical JSON text of arguments: compact, keys sorted, always valid JSON that UTF-8 can carry.

    Mappings and tuples are taken as objects and arrays. Lone surrogates in strings
    are written as ``\\ud800`` escapes, so the text can be encoded.

    Raises:
        ValueError: for values JSON cannot carry (NaN, Infinity, too many digits, too
            deep, not JSON types, keys that cannot be sorted), saying which.
    """
    options: dict[str, Any] = {"separators": (",", ":"), "sort_keys": True, "allow_nan": False, "default": _plain}
    try:
        text = json.dumps(value, ensure_ascii=False, **options)
    except RecursionError:
        raise ValueError("arguments are nested too deeply to encode as JSON") from None
    except ValueError as exc:
        if _too_large(exc):
            raise ValueError(f"arguments hold {_digits()}") from None
        if "Out of range float" in str(exc):
            raise ValueError("arguments hold NaN or Infinity, which JSON does not allow") from None
        raise ValueError(f"arguments cannot be encoded as JSON ({exc})") from None
    except TypeError as exc:
        raise ValueError(f"arguments cannot be encoded as JSON ({exc})") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, **options)
    return text
