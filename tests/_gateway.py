"""Shared helpers for the gateway tests: a gateway served over HTTP in the test's own task group,
a two-tool catalog (``look`` is read-only, ``wipe`` is not) with its read-only profile, and a raw
socket client that uploads a large body to see when the server stops reading it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp
from mcp.client.streamable_http import streamable_http_client
from starlette.types import ASGIApp, Message

from toolmesh import Entry, ToolRegistry, tool
from toolmesh.gateway import HttpSettings, McpGateway

__all__ = ["ACCEPT", "INIT", "Upload", "asgi_post", "client", "look_and_wipe", "only_look", "serving", "upload"]

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
"""The headers of a raw Streamable HTTP POST (JSON body, JSON or SSE answer)."""
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
"""A raw 2025-11-25 ``initialize`` request."""


@tool
async def look(path: str) -> str:
    """Read something."""
    return f"looked at {path}"


@tool
async def wipe(path: str) -> str:
    """Delete something."""
    return f"wiped {path}"


def look_and_wipe() -> ToolRegistry:
    """A registry of ``look`` and ``wipe``."""
    registry = ToolRegistry()
    registry.register(look)
    registry.register(wipe)
    return registry


def only_look(entry: Entry) -> bool:
    """The read-only profile of ``look_and_wipe``: ``look`` alone."""
    return entry.name == "look"


@asynccontextmanager
async def serving(
    gateway: McpGateway, settings: HttpSettings | None = None, *, lean: bool = True
) -> AsyncIterator[str]:
    """Serve ``gateway`` on a free loopback port for the block; yields the base URL (``http://127.0.0.1:P``).

    Leaving the block cancels ``serve_http``, which closes every client session. ``lean=False``
    serves every request through the SDK's server.
    """
    urls: list[str] = []
    ready = anyio.Event()

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    async with anyio.create_task_group() as group:

        async def serve() -> None:
            await gateway.serve_http(settings or HttpSettings(port=0), on_ready=on_ready, lean=lean)

        group.start_soon(serve)
        with anyio.fail_after(60):
            await ready.wait()
        try:
            yield urls[0]
        finally:
            group.cancel_scope.cancel()


def client(url: str, mode: Any = "legacy", token: str | None = None, **options: Any) -> mcp.Client:
    """An ``mcp.Client`` for ``url``, sending ``token`` as a bearer token when given."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60))
    return mcp.Client(transport, mode=mode, **options)


@dataclass
class Upload:
    """What a raw upload saw."""

    answer: bytes
    """Everything the server sent back."""
    sent: int
    """Body bytes the client got to send."""
    closed: bool
    """Whether the server closed the connection before the client had sent all it meant to."""

    @property
    def status(self) -> int:
        """The answer's HTTP status (0 when there was none)."""
        parts = self.answer.split(b" ", 2)
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0

    @property
    def head(self) -> str:
        """The answer's status line and headers, lower-cased."""
        return self.answer.partition(b"\r\n\r\n")[0].decode("latin-1").lower()


_PIECE = b" " * 65536


async def upload(
    url: str, *, declared: int | None, most: int = 64 * 1024 * 1024, headers: dict[str, str] | None = None
) -> Upload:
    """POST a body of spaces to ``url`` over a raw socket, reading the answer as it comes, until the server
    closes the connection or ``most`` body bytes were sent.

    ``declared`` is the ``Content-Length`` to announce (more than will be sent); None sends the body
    chunked, with no length. Sending stops at a reset or broken pipe.
    """
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    head = f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
    head += "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    head += f"Content-Length: {declared}\r\n\r\n" if declared is not None else "Transfer-Encoding: chunked\r\n\r\n"
    piece = _PIECE if declared is not None else b"%x\r\n%s\r\n" % (len(_PIECE), _PIECE)
    answer = bytearray()
    ended = anyio.Event()
    sent = 0
    with anyio.fail_after(120):
        async with await anyio.connect_tcp(parts.hostname, parts.port) as stream, anyio.create_task_group() as group:

            async def read() -> None:
                try:
                    while True:
                        answer.extend(await stream.receive())
                except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                    ended.set()

            group.start_soon(read)
            try:
                await stream.send(head.encode("latin-1"))
                while sent < most and not ended.is_set():
                    await stream.send(piece)
                    sent += len(_PIECE)
            except (anyio.BrokenResourceError, OSError):
                pass
            if sent < most:
                await ended.wait()  # the server is closing: read its answer to the end
            group.cancel_scope.cancel()
    return Upload(bytes(answer), sent, sent < most)


async def asgi_post(app: ASGIApp, body: dict[str, Any], **headers: str) -> tuple[int, dict[str, str]]:
    """POST ``body`` to ``/mcp`` of an ASGI ``app`` as uvicorn would (from 127.0.0.1); its answer's status and
    headers."""
    raw = json.dumps(body).encode()
    given = {"host": "127.0.0.1", **{k.lower(): v for k, v in ACCEPT.items()}, **headers}
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in {**given, "content-length": str(len(raw))}.items()],
    }
    sent: list[Message] = []
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if delivered:
            await anyio.sleep_forever()
        delivered = True
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    with anyio.fail_after(30):
        await app(scope, receive, send)
    start = next(message for message in sent if message["type"] == "http.response.start")
    return start["status"], {k.decode().lower(): v.decode() for k, v in start.get("headers", [])}
