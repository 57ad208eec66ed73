"""The end of `make demo`: `toolmesh serve` on the bundled config, and a real MCP client calling through it.

The gateway runs as its own process (``python -m toolmesh serve``) on a free loopback
port (``--port 0``: it prints the one it got); the client is the MCP SDK's ``mcp.Client``,
as any MCP host would connect. SIGTERM stops the gateway, which closes the example
MCP server it started.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import mcp
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent
CALLS = [("forecast", {"city": "Lima"}, "a native tool"), ("notes__search", {"query": "rome"}, "a proxied MCP tool")]


async def _banner(process: Process, console: Console) -> str:
    """Echo the gateway's start-up lines; the URL it listens on."""
    assert process.stdout is not None
    url, text = None, ""
    with anyio.fail_after(60):
        async for chunk in TextReceiveStream(process.stdout):
            text += chunk
            while "\n" in text:
                line, text = text.split("\n", 1)
                console.print(f"  [dim]gateway |[/] {line}", highlight=False)
                if line.startswith("listening on "):
                    url = line.removeprefix("listening on ").strip()
                if line.startswith("stop with") and url is not None:
                    return url
    raise RuntimeError("the gateway stopped before it listened; see its messages above")


async def serve_and_call(console: Console) -> None:
    """Start the gateway, list and call through it with an MCP client, stop it with SIGTERM."""
    console.rule("toolmesh serve: the same catalog as one MCP endpoint")
    command = [sys.executable, "-m", "toolmesh", "serve", "--config", str(HERE / "toolmesh.json"), "--port", "0"]
    async with await anyio.open_process(command, stdout=subprocess.PIPE, stderr=None) as process:
        try:
            url = await _banner(process, console)
            async with mcp.Client(url) as client:
                tools = (await client.list_tools()).tools
                console.print(f"an MCP client ({client.protocol_version}) lists {len(tools)} tools at {url}:")
                console.print("  " + ", ".join(tool.name for tool in tools))
                table = Table("call through the gateway", "isError", "what came back")
                for name, arguments, why in CALLS:
                    result = await client.call_tool(name, arguments)
                    shown = result.structured_content or [getattr(block, "text", block) for block in result.content]
                    table.add_row(f"{name} {json.dumps(arguments)}\n({why})", str(result.is_error), json.dumps(shown))
                console.print(table)
        finally:
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(60):
                code = await process.wait()
    console.print(f"gateway stopped by SIGTERM: exit code {code}")
    if code != 0:
        raise SystemExit(f"the gateway exited with code {code}")
