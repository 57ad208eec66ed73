"""2025-11-25 sessions shared through a real Redis by two gateways in this process, behind a real HAProxy."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp
import mcp_types
from mcp.client.streamable_http import streamable_http_client

from _gateway import serving
from _servers import fixture_module
from _services import haproxy, redis_server
from toolmesh.gateway import McpGateway, RedisState

REPLICA_HEADER = "x-toolmesh-replica"


@asynccontextmanager
async def two_gateways() -> AsyncIterator[tuple[str, list[str]]]:
    registry = fixture_module("replica_tools.py").registry
    served: list[str] = []
    async with (
        redis_server() as server,
        RedisState(server.url, prefix="tm-test:") as one,
        RedisState(server.url, prefix="tm-test:") as other,
        serving(McpGateway(registry, state=one)) as first,
        serving(McpGateway(registry, state=other)) as second,
        haproxy([first, second]) as front,
    ):
        yield f"{front}/mcp", served


def _client(url: str, served: list[str], posts: list[tuple[str, str]] | None = None, **options: Any) -> mcp.Client:
    async def seen(response: httpx2.Response) -> None:
        replica = response.headers.get(REPLICA_HEADER, "?")
        served.append(replica)
        request = response.request
        if posts is not None and request.method == "POST":
            kind = "call" if b'"tools/call"' in request.content else "other"
            posts.append(("answer" if b'"method"' not in request.content else kind, replica))

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
    posts: list[tuple[str, str]] = []

    async def answer(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async with two_gateways() as (url, served):
        with anyio.fail_after(120):
            async with _client(url, served, posts, elicitation_callback=answer) as client:
                for _ in range(6):
                    result = await client.call_tool("ask_name", {})
                    assert result.content[0].text == "hello Ada", result  # type: ignore[union-attr]
    # each call's answer is posted after the call, while it runs on the replica that asked
    calls = [replica for kind, replica in posts if kind == "call"]
    answers = [replica for kind, replica in posts if kind == "answer"]
    assert len(calls) == len(answers) == 6
    crossed = [asker != reached for asker, reached in zip(calls, answers, strict=True)]
    assert sum(crossed) >= 5, posts  # round-robin: the answer goes to the other replica
