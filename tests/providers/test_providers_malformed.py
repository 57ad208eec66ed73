"""Malformed responses: no parser raises for what the model (or a proxy) wrote, and none makes up calls."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolmesh import ToolCall
from toolmesh.providers import anthropic, gemini, openai, openai_responses

PARSERS: dict[str, Callable[[Any], list[ToolCall]]] = {
    "openai": openai.parse_tool_calls,
    "openai_responses": openai_responses.parse_tool_calls,
    "anthropic": anthropic.parse_tool_calls,
    "gemini": gemini.parse_tool_calls,
}

NOT_LISTS = ["garbage", 42, 4.5, True, {"a": 1}]
JSON_TYPES = {str: "a string", int: "a number", float: "a number", bool: "a boolean", dict: "an object"}
"""How a message names each value's type: as JSON does."""


SHAPES: list[tuple[str, str, Callable[[Any], Any], str]] = [
    ("chat-tool_calls", "openai", lambda v: {"role": "assistant", "tool_calls": v}, "tool_calls"),
    ("chat-choices", "openai", lambda v: {"choices": v}, "choices"),
    ("chat-choice", "openai", lambda v: {"choices": [{"message": {"tool_calls": v}}]}, "tool_calls"),
    ("responses", "openai_responses", lambda v: {"output": v}, "output"),
    ("anthropic", "anthropic", lambda v: {"role": "assistant", "content": v}, "content"),
    ("gemini-candidates", "gemini", lambda v: {"candidates": v}, "candidates"),
    ("gemini-parts", "gemini", lambda v: {"candidates": [{"content": {"parts": v}}]}, "parts"),
    ("gemini-content", "gemini", lambda v: {"parts": v}, "parts"),
]
NOT_A_LIST = [
    pytest.param(provider, wrap, field, value, id=f"{label}-{type(value).__name__}")
    for label, provider, wrap, field in SHAPES
    for value in NOT_LISTS
    if not (provider == "anthropic" and isinstance(value, str))  # Anthropic content may be text
]


@pytest.mark.parametrize(("provider", "wrap", "field", "value"), NOT_A_LIST)
def test_a_field_that_is_not_a_list_gives_no_calls_and_a_warning(
    provider: str, wrap: Callable[[Any], Any], field: str, value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolmesh.providers"):
        assert PARSERS[provider](wrap(value)) == []
    (record,) = caplog.records
    message = record.getMessage()
    assert f"{field!r} field is not a list (got {JSON_TYPES[type(value)]})" in message, message


def test_the_reported_tool_calls_string_gives_no_phantom_calls(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolmesh.providers"):
        assert openai.parse_tool_calls({"role": "assistant", "tool_calls": "garbage"}) == []
        assert openai.parse_tool_calls({"tool_calls": 42}) == []
        assert anthropic.parse_tool_calls({"content": 5}) == []
    assert len(caplog.records) == 3


def test_anthropic_text_content_gives_no_calls_and_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolmesh.providers"):
        assert anthropic.parse_tool_calls({"role": "user", "content": "What is 2 + 3?"}) == []
    assert caplog.records == []


@pytest.mark.parametrize(
    ("entry", "kind"),
    [("garbage", "a string"), (42, "a number"), (None, "null"), ([1, 2], "an array")],
    ids=["str", "int", "null", "list"],
)
def test_a_chat_tool_call_that_is_not_an_object_is_an_invalid_call(entry: Any, kind: str) -> None:
    good = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"x": 1}'}}
    message = {"role": "assistant", "tool_calls": [good, entry]}
    first, second = openai.parse_tool_calls(message)
    assert first == ToolCall("c1", "add", '{"x":1}')
    assert second.name == "" and not second.valid and second.id.startswith("toolmesh-openai-1-")
    assert second.problem == (
        f"tool call 1 is not an object (got {kind}); a tool call is an object with an id, a name and arguments"
    )
    assert openai.parse_tool_calls(message)[1].id == second.id  # deterministic


def test_a_gemini_function_call_that_is_not_an_object_is_an_invalid_call() -> None:
    (call,) = gemini.parse_tool_calls([{"text": "hi"}, {"function_call": "garbage"}])
    assert call.name == "" and call.problem is not None
    assert "tool call 0 is not an object (got a string)" in call.problem
    assert call.id == gemini.parse_tool_calls([{"function_call": "garbage"}])[0].id


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        ("openai_responses", {"output": ["garbage", 42, None]}),
        ("anthropic", {"content": ["garbage", 42, None, ["tool_use"]]}),
        ("gemini", {"candidates": ["garbage", 42]}),
        ("gemini", ["garbage", 42, None]),
    ],
    ids=["responses", "anthropic", "gemini-candidates", "gemini-parts"],
)
def test_an_item_of_a_mixed_list_that_is_not_an_object_is_skipped(provider: str, message: Any) -> None:
    assert PARSERS[provider](message) == []


# -- property: arbitrary JSON-like responses ------------------------------------------

KEYS = st.sampled_from(
    [
        "choices", "message", "tool_calls", "function", "name", "arguments", "id", "type", "role",
        "content", "input", "output", "call_id", "candidates", "parts", "function_call", "functionCall", "args",
    ]
)  # fmt: skip
TYPES = st.sampled_from(["function", "tool_use", "function_call", "text", "custom", "server_tool_use"])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12), TYPES, st.sampled_from(["add", "{}"])
)
JSON_LIKE = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.dictionaries(st.one_of(KEYS, st.text(max_size=4)), children, max_size=5),
    ),
    max_leaves=30,
)


def _list_entries(value: Any) -> int:
    """How many entries all the lists inside ``value`` hold: an upper bound on the calls it can mean."""
    if isinstance(value, dict):
        return sum(_list_entries(item) for item in value.values())
    if isinstance(value, list | tuple):
        return len(value) + sum(_list_entries(item) for item in value)
    return 0


@settings(max_examples=300, deadline=None)
@given(provider=st.sampled_from(sorted(PARSERS)), response=JSON_LIKE)
def test_no_json_like_response_makes_a_parser_raise_or_invent_calls(provider: str, response: Any) -> None:
    logging.getLogger("toolmesh.providers").disabled = True
    try:
        calls = PARSERS[provider](response)
        again = PARSERS[provider](response)
    finally:
        logging.getLogger("toolmesh.providers").disabled = False
    assert isinstance(calls, list) and len(calls) <= _list_entries(response)
    for call in calls:
        assert isinstance(call, ToolCall) and isinstance(call.id, str) and call.id
        assert isinstance(call.name, str) and isinstance(call.arguments, str)
        assert call.valid or isinstance(call.problem, str)
    assert [call.id for call in again] == [call.id for call in calls]
