"""`McpServer(protocol=...)` picks the MCP protocol version the registry speaks to a server."""

from __future__ import annotations

import pytest

from _mcp import demo_in_process, demo_stdio
from toolmesh import ServerConfigError, ToolRegistry
from toolmesh.mcp import McpServer


@pytest.mark.parametrize(("protocol", "expected"), [("2025-11-25", "2025-11-25"), ("2026-07-28", "2026-07-28")])
async def test_an_in_process_server_speaks_the_chosen_protocol(protocol: str, expected: str) -> None:
    async with ToolRegistry() as registry:
        connection = await registry.connect(demo_in_process(protocol=protocol))
        assert connection.protocol_version == expected
        result = await registry.dispatch("demo__add", {"a": 2, "b": 3})
        assert result.ok and result.output.structured == {"sum": 5}


@pytest.mark.parametrize(("protocol", "expected"), [("2025-11-25", "2025-11-25"), ("auto", "2026-07-28")])
async def test_a_stdio_server_speaks_the_chosen_protocol(protocol: str, expected: str) -> None:
    async with ToolRegistry() as registry:
        connection = await registry.connect(demo_stdio(protocol=protocol))
        assert connection.protocol_version == expected


def test_an_unknown_protocol_is_refused_naming_the_choices() -> None:
    with pytest.raises(ServerConfigError, match=r"protocol.*'auto', '2025-11-25' or '2026-07-28'"):
        McpServer.stdio("x", "python", protocol="2024-01-01")  # type: ignore[arg-type]


def test_a_config_file_sets_the_protocol() -> None:
    [spec] = McpServer.from_config({"mcpServers": {"x": {"command": "python", "protocolVersion": "2025-11-25"}}})
    assert spec.protocol == "2025-11-25"
