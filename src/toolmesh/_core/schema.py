"""Server-supplied JSON Schemas, compiled once into validators that are safe on the event loop.

An MCP server's ``inputSchema`` and ``outputSchema`` are untrusted input. A schema is
compiled once per tool, at the row's first call (``McpEntry.input_validator``; not at
discovery, which then costs only the listing), never again after, into a
``SchemaValidator`` whose checks cannot stall the event loop (compiling is bounded too:
``MAX_NODES`` subschemas, RE2 patterns):

* ``pattern`` and ``patternProperties`` run on RE2 (``google-re2``), a linear-time regex
  engine, never on Python's backtracking ``re``: ``^(a+)+$`` against 40 ``a`` and a ``b``
  takes microseconds. A pattern RE2 cannot compile (a back-reference, a look-around) is
  skipped, with a warning naming the server and the tool. ``format`` is never asserted
  (jsonschema's default), so ``format: regex`` runs nothing either.
* ``$ref`` resolves only within the schema document (an empty registry: nothing is
  fetched), and a reference that does not resolve makes the schema unusable.
* A schema that applies itself to the same value without descending into it (``{"$ref":
  "#"}``, a self-containing ``anyOf``) would recurse until Python gives up: it is found
  at compile time and makes the schema unusable.

An unusable schema (a keyword whose value has the wrong shape, like ``properties: [1,
2]`` or ``required: 5``, checked per node by ``_schema_shape``; or one of the above)
breaks neither discovery nor the call: it is reported once (at the first call), with a
warning naming the server, the tool and why, and that tool's values are not checked
locally: the call goes to the server unchecked. Compiled validators are
cached by schema, so a refresh that lists the same schema again neither recompiles nor
warns again. A flat object schema of typed properties (most tools') also gets a fast
path: a few type checks accept a valid value without jsonschema's machinery.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jsonschema
import jsonschema.exceptions
import jsonschema.validators
import re2  # type: ignore[import-untyped]
import referencing
import referencing.jsonschema
from jsonschema.protocols import Validator

from .problems import MAX_PROBLEM_CHARS, schema_problems
from .schema_shape import keyword_problem

__all__ = ["SchemaUnusableError", "SchemaValidator", "compile_schema"]

logger = logging.getLogger("toolmesh.mcp")

MAX_NODES = 20_000
"""The most subschemas one schema may have; a larger one is reported unusable."""
_CACHE_SIZE = 4096

_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_MAPS = ("dependentSchemas", "dependencies")
_DESCEND_ONE = (
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_DESCEND_MAPS = ("properties", "patternProperties")
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")

_OLD_DRAFTS = (jsonschema.Draft3Validator, jsonschema.Draft4Validator)
_DRAFT2020 = jsonschema.Draft202012Validator

_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # failures are reported by toolmesh, once, naming the tool


class SchemaUnusableError(Exception):
    """Checking a value failed because of the schema itself (the server's fault)."""


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _re2(pattern: str) -> Any:
    """``pattern`` compiled with RE2, or None when RE2 cannot compile it."""
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error:
        return None


def _search(pattern: str, text: str) -> bool:
    """Whether RE2 finds ``pattern`` in ``text``; a pattern RE2 cannot compile matches everything."""
    regex = _re2(pattern)
    if regex is None:
        return True
    try:
        return regex.search(text) is not None
    except UnicodeEncodeError:  # a lone surrogate: RE2 works on UTF-8
        return regex.search(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")) is not None


def _pattern(validator: Validator, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and isinstance(pattern, str) and not _search(pattern, instance):
        yield jsonschema.exceptions.ValidationError(f"does not match the pattern {pattern!r}")


def _pattern_properties(validator: Validator, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        if _re2(pattern) is None:
            continue  # RE2 cannot run it: skipped (reported at discovery)
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)  # type: ignore[attr-defined]


@functools.cache
def _safe_class(base: type[Validator]) -> type[Validator]:
    """``base`` with RE2 for ``pattern`` and ``patternProperties``."""
    extended: type[Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        base, {"pattern": _pattern, "patternProperties": _pattern_properties}
    )
    return extended


_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "format"}
)
"""Keywords that never make a value invalid (``format`` is not asserted)."""
_ROOT_ANNOTATIONS = _ANNOTATIONS | {"$schema", "$id", "type", "properties", "required", "additionalProperties"}
_TYPES: Mapping[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: (type(v) is int) or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "array": lambda v: type(v) is list,
    "object": lambda v: type(v) is dict,
}


def _simple_type(schema: Any) -> Callable[[Any], bool] | None:
    """A check for a property schema of only types (``type``, or ``anyOf`` of types) and annotations."""
    if not isinstance(schema, dict):
        return None
    keys = schema.keys() - _ANNOTATIONS
    if keys == {"type"}:
        kind = schema["type"]
        kinds = kind if isinstance(kind, list) else [kind]
        checks = [_TYPES.get(k) for k in kinds if isinstance(k, str)]
        if not checks or None in checks or len(checks) != len(kinds):
            return None
        return lambda v: any(check(v) for check in checks)  # type: ignore[misc]
    if keys == {"anyOf"} and isinstance(schema["anyOf"], list) and schema["anyOf"]:
        options = [_simple_type(option) for option in schema["anyOf"]]
        if None in options:
            return None
        return lambda v: any(option(v) for option in options)  # type: ignore[misc]
    return None


def _fast_path(schema: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """A quick "certainly valid" check for the common flat object schema, or None.

    Most tools take an object of typed properties. For those, a few ``type()`` checks
    say a value is valid without jsonschema's per-keyword machinery (about 30 µs a
    call); a value they do not accept is checked by jsonschema, which alone writes the
    problems. So this may only ever answer True where jsonschema would too.
    """
    if schema.keys() - _ROOT_ANNOTATIONS or schema.get("type", "object") != "object":
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) or extra not in (True, False):
        return None
    checks = {name: _simple_type(sub) for name, sub in properties.items()}
    if None in checks.values() or not all(isinstance(name, str) for name in required):
        return None
    needed = tuple(required)
    closed = extra is False

    def valid(value: Any) -> bool:
        if type(value) is not dict:
            return False
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            check = checks.get(name)
            if check is None:
                if closed:
                    return False
            elif not check(item):
                return False
        return True

    return valid


class SchemaValidator:
    """A compiled server schema: checks values without running any regex on ``re``."""

    __slots__ = ("_fast", "_validator")

    def __init__(self, validator: Validator, fast: Callable[[Any], bool] | None = None) -> None:
        self._validator = validator
        self._fast = fast

    def problems(self, value: Any, root: str = "(root)") -> list[str]:
        """What is wrong with ``value``, one line per problem (``path: message``; ``root`` names the
        value itself); empty when valid. Worded as native tools' problems are (``_problem_text.schema_problems``).

        Raises:
            SchemaUnusableError: when the schema itself makes checking fail.
        """
        if self._fast is not None and self._fast(value):
            return []
        try:
            return schema_problems(self._validator.iter_errors(value), root)
        except RecursionError:
            raise SchemaUnusableError("checking recursed too deeply (the schema refers to itself)") from None
        except Exception as exc:  # an unresolvable reference, a keyword of the wrong type
            raise SchemaUnusableError(f"{type(exc).__name__}: {str(exc)[:MAX_PROBLEM_CHARS]}") from exc


def compile_schema(schema: Mapping[str, Any] | None, *, server: str, tool: str, what: str) -> SchemaValidator | None:
    """The validator of one tool's ``inputSchema`` or ``outputSchema``, or None when unusable.

    Warns (once per distinct schema) naming ``server``, ``tool`` and why, when the schema
    cannot be used or some of its patterns are skipped.

    Args:
        schema: The schema as the server sent it (None: nothing to check).
        server: The server's label, for the warning.
        tool: The server's tool name, for the warning.
        what: ``"inputSchema"`` or ``"outputSchema"``, for the warning.
    """
    if schema is None:
        return None
    try:
        key = json.dumps(schema, sort_keys=True, separators=(",", ":"), default=repr)
    except (ValueError, TypeError, RecursionError):
        logger.warning(
            "MCP server %r, tool %r: its %s cannot be used (it is nested too deeply to read); "
            "its values are not checked locally",
            server,
            tool,
            what,
        )
        return None
    return _compile(key, server, tool, what)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _compile(key: str, server: str, tool: str, what: str) -> SchemaValidator | None:
    schema = json.loads(key)
    problem, skipped = _inspect(schema, any(f'"{keyword}"' in key for keyword in _REFS))
    if problem is not None:
        logger.warning(
            "MCP server %r, tool %r: its %s cannot be used (%s); its values are not checked locally",
            server,
            tool,
            what,
            problem,
        )
        return None
    if skipped:
        logger.warning(
            "MCP server %r, tool %r: its %s has patterns RE2 cannot run (%s); they are not checked",
            server,
            tool,
            what,
            ", ".join(repr(p[:80]) for p in skipped),
        )
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    validator = _safe_class(base)(schema, registry=referencing.Registry())
    fast = _fast_path(schema) if base not in _OLD_DRAFTS else None  # drafts 3/4: 1.0 is no integer
    return SchemaValidator(validator, fast)


def _inspect(schema: Any, has_refs: bool) -> tuple[str | None, list[str]]:
    """Why ``schema`` cannot be used (or None), and the patterns RE2 cannot compile."""
    if not isinstance(schema, dict):
        return f"it is a JSON {type(schema).__name__}, not an object", []
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        if base in _OLD_DRAFTS:  # their keywords differ: their (small) metaschemas say what is valid
            # format_checker=None: the metaschema's "format": "regex" would compile patterns on ``re``
            base.check_schema(schema, format_checker=None)  # type: ignore[arg-type]
        return _walk(schema, has_refs, check_shapes=base not in _OLD_DRAFTS, draft2020=base is _DRAFT2020)
    except jsonschema.exceptions.SchemaError as exc:
        where = "/".join(map(str, exc.absolute_path)) or "the root"
        return f"invalid at {where}: {exc.message[:MAX_PROBLEM_CHARS]}", []
    except RecursionError:
        return "it is nested too deeply", []
    except referencing.exceptions.Unresolvable as exc:
        return f"its reference {str(exc)[:80]} does not resolve within the schema", []
    except Exception as exc:  # referencing choking on a malformed $id or $defs
        return f"its references cannot be followed ({type(exc).__name__}: {str(exc)[:80]})", []


def _walk(
    schema: dict[str, Any], has_refs: bool, *, check_shapes: bool, draft2020: bool
) -> tuple[str | None, list[str]]:
    """Check each node's keywords, resolve every reference, find patterns, and find a
    subschema applied to its own value."""
    resolver: Any = None
    specification: Any = None
    if has_refs:
        specification = referencing.jsonschema.specification_with(
            str(schema.get("$schema", "")), default=referencing.jsonschema.DRAFT202012
        )
        root = specification.create_resource(schema)
        registry: referencing.Registry[Any] = referencing.Registry().with_resource(root.id() or "", root).crawl()
        resolver = registry.resolver(base_uri=root.id() or "")
    in_place: dict[int, list[int]] = {}
    patterns: set[str] = set()
    seen: set[int] = set()
    stack: list[tuple[Any, Any, str]] = [(schema, resolver, "")]
    while stack:
        node, here, where = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > MAX_NODES:
            return f"it has more than {MAX_NODES} subschemas", []
        if check_shapes:
            problem = keyword_problem(node, draft2020=draft2020)
            if problem is not None:
                return f"invalid at {where or 'the root'}: {problem}", []
        if here is not None and node is not schema and "$id" in node:
            here = here.in_subresource(specification.create_resource(node))
        edges: list[tuple[Any, Any, str]] = []
        for keyword in _REFS:
            ref = node.get(keyword)
            if isinstance(ref, str) and here is not None:
                try:
                    resolved = here.lookup(ref)
                except referencing.exceptions.Unresolvable:
                    return f"its {keyword} {ref[:80]!r} does not resolve within the schema", []
                edges.append((resolved.contents, resolved.resolver, ref))
        for keyword in _IN_PLACE_LISTS:
            items = node.get(keyword)
            if isinstance(items, list):
                edges.extend((item, here, f"{where}/{keyword}/{i}") for i, item in enumerate(items))
        edges.extend((node[keyword], here, f"{where}/{keyword}") for keyword in _IN_PLACE_ONE if keyword in node)
        for keyword in _IN_PLACE_MAPS:
            values = node.get(keyword)
            if isinstance(values, dict):
                edges.extend((v, here, f"{where}/{keyword}/{k}") for k, v in values.items() if isinstance(v, dict))
        in_place[id(node)] = [id(child) for child, _, _ in edges if isinstance(child, dict)]
        stack.extend(edges)
        if isinstance(node.get("pattern"), str):
            patterns.add(node["pattern"])
        for keyword in _DESCEND_MAPS:
            values = node.get(keyword)
            if isinstance(values, dict):
                stack.extend((v, here, f"{where}/{keyword}/{k}") for k, v in values.items())
                if keyword == "patternProperties":
                    patterns.update(values)
        stack.extend((node[keyword], here, f"{where}/{keyword}") for keyword in _DESCEND_ONE if keyword in node)
        items = node.get("items")
        if isinstance(items, list):
            stack.extend((item, here, f"{where}/items/{i}") for i, item in enumerate(items))
        elif items is not None:
            stack.append((items, here, f"{where}/items"))
        prefix = node.get("prefixItems")
        if isinstance(prefix, list):
            stack.extend((item, here, f"{where}/prefixItems/{i}") for i, item in enumerate(prefix))
    if _has_cycle(in_place):
        return "a subschema applies itself to the same value ($ref cycle or self-containing anyOf/allOf)", []
    return None, sorted(p for p in patterns if _re2(p) is None)


def _has_cycle(graph: Mapping[int, list[int]]) -> bool:
    """Whether the in-place graph has a cycle (iterative three-colour depth-first search)."""
    done: set[int] = set()
    for start in graph:
        if start in done:
            continue
        path: set[int] = {start}
        stack: list[tuple[int, Iterator[int]]] = [(start, iter(graph.get(start, ())))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.discard(node)
                done.add(node)
            elif child in path:
                return True
            elif child not in done:
                path.add(child)
                stack.append((child, iter(graph.get(child, ()))))
    return False
