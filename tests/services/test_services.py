"""The real services the replica tests stand on: redis-server answers and comes back; HAProxy alternates."""

from __future__ import annotations

import itertools
import socket
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx

from _servers import _port_open, free_port, stop_process
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


async def test_haproxy_alternates_between_its_backends(tmp_path: Path) -> None:
    """Two real backends (``python -m http.server``, each serving a file naming it) behind HAProxy."""
    async with AsyncExitStack() as stack:
        urls = []
        for name in ("a", "b"):
            folder = tmp_path / name
            folder.mkdir()
            (folder / "who").write_text(name)
            port = free_port()
            argv = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)]
            process = await anyio.open_process(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            stack.push_async_callback(stop_process, process)
            with anyio.fail_after(60):
                while not _port_open(port):  # noqa: ASYNC110 (a child process: no event to wait on)
                    await anyio.sleep(0.05)
            urls.append(f"http://127.0.0.1:{port}")
        front = await stack.enter_async_context(haproxy(urls))
        client = await stack.enter_async_context(httpx.AsyncClient())
        answers: list[str] = []
        with anyio.fail_after(30):
            while len(answers) < 6:
                reply = await client.get(f"{front}/who")
                if reply.status_code == 200:
                    answers.append(reply.text)
                else:
                    await anyio.sleep(0.1)
    assert set(answers) == {"a", "b"}
    assert all(first != second for first, second in itertools.pairwise(answers))
