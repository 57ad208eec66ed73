"""The provider loops of the docs: each runs as shown, against the real SDK clients on a mock transport."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2 as httpx
from _provider_support import assert_sdk_shape
from anthropic import AsyncAnthropic
from anthropic.types import MessageParam, ToolUnionParam
from openai import AsyncOpenAI
from openai.types.responses import ResponseInputItemParam, ToolParam

from _docs import DOCS, page_blocks

PAGE = DOCS / "guides" / "providers.md"


def loop_code(module: str) -> str:
    """The complete loop in the docs that imports ``toolmesh.providers.<module>``."""
    blocks = [block.source for block in page_blocks(PAGE)]
    (code,) = [b for b in blocks if "async def ask(" in b and f"from toolmesh.providers import {module}" in b]
    return code


def load(code: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(code, str(PAGE), "exec"), namespace)
    return namespace


def replay(*bodies: dict[str, Any]) -> tuple[httpx.AsyncClient, list[dict[str, Any]]]:
    """An HTTP client that answers each request with the next recorded body and keeps the requests."""
    requests: list[dict[str, Any]] = []
    answers = iter(bodies)

    def handle(request: httpx.Request) -> httpx.Response:
        requests.append(json.loads(request.content))
        return httpx.Response(200, json=next(answers))

    return httpx.AsyncClient(transport=httpx.MockTransport(handle)), requests


def lines(code: str) -> int:
    return len(code.strip("\n").splitlines())


def check_all(type_: Any, items: list[Any], keep: Callable[[Any], bool] = lambda _: True) -> None:
    for item in items:
        if keep(item):
            assert_sdk_shape(type_, item)


async def test_openai_responses_loop() -> None:
    code = loop_code("openai_responses")
    assert lines(code) < 30
    example = load(code)
    response: dict[str, Any] = {
        "id": "resp",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5",
        "status": "completed",
    }
    response |= {"parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add", "arguments": '{"x":2,"y":3}'}
    text = {"type": "output_text", "text": "2 + 3 = 5", "annotations": []}
    answer = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [text]}
    http, requests = replay(response | {"output": [call]}, response | {"output": [answer]})
    client = AsyncOpenAI(api_key="test", http_client=http, max_retries=0)
    assert await example["ask"](client, "What is 2 + 3?") == "2 + 3 = 5"
    first, second = requests
    check_all(ToolParam, first["tools"])
    assert first["tools"][0]["strict"] is True
    check_all(ResponseInputItemParam, second["input"])
    assert second["input"][-1] == {"type": "function_call_output", "call_id": "call_1", "output": "5"}


async def test_anthropic_loop() -> None:
    code = loop_code("anthropic as claude")
    assert lines(code) < 30
    example = load(code)
    message: dict[str, Any] = {"id": "msg", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5"}
    message |= {"stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    use = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"x": 2, "y": 3}}
    http, requests = replay(
        message | {"stop_reason": "tool_use", "content": [use]},
        message | {"stop_reason": "end_turn", "content": [{"type": "text", "text": "2 + 3 = 5"}]},
    )
    client = AsyncAnthropic(api_key="test", http_client=http, max_retries=0)
    assert await example["ask"](client, "What is 2 + 3?") == "2 + 3 = 5"
    first, second = requests
    check_all(ToolUnionParam, first["tools"])
    check_all(MessageParam, second["messages"])
    assert second["messages"][-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"}],
    }
