"""Shared helpers for the gateway tests: a gateway served over HTTP in the test's own task group,
and a two-tool catalog (``look`` is read-only, ``wipe`` is not) with its read-only profile."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp
from mcp.client.streamable_http import streamable_http_client

from toolmesh import Entry, ToolRegistry, tool
from toolmesh.gateway import HttpSettings, McpGateway

__all__ = ["client", "look_and_wipe", "only_look", "serving"]


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
async def serving(gateway: McpGateway, settings: HttpSettings | None = None) -> AsyncIterator[str]:
    """Serve ``gateway`` on a free loopback port for the block; yields the base URL (``http://127.0.0.1:P``).

    Leaving the block cancels ``serve_http``, which closes every client session.
    """
    urls: list[str] = []
    ready = anyio.Event()

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    async with anyio.create_task_group() as group:

        async def serve() -> None:
            await gateway.serve_http(settings or HttpSettings(port=0), on_ready=on_ready)

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
