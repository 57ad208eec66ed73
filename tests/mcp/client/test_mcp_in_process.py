"""`McpServer.in_process`: an SDK server object served in this process, through a real `mcp.Client`."""

from __future__ import annotations

import sys

import pytest

from _mcp import DEMO, LOWLEVEL, demo_in_process
from _servers import fixture_server
from toolmesh import ErrorKind, McpEntry, ServerConfigError, ToolRegistry
from toolmesh.mcp import McpServer


async def test_an_mcpserver_object_is_connected_with_the_handshake() -> None:
    async with ToolRegistry() as registry:
        connection = await registry.connect(demo_in_process("demo", include=["echo", "add"]))
        # JSON-RPC over memory streams with the initialize handshake, as mcp.Client(server, mode="legacy").
        assert connection.protocol_version == "2025-11-25"
        assert connection.server_info is not None and connection.server_info.name == "demo"
        assert connection.instructions == "Demo fixture server."
        assert registry.names() == ["demo__echo", "demo__add"]
        row = registry["demo__add"]
        assert isinstance(row, McpEntry) and row.wire_name == "add"
        result = await registry.dispatch("demo__add", {"a": 2, "b": 3})
        assert result.ok and result.output.structured == {"sum": 5}


async def test_a_low_level_server_object_is_connected() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("low", fixture_server(LOWLEVEL), include=["echo"]))
        result = await registry.dispatch("low__echo", {"text": "hi"})
        assert result.ok and result.output.as_text() == "hi"


async def test_the_fixtures_die_tool_never_ends_the_test_process() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process("demo", include=["die", "echo"]))
        result = await registry.dispatch("demo__die")
        assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
        assert (await registry.dispatch("demo__echo", {"text": "still here"})).output.as_text() == "still here"


def test_the_spec_shows_the_server_type_and_options() -> None:
    spec = McpServer.in_process("demo", fixture_server(DEMO), include=["echo"], timeout=5)
    assert spec.transport == "in_process" and spec.url is None and spec.command is None
    assert repr(spec) == "McpServer.in_process('demo', server=<DemoServer>, timeout=5.0, include=('echo',))"


def test_something_else_than_a_server_object_is_refused() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.in_process("demo", "http://127.0.0.1:8000/mcp")  # type: ignore[arg-type]
    assert info.value.server == "demo" and info.value.key == "server_object"
    assert "mcp.server.Server or MCPServer instance, not str" in str(info.value)
    assert "McpServer.http" not in str(info.value) and "Pass the server object itself" in str(info.value)


def test_transport_keys_do_not_mix_with_a_server_object() -> None:
    server = fixture_server(DEMO)
    with pytest.raises(ServerConfigError, match=r"key 'server_object': 'server_object' does not apply to a stdio"):
        McpServer(label="demo", transport="stdio", command=sys.executable, server_object=server)
    with pytest.raises(ServerConfigError, match=r"key 'url': 'url' does not apply to a in-process server"):
        McpServer(label="demo", transport="in_process", url="http://127.0.0.1:1/mcp", server_object=server)
