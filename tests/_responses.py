"""Helpers for the Responses endpoint tests: ASGI apps served in-process, the scripted upstream, tool servers.

upstream = ScriptedUpstream([Reply(...), ...])
async with serve_asgi(upstream.app) as model_url, serve_asgi(tools_server().streamable_http_app()) as mcp_base:
    async with responses_gateway(model_url + "/v1") as (client, gateway_url):
        response = await client.responses.create(model="m", input="hi", tools=[mcp_tool("calc", mcp_base + "/mcp")])
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from openai import AsyncOpenAI
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from _servers import FIXTURES, fixture_module
from toolmesh import ToolRegistry
from toolmesh.gateway import HttpSettings, McpGateway, ResponsesEndpoint, ResponsesSettings, mount_responses

_upstream = fixture_module(FIXTURES / "scripted_upstream.py")
Reply = _upstream.Reply
ScriptedUpstream = _upstream.ScriptedUpstream

__all__ = [
    "Reply",
    "ScriptedUpstream",
    "calc_server",
    "mcp_tool",
    "responses_gateway",
    "scene",
    "serve_asgi",
    "strict_event",
    "strict_response",
]

_EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


class _Quiet(uvicorn.Server):
    """uvicorn without signal handlers, telling when it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = anyio.Event()

    def capture_signals(self) -> Any:
        return nullcontext()

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        self.listening.set()


@asynccontextmanager
async def serve_asgi(app: Any, host: str = "127.0.0.1", **options: Any) -> AsyncIterator[str]:
    """Serve an ASGI app with uvicorn on a free port of ``host`` (loopback) for the block; yields ``http://HOST:PORT``
    (``https://`` when ``options``, more ``uvicorn.Config`` settings, give ``ssl_certfile``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # asyncio sets TCP_NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    sock.listen(128)
    sock.setblocking(False)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2, **options)
    server = _Quiet(config)
    scheme = "https" if options.get("ssl_certfile") else "http"
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            with anyio.fail_after(60):
                await server.listening.wait()
            try:
                yield f"{scheme}://{host}:{port}"
            finally:
                server.should_exit = True
    finally:
        sock.close()


def calc_server(name: str = "calc", calls: list[str] | None = None) -> MCPServer:
    """A small MCP server: ``add(a, b)`` (read-only), ``fail(reason)`` (isError), ``wipe()`` (destructive).

    Each call's tool name is appended to ``calls`` when given.
    """
    server = MCPServer(name)
    seen = calls if calls is not None else []

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        seen.append("add")
        return a + b

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the reason."""
        seen.append("fail")
        raise ToolError(f"failed: {reason}")

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
    def wipe() -> str:
        """Wipe everything."""
        seen.append("wipe")
        return "wiped"

    return server


def mcp_tool(label: str, url: str, **fields: Any) -> dict[str, Any]:
    """An ``mcp`` tool of a request (approval off unless ``require_approval`` is given)."""
    return {"type": "mcp", "server_label": label, "server_url": url, "require_approval": "never", **fields}


@asynccontextmanager
async def responses_gateway(
    upstream_url: str, registry: ToolRegistry | None = None, hooks: Any = (), **settings: Any
) -> AsyncIterator[tuple[AsyncOpenAI, str]]:
    """The gateway's HTTP app with ``/v1/responses`` mounted, served on a free port.

    Yields an ``AsyncOpenAI`` client whose base URL is the gateway's ``/v1``, and that base URL.
    """
    async with registry if registry is not None else ToolRegistry() as reg:
        gateway = McpGateway(reg, hooks=hooks)
        endpoint = ResponsesEndpoint.for_gateway(gateway, ResponsesSettings(upstream=upstream_url, **settings))
        app = mount_responses(gateway.http_app(HttpSettings(port=0)), endpoint)
        async with (
            serve_asgi(app) as base,
            AsyncOpenAI(base_url=base + "/v1", api_key="test", max_retries=0, timeout=60) as client,
        ):
            yield client, base + "/v1"


@asynccontextmanager
async def scene(
    replies: list[Any],
    server: MCPServer | None = None,
    registry: ToolRegistry | None = None,
    hooks: Any = (),
    **settings: Any,
) -> AsyncIterator[tuple[Any, ScriptedUpstream, str]]:
    """The scripted upstream, one MCP server (``calc`` by default) and the gateway.

    Yields (client, upstream, the MCP server's URL).
    """
    upstream = ScriptedUpstream(list(replies))
    mcp_app = (server or calc_server()).streamable_http_app()
    async with (
        serve_asgi(upstream.app) as model,
        serve_asgi(mcp_app) as mcp_base,
        responses_gateway(model + "/v1", registry, hooks, **settings) as (client, _),
    ):
        with anyio.fail_after(60):
            yield client, upstream, mcp_base + "/mcp"


def strict_response(response: Any) -> Response:
    """``response`` validated against the SDK's types (the SDK's own parsing does not validate)."""
    data = (
        response if isinstance(response, dict) else response.model_dump(mode="json", exclude_unset=True, by_alias=True)
    )
    return Response.model_validate(data)


def strict_event(event: Any) -> Any:
    """A stream event validated against the SDK's ``ResponseStreamEvent`` union."""
    data = event if isinstance(event, dict) else event.model_dump(mode="json", exclude_unset=True, by_alias=True)
    return _EVENTS.validate_python(data)
