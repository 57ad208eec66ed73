"""The gateway on stdin/stdout: a real subprocess, reached by ``mcp.Client`` over stdio in both protocol versions."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from mcp.client.stdio import StdioServerParameters

import toolmesh

MODES = ["legacy", "2026-07-28"]
SCRIPT = Path(__file__).resolve().parents[2] / "gateway_stdio_main.py"


def _params(*args: str) -> StdioServerParameters:
    source = str(Path(toolmesh.__file__).parent.parent)
    path = os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))
    return StdioServerParameters(
        command=sys.executable, args=[str(SCRIPT), *args], env={**os.environ, "PYTHONPATH": path}
    )


@pytest.mark.parametrize("mode", MODES)
async def test_a_stdio_client_lists_and_calls_native_and_proxied_rows(mode: Any) -> None:
    with anyio.fail_after(90):
        async with mcp.Client(_params(), mode=mode) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            shouted = await client.call_tool("shout", {"text": "hi"})
            echoed = await client.call_tool("demo__echo", {"text": "over stdio"})
            failed = await client.call_tool("demo__fail", {"reason": "nope"})
    assert "shout" in names and "demo__echo" in names
    assert shouted.content[0].text == "HI"  # type: ignore[union-attr]
    assert echoed.content[0].text == "over stdio"  # type: ignore[union-attr]
    assert failed.is_error and "nope" in failed.content[0].text  # type: ignore[union-attr]


async def test_a_profile_is_chosen_on_the_command_line() -> None:
    with anyio.fail_after(90):
        async with mcp.Client(_params("shouting"), mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
    assert names == ["shout"]
