"""Faults of a deployment of three replicas: Redis stopped and started again mid-run, a replica killed mid-run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from _replicas import Mesh, replicas
from _services import RedisServer, redis_server


@pytest.fixture(scope="module")
async def deployment() -> AsyncIterator[tuple[RedisServer, Mesh]]:
    async with redis_server() as redis, replicas(3, state=redis.url) as mesh:
        yield redis, mesh


async def _add(client: Any, n: int) -> None:
    result = await client.call_tool("add", {"a": n, "b": 1})
    assert not result.is_error, result
    assert result.content[0].text == str(n + 1)


async def test_redis_lost_and_back_mid_run(deployment: tuple[RedisServer, Mesh]) -> None:
    """Without Redis a 2025-11-25 session's request fails with an error saying to retry, while 2026-07-28 calls
    (no shared state needed) go on; once Redis is back (empty: it keeps nothing on disk here) the same
    session goes on."""
    redis, mesh = deployment
    with anyio.fail_after(100):
        async with mesh.client("legacy") as legacy, mesh.client("2026-07-28") as modern:
            for n in range(10):
                await _add(legacy, n)
                await _add(modern, n)
            await redis.stop()
            try:
                with pytest.raises(MCPError, match="retry shortly"):
                    await _add(legacy, 10)
                for n in range(10, 20):
                    await _add(modern, n)
            finally:
                await redis.start()
            for n in range(20, 40):
                await _add(legacy, n)
                await _add(modern, n)


async def test_the_run_goes_on_on_the_other_replicas_when_one_is_killed(deployment: tuple[RedisServer, Mesh]) -> None:
    _, mesh = deployment
    mesh.reset()
    with anyio.fail_after(100):
        async with mesh.client("legacy") as legacy, mesh.client("2026-07-28") as modern:
            for n in range(30):
                await _add(legacy, n)
                await _add(modern, n)
            await mesh.kill(0)
            killed_at = len(mesh.served)
            for n in range(30, 90):
                await _add(legacy, n)
                await _add(modern, n)
    assert {"replica1", "replica2", "replica3"} <= set(mesh.served[:killed_at])
    assert set(mesh.served[killed_at:]) == {"replica2", "replica3"}  # the killed replica's turns went to the others
