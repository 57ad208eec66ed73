"""`make demo`: a registry of example tools, its catalog, a few calls a model might make, then `toolmesh serve`.

It runs from any directory and in any virtualenv that has toolmesh: the example server
is started with this Python (``sys.executable``) from this file's folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gateway_demo import serve_and_call
from tools import registry

from toolmesh import McpServer, ToolContext
from toolmesh._cli.render import catalog_table, result_table

HERE = Path(__file__).resolve().parent
NOTES = McpServer.stdio("notes", sys.executable, [str(HERE / "notes_server.py")], timeout=30, call_timeout=20)
"""The server of ``mcp.json``, independent of the current directory and of ``python`` on PATH."""

CALLS = [
    ("forecast", '{"city": "Rome"}', "a good call"),
    ("forecast", '{"city": "Rome", "unit": "kelvin"}', "bad arguments"),
    ("forecast", '{"city": "Atlantis"}', "the tool refuses on purpose"),
    ("word_count", '{"text": "one registry, typed rows"}', "a sync tool"),
    ("swatch", '{"red": 255, "green": 128, "blue": 0}', "text + image blocks"),
    ("forcast", "{}", "an unknown name"),
    ("swatch", "[255, 128, 0]", "an array instead of an object"),
    ("notes__search", '{"query": "rome"}', "an MCP tool: structured output"),
    ("notes__read", '{"title": "shopping"}', "an MCP tool answering isError"),
]


async def main() -> None:
    console = Console()
    async with registry:  # owns the MCP sessions: leaving it ends the server process
        for connection in await registry.connect_all([NOTES]):
            console.print(f"connected {connection.label!r}: protocol {connection.protocol_version}")
        console.print(catalog_table(registry.entries(), title="toolmesh demo catalog"))
        rows = []
        for index, (name, arguments, why) in enumerate(CALLS, start=1):
            result = await registry.dispatch(name, arguments, ctx=ToolContext(call_id=f"call_{index}"))
            rows.append((f"{name} {arguments}\n({why})", result))
        console.print(result_table(rows))
    await serve_and_call(console)  # the same tools, served as one MCP endpoint by `toolmesh serve`


if __name__ == "__main__":
    anyio.run(main)
