"""Tool search per provider: search call -> toolmesh's answer -> the model calls a found tool -> its result.

Every declaration, item and message is checked against the provider SDK's own types.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from _provider_support import add, assert_sdk_shape, search
from anthropic.types import Message, MessageParam, ToolUnionParam
from google.genai import types
from openai.types.chat import ChatCompletion, ChatCompletionFunctionToolParam, ChatCompletionToolMessageParam
from openai.types.responses import Response, ResponseInputItemParam, ToolParam

from _mcp import demo_in_process
from toolmesh import Disposition, ErrorKind, ToolRegistry, ToolSnapshot, run_tool_calls, tool
from toolmesh.providers import anthropic as claude
from toolmesh.providers import gemini
from toolmesh.providers import openai as chat
from toolmesh.providers import openai_responses as responses


@tool
async def get_weather_forecast(city: str) -> str:
    """Forecast the weather of a city.

    Args:
        city: The city's name.
    """
    return f"sunny in {city}"


@tool
async def send_email(to: str, body: str) -> str:
    """Send an email message."""
    return f"sent to {to}"


def deferring_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(add)
    registry.register(search)
    registry.register(get_weather_forecast, defer_loading=True)
    registry.register(send_email, defer_loading=True)
    return registry


def completion(*calls: tuple[str, str, dict[str, Any]]) -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1_760_000_000,
            "model": "gpt-test",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": id_, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                            for id_, name, args in calls
                        ],
                    },
                }
            ],
        }
    )


def response(*items: dict[str, Any]) -> Response:
    return Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1_760_000_000,
            "model": "gpt-test",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": list(items),
        }
    )


def message(*blocks: dict[str, Any]) -> Message:
    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
            "content": [{"type": "text", "text": "Let me look."}, *blocks],
        }
    )


# -- Chat Completions and Gemini: the local search row ---------------------------------


async def test_chat_completions_multi_call_turn_with_the_local_search_row() -> None:
    snapshot = deferring_registry().snapshot()
    first = chat.tools(snapshot)
    for item in first:
        assert_sdk_shape(ChatCompletionFunctionToolParam, item)
    assert [item["function"]["name"] for item in first] == ["add", "search", "search_tools"]

    with anyio.fail_after(10):
        results = await run_tool_calls(
            snapshot, chat.parse_tool_calls(completion(("c1", "search_tools", {"query": "weather forecast"})))
        )
    (sent,) = chat.tool_results(results)
    assert_sdk_shape(ChatCompletionToolMessageParam, sent)
    assert json.loads(str(sent["content"]))["tools"][0]["name"] == "get_weather_forecast"

    second = chat.tools(snapshot)  # the next model call of the same turn
    assert [item["function"]["name"] for item in second] == ["add", "search", "get_weather_forecast", "search_tools"]
    with anyio.fail_after(10):
        ran = await run_tool_calls(
            snapshot,
            chat.parse_tool_calls(
                completion(
                    ("c2", "get_weather_forecast", {"city": "Oslo"}), ("c3", "send_email", {"to": "a", "body": "b"})
                )
            ),
        )
    assert ran[0].ok and ran[0].output.as_text() == "sunny in Oslo"
    assert ran[1].disposition is Disposition.REFUSED and ran[1].error.kind is ErrorKind.NOT_FOUND  # type: ignore[union-attr]
    assert [(f.name, f.step) for f in snapshot.found] == [("get_weather_forecast", 0)]
    assert [(c.name, c.step) for c in snapshot.called] == [("search_tools", 0), ("get_weather_forecast", 1)]


def _gemini_response(*calls: tuple[str, dict[str, Any]]) -> types.GenerateContentResponse:
    return types.GenerateContentResponse.model_validate(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"function_call": {"name": n, "args": a}} for n, a in calls],
                    },
                    "finish_reason": "STOP",
                    "index": 0,
                }
            ]
        }
    )


async def test_gemini_multi_call_turn_with_the_local_search_row() -> None:
    snapshot = deferring_registry().snapshot()
    (first,) = gemini.tools(snapshot)
    assert isinstance(first, types.Tool) and first.function_declarations is not None
    assert [f.name for f in first.function_declarations] == ["add", "search", "search_tools"]
    with anyio.fail_after(10):
        results = await run_tool_calls(
            snapshot, gemini.parse_tool_calls(_gemini_response(("search_tools", {"query": "send an email"})))
        )
    content = gemini.tool_results(results)
    assert types.Content.model_validate_json(content.model_dump_json(exclude_none=True)) == content
    answer = content.parts[0].function_response.response  # type: ignore[index, union-attr]
    assert answer["output"]["tools"][0]["name"] == "send_email"  # type: ignore[index]
    (second,) = gemini.tools(snapshot)
    assert [f.name for f in second.function_declarations] == ["add", "search", "send_email", "search_tools"]  # type: ignore[union-attr]
    with anyio.fail_after(10):
        (sent,) = await run_tool_calls(
            snapshot, gemini.parse_tool_calls(_gemini_response(("send_email", {"to": "ann", "body": "hi"})))
        )
    assert sent.ok and sent.output.as_text() == "sent to ann"


# -- OpenAI Responses ------------------------------------------------------------------


async def test_responses_client_executed_tool_search_round_trip() -> None:
    snapshot = deferring_registry().snapshot()
    declared = responses.tools(snapshot)
    for item in declared:
        assert_sdk_shape(ToolParam, item)
    assert [item.get("name", item["type"]) for item in declared] == ["add", "search", "tool_search"]
    assert declared[-1]["execution"] == "client"  # type: ignore[typeddict-item]

    searched = response(
        {
            "type": "tool_search_call",
            "id": "ts_1",
            "call_id": "call_ts",
            "execution": "client",
            "status": "completed",
            "arguments": {"query": "weather in a city"},
        }
    )
    calls = responses.parse_tool_calls(searched, catalog=snapshot)
    assert [(c.id, c.name) for c in calls] == [("call_ts", "search_tools")]
    with anyio.fail_after(10):
        results = await run_tool_calls(snapshot, calls)
    (output,) = responses.tool_results(results)
    assert_sdk_shape(ResponseInputItemParam, output)
    assert output["type"] == "tool_search_output" and output["call_id"] == "call_ts"
    assert output["tools"][0]["name"] == "get_weather_forecast"  # type: ignore[typeddict-item, index]

    called = response(
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_w",
            "name": "get_weather_forecast",
            "arguments": '{"city": "Lima"}',
            "status": "completed",
        }
    )
    with anyio.fail_after(10):
        (ran,) = await run_tool_calls(snapshot, responses.parse_tool_calls(called, catalog=snapshot))
    assert ran.ok
    (sent,) = responses.tool_results([ran])
    assert_sdk_shape(ResponseInputItemParam, sent)
    assert sent == {"type": "function_call_output", "call_id": "call_w", "output": "sunny in Lima"}


async def test_responses_hosted_tool_search_with_a_namespace_per_mcp_server() -> None:
    with anyio.fail_after(30):
        async with ToolRegistry() as registry:
            registry.register(add)
            await registry.connect(demo_in_process("demo", defer_loading=True))
            snapshot = registry.snapshot()
            declared = responses.tools(snapshot, tool_search="hosted")
            for item in declared:
                assert_sdk_shape(ToolParam, item)
            (namespace,) = [item for item in declared if item["type"] == "namespace"]
            assert namespace["name"] == "demo"  # type: ignore[typeddict-item]
            inner = namespace["tools"]  # type: ignore[typeddict-item]
            assert all(fn["defer_loading"] is True for fn in inner)
            assert "demo__echo" in [fn["name"] for fn in inner]
            assert declared[-1] == {"type": "tool_search"}

            found = response(
                {
                    "type": "tool_search_call",
                    "id": "ts_1",
                    "execution": "server",
                    "status": "completed",
                    "arguments": {"query": "echo"},
                },
                {
                    "type": "tool_search_output",
                    "id": "tso_1",
                    "execution": "server",
                    "status": "completed",
                    "tools": [
                        {
                            "type": "namespace",
                            "name": "demo",
                            "description": "demo",
                            "tools": [{"type": "function", "name": "demo__echo", "parameters": {}}],
                        }
                    ],
                },
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_e",
                    "namespace": "demo",
                    "name": "demo__echo",
                    "arguments": '{"text": "hello"}',
                    "status": "completed",
                },
            )
            calls = responses.parse_tool_calls(found, catalog=snapshot)
            assert [f.name for f in snapshot.found] == ["demo__echo"]
            assert snapshot.found[0].search == "tool_search"
            (echoed,) = await run_tool_calls(snapshot, calls)
            assert echoed.ok and "hello" in echoed.output.as_text()


async def test_responses_refuses_a_deferred_row_no_search_found() -> None:
    snapshot = deferring_registry().snapshot()
    called = response(
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_m",
            "name": "send_email",
            "arguments": '{"to": "x", "body": "y"}',
            "status": "completed",
        }
    )
    with anyio.fail_after(10):
        (refused,) = await run_tool_calls(snapshot, responses.parse_tool_calls(called, catalog=snapshot))
    assert refused.disposition is Disposition.REFUSED and refused.error.kind is ErrorKind.NOT_FOUND  # type: ignore[union-attr]
    assert snapshot.called == ()


def test_responses_function_mode_is_the_local_search_row() -> None:
    snapshot = deferring_registry().snapshot()
    declared = responses.tools(snapshot, tool_search="function")
    assert [item["name"] for item in declared] == ["add", "search", "search_tools"]  # type: ignore[typeddict-item]


# -- Anthropic -------------------------------------------------------------------------


async def test_anthropic_bm25_tool_search_round_trip() -> None:
    snapshot = deferring_registry().snapshot()
    declared = claude.tools(snapshot)
    for item in declared:
        assert_sdk_shape(ToolUnionParam, item)
    names = [item["name"] for item in declared]
    assert names == ["add", "search", "get_weather_forecast", "send_email", "tool_search_tool_bm25"]
    assert [item.get("defer_loading") for item in declared[:4]] == [None, None, True, True]

    reply = message(
        {"type": "server_tool_use", "id": "srv_1", "name": "tool_search_tool_bm25", "input": {"query": "email"}},
        {
            "type": "tool_search_tool_result",
            "tool_use_id": "srv_1",
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": "send_email"}],
            },
        },
        {"type": "tool_use", "id": "tu_1", "name": "send_email", "input": {"to": "bo", "body": "hi"}},
    )
    calls = claude.parse_tool_calls(reply, catalog=snapshot)
    assert [(f.name, f.search, f.query) for f in snapshot.found] == [("send_email", "tool_search_tool_bm25", "email")]
    with anyio.fail_after(10):
        results = await run_tool_calls(snapshot, calls)
    sent = claude.tool_results(results)
    assert_sdk_shape(MessageParam, sent)
    assert sent["content"][0]["content"] == "sent to bo"  # type: ignore[index]


async def test_anthropic_client_side_search_answers_with_tool_references() -> None:
    snapshot = deferring_registry().snapshot()
    declared = claude.tools(snapshot, tool_search="client")
    for item in declared:
        assert_sdk_shape(ToolUnionParam, item)
    assert declared[-1]["name"] == "search_tools" and "defer_loading" not in declared[-1]
    with anyio.fail_after(10):
        results = await run_tool_calls(
            snapshot,
            claude.parse_tool_calls(
                message({"type": "tool_use", "id": "tu_s", "name": "search_tools", "input": {"query": "weather"}})
            ),
        )
    sent = claude.tool_results(results)
    assert_sdk_shape(MessageParam, sent)
    assert sent["content"][0]["content"] == [{"type": "tool_reference", "tool_name": "get_weather_forecast"}]  # type: ignore[index]
    with anyio.fail_after(10):
        (ran,) = await run_tool_calls(
            snapshot,
            claude.parse_tool_calls(
                message({"type": "tool_use", "id": "tu_w", "name": "get_weather_forecast", "input": {"city": "Rome"}})
            ),
        )
    assert ran.ok


def test_a_registry_declares_only_what_is_not_deferred() -> None:
    registry = deferring_registry()
    assert [item["function"]["name"] for item in chat.tools(registry)] == ["add", "search"]
    snapshot = registry.snapshot()
    assert isinstance(snapshot, ToolSnapshot)
    assert [item["function"]["name"] for item in chat.tools(list(snapshot))] == [r.name for r in snapshot]
