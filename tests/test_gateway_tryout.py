"""What a new user's tryout of the gateway found (issue 11): each fix, checked with real clients and commands."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from _gateway import client, serving
from toolmesh import Entry, ToolRegistry, tool
from toolmesh.gateway import McpGateway

MODES = ["legacy", "2026-07-28"]


@tool
async def look(path: str) -> str:
    """Read something."""
    return f"looked at {path}"


@tool
async def wipe(path: str) -> str:
    """Delete something."""
    return f"wiped {path}"


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(look)
    registry.register(wipe)
    return registry


def _readonly(entry: Entry) -> bool:
    return entry.name == "look"


@pytest.mark.parametrize("mode", MODES)
async def test_a_profile_is_also_served_at_a_url_ending_in_mcp(mode: Any) -> None:
    """Clients such as the MCP Inspector CLI rewrite a URL not ending in /mcp: /<profile>/mcp must be the profile."""
    gateway = McpGateway(_registry(), profiles={"readonly": _readonly})
    async with serving(gateway) as url:
        async with client(url + "/readonly/mcp", mode) as new, client(url + "/mcp/readonly", mode) as old:
            with anyio.fail_after(60):
                new_names = [t.name for t in (await new.list_tools()).tools]
                old_names = [t.name for t in (await old.list_tools()).tools]
    assert new_names == ["look"]
    assert old_names == ["look"]
