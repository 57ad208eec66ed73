"""`toolmesh serve` as a real process: real MCP clients over HTTP and stdio; SIGTERM leaves nothing behind."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import httpx2
import mcp
import pytest
from mcp.client.stdio import StdioServerParameters

from _gateway import client
from _mcp import alive, child_pids
from _servers import ROOT, toolmesh_env
from toolmesh import ToolRegistry
from toolmesh.mcp import McpServer

EXAMPLES = ROOT / "examples"
TOKEN = "test-gateway-token-0123456789abcdef"
_WAIT = 60.0
ENV = toolmesh_env()
TOOLMESH = [sys.executable, "-m", "toolmesh"]


def _lines(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)
    into.put("")


def _wait_for(lines: queue.Queue[str], pattern: str, seen: list[str]) -> re.Match[str]:
    """Read lines into ``seen`` until one matches ``pattern``."""
    deadline = time.monotonic() + _WAIT
    while time.monotonic() < deadline:
        line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        seen.append(line)
        if line == "":
            raise AssertionError(f"the gateway ended before printing {pattern!r}: {''.join(seen)}")
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"no {pattern!r} within {_WAIT} s: {''.join(seen)}")


def _config(tmp_path: Path) -> Path:
    config = {
        "mcpServers": {"notes": {"command": "python", "args": [str(EXAMPLES / "notes_server.py")]}},
        "native": [f"{EXAMPLES / 'tools.py'}:registry"],
        "policy": {"denyTools": ["notes__forget"]},
        "profiles": {"reader": {"readOnly": True}},
        "serve": {"port": 0, "auth": {"tokens": [{"env": "GATEWAY_TEST_TOKEN"}]}},
    }
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


async def _list_and_call(url: str, token: str) -> tuple[list[str], str, str]:
    async with client(url, mode="auto", token=token) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        native = await session.call_tool("forecast", {"city": "Oslo"})
        proxied = await session.call_tool("notes__read", {"title": "travel"})
    assert not native.is_error and not proxied.is_error
    return names, json.dumps(native.structured_content), proxied.content[0].text  # type: ignore[union-attr]


async def _as_a_configured_host(document: dict[str, object]) -> str:
    """Connect the way an MCP host does from its ``mcpServers`` file (toolmesh's own reader) and call forecast."""
    async with ToolRegistry() as registry:
        await registry.connect_all(McpServer.from_config(document))
        assert "toolmesh__notes__search" in registry.names()
        result = await registry.dispatch("toolmesh__forecast", '{"city": "Oslo"}')
    structured = result.output.structured
    assert result.ok and isinstance(structured, dict), result
    return f"{structured['city']}: {structured['temperature']} {structured['unit']}"


def test_serve_over_http_as_a_real_process_and_sigterm_leaves_no_child(tmp_path: Path) -> None:
    gateway = subprocess.Popen(
        [*TOOLMESH, "serve", "--config", str(_config(tmp_path))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**ENV, "GATEWAY_TEST_TOKEN": TOKEN},
        cwd=tmp_path,
    )
    children: set[int] = set()
    try:
        out: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_lines, args=(gateway.stdout, out), daemon=True).start()
        seen: list[str] = []
        url = _wait_for(out, r"listening on (http://127\.0\.0\.1:\d+/mcp)\s*$", seen).group(1)
        _wait_for(out, rf"reader +{re.escape(url.removesuffix('/mcp'))}/reader/mcp +3 tools", seen)
        _wait_for(out, r"auth: bearer tokens from env GATEWAY_TEST_TOKEN", seen)
        children = child_pids(gateway.pid)
        assert len(children) == 1  # the notes server

        names, native, proxied = anyio.run(_list_and_call, url, TOKEN)
        assert names == ["forecast", "word_count", "swatch", "notes__list_notes", "notes__read", "notes__search"]
        assert json.loads(native) == {"city": "Oslo", "temperature": 2.0, "unit": "celsius"}
        assert proxied == "Rome in April; Oslo in June"
        # What a Claude Desktop-style client config holds (the gateway guide's HTTP form), read by an MCP host.
        document = {"mcpServers": {"toolmesh": {"url": url, "headers": {"Authorization": f"Bearer {TOKEN}"}}}}
        assert anyio.run(_as_a_configured_host, document) == "Oslo: 2.0 celsius"
        refused = httpx2.post(url, json={}, headers={"Accept": "application/json, text/event-stream"}, timeout=_WAIT)
        assert refused.status_code == 401

        gateway.send_signal(signal.SIGTERM)
        assert gateway.wait(timeout=_WAIT) == 0
        assert gateway.stderr is not None
        assert "stopped: the client sessions" in gateway.stderr.read()
        assert [pid for pid in children if alive(pid)] == []
    finally:
        if gateway.poll() is None:
            gateway.kill()
            gateway.wait()
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for stream in (gateway.stdout, gateway.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_serve_over_stdio_with_a_real_client(mode: str) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolmesh", "serve", "--transport", "stdio", "--profile", "reader"],
        env={**ENV, "COLUMNS": "200"},
        cwd=str(ROOT),  # no ./toolmesh.json there: the bundled example
    )
    with anyio.fail_after(_WAIT):
        async with mcp.Client(params, mode=mode) as session:  # type: ignore[arg-type]
            names = [tool.name for tool in (await session.list_tools()).tools]
            found = await session.call_tool("notes__search", {"query": "rome"})
    assert names == ["notes__list_notes", "notes__read", "notes__search"]
    assert found.structured_content == {"matches": [{"title": "travel", "line": "Rome in April; Oslo in June"}]}


async def test_a_claude_desktop_style_stdio_entry_starts_the_gateway() -> None:
    entry = {
        "command": sys.executable,  # the guide writes "toolmesh"; here the interpreter of this checkout
        "args": ["-m", "toolmesh", "serve", "--transport", "stdio", "--config", str(EXAMPLES / "toolmesh.json")],
        "env": {"PYTHONPATH": ENV["PYTHONPATH"]},
    }
    with anyio.fail_after(_WAIT):
        assert await _as_a_configured_host({"mcpServers": {"toolmesh": entry}}) == "Oslo: 2.0 celsius"


def test_over_stdio_stdout_carries_only_the_protocol(tmp_path: Path) -> None:
    (tmp_path / "chatty.py").write_text(
        'print("loading chatty tools...")\n\nfrom toolmesh import tool\n\n\n'
        "@tool\ndef ping() -> str:\n    return 'pong'\n\n\ntools = [ping]\n"
    )
    (tmp_path / "toolmesh.json").write_text(json.dumps({"native": ["chatty.py:tools"]}))
    # No client: stdin ends at once, so the gateway starts, serves nothing and ends; stdout must stay empty.
    done = subprocess.run(
        [*TOOLMESH, "serve", "--transport", "stdio"],
        input="",
        capture_output=True,
        text=True,
        env=ENV,
        cwd=tmp_path,
        timeout=_WAIT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "loading chatty tools..." in done.stderr
    assert "serving the profile 'default' (1 tool) over stdio" in done.stderr
