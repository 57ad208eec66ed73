"""The shape of each keyword of a server's schema node: a quick stand-in for the metaschema.

Validating a schema against the JSON Schema 2020-12 metaschema costs milliseconds (its
``$dynamicRef`` vocabularies), a second per thousand tools at discovery. What toolmesh
needs from it is narrower: that every keyword jsonschema will apply has a value of the
type it expects, so checking a value can never crash on the schema (``properties: [1,
2]``, ``required: 5``, ``type: "text"``). ``keyword_problem`` checks exactly that, per
node, in microseconds; unknown keywords are ignored, as jsonschema ignores them.
Schemas of drafts 3 and 4 (whose keywords differ) still go through their metaschemas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["keyword_problem"]

_TYPE_NAMES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})


def _is_schema(value: Any) -> bool:
    return isinstance(value, dict | bool)


def _schema(value: Any) -> str | None:
    return None if _is_schema(value) else "must be a schema (an object or a boolean)"


def _schemas(value: Any) -> str | None:
    if isinstance(value, list) and value and all(_is_schema(item) for item in value):
        return None
    return "must be a non-empty array of schemas"


def _schema_map(value: Any) -> str | None:
    if isinstance(value, dict) and all(_is_schema(item) for item in value.values()):
        return None
    return "must be an object whose values are schemas"


def _number(value: Any) -> str | None:
    return None if type(value) in (int, float) else "must be a number"


def _positive(value: Any) -> str | None:
    return None if type(value) in (int, float) and value > 0 else "must be a number above 0"


def _count(value: Any) -> str | None:
    if (type(value) is int or (type(value) is float and value.is_integer())) and value >= 0:
        return None
    return "must be a non-negative integer"


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) else "must be a string"


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be a boolean"


def _strings(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return None
    return "must be an array of strings"


def _array(value: Any) -> str | None:
    return None if isinstance(value, list) else "must be an array"


def _type(value: Any) -> str | None:
    names = value if isinstance(value, list) else [value]
    if names and all(isinstance(name, str) and name in _TYPE_NAMES for name in names):
        return None
    return f"must name JSON types ({', '.join(sorted(_TYPE_NAMES))}), got {str(value)[:80]}"


def _items(value: Any) -> str | None:
    if _is_schema(value) or (isinstance(value, list) and all(_is_schema(item) for item in value)):
        return None
    return "must be a schema or an array of schemas"


def _dependent_required(value: Any) -> str | None:
    if isinstance(value, dict) and all(_strings(item) is None for item in value.values()):
        return None
    return "must be an object whose values are arrays of strings"


def _dependencies(value: Any) -> str | None:
    if isinstance(value, dict) and all(_is_schema(item) or _strings(item) is None for item in value.values()):
        return None
    return "must be an object whose values are schemas or arrays of strings"


_SHAPES: dict[str, Callable[[Any], str | None]] = {
    "$ref": _string,
    "$dynamicRef": _string,
    "$recursiveRef": _string,
    "$id": _string,
    "$anchor": _string,
    "$dynamicAnchor": _string,
    "$schema": _string,
    "type": _type,
    "enum": _array,
    "multipleOf": _positive,
    "maximum": _number,
    "minimum": _number,
    "exclusiveMaximum": _number,
    "exclusiveMinimum": _number,
    "maxLength": _count,
    "minLength": _count,
    "maxItems": _count,
    "minItems": _count,
    "maxProperties": _count,
    "minProperties": _count,
    "maxContains": _count,
    "minContains": _count,
    "pattern": _string,
    "format": _string,
    "required": _strings,
    "uniqueItems": _boolean,
    "properties": _schema_map,
    "patternProperties": _schema_map,
    "$defs": _schema_map,
    "definitions": _schema_map,
    "dependentSchemas": _schema_map,
    "dependentRequired": _dependent_required,
    "dependencies": _dependencies,
    "additionalProperties": _schema,
    "additionalItems": _schema,
    "unevaluatedItems": _schema,
    "unevaluatedProperties": _schema,
    "contains": _schema,
    "propertyNames": _schema,
    "not": _schema,
    "if": _schema,
    "then": _schema,
    "else": _schema,
    "items": _items,
    "prefixItems": _schemas,
    "allOf": _schemas,
    "anyOf": _schemas,
    "oneOf": _schemas,
}


_SHAPES_2020 = {**_SHAPES, "items": _schema}
"""Draft 2020-12: ``items`` is one schema (``prefixItems`` took over the array form)."""


def keyword_problem(node: dict[str, Any], *, draft2020: bool) -> str | None:
    """``keyword: what is wrong`` for the first keyword of ``node`` with a value of the wrong shape."""
    shapes = _SHAPES_2020 if draft2020 else _SHAPES
    for keyword, value in node.items():
        shape = shapes.get(keyword)
        if shape is not None:
            problem = shape(value)
            if problem is not None:
                return f"{keyword} {problem}"
    return None
