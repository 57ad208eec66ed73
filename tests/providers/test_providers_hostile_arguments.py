"""Hostile model output: every provider parser turns any bad arguments into a ToolCall with a problem."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from _provider_support import make_registry

from toolmesh import ErrorKind, ToolCall, run_tool_calls
from toolmesh.providers import anthropic, gemini, openai, openai_responses

HUGE = "1" * 5_000
DEEP_TEXT = '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}"


def _deep_mapping(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["x"] = {}
        node = node["x"]
    return root


def chat(arguments: Any, id_: str | None = "c1") -> list[ToolCall]:
    call = {"id": id_, "type": "function", "function": {"name": "add", "arguments": arguments}}
    return openai.parse_tool_calls({"role": "assistant", "tool_calls": [call]})


def responses(arguments: Any, id_: str | None = "c1") -> list[ToolCall]:
    item = {"type": "function_call", "call_id": id_, "name": "add", "arguments": arguments}
    return openai_responses.parse_tool_calls([item])


def claude(arguments: Any, id_: str | None = "c1") -> list[ToolCall]:
    return anthropic.parse_tool_calls([{"type": "tool_use", "id": id_, "name": "add", "input": arguments}])


def google(arguments: Any, id_: str | None = "c1") -> list[ToolCall]:
    return gemini.parse_tool_calls([{"function_call": {"id": id_, "name": "add", "args": arguments}}])


PARSERS: dict[str, Callable[..., list[ToolCall]]] = {
    "openai": chat,
    "openai_responses": responses,
    "anthropic": claude,
    "gemini": google,
}

TEXT_CASES = [
    ('{"x": ' + HUGE + "}", "more than 4300 digits"),
    (DEEP_TEXT, "nested too deeply"),
    ('{"x": NaN}', "NaN, which JSON does not allow"),
    ('{"x": -Infinity}', "-Infinity, which JSON does not allow"),
    ('{"x": 1', "not valid JSON"),
]

MAPPING_CASES = [
    ({"x": 10**5000}, "more than 4300 digits"),
    (_deep_mapping(100_000), "nested too deeply"),
    ({"x": float("nan")}, "arguments hold NaN, which JSON does not allow"),
    ({"x": [1.5, float("-inf")]}, "arguments hold -Infinity, which JSON does not allow"),
    ({"x": object()}, "cannot be encoded as JSON"),
    ({1: "a", "b": 2}, "cannot be encoded as JSON"),
]


@pytest.mark.parametrize("provider", ["openai", "openai_responses"])
@pytest.mark.parametrize(("text", "problem"), TEXT_CASES, ids=["huge-int", "deep", "nan", "infinity", "truncated"])
@pytest.mark.parametrize("id_", ["c1", None], ids=["with-id", "without-id"])
def test_bad_argument_text_gives_a_call_with_a_problem(provider: str, text: str, problem: str, id_: str | None) -> None:
    (call,) = PARSERS[provider](text, id_)
    assert call.problem is not None and problem in call.problem, call.problem
    assert call.name == "add" and call.id and not call.valid
    assert call.arguments == text  # what the model sent, for the host to log


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
@pytest.mark.parametrize(
    ("arguments", "problem"), MAPPING_CASES, ids=["huge-int", "deep", "nan", "inf", "object", "mixed-keys"]
)
@pytest.mark.parametrize("id_", ["c1", None], ids=["with-id", "without-id"])
def test_bad_argument_values_give_a_call_with_a_problem(
    provider: str, arguments: Any, problem: str, id_: str | None
) -> None:
    (call,) = PARSERS[provider](arguments, id_)
    assert call.problem is not None and problem in call.problem, call.problem
    assert call.name == "add" and call.id and not call.valid


@pytest.mark.parametrize("provider", list(PARSERS))
def test_a_lone_surrogate_is_kept_as_an_escape_the_text_can_carry(provider: str) -> None:
    value = {"x": "\ud800"}
    (call,) = PARSERS[provider](json.dumps(value) if provider.startswith("openai") else value)
    assert call.valid and json.loads(call.arguments) == value
    call.arguments.encode("utf-8")


@pytest.mark.parametrize("provider", list(PARSERS))
def test_calls_without_ids_get_the_same_ids_from_the_same_response(provider: str) -> None:
    arguments: Any = {"x": 10**5000} if provider in ("anthropic", "gemini") else DEEP_TEXT
    first = PARSERS[provider](arguments, None)[0].id
    assert first == PARSERS[provider](arguments, None)[0].id and first.startswith(f"toolmesh-{provider.split('_')[0]}")


async def test_such_calls_fail_as_invalid_arguments_in_a_turn_and_the_others_run() -> None:
    snapshot = make_registry().snapshot()
    calls = [*chat(DEEP_TEXT), *claude({"x": float("nan")}), *responses('{"x": 1, "y": 2}')]
    results = await run_tool_calls(snapshot, [*calls, *google({"x": 10**5000})])
    kinds = [result.error.kind if result.error else None for result in results]
    assert kinds == [ErrorKind.INVALID_ARGUMENTS, ErrorKind.INVALID_ARGUMENTS, None, ErrorKind.INVALID_ARGUMENTS]
    assert "nested too deeply" in results[0].presentation.as_text()
    assert results[2].output[0].value == 3  # type: ignore[union-attr]
