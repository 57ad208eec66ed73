"""Compiling server schemas (toolmesh._core.schema): unusable schemas, RE2 patterns, the fast path."""

from __future__ import annotations

import time
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolmesh._core.schema import compile_schema

REDOS = "^(a+)+$"


def compiled(schema: dict[str, Any], tool: str = "t") -> Any:
    return compile_schema(schema, server="s", tool=tool, what="inputSchema")


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"type": "object", "anyOf": [{"$ref": "#"}]},
        {"$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"},
        {"type": "object", "properties": {"x": {"allOf": [{"$ref": "#/properties/x"}]}}},
        {"type": "object", "properties": [1, 2]},
        {"type": "object", "required": 5},
        {"type": "object", "properties": {"x": {"$ref": "https://example.com/remote.json"}}},
        {"type": "object", "properties": {"x": {"type": "text"}}},
        {"type": "object", "properties": {"x": {"enum": 5}}},
        {"type": "object", "properties": {"x": {"minimum": "1"}}},
        {"type": "object", "properties": {"x": {"items": 5}}},
        {"type": "object", "properties": {"x": {"anyOf": []}}},
        {"type": "object", "$defs": 5},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "required": []},
    ],
)
def test_unusable_schemas_compile_to_none_with_one_warning(
    schema: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    tool = f"t{abs(hash(repr(schema)))}"
    assert compiled(schema, tool) is None
    assert compiled(schema, tool) is None  # cached: not reported again
    found = [r for r in caplog.records if repr(tool) in r.getMessage()]
    assert len(found) == 1 and "'s'" in found[0].getMessage() and "cannot be used" in found[0].getMessage()


def test_a_recursive_tree_schema_is_usable() -> None:
    validator = compiled({"type": "object", "properties": {"child": {"$ref": "#"}}})
    assert validator is not None
    assert validator.problems({"child": {"child": {}}}) == []
    assert validator.problems({"child": {"child": 1}}) == ["child.child: 1 is not of type 'object'"]


@pytest.mark.parametrize("value", ["a" * 40 + "b", "\ud800" + "a" * 40])
def test_patterns_run_on_re2(value: str) -> None:
    validator = compiled(
        {"type": "object", "properties": {"s": {"pattern": REDOS}}, "patternProperties": {REDOS: {"type": "integer"}}}
    )
    assert validator is not None
    start = time.perf_counter()
    problems = validator.problems({"s": value, "a" * 40 + "b": "x"})
    assert time.perf_counter() - start < 5  # a backtracking engine needs about 2**40 steps
    assert problems == ["s: does not match the pattern '^(a+)+$'"]
    assert validator.problems({"s": "aaa", "aaa": "x"}) == ["aaa: 'x' is not of type 'integer'"]


_TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
_property = st.one_of(
    st.sampled_from(_TYPES).map(lambda t: {"type": t, "title": "T"}),
    st.lists(st.sampled_from(_TYPES), min_size=1, max_size=3, unique=True).map(lambda ts: {"type": ts}),
    st.lists(st.sampled_from(_TYPES), min_size=1, max_size=3, unique=True).map(
        lambda ts: {"anyOf": [{"type": t} for t in ts], "default": None}
    ),
)


@st.composite
def _flat_schemas(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from("abcd"), unique=True, max_size=4))
    schema: dict[str, Any] = {"type": "object", "properties": {n: draw(_property) for n in names}}
    schema["required"] = draw(st.lists(st.sampled_from("abcde"), unique=True, max_size=3))
    extra = draw(st.sampled_from([None, True, False]))
    if extra is not None:
        schema["additionalProperties"] = extra
    return schema


@settings(max_examples=300, deadline=None)
@given(schema=_flat_schemas(), value=st.dictionaries(st.sampled_from("abcde"), _json, max_size=5) | _json)
def test_the_fast_path_agrees_with_jsonschema(schema: dict[str, Any], value: Any) -> None:
    validator = compile_schema(schema, server="prop", tool="flat", what="inputSchema")
    assert validator is not None
    expected = jsonschema.Draft202012Validator(schema).is_valid(value)
    assert (validator.problems(value) == []) is expected


_KEYWORDS = ["type", "enum", "minimum", "maxLength", "pattern", "required", "properties", "items", "anyOf", "not"]
_loose = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["string", "object", "a+", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from([*_KEYWORDS, "a", "b"]), inner),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(schema=st.dictionaries(st.sampled_from(_KEYWORDS), _loose, max_size=4), value=_json)
def test_a_schema_that_compiles_never_fails_a_check(schema: dict[str, Any], value: Any) -> None:
    # Malformed keywords make the schema unusable when it is compiled (a row's first call), never a crash in a check.
    validator = compile_schema(schema, server="prop", tool="loose", what="inputSchema")
    if validator is not None:
        validator.problems(value)  # raises SchemaUnusableError if the schema itself fails
