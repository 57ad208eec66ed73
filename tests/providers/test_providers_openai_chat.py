"""OpenAI Chat Completions: declarations, parsed calls and tool messages, checked against the openai SDK's types."""

from __future__ import annotations

from typing import Any

import pytest
from _provider_support import assert_sdk_shape, make_registry
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessage,
    ChatCompletionToolMessageParam,
)

from toolmesh import ToolCall, ToolContext, ToolDefinition, ToolRegistry, run_tool_calls
from toolmesh.providers import UnsupportedContentError, UnsupportedToolError
from toolmesh.providers import openai as chat


def completion(*tool_calls: tuple[str, str, str]) -> ChatCompletion:
    """A recorded completion whose message asks for ``(id, name, arguments)`` calls."""
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
                    "logprobs": None,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "tool_calls": [
                            {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}
                            for id_, name, arguments in tool_calls
                        ],
                    },
                }
            ],
        }
    )


async def test_round_trip_native_tools_with_an_error_and_invalid_json() -> None:
    snapshot = make_registry().snapshot(active=["add", "search", "explode"])
    declared = chat.tools(snapshot)
    for item in declared:
        assert_sdk_shape(ChatCompletionFunctionToolParam, item)
    assert [item["function"]["name"] for item in declared] == ["add", "search", "explode"]
    assert declared[0]["function"]["description"] == "Add two integers."
    assert "strict" not in declared[0]["function"]

    response = completion(
        ("call_1", "add", '{"y": 2, "x": 1}'),
        ("call_2", "explode", ""),
        ("call_3", "add", '{"x": 1,'),
        ("call_4", "search", '{"query": "tea"}'),
    )
    calls = chat.parse_tool_calls(response)
    assert calls[0] == ToolCall("call_1", "add", '{"x":1,"y":2}')
    assert calls[1] == ToolCall("call_2", "explode", "{}")
    assert calls[2].id == "call_3" and calls[2].arguments == '{"x": 1,' and not calls[2].valid
    assert calls[2].problem is not None and "not valid JSON" in calls[2].problem

    results = await run_tool_calls(snapshot, calls)
    messages = chat.tool_results(results)
    for message in messages:
        assert_sdk_shape(ChatCompletionToolMessageParam, message)
    assert [m["tool_call_id"] for m in messages] == ["call_1", "call_2", "call_3", "call_4"]
    assert messages[0]["content"] == "3"
    assert messages[1]["content"] == "The tool failed with an internal error."
    assert "not valid JSON" in str(messages[2]["content"])
    assert messages[3]["content"] == '["tea 1","tea 2"]'


async def test_direct_dispatch_of_parsed_calls() -> None:
    snapshot = make_registry().snapshot()
    calls = chat.parse_tool_calls(completion(("c1", "add", '{"x": 2, "y": 3}')).choices[0].message)
    results = [await snapshot.dispatch(c.name, c.arguments, ctx=ToolContext(call_id=c.id)) for c in calls]
    assert chat.tool_results(results) == [{"role": "tool", "tool_call_id": "c1", "content": "5"}]


async def test_an_image_is_refused_unless_described() -> None:
    snapshot = make_registry().snapshot()
    calls = chat.parse_tool_calls(completion(("shot", "screenshot", '{"label": "home"}')))
    results = await run_tool_calls(snapshot, calls)
    assert results[0].ok
    with pytest.raises(UnsupportedContentError, match="image") as caught:
        chat.tool_results(results)
    assert caught.value.call_id == "shot" and caught.value.mime_type == "image/png"
    assert "openai_responses" in str(caught.value)
    described = chat.tool_results(results, describe_unsupported=True)
    assert described[0]["content"] == "screenshot of home\n[image: image/png]"
    assert_sdk_shape(ChatCompletionToolMessageParam, described[0])


def test_parse_accepts_plain_dicts_and_messages() -> None:
    message: dict[str, Any] = {
        "role": "assistant",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "add", "arguments": '{"x":1,"y":1}'}},
            {"id": "b", "type": "custom", "custom": {"name": "grammar", "input": "free text"}},
        ],
    }
    assert chat.parse_tool_calls(message) == [ToolCall("a", "add", '{"x":1,"y":1}')]
    assert chat.parse_tool_calls({"choices": [{"message": message}]}) == chat.parse_tool_calls(message)
    sdk_message = ChatCompletionMessage.model_validate({"role": "assistant", "content": "hi"})
    assert chat.parse_tool_calls(sdk_message) == []
    assert chat.parse_tool_calls({"choices": []}) == []


def test_arguments_that_are_json_but_not_an_object_are_invalid_calls() -> None:
    calls = chat.parse_tool_calls(completion(("a", "add", "[1, 2]")))
    assert calls[0].problem == "arguments must be a JSON object of named parameters"


def test_strict_declarations_and_null_for_optional_parameters() -> None:
    snapshot = make_registry().snapshot(active=["search"])
    declared = chat.tools(snapshot, strict=True)
    assert_sdk_shape(ChatCompletionFunctionToolParam, declared[0])
    function = declared[0]["function"]
    assert function["strict"] is True
    parameters = function.get("parameters", {})
    assert parameters["required"] == ["query", "limit"]
    assert parameters["additionalProperties"] is False
    assert parameters["properties"]["limit"]["type"] == ["integer", "null"]

    response = completion(("s", "search", '{"query": "tea", "limit": null}'))
    assert chat.parse_tool_calls(response)[0].arguments == '{"limit":null,"query":"tea"}'
    assert chat.parse_tool_calls(response, catalog=snapshot)[0].arguments == '{"query":"tea"}'


def test_a_schema_that_cannot_be_strict_is_sent_without_strict() -> None:
    definition = ToolDefinition(
        "tag", "Tag things.", {"type": "object", "properties": {"tags": {"type": "object"}}, "required": ["tags"]}
    )
    function = chat.tools([definition], strict=True)[0]["function"]
    assert function["strict"] is False
    assert function.get("parameters") == definition.parameters


def test_invalid_names_and_hosted_rows_are_refused() -> None:
    with pytest.raises(UnsupportedToolError, match=r"NamePolicy\(provider='openai'\)") as caught:
        chat.tools([ToolDefinition("docs.search", "", {"type": "object", "properties": {}})], invalid_names="raise")
    assert "'docs_search'" in str(caught.value)
    registry = ToolRegistry()
    registry.register_hosted("web_search", {"type": "web_search"}, provider="openai")
    with pytest.raises(UnsupportedToolError, match="openai_responses"):
        chat.tools(registry)


async def test_a_loop_through_the_sdk_client() -> None:
    import json

    import httpx2
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionMessageParam

    requests: list[dict[str, Any]] = []
    first = completion(("call_1", "add", '{"x": 2, "y": 3}')).model_dump(mode="json")
    final = completion().model_dump(mode="json")
    final["choices"][0]["message"] = {"role": "assistant", "content": "5"}
    final["choices"][0]["finish_reason"] = "stop"
    bodies = iter([first, final])

    def handle(request: httpx2.Request) -> httpx2.Response:
        requests.append(json.loads(request.content))
        return httpx2.Response(200, json=next(bodies))

    client = AsyncOpenAI(api_key="test", http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)))
    snapshot = make_registry().snapshot()
    messages: list[Any] = [{"role": "user", "content": "2 + 3?"}]
    response = await client.chat.completions.create(model="gpt-test", messages=messages, tools=chat.tools(snapshot))
    messages.append(response.choices[0].message)
    messages += chat.tool_results(await run_tool_calls(snapshot, chat.parse_tool_calls(response)))
    response = await client.chat.completions.create(model="gpt-test", messages=messages, tools=chat.tools(snapshot))
    assert response.choices[0].message.content == "5"
    for message in requests[1]["messages"]:
        if message["role"] == "tool":  # the assistant message is the SDK's own object
            assert_sdk_shape(ChatCompletionMessageParam, message)
    assert requests[1]["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "5"}
