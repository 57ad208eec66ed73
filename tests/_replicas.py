"""Several `toolmesh serve` replicas as separate processes, behind the deployment guide's HAProxy.

    async with replicas(3, state=redis.url) as mesh:   # or stateless=True
        mesh.url                      # http://127.0.0.1:PORT/mcp, HAProxy's front, round-robin
        mesh.served                   # replica names, one per HTTP response seen by clients from mesh.client()
        async with mesh.client("legacy") as client: ...
        await mesh.kill(0)            # SIGKILL replica 0 (the run goes on on the others)

Each replica serves `tests/fixtures/replica_tools.py` on its own free loopback port and knows
its name (`replica1`, ... as HAProxy names it) through `TOOLMESH_TEST_REPLICA`. HAProxy adds
`X-Toolmesh-Replica` to every response (examples/deploy/haproxy.cfg), which is how a test
proves where each request went. Every process started here is stopped on exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp
from anyio.abc import Process
from mcp.client.streamable_http import streamable_http_client

from _servers import FIXTURES, free_port, stop_process, toolmesh_env
from _services import Front, _wait_listening, haproxy

REPLICA_HEADER = "x-toolmesh-replica"


@dataclass
class Mesh:
    """Replicas behind one HAProxy front."""

    front: Front
    processes: list[Process]
    urls: list[str]
    served: list[str] = field(default_factory=list)
    """The replica that answered each response a `client()` received, in order (HAProxy's header)."""
    statuses: list[int] = field(default_factory=list)
    """The HTTP status of each of those responses, in the same order."""
    sessions: set[str] = field(default_factory=set)
    """The ``Mcp-Session-Id`` values of the responses (2025-11-25 sessions)."""
    gets: list[str] = field(default_factory=list)
    """The replica that answered each GET (a 2025-11-25 client's notification stream, or a resumed stream)."""
    resumed: list[str] = field(default_factory=list)
    """The replica that answered each GET resuming a call's stream (``Last-Event-ID`` of a request's stream)."""
    posts: list[tuple[str, str]] = field(default_factory=list)
    """(kind, replica) of each POST: "call" (a ``tools/call`` without answers), "answer" (a 2025-11-25
    answer to the server's request, or a 2026-07-28 retry carrying input responses), "listen" or "other"."""

    @property
    def url(self) -> str:
        return f"{self.front}/mcp"

    async def _seen(self, response: httpx2.Response) -> None:
        replica = response.headers.get(REPLICA_HEADER, "?")
        self.served.append(replica)
        self.statuses.append(response.status_code)
        if session := response.headers.get("mcp-session-id"):
            self.sessions.add(session)
        request = response.request
        if request.method == "GET":
            self.gets.append(replica)
            resuming = request.headers.get("last-event-id", "")
            if resuming and not resuming.endswith("/_GET_stream"):
                self.resumed.append(replica)
        if request.method == "POST":
            body = request.content
            if b'"method"' not in body or b'"inputResponses"' in body:
                self.posts.append(("answer", replica))
            else:
                kind = "call" if b'"tools/call"' in body else "listen" if b'"subscriptions/listen"' in body else "other"
                self.posts.append((kind, replica))

    def http_client(self) -> httpx2.AsyncClient:
        """An HTTP client that records which replica answered each response."""
        return httpx2.AsyncClient(timeout=60, event_hooks={"response": [self._seen]})

    def client(self, mode: Any, **options: Any) -> mcp.Client:
        """The official MCP client through the front, in `mode` ("legacy" or "2026-07-28")."""
        return mcp.Client(streamable_http_client(self.url, http_client=self.http_client()), mode=mode, **options)

    def reset(self) -> None:
        """Forget what was recorded so far (a test sharing the mesh starts from nothing)."""
        self.served.clear()
        self.statuses.clear()
        self.gets.clear()
        self.posts.clear()
        self.sessions.clear()
        self.resumed.clear()

    async def kill(self, index: int) -> None:
        """SIGKILL replica `index` (no graceful shutdown: its in-flight work is lost)."""
        process = self.processes[index]
        process.kill()
        await process.wait()


def _config(folder: Path, state: str | None, extra: dict[str, Any]) -> Path:
    serve: dict[str, Any] = {"transport": "http", "host": "127.0.0.1"}
    if state is not None:
        serve["state"] = state
    config = {"native": [f"{FIXTURES / 'replica_tools.py'}:registry"], "serve": serve, **extra}
    path = folder / "toolmesh.json"
    path.write_text(json.dumps(config))
    return path


async def _replica(config: Path, name: str, port: int, extra: Sequence[str], env: dict[str, str]) -> Process:
    process = await anyio.open_process(
        [sys.executable, "-m", "toolmesh", "serve", "-c", str(config), "--port", str(port), *extra],
        env=toolmesh_env(**env, TOOLMESH_TEST_REPLICA=name),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=None,  # inherited: pytest shows it on failure
        cwd=str(config.parent),
    )
    try:
        await _wait_listening(f"toolmesh serve ({name})", process, port)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await stop_process(process)
        raise
    return process


@asynccontextmanager
async def replicas(
    count: int,
    *,
    state: str | None = None,
    stateless: bool = False,
    config: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Mesh]:
    """`count` replicas (`serve.state` / `--stateless`) behind HAProxy, started together, stopped on exit.

    `config` adds keys to each replica's toolmesh.json (e.g. `mcpServers`, `policy`); `env` to its environment.
    """
    extra = ["--stateless"] if stateless else []
    with tempfile.TemporaryDirectory(prefix="toolmesh-replicas-") as folder:
        config_path = _config(Path(folder), state, config or {})
        ports = [free_port() for _ in range(count)]
        processes: list[Process | None] = [None] * count
        async with AsyncExitStack() as stack:

            async def stop_all() -> None:
                with anyio.CancelScope(shield=True):
                    async with anyio.create_task_group() as group:
                        for process in processes:
                            if process is not None:
                                group.start_soon(stop_process, process)

            stack.push_async_callback(stop_all)

            async def start(index: int) -> None:
                processes[index] = await _replica(config_path, f"replica{index + 1}", ports[index], extra, env or {})

            async with anyio.create_task_group() as group:
                for index in range(count):
                    group.start_soon(start, index)
            urls = [f"http://127.0.0.1:{port}" for port in ports]
            front = await stack.enter_async_context(haproxy(urls))
            yield Mesh(front, [p for p in processes if p is not None], urls)
