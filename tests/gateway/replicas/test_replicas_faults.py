"""Faults of a deployment of three replicas: Redis stopped and started again mid-run, a replica killed mid-run."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from _replicas import Mesh, replicas
from _services import RedisServer, haproxy, redis_server


@pytest.fixture(scope="module")
async def deployment() -> AsyncIterator[tuple[RedisServer, Mesh]]:
    async with redis_server() as redis, replicas(3, state=redis.url) as mesh:
        yield redis, mesh


async def _add(client: Any, n: int) -> None:
    result = await client.call_tool("add", {"a": n, "b": 1})
    assert not result.is_error, result
    assert result.content[0].text == str(n + 1)


def _posts_to_one_gets_to_another(posts: str, gets: str) -> Callable[[int], str]:
    """An HAProxy config sending every POST to `posts` and every GET to `gets`, cutting responses quiet for 2 s."""

    def config(port: int) -> str:
        post, get = urlsplit(posts), urlsplit(gets)
        return f"""
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 2s
    option http-server-close
frontend gateway
    bind 127.0.0.1:{port}
    acl reading method GET
    use_backend readers if reading
    default_backend writers
backend writers
    http-response set-header X-Toolmesh-Replica writer
    server writer {post.hostname}:{post.port}
backend readers
    http-response set-header X-Toolmesh-Replica reader
    server reader {get.hostname}:{get.port}
"""

    return config


async def test_a_call_stream_cut_by_the_load_balancer_is_resumed_on_another_replica(
    deployment: tuple[RedisServer, Mesh],
) -> None:
    """The call runs on one replica; the balancer cuts its quiet stream after 2 s; the client resumes it (GET with
    Last-Event-ID), which reaches another replica, and that one follows the call's events in Redis until the
    result the first one stores."""
    _, mesh = deployment
    routing = _posts_to_one_gets_to_another(mesh.urls[1], mesh.urls[2])
    async with haproxy([], config=routing) as split:
        front = Mesh(split, mesh.processes, mesh.urls)
        with anyio.fail_after(100):
            async with front.client("legacy") as client:
                result = await client.call_tool("nap", {"seconds": 3.5})
    assert not result.is_error and result.content[0].text == "rested"  # type: ignore[union-attr]
    assert front.resumed and set(front.resumed) == {"reader"}  # the call's stream, resumed on the other replica


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
