"""A connection pinned to `protocol="2026-07-28"` knows as much as one that settled on it under "auto"."""

from __future__ import annotations

import contextlib

import pytest

from _mcp import DEMO, demo_http, demo_in_process, demo_stdio, everything_stdio, wait_until
from _servers import http_server
from toolmesh import ServerConnectionError, ToolRegistry


@pytest.mark.parametrize("transport", ["in_process", "stdio", "http"])
async def test_a_pinned_connection_learns_the_server_and_hears_its_changes(transport: str) -> None:
    include = ["grow", "fresh*"]
    async with contextlib.AsyncExitStack() as stack:
        if transport == "http":
            url = await stack.enter_async_context(http_server(DEMO))
            spec = demo_http(url, "demo", include=include, protocol="2026-07-28")
        elif transport == "stdio":
            spec = demo_stdio(include=include, protocol="2026-07-28")
        else:
            spec = demo_in_process(include=include, protocol="2026-07-28")
        registry = await stack.enter_async_context(ToolRegistry())
        connection = await registry.connect(spec)
        assert connection.protocol_version == "2026-07-28"
        assert connection.server_info is not None and connection.server_info.name
        assert connection.capabilities is not None and connection.capabilities.tools is not None
        assert connection.instructions == "Demo fixture server."
        name = f"fresh_{transport}"
        assert (await registry.dispatch("demo__grow", {"name": name})).ok
        await wait_until(lambda: f"demo__{name}" in registry, 60)  # the subscriptions/listen stream is open


async def test_pinning_2026_on_a_handshake_era_server_says_it_does_not_speak_it() -> None:
    async with ToolRegistry() as registry:
        with pytest.raises(ServerConnectionError) as caught:
            await registry.connect(everything_stdio("ev", protocol="2026-07-28"))
        message = str(caught.value)
        assert "does not speak MCP 2026-07-28" in message and '"auto"' in message and "2025-11-25" in message
        assert "validation errors" not in message and "by hand" not in message
        assert registry.connections() == []
