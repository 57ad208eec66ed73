"""A client no one here wrote: the MCP Inspector CLI (Node, the TypeScript SDK) against the gateway.

Over Streamable HTTP (the gateway serving in this process on a loopback port) and over stdio (the
Inspector launches `toolmesh serve --transport stdio` itself, which runs the demo fixture as its own
stdio child),
the Inspector lists the catalog and calls a native and a proxied tool; over HTTP it also sees a
structured result and `isError` results of both kinds of row. It exits 0 even when a result has
`isError`, so every check reads its JSON. Each Inspector run is one connection (over stdio: one
gateway process and its upstream), so the stdio test keeps to the three calls the issue asks for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _peers import inspector, peer_gateway_stdio_command, peer_gateway_url


def _texts(result: dict[str, Any]) -> list[str]:
    return [block["text"] for block in result["content"] if block["type"] == "text"]


async def _lists_and_calls(*target: str) -> None:
    listed = await inspector(*target, "--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert {"multiply", "refuse", "demo__echo", "demo__add"} <= set(tools)
    assert tools["multiply"]["inputSchema"]["required"] == ["a", "b"]
    assert "outputSchema" in tools["demo__add"]

    native = await inspector(*target, "--method", "tools/call", "--tool-name", "multiply", "--tool-arg", "a=6", "b=7")
    assert not native.get("isError", False), native
    assert native["structuredContent"] == {"product": 42}

    proxied = await inspector(*target, "--method", "tools/call", "--tool-name", "demo__echo", "--tool-arg", "text=hi")
    assert not proxied.get("isError", False), proxied
    assert _texts(proxied) == ["hi"]


async def _structured_and_error_results(*target: str) -> None:
    added = await inspector(*target, "--method", "tools/call", "--tool-name", "demo__add", "--tool-arg", "a=2", "b=3")
    assert not added.get("isError", False), added
    assert added["structuredContent"] == {"sum": 5}

    failed = await inspector(
        *target, "--method", "tools/call", "--tool-name", "demo__fail", "--tool-arg", "reason=upstream says no"
    )
    assert failed["isError"] is True
    assert any("upstream says no" in text for text in _texts(failed))

    refused = await inspector(*target, "--method", "tools/call", "--tool-name", "refuse", "--tool-arg", "reason=nope")
    assert refused["isError"] is True


@pytest.mark.timeout(600)
async def test_inspector_lists_and_calls_native_and_proxied_tools_over_http() -> None:
    async with peer_gateway_url() as url:
        await _lists_and_calls(url, "--transport", "http")
        await _structured_and_error_results(url, "--transport", "http")


@pytest.mark.timeout(400)
async def test_inspector_lists_and_calls_native_and_proxied_tools_over_stdio(tmp_path: Path) -> None:
    await _lists_and_calls(*peer_gateway_stdio_command(tmp_path))
