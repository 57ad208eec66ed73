"""OpenAI strict mode: make a parameters schema strict-compatible, or say it cannot be.

Strict function calling (Structured Outputs) accepts a subset of JSON Schema: every
object lists all its properties in ``required`` and has ``additionalProperties:
false``; optional parameters are expressed as nullable instead; only some keywords
are allowed. ``strict_parameters`` rewrites a schema that way when it can do so
without loosening or dropping a constraint, and returns None otherwise, so the tool
is declared without strict rather than with a schema the API rejects.

The rewrite changes one meaning: an optional parameter becomes required and
nullable, so a strict model sends ``null`` where it would have left the parameter
out. ``drop_optional_nulls`` undoes that on the arguments (the provider modules call
it when ``parse_tool_calls`` is given the catalog), so the tool's default applies.

Reference: https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from toolmesh._core.arguments import decode_json

from ._common import plain

__all__ = ["drop_optional_nulls", "repair_arguments", "strict_parameters"]

logger = logging.getLogger("toolmesh.providers")

_MAX_OBJECT_DEPTH = 10
"""Nesting levels of objects strict mode allows."""

_ALLOWED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "$ref",
        "$defs",
        "definitions",
        "title",
        "description",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
"""Keywords strict mode accepts (``oneOf`` and single ``allOf`` are rewritten first)."""

_ANNOTATIONS = frozenset(
    {"default", "examples", "$comment", "$schema", "deprecated", "readOnly", "writeOnly", "discriminator"}
)
"""Keywords that do not constrain a value; dropped. (``default`` means nothing once every
property is required; ``discriminator`` goes with ``oneOf`` becoming ``anyOf``.)"""

_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})

_KEPT = (
    "enum",
    "const",
    "pattern",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
)
"""Constraints carried over unchanged."""

_JSON_TYPES: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null"}


class _NotStrict(Exception):
    """The schema has no strict-compatible form; the message says why."""


def strict_parameters(parameters: Mapping[str, Any], *, tool: str = "?") -> dict[str, Any] | None:
    """The strict-compatible form of an object schema, or None when there is none.

    Never loosens a constraint: a free-form object, an unsupported keyword (``minLength``,
    ``uniqueItems``, ``not``, ...), an unknown ``format`` or an untyped value means None.
    """
    schema = plain(parameters)
    try:
        if schema.get("type") != "object" or "anyOf" in schema or "oneOf" in schema:
            raise _NotStrict("the root must be a plain object schema")
        return _Strictifier(schema).run()
    except _NotStrict as reason:
        logger.debug("tool %r is declared without strict mode: %s", tool, reason)
        return None


class _Strictifier:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.defs: dict[str, Any] = {}
        for key in ("$defs", "definitions"):
            value = root.get(key)
            if isinstance(value, dict):
                self.defs.update({f"#/{key}/{name}": schema for name, schema in value.items()})
        self.inlining: list[str] = []

    def run(self) -> dict[str, Any]:
        result = self.node(self.root, depth=0)
        for key in ("$defs", "definitions"):
            value = self.root.get(key)
            if isinstance(value, dict):
                result[key] = {name: self.node(schema, depth=0) for name, schema in value.items()}
        return result

    def node(self, schema: Any, depth: int) -> dict[str, Any]:
        if not isinstance(schema, dict):
            raise _NotStrict(f"boolean schema {schema!r}")
        schema = {key: value for key, value in schema.items() if key not in _ANNOTATIONS}
        if "oneOf" in schema:
            if "anyOf" in schema:
                raise _NotStrict("both oneOf and anyOf")
            schema["anyOf"] = schema.pop("oneOf")
        if "allOf" in schema:
            parts = schema.pop("allOf")
            if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], dict):
                raise _NotStrict("allOf of more than one schema")
            if set(parts[0]) & set(schema) - {"title", "description"}:
                raise _NotStrict("allOf that overlaps its siblings")
            schema = {**parts[0], **schema}
        unknown = sorted(set(schema) - _ALLOWED)
        if unknown:
            raise _NotStrict(f"unsupported keyword {unknown[0]!r}")
        if "$ref" in schema:
            return self.ref(schema, depth)
        out: dict[str, Any] = {key: value for key, value in schema.items() if key in ("title", "description")}
        types = schema.get("type")
        if types is None and "properties" in schema:
            types = "object"
        if types is None and ("enum" in schema or "const" in schema):
            values = schema["enum"] if "enum" in schema else [schema["const"]]
            names = sorted({_JSON_TYPES.get(type(value), "") for value in values})
            if "" in names:
                raise _NotStrict("enum of non-scalar values")
            types = names[0] if len(names) == 1 else names
        if types is not None:
            out["type"] = types
        type_set = {types} if isinstance(types, str) else set(types or ())
        out.update({key: schema[key] for key in _KEPT if key in schema})
        if "format" in schema:
            if schema["format"] not in _FORMATS:
                raise _NotStrict(f"format {schema['format']!r}")
            out["format"] = schema["format"]
        if "anyOf" in schema:
            branches = schema["anyOf"]
            if not isinstance(branches, list) or not branches:
                raise _NotStrict("empty anyOf")
            out["anyOf"] = [self.node(branch, depth) for branch in branches]
        if "object" in type_set or "properties" in schema:
            self.object(schema, out, depth + 1)
        elif "additionalProperties" in schema or "required" in schema:
            raise _NotStrict("object keywords on a non-object schema")
        if "array" in type_set or "items" in schema:
            items = schema.get("items")
            if not isinstance(items, dict):
                raise _NotStrict("an array without one items schema")
            out["items"] = self.node(items, depth)
        if "type" not in out and "anyOf" not in out:
            raise _NotStrict("a value without a type")
        return out

    def object(self, schema: dict[str, Any], out: dict[str, Any], depth: int) -> None:
        if depth > _MAX_OBJECT_DEPTH:
            raise _NotStrict(f"objects nested deeper than {_MAX_OBJECT_DEPTH} levels")
        extra = schema.get("additionalProperties", False)
        if extra is not False:
            raise _NotStrict("an object that allows additional properties")
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            raise _NotStrict("an object without properties")
        required = schema.get("required") or []
        if not isinstance(required, list) or set(required) - set(properties):
            raise _NotStrict("required names a property that does not exist")
        converted: dict[str, Any] = {}
        for name, value in properties.items():
            converted[name] = self.node(value, depth)
            # An optional constant (a union's tag) is simply required: it has one value anyway.
            if name not in required and "const" not in converted[name]:
                converted[name] = _nullable(converted[name])
        out["properties"] = converted
        out["required"] = list(converted)
        out["additionalProperties"] = False

    def ref(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        ref = schema["$ref"]
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        if not isinstance(ref, str) or (ref != "#" and ref not in self.defs):
            raise _NotStrict(f"$ref {ref!r} is not a local definition")
        if set(siblings) - {"title", "description"}:
            raise _NotStrict("$ref with constraining siblings")
        if not siblings:
            return {"$ref": ref}
        # Strict mode rejects $ref with siblings; inline the definition instead.
        if ref == "#" or ref in self.inlining:
            raise _NotStrict(f"recursive $ref {ref!r} with a description")
        self.inlining.append(ref)
        try:
            return self.node({**self.defs[ref], **siblings}, depth)
        finally:
            self.inlining.pop()


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts null (unchanged when it already does)."""
    if _plainly_nullable(schema):
        return schema
    if "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    types = schema["type"]
    out = {**schema, "type": [types, "null"] if isinstance(types, str) else [*types, "null"]}
    if "const" in out:
        out["enum"] = [out.pop("const"), None]
    elif "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def _plainly_nullable(schema: Mapping[str, Any]) -> bool:
    types = schema.get("type")
    type_ok = types == "null" or (isinstance(types, list) and "null" in types)
    if "anyOf" in schema:
        return any(isinstance(b, Mapping) and _plainly_nullable(b) for b in schema["anyOf"])
    if "enum" in schema:
        return type_ok and None in schema["enum"]
    if "const" in schema:
        return schema["const"] is None
    return type_ok


# -- arguments --------------------------------------------------------------------


def drop_optional_nulls(arguments: dict[str, Any], parameters: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` without the ``null``s sent for optional parameters that do not accept null.

    Such a null can only mean "not given" (strict mode's way of leaving a parameter
    out), so removing it lets the tool's default apply. Nested objects are handled
    the same way; everything else is left as the model sent it.
    """
    return _Repair(parameters).value(arguments, parameters, 0)  # type: ignore[no-any-return]


def repair_arguments(name: object, arguments: object, schemas: Mapping[str, Mapping[str, Any]] | None) -> object:
    """A call's arguments with ``drop_optional_nulls`` applied when ``schemas`` has the tool.

    JSON text is parsed for that; anything that does not parse to an object is
    returned unchanged, so the call still reports its own problem.
    """
    if schemas is None or not isinstance(name, str) or name not in schemas:
        return arguments
    value = arguments
    if isinstance(arguments, str):
        try:
            value = decode_json(arguments)
        except ValueError:
            return arguments
    if not isinstance(value, dict):
        return arguments
    return drop_optional_nulls(value, schemas[name])


class _Repair:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root

    def resolve(self, schema: Any, depth: int = 0) -> Mapping[str, Any]:
        if not isinstance(schema, Mapping) or depth > 32:
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target: Any = self.root
            if ref != "#":
                if not ref.startswith("#/"):
                    return {}
                for part in ref[2:].split("/"):
                    target = target.get(part) if isinstance(target, Mapping) else None
            return self.resolve(target, depth + 1)
        parts = schema.get("allOf")
        if isinstance(parts, list) and len(parts) == 1:
            return self.resolve(parts[0], depth + 1)
        return schema

    def accepts_null(self, schema: Any, depth: int = 0) -> bool:
        if schema is True or depth > 32:
            return True
        node = self.resolve(schema)
        if not node:
            return True  # an unconstrained (or unresolvable) schema: leave the value alone
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list):
                return any(self.accepts_null(branch, depth + 1) for branch in branches)
        if "const" in node:
            return node["const"] is None
        if "enum" in node:
            return None in node["enum"]
        types = node.get("type")
        if types is None:
            return True
        return types == "null" or (isinstance(types, list) and "null" in types)

    def value(self, value: Any, schema: Any, depth: int) -> Any:
        if depth > 64:
            return value
        node = self.resolve(schema)
        if isinstance(value, dict):
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                required = set(node.get("required") or ())
                result: dict[str, Any] = {}
                for key, item in value.items():
                    optional = key in properties and key not in required
                    if optional and item is None and not self.accepts_null(properties[key]):
                        continue
                    result[key] = self.value(item, properties.get(key), depth + 1) if key in properties else item
                return result
        if isinstance(value, list):
            items = node.get("items")
            if isinstance(items, Mapping):
                return [self.value(item, items, depth + 1) for item in value]
        for key in ("anyOf", "oneOf"):
            branches = node.get(key)
            if isinstance(branches, list) and value is not None:
                real = [b for b in branches if self.resolve(b).get("type") != "null"]
                if len(real) == 1:
                    return self.value(value, real[0], depth + 1)
        return value
