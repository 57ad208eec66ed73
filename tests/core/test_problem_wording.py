"""A wrong argument is worded the same whichever row checks it: native (pydantic), dynamic and MCP (jsonschema)."""

from __future__ import annotations

from typing import Any

import pytest

from toolmesh import ToolRegistry
from toolmesh._core.schema import compile_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "inner": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
    "required": ["text", "inner"],
    "additionalProperties": False,
}


async def text_and_inner(arguments: dict[str, Any]) -> str:
    return "ok"


def mcp_problems(value: Any, root: str = "(arguments)") -> list[str]:
    validator = compile_schema(SCHEMA, server="s", tool="t", what="inputSchema")
    assert validator is not None
    return validator.problems(value, root)


def test_jsonschema_names_each_missing_and_each_unknown_field() -> None:
    assert sorted(mcp_problems({"inner": {}, "x": 1, "y": 2})) == [
        "inner.n: missing required field",
        "text: missing required field",
        "x: unknown field",
        "y: unknown field",
    ]
    assert mcp_problems({"text": "a", "inner": {"n": 1}}) == []


def test_other_problems_keep_jsonschema_s_words_cut_to_200_characters() -> None:
    long, short = sorted(mcp_problems({"text": 5, "inner": {"n": "x" * 1000}}))
    assert short == "text: 5 is not of type 'string'"
    assert long.startswith("inner.n: 'xxx") and long.endswith("...")
    assert len(long) == len("inner.n: ") + 200 + 3


def test_the_value_itself_is_named_by_its_root() -> None:
    assert mcp_problems("not an object", "(structuredContent)") == [
        "(structuredContent): 'not an object' is not of type 'object'"
    ]


def test_pattern_properties_leave_jsonschema_s_message_for_extra_fields() -> None:
    schema = {"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": False}
    validator = compile_schema(schema, server="s", tool="t", what="inputSchema")
    assert validator is not None
    (problem,) = validator.problems({"y": 1, "x1": 2}, "(arguments)")
    assert problem.startswith("(arguments): ") and "'y'" in problem and "'x1'" not in problem


@pytest.mark.parametrize("arguments", ['{"inner": {}, "x": 1}', {"inner": {}, "x": 1}])
async def test_a_dynamic_row_words_its_problems_as_a_native_row_does(arguments: Any) -> None:
    registry = ToolRegistry()
    registry.register_dynamic("dyn", SCHEMA, text_and_inner)
    failed = await registry.dispatch("dyn", arguments)
    assert failed.error is not None
    feedback = failed.error.model_feedback
    listed = feedback.split(": ", 1)[1].split(". Expected parameters")[0]
    assert sorted(listed.split("; ")) == [
        "inner.n: missing required field",
        "text: missing required field",
        "x: unknown field",
    ]

    def native(text: str, n: int) -> str:
        return text

    async def native_tool(text: str, n: int) -> str:
        return native(text, n)

    registry.register(native_tool)
    native_failed = await registry.dispatch("native_tool", {"n": 1, "x": 1})
    assert native_failed.error is not None
    assert "text: missing required field; x: unknown field." in native_failed.error.model_feedback


def test_an_optional_parameter_s_problem_names_the_types_or_the_deeper_problem() -> None:
    """SDK servers declare ``x: int | None`` as ``anyOf``: jsonschema alone says "not valid under any"."""
    optional = {
        "type": "object",
        "properties": {
            "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
            "m": {"oneOf": [{"type": "object", "required": ["k"]}, {"type": "null"}]},
        },
    }
    validator = compile_schema(optional, server="s", tool="t", what="inputSchema")
    assert validator is not None
    assert sorted(validator.problems({"n": "ten", "tags": ["x", 5], "m": {"j": 1}}, "(arguments)")) == [
        "m.k: missing required field",
        "n: 'ten' is not of type 'integer' or 'null'",
        "tags[1]: 5 is not of type 'string'",
    ]
    assert validator.problems({"n": None, "tags": None, "m": {"k": 1}}) == []
