"""2025-11-25 sessions shared through a real Redis by two gateways in this process, behind a real HAProxy."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp
import mcp_types
import redis.asyncio
from mcp.client.streamable_http import streamable_http_client

from _gateway import serving
from _servers import fixture_module
from _services import haproxy, redis_server
from toolmesh.gateway import McpGateway
from toolmesh.gateway._sessions.deployment import SharedSessions

REPLICA_HEADER = "x-toolmesh-replica"


@asynccontextmanager
async def two_gateways() -> AsyncIterator[tuple[str, list[str]]]:
    registry = fixture_module("replica_tools.py").registry
    served: list[str] = []
    async with redis_server() as server:
        client = redis.asyncio.Redis.from_url(server.url)
        try:
            sessions = [SharedSessions(client, "tm-test", replica=name) for name in ("a", "b")]
            async with (
                serving(McpGateway(registry), sessions=sessions[0]) as first,
                serving(McpGateway(registry), sessions=sessions[1]) as second,
                haproxy([first, second]) as front,
            ):
                yield f"{front}/mcp", served
        finally:
            await client.aclose()


def _client(url: str, served: list[str], answered: list[str] | None = None, **options: Any) -> mcp.Client:
    async def seen(response: httpx2.Response) -> None:
        replica = response.headers.get(REPLICA_HEADER, "?")
        served.append(replica)
        request = response.request
        if answered is not None and request.method == "POST" and b'"method"' not in request.content:
            answered.append(replica)  # a POST carrying the client's answer to a server's request

    http = httpx2.AsyncClient(timeout=60, event_hooks={"response": [seen]})
    return mcp.Client(streamable_http_client(url, http_client=http), mode="legacy", **options)


async def test_a_legacy_session_continues_on_the_other_replica() -> None:
    async with two_gateways() as (url, served):
        with anyio.fail_after(120):
            async with _client(url, served) as client:
                for n in range(50):
                    result = await client.call_tool("add", {"a": n, "b": 1})
                    assert not result.is_error, result
    assert {"replica1", "replica2"} <= set(served)


async def test_an_elicitation_answer_reaching_the_other_replica_finds_the_call() -> None:
    askers: list[str] = []
    answered: list[str] = []

    async def answer(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        askers.append(str(context.request_id))
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async with two_gateways() as (url, served):
        with anyio.fail_after(120):
            async with _client(url, served, answered, elicitation_callback=answer) as client:
                for _ in range(6):
                    result = await client.call_tool("ask_name", {})
                    assert result.content[0].text == "hello Ada", result  # type: ignore[union-attr]
    # the request ids name the replica that asked (gateway "a" is HAProxy's replica1, "b" replica2)
    asked_by = [{"a": "replica1", "b": "replica2"}[asker.split("~")[1]] for asker in askers]
    assert len(asked_by) == len(answered) == 6
    crossed = [asker != reached for asker, reached in zip(asked_by, answered, strict=True)]
    assert sum(crossed) >= 5, (asked_by, answered)  # round-robin: the answer goes to the other replica
