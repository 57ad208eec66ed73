"""Helpers for the tests where clients no one here wrote talk to the gateway.

    async with peer_gateway_url() as url:          # http://127.0.0.1:P/mcp, served in this process
        ...
    result = await inspector(url, "--method", "tools/list")   # the MCP Inspector CLI's JSON answer
    result = await inspector(*peer_gateway_stdio_command(tmp_path), "--method", "tools/list")  # toolmesh serve, stdio

The catalog is tests/fixtures/peer_gateway.py: native `multiply` and `refuse`, and the demo fixture's
tools as `demo__*`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process

from _gateway import serving
from _mcp import demo_in_process, wait_until
from _servers import DEMO, FIXTURES, NPM_TOOLS, fixture_module
from toolmesh.gateway import McpGateway

PEER_GATEWAY = FIXTURES / "peer_gateway.py"
INSPECTOR_PKG = "@modelcontextprotocol/inspector"
_INSPECTOR_TIMEOUT = 120.0
"""Seconds one Inspector run may take: node starts, and over stdio a gateway and its upstream start too."""
_LEFTOVER_TIMEOUT = 30.0
"""Seconds the processes the Inspector started get to exit after it did (a stdio server closes its upstream)."""


@asynccontextmanager
async def peer_gateway_url() -> AsyncIterator[str]:
    """The peer catalog (the demo fixture in-process) behind a gateway on a free loopback port; yields its /mcp URL."""
    catalog = fixture_module(PEER_GATEWAY).catalog
    async with catalog(demo_in_process("demo")) as registry, serving(McpGateway(registry)) as base:
        yield f"{base}/mcp"


def peer_gateway_stdio_command(folder: Path) -> list[str]:
    """`toolmesh serve --transport stdio` on the peer catalog (a toolmesh.json written in `folder`).

    The demo fixture runs as a stdio child of the gateway, the native tools load from the fixture file.
    """
    config = {
        "mcpServers": {"demo": {"command": sys.executable, "args": [str(DEMO), "stdio"]}},
        "native": [f"{PEER_GATEWAY}:TOOLS"],
        "serve": {"transport": "stdio"},
    }
    path = folder / "toolmesh.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    script = Path(sys.executable).parent / "toolmesh"
    toolmesh = [str(script)] if script.exists() else [sys.executable, "-m", "toolmesh"]
    return [*toolmesh, "serve", "-c", str(path)]  # not --config: the Inspector takes that option as its own


def inspector_cli() -> Path:
    """The MCP Inspector's CLI entry point in .npm-tools/ (scripts/install_npm_tools.sh installs it)."""
    return NPM_TOOLS / "node_modules" / INSPECTOR_PKG / "cli" / "build" / "cli.js"


async def inspector(*arguments: str) -> Any:
    """Run `mcp-inspector --cli ARGUMENTS...` and return the JSON it printed.

    Fails the test (with the Inspector's stderr) when it exits non-zero or prints no JSON. It exits 0
    for a result with `isError`, so callers check the result itself.
    """
    node = shutil.which("node")
    assert node is not None, "node is not on PATH (the Inspector CLI needs Node 20)"
    cli = inspector_cli()
    assert cli.exists(), f"{cli} is missing: run scripts/install_npm_tools.sh"
    # Its own process group: on a timeout the whole tree (the CLI's node child, a stdio server) is killed.
    process = await anyio.open_process(
        [node, str(cli), "--cli", *arguments], stdin=subprocess.DEVNULL, start_new_session=True
    )
    try:
        with anyio.fail_after(_INSPECTOR_TIMEOUT):
            out, err, _ = await _communicate(process)
        # What the Inspector started (its node child, a stdio server and that server's children)
        # must be gone once it has exited: they share its session.
        try:
            await wait_until(lambda: not _session_members(process.pid), _LEFTOVER_TIMEOUT)
        except TimeoutError:
            left = {pid: _cmdline(pid) for pid in _session_members(process.pid)}
            raise AssertionError(f"processes the Inspector started outlived it: {left}") from None
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None or _session_members(process.pid):
                with suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            await process.aclose()
    stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
    assert process.returncode == 0, f"mcp-inspector exited {process.returncode}:\n{stderr}\n{stdout}"
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"mcp-inspector printed no JSON:\n{stdout}\n{stderr}") from None


async def _communicate(process: Process) -> tuple[bytes, bytes, int]:
    """Read the process's stdout and stderr to their ends, then wait for its exit code."""
    chunks: dict[str, list[bytes]] = {"out": [], "err": []}

    async def drain(stream: ByteReceiveStream | None, key: str) -> None:
        assert stream is not None
        async for chunk in stream:
            chunks[key].append(chunk)

    async with anyio.create_task_group() as group:
        group.start_soon(drain, process.stdout, "out")
        group.start_soon(drain, process.stderr, "err")
    return b"".join(chunks["out"]), b"".join(chunks["err"]), await process.wait()


def _session_members(session: int) -> set[int]:
    """Pids of the live (not zombie) processes in a session."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == session and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"
