"""Provider round trips for MCP rows: the demo fixture server, in-process (image, error, structured output)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from _provider_support import assert_sdk_shape
from anthropic.types import Message, MessageParam, ToolUnionParam
from google.genai import types
from openai.types.chat import ChatCompletion, ChatCompletionFunctionToolParam, ChatCompletionToolMessageParam
from openai.types.responses import Response, ResponseInputItemParam, ToolParam

from _mcp import demo_in_process
from toolmesh import NamePolicy, ToolRegistry, ToolSnapshot, run_tool_calls
from toolmesh.providers import UnsupportedContentError, anthropic, gemini, openai_responses
from toolmesh.providers import openai as chat

CALLS = [
    ("c_img", "demo__image", {}),
    ("c_fail", "demo__fail", {"reason": "disk full"}),
    ("c_add", "demo__add", {"a": 2, "b": 3}),
]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def snapshot() -> AsyncIterator[ToolSnapshot]:
    async with ToolRegistry(names=NamePolicy(provider="openai")) as registry:
        await registry.connect(demo_in_process("demo"))
        yield registry.snapshot(active=["demo__image", "demo__fail", "demo__add"])


def check_outcomes(texts: list[str]) -> None:
    assert "disk full" in texts[1]
    # The model is shown the server's own text (it repeats structuredContent), once.
    assert json.loads(texts[2]) == {"sum": 5} and texts[2].count("sum") == 1


async def test_openai_responses(snapshot: ToolSnapshot) -> None:
    for item in openai_responses.tools(snapshot):
        assert_sdk_shape(ToolParam, item)
    output = [
        {
            "type": "function_call",
            "call_id": i,
            "name": n,
            "arguments": json.dumps(a),
            "id": f"fc_{i}",
            "status": "completed",
        }
        for i, n, a in CALLS
    ]
    response = Response.model_validate(
        {"id": "r", "object": "response", "created_at": 1, "model": "m", "status": "completed", "output": output}
        | {"parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
    )
    items = openai_responses.tool_results(await run_tool_calls(snapshot, openai_responses.parse_tool_calls(response)))
    for item in items:
        assert_sdk_shape(ResponseInputItemParam, item)
    image, fail, add = (item["output"] for item in items)
    assert isinstance(image, list) and image[0]["type"] == "input_image"
    check_outcomes(["", str(fail), str(add)])


async def test_openai_chat(snapshot: ToolSnapshot) -> None:
    for item in chat.tools(snapshot):
        assert_sdk_shape(ChatCompletionFunctionToolParam, item)
    calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a in CALLS]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    completion = ChatCompletion.model_validate(
        {"id": "c", "object": "chat.completion", "created": 1, "model": "m"}
        | {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}
    )
    results = await run_tool_calls(snapshot, chat.parse_tool_calls(completion))
    with pytest.raises(UnsupportedContentError):
        chat.tool_results(results)
    messages = chat.tool_results(results, describe_unsupported=True)
    for item in messages:
        assert_sdk_shape(ChatCompletionToolMessageParam, item)
    assert str(messages[0]["content"]).startswith("[image: image/png]")
    check_outcomes([str(m["content"]) for m in messages])


async def test_anthropic(snapshot: ToolSnapshot) -> None:
    for item in anthropic.tools(snapshot):
        assert_sdk_shape(ToolUnionParam, item)
    blocks = [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in CALLS]
    message = Message.model_validate(
        {"id": "m", "type": "message", "role": "assistant", "model": "m", "content": blocks}
        | {"stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    )
    reply = anthropic.tool_results(await run_tool_calls(snapshot, anthropic.parse_tool_calls(message)))
    assert_sdk_shape(MessageParam, reply)
    image, fail, add = list(reply["content"])
    assert image["content"][0]["type"] == "image"  # type: ignore[index,typeddict-item]
    assert fail.get("is_error") is True and add.get("is_error") is None  # type: ignore[union-attr]
    check_outcomes(["", str(fail["content"]), str(add["content"])])  # type: ignore[index,typeddict-item]


async def test_gemini(snapshot: ToolSnapshot) -> None:
    tools = gemini.tools(snapshot)
    assert [f.name for f in tools[0].function_declarations or []] == ["demo__add", "demo__image", "demo__fail"]
    parts = [{"function_call": {"id": i, "name": n, "args": a}} for i, n, a in CALLS]
    response = types.GenerateContentResponse.model_validate(
        {"candidates": [{"content": {"role": "model", "parts": parts}}]}
    )
    content = gemini.tool_results(await run_tool_calls(snapshot, gemini.parse_tool_calls(response)))
    assert types.Content.model_validate_json(content.model_dump_json()) == content
    image, fail, add = (part.function_response for part in content.parts or [])
    assert image is not None and image.parts is not None and image.parts[0].inline_data is not None
    assert image.parts[0].inline_data.data is not None and image.parts[0].inline_data.data.startswith(b"\x89PNG")
    assert fail is not None and fail.response is not None and "disk full" in fail.response["error"]
    assert add is not None and add.id == "c_add" and json.loads(add.response["output"]) == {"sum": 5}
