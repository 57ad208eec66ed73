"""``logging/setLevel`` through the gateway: each client's level filters the log messages it is sent."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning

from _gateway import client, serving
from toolmesh import LogMessage, ToolContext, ToolRegistry, tool
from toolmesh.gateway import McpGateway

pytestmark = pytest.mark.filterwarnings("ignore", category=MCPDeprecationWarning)  # logging/setLevel (SEP-2577)


@tool
async def chatty(ctx: ToolContext[Any]) -> str:
    """Log at debug, info and error, then answer."""
    assert ctx.on_log is not None
    for level in ("debug", "info", "error"):
        await ctx.on_log(LogMessage(level, f"a {level} line", "chatty", ctx.call_id, ctx.tool_name, None))
    return "done"


async def test_each_client_hears_the_log_messages_at_or_above_its_own_level() -> None:
    registry = ToolRegistry()
    registry.register(chatty)
    heard: dict[str, list[str]] = {"picky": [], "default": []}

    def collector(name: str) -> Any:
        async def on_log(params: Any) -> None:
            heard[name].append(params.level)

        return on_log

    async with (
        serving(McpGateway(registry)) as url,
        client(url + "/mcp", logging_callback=collector("picky")) as picky,
        client(url + "/mcp", logging_callback=collector("default")) as default,
    ):
        assert picky.server_capabilities.logging is not None
        with anyio.fail_after(60):
            await picky.set_logging_level("info")
            assert (await picky.call_tool("chatty", {})).content[0].text == "done"  # type: ignore[union-attr]
            await default.call_tool("chatty", {})
            await picky.set_logging_level("debug")
            await picky.call_tool("chatty", {})
    assert heard["picky"] == ["info", "error", "debug", "info", "error"]
    assert heard["default"] == ["debug", "info", "error"]  # a client that set no level hears everything
