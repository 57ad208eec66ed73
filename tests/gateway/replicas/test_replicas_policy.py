"""Shared policy through HAProxy: a rate limit holds across replicas; an approval replayed on another is refused."""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import anyio
import openai
import pytest
from openai import AsyncOpenAI

from _replicas import replicas
from _responses import Reply, ScriptedUpstream, calc_server, mcp_tool, serve_asgi
from _services import redis_server

LIMIT = 10


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_rate_limit_holds_across_replicas(mode: Any) -> None:
    """10 calls per minute means 10 in all: three replicas each saw a third of the calls."""
    policy = {"policy": {"rateLimits": [{"calls": LIMIT, "per": 60, "tools": ["add"]}]}}
    async with redis_server() as redis, replicas(3, state=redis.url, config=policy) as mesh:
        with anyio.fail_after(120):
            async with mesh.client(mode) as client:
                results = [await client.call_tool("add", {"a": n, "b": 1}) for n in range(LIMIT + 5)]
                still = await client.call_tool("whoami", {})  # other tools are not limited
    refused = [result for result in results if result.is_error]
    assert len(refused) == 5 and not still.is_error
    assert all(not result.is_error for result in results[:LIMIT])
    calls = [replica for kind, replica in mesh.posts if kind == "call"][: LIMIT + 5]
    assert len(set(calls)) == 3  # the limited calls were spread over every replica


def _tools(url: str) -> Any:
    tool = mcp_tool("calc", url)
    del tool["require_approval"]  # always
    return [tool]


async def test_an_approval_replayed_through_the_load_balancer_is_refused() -> None:
    """Ask (replica 1), run the approved call (replica 2), replay the approval (replica 3): refused, ran once."""
    calls: list[str] = []
    upstream = ScriptedUpstream([Reply(tool_calls=[("calc__add", '{"a": 2, "b": 2}')]), Reply(text="4")])
    async with AsyncExitStack() as stack:
        redis = await stack.enter_async_context(redis_server())
        model = await stack.enter_async_context(serve_asgi(upstream.app))
        calc = await stack.enter_async_context(serve_asgi(calc_server(calls=calls).streamable_http_app()))
        config = {"responses": {"upstream": f"{model}/v1", "secretEnv": "TOOLMESH_TEST_APPROVALS"}}
        env = {"TOOLMESH_TEST_APPROVALS": "one-secret-for-every-replica-0123"}
        mesh = await stack.enter_async_context(replicas(3, state=redis.url, config=config, env=env))
        client = AsyncOpenAI(base_url=f"{mesh.front}/v1", api_key="test", max_retries=0, timeout=60)
        stack.push_async_callback(client.close)
        tools = _tools(f"{calc}/mcp")
        with anyio.fail_after(90):
            first = await client.responses.with_raw_response.create(model="m", input="2+2", tools=tools)
            asked = first.parse()
            request = asked.output[1]
            assert request.type == "mcp_approval_request"
            answer = {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}
            given = [item.model_dump(exclude_none=True) for item in asked.output]
            approved: Any = [{"role": "user", "content": "2+2"}, *given, answer]
            ran = await client.responses.with_raw_response.create(model="m", input=approved, tools=tools)
            with pytest.raises(openai.ConflictError) as replayed:
                await client.responses.create(model="m", input=approved, tools=tools)
    replicas_seen = [first.headers["x-toolmesh-replica"], ran.headers["x-toolmesh-replica"]]
    replicas_seen.append(replayed.value.response.headers["x-toolmesh-replica"])
    assert len(set(replicas_seen)) == 3, replicas_seen
    assert [item.type for item in ran.parse().output] == ["mcp_call", "message"] and calls == ["add"]
    assert "was already used to run its call" in replayed.value.message
