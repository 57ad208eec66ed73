"""Catalog changes made through one replica reach the clients of another, over Redis pub/sub.

Two gateways, each with its own registry, its own session to one upstream server and its
own Redis client, as two replicas are. The upstream announces a new tool only to the
session whose call made it (replica A's); replica B hears of it through Redis, refreshes,
and tells its clients of both protocol versions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import mcp_types

from _gateway import client, serving
from _servers import DEMO, fixture_server
from _services import RedisServer, redis_server
from toolmesh import McpServer, ToolRegistry
from toolmesh.gateway import McpGateway, MemoryState, RedisState
from toolmesh.gateway._mcp_face.shared_changes import SharedChanges


@asynccontextmanager
async def _two_replicas(redis: RedisServer) -> AsyncIterator[tuple[str, str, ToolRegistry]]:
    upstream = fixture_server(DEMO)  # one server object: each replica opens its own session to it
    async with AsyncExitStack() as stack:
        urls: list[str] = []
        registries = []
        for _ in range(2):
            state = await stack.enter_async_context(RedisState(redis.url, prefix="t:"))
            registry = await stack.enter_async_context(ToolRegistry())
            await registry.connect(McpServer.in_process("demo", upstream))
            urls.append(await stack.enter_async_context(serving(McpGateway(registry, state=state))) + "/mcp")
            registries.append(registry)
        yield urls[0], urls[1], registries[1]


async def test_a_change_through_one_replica_reaches_a_listen_stream_of_another() -> None:
    async with (
        redis_server() as redis,
        _two_replicas(redis) as (a, b, _),
        client(a, "2026-07-28") as first,
        client(b, "2026-07-28") as second,
    ):
        with anyio.fail_after(60):
            async with second.listen(tools_list_changed=True) as subscription:
                assert (await first.call_tool("demo__grow", {"name": "fresh"})).is_error is False
                async for _event in subscription:
                    break
            names = [t.name for t in (await second.list_tools(cache_mode="refresh")).tools]
    assert "demo__fresh" in names


async def test_a_change_through_one_replica_reaches_a_legacy_session_of_another() -> None:
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            heard.set()

    async with (
        redis_server() as redis,
        _two_replicas(redis) as (a, b, registry_b),
        client(a, "2026-07-28") as first,
        client(b, "legacy", message_handler=on_message) as second,
    ):
        await second.list_tools()
        grown = 0
        with anyio.fail_after(60):
            while not heard.is_set():
                # the legacy client opens its notification stream (GET) by itself after the handshake:
                # a change made before it is open reaches no one, so changes repeat until one is heard
                grown += 1
                await first.call_tool("demo__grow", {"name": f"fresh_{grown}"})
                with anyio.move_on_after(2):
                    await heard.wait()
            names = [t.name for t in (await second.list_tools(cache_mode="refresh")).tools]
            rows = {row.name for row in registry_b.entries()}
    assert f"demo__fresh_{grown}" in names and f"demo__fresh_{grown}" in rows


async def test_after_redis_comes_back_clients_are_told_and_changes_flow_again() -> None:
    async with (
        redis_server() as redis,
        _two_replicas(redis) as (a, b, _),
        client(a, "2026-07-28") as first,
        client(b, "2026-07-28") as second,
    ):
        with anyio.fail_after(90):
            async with second.listen(tools_list_changed=True) as subscription:
                await redis.stop()
                await redis.start()
                async for _event in subscription:  # changes may have been missed meanwhile: read the list again
                    break
            async with second.listen(tools_list_changed=True) as subscription:
                await first.call_tool("demo__grow", {"name": "after"})
                async for _event in subscription:
                    break
            names = [t.name for t in (await second.list_tools(cache_mode="refresh")).tools]
    assert "demo__after" in names


async def test_one_replica_holding_a_legacy_session_tells_it_of_a_state_and_a_state_coming_back_is_new() -> None:
    async with MemoryState() as state, ToolRegistry() as registry:
        first, second = (SharedChanges(state, registry, lambda server, found: None, name) for name in ("a", "b"))
        told = [
            await first.tell_session("default", "s1", {"demo": "s1"}),
            await second.tell_session("default", "s1", {"demo": "s1"}),  # the same change, heard by another copy
            await second.tell_session("default", "s2", {"demo": "s1"}),  # another session
            await second.tell_session("default", "s1", {"demo": "s2", None: "n1"}),
            await first.tell_session("default", "s1", {"demo": "s2", None: "n1"}),
            await first.tell_session("default", "s1", {"demo": "s1"}),  # the server changed back
        ]
    assert told == [True, False, True, True, False, True]
