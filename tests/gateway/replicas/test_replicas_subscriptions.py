"""A 2025-11-25 resource subscription held by one replica ends when the client ends it through another.

Two gateways (two replicas) share one Redis; each has its own session to its own copy of the
`watched` fixture server, which records each subscription it is asked for and each one it is
released from. A client subscribes through replica A; its `resources/unsubscribe`, or its session's
`DELETE`, reaches replica B: A lets go of the upstream subscription.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from _gateway import ACCEPT, INIT, serving
from _mcp import wait_until
from _servers import FIXTURES, stdio_params
from _services import redis_server
from toolmesh import McpServer, ToolRegistry
from toolmesh.gateway import McpGateway, RedisState

FEED = "watched://feed"


@asynccontextmanager
async def _two_replicas(log: Path) -> AsyncIterator[list[str]]:
    command, args, env = stdio_params(FIXTURES / "watched_server.py", {"FIXTURE_SUBSCRIPTIONS": str(log)})
    async with AsyncExitStack() as stack:
        redis = await stack.enter_async_context(redis_server())
        urls = []
        for _ in range(2):
            state = await stack.enter_async_context(RedisState(redis.url, prefix="t:"))
            registry = await stack.enter_async_context(ToolRegistry())
            await registry.connect(McpServer.stdio("watched", command, args, env=env, protocol="2025-11-25"))
            urls.append(await stack.enter_async_context(serving(McpGateway(registry, state=state))) + "/mcp")
        yield urls


class _Session:
    """A raw 2025-11-25 session whose requests go to whichever replica the test names."""

    def __init__(self, http: httpx2.AsyncClient) -> None:
        self.http = http
        self.id = ""
        self._ids = 1

    async def open(self, url: str) -> None:
        answer = await self.http.post(url, json=INIT, headers=ACCEPT)
        assert answer.status_code == 200, answer.text
        self.id = answer.headers["mcp-session-id"]
        await self.send(url, {"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _headers(self) -> dict[str, str]:
        return {**ACCEPT, "mcp-session-id": self.id, "mcp-protocol-version": "2025-11-25"}

    async def send(self, url: str, message: dict[str, Any]) -> None:
        answer = await self.http.post(url, json=message, headers=self._headers())
        assert answer.status_code in (200, 202), answer.text

    async def request(self, url: str, method: str, **params: Any) -> None:
        self._ids += 1
        await self.send(url, {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params})

    async def delete(self, url: str) -> None:
        answer = await self.http.delete(url, headers=self._headers())
        assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("ending", ["resources/unsubscribe", "DELETE"])
async def test_a_subscription_ended_through_another_replica_is_released_upstream(ending: str, tmp_path: Path) -> None:
    log = tmp_path / "subscriptions.log"
    log.touch()
    async with _two_replicas(log) as (a, b), httpx2.AsyncClient(timeout=60) as http:
        session = _Session(http)
        with anyio.fail_after(60):
            await session.open(a)
            await session.request(a, "resources/subscribe", uri=FEED)
            assert log.read_text().splitlines() == [f"subscribe {FEED}"]
            if ending == "DELETE":
                await session.delete(b)
            else:
                await session.request(b, "resources/unsubscribe", uri=FEED)
            await wait_until(lambda: f"unsubscribe {FEED}" in log.read_text(), 30)
