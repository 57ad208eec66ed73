"""FastMCP 4's proxy in front of one MCP server, served over Streamable HTTP on 127.0.0.1 (a child of bench/gateway.py).

Run:  python bench/_fastmcp_proxy.py UPSTREAM_URL PORT [fresh|reuse]

  fresh   ``fastmcp.server.create_proxy(UPSTREAM_URL)``: FastMCP's recommended proxy, which opens a
          new upstream client session for every request it forwards (its documented default).
  reuse   ``create_proxy(client)`` with a ``fastmcp.Client`` connected once: every request shares
          that one upstream session (FastMCP's faster, opt-in configuration).

Served at http://127.0.0.1:PORT/mcp until terminated.
"""

from __future__ import annotations

import sys

import anyio
import fastmcp
from fastmcp.server import create_proxy


async def serve(upstream: str, port: int, strategy: str) -> None:
    options = {"show_banner": False, "host": "127.0.0.1", "port": port, "log_level": "critical", "path": "/mcp"}
    if strategy == "fresh":
        await create_proxy(upstream, name="fastmcp-proxy").run_http_async(**options)
        return
    async with fastmcp.Client(upstream) as client:
        await create_proxy(client, name="fastmcp-proxy").run_http_async(**options)


def main(argv: list[str]) -> None:
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] not in ("fresh", "reuse")):
        raise SystemExit("usage: _fastmcp_proxy.py UPSTREAM_URL PORT [fresh|reuse]")
    anyio.run(serve, argv[0], int(argv[1]), argv[2] if len(argv) == 3 else "fresh")


if __name__ == "__main__":
    main(sys.argv[1:])
