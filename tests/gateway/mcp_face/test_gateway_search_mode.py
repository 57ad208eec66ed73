"""A profile in search mode: two tools, search_tools and call_tool, with the official MCP client over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from _gateway import client, serving
from _mcp import demo_in_process
from toolmesh import ConfigurationError, ToolRegistry, tool
from toolmesh.gateway import GatewayConfig, McpGateway
from toolmesh.policy import DenyTools


@tool
async def get_weather_forecast(city: str) -> str:
    """Forecast the weather of a city."""
    return f"sunny in {city}"


@tool
async def send_email(to: str, body: str) -> str:
    """Send an email message."""
    return f"sent to {to}"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_search_mode_lists_two_tools_searches_and_calls_through_the_policy(mode: str) -> None:
    with anyio.fail_after(60):
        async with ToolRegistry() as registry:
            registry.register(get_weather_forecast)
            registry.register(send_email)
            await registry.connect(demo_in_process("demo"))
            gateway = McpGateway(
                registry,
                profiles={"lean": lambda row: True},
                search=["lean"],
                hooks=[DenyTools("send_email")],
            )
            async with serving(gateway) as base, client(f"{base}/lean/mcp", mode=mode) as session:
                listed = await session.list_tools()
                assert [t.name for t in listed.tools] == ["search_tools", "call_tool"]

                found = await session.call_tool("search_tools", {"query": "weather forecast for a city"})
                assert not found.is_error
                tools = found.structured_content["tools"]  # type: ignore[index]
                assert tools[0]["name"] == "get_weather_forecast"
                assert tools[0]["inputSchema"]["properties"]["city"]["type"] == "string"
                assert json.loads(found.content[0].text)["tools"][0]["name"] == "get_weather_forecast"  # type: ignore[union-attr]

                called = await session.call_tool(
                    "call_tool", {"name": "get_weather_forecast", "arguments": {"city": "Oslo"}}
                )
                assert not called.is_error and called.content[0].text == "sunny in Oslo"  # type: ignore[union-attr]

                echoed = await session.call_tool("call_tool", {"name": "demo__echo", "arguments": {"text": "hi"}})
                assert not echoed.is_error

                denied = await session.call_tool(
                    "call_tool", {"name": "send_email", "arguments": {"to": "a", "body": "b"}}
                )
                assert denied.is_error  # the gateway's policy holds inside call_tool

                invalid = await session.call_tool("call_tool", {"name": "get_weather_forecast", "arguments": {}})
                assert invalid.is_error and "city" in invalid.content[0].text  # type: ignore[union-attr]

                unknown = await session.call_tool("call_tool", {"name": "nope"})
                assert unknown.is_error

                hostile = await session.call_tool("search_tools", {"query": "(((a+)+)+$\x00" * 5000})
                assert not hostile.is_error

            async with serving(gateway) as base, client(f"{base}/mcp", mode=mode) as session:
                names = [t.name for t in (await session.list_tools()).tools]
                assert "get_weather_forecast" in names and "search_tools" not in names  # the default profile lists rows


def test_search_mode_is_a_profile_key_of_toolmesh_json(tmp_path: Path) -> None:
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"profiles": {"lean": {"search": True}, "full": {}}}))
    config = GatewayConfig.load(path)
    assert config.profiles["lean"].search is True and config.profiles["full"].search is False


def test_search_names_an_existing_profile() -> None:
    with pytest.raises(ConfigurationError, match="nope"):
        McpGateway(ToolRegistry(), search=["nope"])


async def test_search_tools_takes_a_whole_limit_written_as_a_float() -> None:
    # JSON Schema's "integer" (the tool's own inputSchema) holds 2.0; 2.5 and 0 are still refused
    from toolmesh.gateway._mcp_face.search_mode import search_answer

    registry = ToolRegistry()
    registry.register(get_weather_forecast)
    registry.register(send_email)
    snapshot = registry.snapshot()
    with anyio.fail_after(10):
        two = await search_answer(snapshot, {"query": "weather forecast or email", "limit": 2.0})
        half = await search_answer(snapshot, {"query": "weather", "limit": 2.5})
        zero = await search_answer(snapshot, {"query": "weather", "limit": 0.0})
    assert not two.is_error and len(two.structured_content["tools"]) == 2  # type: ignore[index]
    assert half.is_error and zero.is_error
