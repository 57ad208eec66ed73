"""Bench fixture MCP server "scale": many realistic tools, paged, changed on demand.

Run:  python bench/scale_server.py http PORT     (Streamable HTTP on 127.0.0.1, path /mcp)

Tools, in list order: ``change(percent)``, then ``search_issues_00000`` .. (``BENCH_TOOLS``,
default 1,000), each with the realistic shape of ``bench/_realistic.py`` (a 190-character
description, a 640-byte schema). ``tools/list`` answers ``BENCH_PAGE_SIZE`` tools a page
(default 500; cursors ``p<offset>``), as a large real server pages.

``change(percent)`` rewrites the description of every tool whose index is a multiple of
``100 // percent`` (10: one tool in ten), with a new revision number each call, so every
call changes the same share of the catalog. The server never announces a change (it
does not advertise ``tools.listChanged``): a client learns of it only by listing again,
so nothing refreshes behind the benchmark's back.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _realistic import DESCRIPTION, schema


class Catalog:
    def __init__(self, count: int, page_size: int) -> None:
        self.page_size = page_size
        self.revision = 0
        change = types.Tool(
            name="change",
            description="Change the description of one tool in 100/percent.",
            input_schema={"type": "object", "properties": {"percent": {"type": "integer"}}, "required": ["percent"]},
        )
        self.tools = [change] + [
            types.Tool(name=f"search_issues_{i:05d}", description=DESCRIPTION, input_schema=schema(i))
            for i in range(count)
        ]

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        if cursor is not None and not (cursor.startswith("p") and cursor[1:].isdigit()):
            raise MCPError(code=types.INVALID_PARAMS, message=f"invalid cursor {cursor!r}")
        offset = int(cursor[1:]) if cursor else 0
        end = offset + self.page_size
        return types.ListToolsResult(
            tools=self.tools[offset:end], next_cursor=f"p{end}" if end < len(self.tools) else None
        )

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name != "change":
            return types.CallToolResult(content=[types.TextContent(type="text", text="ok")])
        step = max(1, 100 // int((params.arguments or {}).get("percent", 10)))
        self.revision += 1
        description = f"{DESCRIPTION[:-12]} (rev {self.revision})"
        changed = 0
        for index in range(1, len(self.tools), step):
            self.tools[index] = self.tools[index].model_copy(update={"description": description})
            changed += 1
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(changed))])


async def serve(port: int) -> None:
    import os

    import uvicorn

    catalog = Catalog(int(os.environ.get("BENCH_TOOLS", "1000")), int(os.environ.get("BENCH_PAGE_SIZE", "500")))
    server: Server[Any] = Server(
        "scale", version="1.0.0", on_list_tools=catalog.list_tools, on_call_tool=catalog.call_tool
    )
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "http":
        raise SystemExit("usage: scale_server.py http PORT")
    anyio.run(serve, int(sys.argv[2]))
