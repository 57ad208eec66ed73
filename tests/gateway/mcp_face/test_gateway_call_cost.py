"""What one tools/call costs the gateway: no work that grows with the catalog, no wait on the network.

The SDK checks each 2026-07-28 `tools/call` over HTTP against the called tool's input schema
(its `Mcp-Param-*` headers). Unless the server hands it a lookup, it finds that schema by running
the server's own `tools/list` handler and walking its pages on every call: a catalog of 1,000
rows would be listed and serialized up to ten pages deep per call.
"""

from __future__ import annotations

import os
import socket
from typing import Any

import anyio
import mcp
from anyio.abc import SocketAttribute

from _gateway import serving
from toolmesh import ToolRegistry
from toolmesh.gateway import McpGateway

ROWS = 250


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    for index in range(ROWS):

        def echo(text: str) -> str:
            """Echo the text."""
            return text

        registry.register(echo, name=f"echo_{index}")
    return registry


async def test_a_call_does_not_run_the_tool_listing() -> None:
    async with _registry() as registry:
        gateway = McpGateway(registry)
        server = gateway.server()
        listing = server.get_request_handler("tools/list")
        assert listing is not None
        listed: list[str | None] = []

        async def counted(ctx: Any, params: Any) -> Any:
            listed.append(getattr(params, "cursor", None))
            return await listing.handler(ctx, params)

        server.add_request_handler("tools/list", listing.params_type, counted)
        async with serving(gateway) as base, mcp.Client(f"{base}/mcp", mode="2026-07-28") as client:
            with anyio.fail_after(60):
                cursor: str | None = None
                names: list[str] = []
                while True:  # the client lists first (it checks results against the listed schemas)
                    page = await client.list_tools(cursor=cursor)
                    names += [tool.name for tool in page.tools]
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                assert len(names) == ROWS
                pages = len(listed)
                for index in (0, ROWS - 1):
                    result = await client.call_tool(f"echo_{index}", {"text": "hi"})
                    assert not result.is_error
                    assert result.content[0].text == "hi"  # type: ignore[union-attr]

        assert len(listed) == pages, f"tools/call ran the tools/list handler: pages {listed[pages:]}"


def _server_side_of(local: tuple[str, int], peer: tuple[str, int]) -> socket.socket:
    """A duplicate of this process's socket whose ends are `local` and `peer` (the gateway's accepted one)."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            candidate = socket.fromfd(int(fd), socket.AF_INET, socket.SOCK_STREAM)
        except OSError:
            continue
        try:
            if candidate.getsockname()[:2] == local and candidate.getpeername()[:2] == peer:
                return candidate
        except OSError:
            pass
        candidate.close()
    raise AssertionError(f"no socket {local} <- {peer} in this process")


async def test_the_gateway_answers_on_connections_with_nagle_off() -> None:
    """A response written in pieces (an SSE answer: headers, then events) must not wait for the client's ACK.

    With Nagle's algorithm on, the second small write waits for the client's delayed ACK (about 40 ms on
    Linux) on every call; asyncio turns it off only for sockets created as TCP (`IPPROTO_TCP`).
    """
    async with ToolRegistry() as registry, serving(McpGateway(registry)) as base:
        port = int(base.rsplit(":", 1)[1])
        with anyio.fail_after(60):
            async with await anyio.connect_tcp("127.0.0.1", port) as stream:
                await stream.send(f"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                assert (await stream.receive()).startswith(b"HTTP/1.1 404")  # accepted and answered
                client = stream.extra(SocketAttribute.local_address)
                assert isinstance(client, tuple)
                with _server_side_of(("127.0.0.1", port), client[:2]) as accepted:
                    assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
