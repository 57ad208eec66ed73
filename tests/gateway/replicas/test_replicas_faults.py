"""Faults of a deployment: a replica killed mid-run, Redis stopped and started again mid-run."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from _replicas import replicas
from _services import redis_server


async def _add(client: Any, n: int) -> None:
    result = await client.call_tool("add", {"a": n, "b": 1})
    assert not result.is_error, result
    assert result.content[0].text == str(n + 1)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_run_goes_on_on_the_other_replicas_when_one_is_killed(mode: Any) -> None:
    async with redis_server() as redis, replicas(3, state=redis.url) as mesh:
        with anyio.fail_after(180):
            async with mesh.client(mode) as client:
                for n in range(60):
                    await _add(client, n)
                await mesh.kill(0)
                killed_at = len(mesh.served)
                for n in range(60, 150):
                    await _add(client, n)
        after = mesh.served[killed_at:]
    assert {"replica1", "replica2", "replica3"} <= set(mesh.served[:killed_at])
    assert set(after) == {"replica2", "replica3"}  # the killed replica's turns went to the others


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_redis_lost_and_back_mid_run(mode: Any) -> None:
    """Without Redis a 2025-11-25 session's request fails with a retryable 503 (2026-07-28 calls need no shared
    state and go on); once Redis is back (empty: it keeps nothing on disk here) the same session goes on."""
    async with redis_server() as redis, replicas(2, state=redis.url) as mesh:
        with anyio.fail_after(180):
            async with mesh.client(mode) as client:
                for n in range(20):
                    await _add(client, n)
                await redis.stop()
                if mode == "legacy":
                    with pytest.raises(MCPError, match="retry"):
                        await _add(client, 20)
                else:
                    for n in range(20, 40):
                        await _add(client, n)
                await redis.start()
                for n in range(40, 80):
                    await _add(client, n)
