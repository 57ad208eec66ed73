"""The real services the replica tests stand on: redis-server answers and comes back; HAProxy alternates."""

from __future__ import annotations

import itertools
import socket

import anyio
import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from _servers import free_port
from _services import haproxy, redis_server


def _redis_ping(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(64)


async def test_redis_server_answers_and_restarts_on_its_port() -> None:
    async with redis_server() as redis:
        assert redis.url == f"redis://127.0.0.1:{redis.port}/0"
        assert _redis_ping(redis.port) == b"+PONG\r\n"
        await redis.stop()
        assert not redis.running
        await redis.start()
        assert _redis_ping(redis.port) == b"+PONG\r\n"


def _named_app(name: str) -> Starlette:
    async def who(request: Request) -> PlainTextResponse:
        return PlainTextResponse(name)

    return Starlette(routes=[Route("/who", who)])


async def test_haproxy_alternates_between_its_backends() -> None:
    servers = []
    urls = []
    for name in ("a", "b"):
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(_named_app(name), host="127.0.0.1", port=port, log_level="error"))
        servers.append(server)
        urls.append(f"http://127.0.0.1:{port}")
    async with anyio.create_task_group() as tg:
        for server in servers:
            tg.start_soon(server.serve)
        with anyio.fail_after(30):
            while not all(server.started for server in servers):  # noqa: ASYNC110 (uvicorn has no started event)
                await anyio.sleep(0.05)
        try:
            async with haproxy(urls) as front, httpx.AsyncClient() as client:
                answers = []
                with anyio.fail_after(30):
                    while len(answers) < 6:
                        reply = await client.get(f"{front}/who")
                        if reply.status_code == 200:
                            answers.append(reply.text)
                        else:
                            await anyio.sleep(0.1)
            assert set(answers) == {"a", "b"}
            assert all(first != second for first, second in itertools.pairwise(answers))
        finally:
            for server in servers:
                server.should_exit = True
