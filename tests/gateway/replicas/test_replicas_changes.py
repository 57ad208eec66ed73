"""Notifications of a 2025-11-25 session reach its GET stream, whichever replica sends them."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types

from _replicas import replicas
from _servers import DEMO, http_server
from _services import redis_server

UPSTREAM = {"mcpServers": {"demo": {"command": sys.executable, "args": [str(DEMO), "stdio"]}}}


async def test_list_changed_sent_by_any_replica_reaches_the_client() -> None:
    """Each replica runs its own upstream server: `grow` through one changes that replica's catalog only, and
    that replica tells the session. The client's GET stream is on one replica; it hears every change."""
    heard = 0
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        nonlocal heard
        if isinstance(message, mcp_types.ToolListChangedNotification):
            heard += 1
            if heard >= 3:
                changed.set()

    async with redis_server() as redis, replicas(3, state=redis.url, config=UPSTREAM) as mesh:
        with anyio.fail_after(100):
            async with mesh.client("legacy", message_handler=on_message) as client:
                await client.list_tools()
                for name in ("new_a", "new_b", "new_c"):
                    result = await client.call_tool("demo__grow", {"name": name})
                    assert not result.is_error, result
                await changed.wait()
        mutated_on = {replica for kind, replica in mesh.posts if kind == "call"}
    assert mutated_on == {"replica1", "replica2", "replica3"}  # round-robin: one change per replica
    assert len(set(mesh.gets)) == 1  # one GET stream, on one replica: it heard all three


async def test_a_listen_stream_on_one_replica_hears_a_change_made_through_another() -> None:
    """2026-07-28: one upstream server all replicas share; `grow` through one replica, the client's
    `subscriptions/listen` stream on another hears it, and then every replica lists the new tool."""
    async with (
        redis_server() as redis,
        http_server(DEMO) as demo,
        replicas(3, state=redis.url, config={"mcpServers": {"demo": {"url": demo}}}) as mesh,
    ):
        with anyio.fail_after(100):
            async with mesh.client("2026-07-28") as client:
                async with client.listen(tools_list_changed=True) as subscription:
                    result = await client.call_tool("demo__grow", {"name": "fresh"})
                    assert not result.is_error, result
                    async for _ in subscription:
                        break
                seen = []
                for _ in range(3):
                    names = [tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools]
                    seen.append(("demo__fresh" in names, mesh.served[-1]))
    listening_on = [replica for kind, replica in mesh.posts if kind == "listen"]
    grown_on = next(replica for kind, replica in mesh.posts if kind == "call")
    assert len(listening_on) == 1 and listening_on[0] != grown_on
    assert {replica for _, replica in seen} == {"replica1", "replica2", "replica3"}
    assert all(listed for listed, _ in seen), seen
