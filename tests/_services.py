"""Real services on loopback for the tests that need them: a `redis-server` and an HAProxy.

Both binaries come from Debian's packages through `scripts/install_services.sh` (run by
`make install`). Each context manager starts its own process on a free 127.0.0.1 port,
waits until it answers, and stops it by its handle on exit, so no test leaves one behind.

    async with redis_server() as redis:          # redis.url == "redis://127.0.0.1:PORT/0"
        await redis.stop(); await redis.start()  # Redis lost and back, on the same port

    async with haproxy([url_a, url_b]) as front: # front == "http://127.0.0.1:PORT", round-robin
        ...
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import anyio
from anyio.abc import Process

from _servers import ROOT, _port_open, free_port, stop_process

_STARTUP_TIMEOUT = 60.0


def _binary(name: str) -> str:
    found = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
    if found is None:
        raise RuntimeError(f"{name} is not installed: run `make install` (scripts/install_services.sh)")
    return found


async def _wait_listening(name: str, proc: Process, port: int) -> None:
    with anyio.fail_after(_STARTUP_TIMEOUT):
        while not _port_open(port):
            if proc.returncode is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode} before listening on {port}")
            await anyio.sleep(0.05)


class RedisServer:
    """A `redis-server` on 127.0.0.1 that a test can stop and start again on the same port."""

    def __init__(self, port: int, workdir: Path) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self._workdir = workdir
        self._process: Process | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def start(self) -> None:
        if self.running:
            return
        self._process = await anyio.open_process(
            [
                _binary("redis-server"),
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self._workdir),
                "--protected-mode",
                "yes",
                "--loglevel",
                "warning",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None,
        )
        await _wait_listening("redis-server", self._process, self.port)

    async def stop(self) -> None:
        if self._process is not None:
            process, self._process = self._process, None
            await stop_process(process)


@asynccontextmanager
async def redis_server() -> AsyncIterator[RedisServer]:
    """A fresh, empty `redis-server` (no persistence) on a free loopback port."""
    with tempfile.TemporaryDirectory(prefix="toolmesh-redis-") as workdir:
        server = RedisServer(free_port(), Path(workdir))
        await server.start()
        try:
            yield server
        finally:
            with anyio.CancelScope(shield=True):
                await server.stop()


class Front(str):
    """The load balancer's base URL (a plain `str`), plus its `port`."""

    port: int


HAPROXY_TEMPLATE = ROOT / "examples" / "deploy" / "haproxy.cfg"
"""The deployment guide's HAProxy config: the tests serve it with their own bind address and servers."""


def haproxy_config(port: int, backends: Sequence[str], server_timeout: str | None = None) -> str:
    """The guide's HAProxy config (round-robin over `backends`, base URLs) bound to 127.0.0.1:`port`.

    `server_timeout` (e.g. "2s") replaces its `timeout server`: a response quiet for that long is cut.
    """
    lines: list[str] = []
    for line in HAPROXY_TEMPLATE.read_text().splitlines():
        stripped = line.strip()
        if server_timeout is not None and stripped.startswith("timeout server "):
            lines.append(f"    timeout server {server_timeout}")
        elif stripped.startswith("bind "):
            lines.append(f"    bind 127.0.0.1:{port}")
        elif stripped.startswith("server replica"):
            if not any(other.strip().startswith("server replica") for other in lines):
                for index, backend in enumerate(backends, start=1):
                    parts = urlsplit(backend)
                    options = stripped.split(maxsplit=3)[3]  # after "server NAME ADDRESS"
                    lines.append(f"    server replica{index} {parts.hostname}:{parts.port} {options}")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


@asynccontextmanager
async def haproxy(
    backends: Sequence[str], server_timeout: str | None = None, config: Callable[[int], str] | None = None
) -> AsyncIterator[Front]:
    """A real HAProxy on a free loopback port, round-robin over `backends` (http://127.0.0.1:PORT).

    `config(port)`, when given, is the whole config instead (a test's own routing).
    """
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="toolmesh-haproxy-") as workdir:
        path = Path(workdir) / "haproxy.cfg"
        path.write_text(config(port) if config is not None else haproxy_config(port, backends, server_timeout))
        process = await anyio.open_process(
            [_binary("haproxy"), "-db", "-f", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None,
        )
        try:
            await _wait_listening("haproxy", process, port)
            front = Front(f"http://127.0.0.1:{port}")
            front.port = port
            yield front
        finally:
            with anyio.CancelScope(shield=True):
                await stop_process(process)
