"""The gateway in front of one MCP server over Streamable HTTP on 127.0.0.1, as a program (a child of bench/gateway.py).

Run:  python bench/_gateway_serve.py UPSTREAM_URL PORT

What ``toolmesh serve`` does with a config holding one server over HTTP with prefixes off, and no
native tools: a ``ToolRegistry`` connects the server, an ``McpGateway`` serves it at
http://127.0.0.1:PORT/mcp until terminated. bench/gateway.py runs ``toolmesh serve`` itself when the
CLI has it; this program is the same thing without the CLI (and the place to hang a profiler).
"""

from __future__ import annotations

import sys

import anyio

from toolmesh import ToolRegistry
from toolmesh.gateway import HttpSettings, McpGateway
from toolmesh.mcp import McpServer


async def serve(upstream: str, port: int) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.http("demo", upstream, prefix=False))
        await McpGateway(registry).serve_http(HttpSettings(host="127.0.0.1", port=port))


def main(argv: list[str]) -> None:
    if len(argv) != 2:
        raise SystemExit("usage: _gateway_serve.py UPSTREAM_URL PORT")
    anyio.run(serve, argv[0], int(argv[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
