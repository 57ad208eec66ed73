"""An approval runs its call once: replayed to the same gateway or to another replica sharing Redis, it is refused."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import openai
import pytest
from openai import AsyncOpenAI

from _responses import Reply, ScriptedUpstream, calc_server, mcp_tool, serve_asgi
from _services import redis_server
from toolmesh import ToolRegistry
from toolmesh.gateway import (
    HttpSettings,
    McpGateway,
    RedisState,
    ResponsesEndpoint,
    ResponsesSettings,
    StateBackend,
    mount_responses,
)
from toolmesh.gateway._responses.approvals import Approvals

SECRET = b"one-secret-for-every-replica-0123"


@asynccontextmanager
async def _replica(upstream: str, state: StateBackend | None) -> AsyncIterator[AsyncOpenAI]:
    """One gateway with its Responses endpoint and its own state client; an OpenAI client of it."""
    async with ToolRegistry() as registry:
        gateway = McpGateway(registry, state=state)
        endpoint = ResponsesEndpoint.for_gateway(gateway, ResponsesSettings(upstream=upstream, secret=SECRET))
        app = mount_responses(gateway.http_app(HttpSettings(port=0)), endpoint)
        async with (
            serve_asgi(app) as base,
            AsyncOpenAI(base_url=base + "/v1", api_key="test", max_retries=0, timeout=60) as client,
        ):
            yield client


def _tools(url: str) -> Any:
    tool = mcp_tool("calc", url)
    del tool["require_approval"]  # always
    return [tool]


async def _approve(client: AsyncOpenAI, url: str) -> list[dict[str, Any]]:
    """Ask for 2+2 and approve the call: the input that runs it."""
    first = await client.responses.create(model="m", input="2+2", tools=_tools(url))
    request = first.output[1]
    assert request.type == "mcp_approval_request"
    answer = {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}
    history = [{"role": "user", "content": "2+2"}, *(item.model_dump(exclude_none=True) for item in first.output)]
    return [*history, answer]


async def test_an_approval_replayed_on_another_replica_is_refused() -> None:
    calls: list[str] = []
    replies = [Reply(tool_calls=[("calc__add", '{"a": 2, "b": 2}')]), Reply(text="4"), Reply(text="again")]
    upstream = ScriptedUpstream(replies)
    async with AsyncExitStack() as stack:
        redis = await stack.enter_async_context(redis_server())
        model = await stack.enter_async_context(serve_asgi(upstream.app))
        mcp_url = await stack.enter_async_context(serve_asgi(calc_server(calls=calls).streamable_http_app())) + "/mcp"
        one = await stack.enter_async_context(RedisState(redis.url, prefix="t:"))
        two = await stack.enter_async_context(RedisState(redis.url, prefix="t:"))
        a = await stack.enter_async_context(_replica(model + "/v1", one))
        b = await stack.enter_async_context(_replica(model + "/v1", two))
        with anyio.fail_after(60):
            approved = await _approve(a, mcp_url)
            ran = await a.responses.create(model="m", input=approved, tools=_tools(mcp_url))
            with pytest.raises(openai.ConflictError) as replayed:
                await b.responses.create(model="m", input=approved, tools=_tools(mcp_url))
            with pytest.raises(openai.ConflictError):
                await a.responses.create(model="m", input=approved, tools=_tools(mcp_url))
    assert [item.type for item in ran.output] == ["mcp_call", "message"] and calls == ["add"]
    assert "was already used to run its call" in replayed.value.message


async def test_an_approval_is_refused_with_a_retryable_503_while_redis_is_lost() -> None:
    calls: list[str] = []
    upstream = ScriptedUpstream([Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')]), Reply(text="2")])
    async with AsyncExitStack() as stack:
        redis = await stack.enter_async_context(redis_server())
        model = await stack.enter_async_context(serve_asgi(upstream.app))
        mcp_url = await stack.enter_async_context(serve_asgi(calc_server(calls=calls).streamable_http_app())) + "/mcp"
        state = await stack.enter_async_context(RedisState(redis.url, prefix="t:", timeout=0.5))
        client = await stack.enter_async_context(_replica(model + "/v1", state))
        with anyio.fail_after(60):
            approved = await _approve(client, mcp_url)
            await redis.stop()
            with pytest.raises(openai.InternalServerError) as lost:
                await client.responses.create(model="m", input=approved, tools=_tools(mcp_url))
            await redis.start()
            ran = await client.responses.create(model="m", input=approved, tools=_tools(mcp_url))
    assert lost.value.status_code == 503 and "send the request again in a moment" in lost.value.message
    assert calls == ["add"] and ran.output[0].type == "mcp_call"


def test_an_approval_id_is_valid_for_max_age_seconds() -> None:
    now = [1_000_000.0]
    approvals = Approvals(SECRET, max_age=3600, clock=lambda: now[0])
    request_id = approvals.request_id("calc", "add", "{}")
    now[0] += 3599
    assert approvals.verify(request_id, "calc", "add", "{}")
    now[0] += 2
    assert not approvals.verify(request_id, "calc", "add", "{}")
    assert json.dumps(request_id).startswith('"mcpr_')
