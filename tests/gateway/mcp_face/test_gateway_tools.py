"""tools/list and tools/call through the gateway over Streamable HTTP, with real clients of both protocol versions."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp
import mcp_types
import pytest
from pydantic import BaseModel

from _gateway import client, serving
from _mcp import demo_in_process
from toolmesh import (
    Entry,
    Hook,
    Keep,
    Proceed,
    Refuse,
    RewritePresentation,
    ToolAnnotations,
    ToolCall,
    ToolCallAction,
    ToolCapabilities,
    ToolContext,
    ToolRegistry,
    ToolResult,
    ToolResultAction,
    tool,
)
from toolmesh.gateway import McpGateway
from toolmesh.policy import DenyTools

MODES = ["legacy", "2026-07-28"]


class Weather(BaseModel):
    city: str
    celsius: float


@tool(capabilities=ToolCapabilities(title="Weather now", annotations=ToolAnnotations(read_only=True)))
async def weather(city: str) -> Weather:
    """The weather in a city."""
    return Weather(city=city, celsius=21.5)


@tool
async def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


@tool
async def count(text: str) -> int:
    """Count the characters."""
    return len(text)


@tool
async def boom() -> str:
    """Always fails."""
    raise RuntimeError("secret operator detail: db password is hunter2")


@tool
async def forbidden() -> str:
    """Denied by policy."""
    return "never"


class RefuseSecrets(Hook):
    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        return Refuse("No secrets here.") if "secret" in call.arguments else Proceed()


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    for fn in (weather, shout, count, boom, forbidden):
        registry.register(fn)
    return registry


@pytest.mark.parametrize("mode", MODES)
async def test_tools_list_shows_native_and_proxied_rows_with_their_schemas(mode: Any) -> None:
    async with _registry() as registry:
        await registry.connect(demo_in_process())
        gateway = McpGateway(registry, hooks=[DenyTools("forbidden")])
        async with serving(gateway) as url, mcp.Client(url + "/mcp", mode=mode) as client:
            listed = await client.list_tools()
    tools = {t.name: t for t in listed.tools}
    assert "forbidden" not in tools  # the policy's row rules hide what they would refuse
    assert tools["weather"].title == "Weather now"
    assert tools["weather"].annotations is not None and tools["weather"].annotations.read_only_hint is True
    assert tools["weather"].input_schema["properties"]["city"]["type"] == "string"
    assert tools["weather"].output_schema is not None
    delete = tools["demo__delete_item"]  # a proxied row passes through as its server sent it, renamed
    assert delete.title is not None and delete.annotations is not None
    assert delete.annotations.destructive_hint is True and delete.meta
    assert tools["demo__add"].output_schema is not None
    assert tools["count"].output_schema is None  # MCP declares object schemas only; an int is text
    assert set(tools) >= {"shout", "boom", "demo__echo", "demo__add", "demo__image"}


@pytest.mark.parametrize("mode", MODES)
async def test_tools_call_native_and_proxied_rows_faithfully(mode: Any) -> None:
    async with _registry() as registry:
        await registry.connect(demo_in_process())
        gateway = McpGateway(registry)
        async with serving(gateway) as url, mcp.Client(url + "/mcp", mode=mode) as client:
            with anyio.fail_after(60):
                shouted = await client.call_tool("shout", {"text": "hi"})
                counted = await client.call_tool("count", {"text": "four"})
                forecast = await client.call_tool("weather", {"city": "Oslo"})
                added = await client.call_tool("demo__add", {"a": 2, "b": 3})
                image = await client.call_tool("demo__image", {})
                echoed = await client.call_tool("demo__echo", {"text": "hello"})
    assert not shouted.is_error and shouted.content[0].text == "HI"  # type: ignore[union-attr]
    assert counted.content[0].text == "4" and counted.structured_content is None  # type: ignore[union-attr]
    assert forecast.structured_content == {"city": "Oslo", "celsius": 21.5}
    assert json.loads(forecast.content[0].text) == {"city": "Oslo", "celsius": 21.5}  # type: ignore[union-attr]
    assert added.structured_content == {"sum": 5} and not added.is_error
    assert any(isinstance(block, mcp_types.ImageContent) for block in image.content)
    assert echoed.content[0].text == "hello"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_errors_are_is_error_with_the_model_text_never_the_operator_detail(mode: Any) -> None:
    async with _registry() as registry:
        await registry.connect(demo_in_process())
        gateway = McpGateway(registry, hooks=[RefuseSecrets(), DenyTools("forbidden")])
        async with serving(gateway) as url, mcp.Client(url + "/mcp", mode=mode) as client:
            with anyio.fail_after(60):
                hidden = await client.call_tool("forbidden", {})
                crashed = await client.call_tool("boom", {})
                upstream = await client.call_tool("demo__fail", {"reason": "disk full"})
                refused = await client.call_tool("shout", {"text": "secret"})
                unknown = await client.call_tool("nope", {})
                invalid = await client.call_tool("weather", {"city": 3})
    texts = {
        name: result.content[0].text
        for name, result in [  # type: ignore[union-attr]
            ("crashed", crashed),
            ("upstream", upstream),
            ("refused", refused),
            ("unknown", unknown),
            ("invalid", invalid),
        ]
    }
    assert all(r.is_error for r in (crashed, upstream, refused, unknown, invalid, hidden))
    assert "forbidden" in hidden.content[0].text  # type: ignore[union-attr]
    assert "hunter2" not in texts["crashed"]
    assert "disk full" in texts["upstream"]  # the upstream server's own error text, passed through
    assert texts["refused"] == "No secrets here."
    assert "nope" in texts["unknown"]
    assert "city" in texts["invalid"]


class Redact(Hook):
    async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
        return RewritePresentation("[redacted]") if call.name == "demo__add" else Keep()


async def test_an_upstream_answer_passes_through_unless_a_hook_changed_what_the_model_sees() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process())
        async with mcp.Client(McpGateway(registry, hooks=[Redact()]).server(), mode="legacy") as downstream:
            with anyio.fail_after(60):
                image = await downstream.call_tool("demo__image", {})
                redacted = await downstream.session.send_request(
                    mcp_types.CallToolRequest(
                        params=mcp_types.CallToolRequestParams(name="demo__add", arguments={"a": 1})
                    ),
                    mcp_types.CallToolResult,
                )
    assert [block.type for block in image.content] == ["image", "text"]  # the server's own blocks, as they came
    assert redacted.content[0].text == "[redacted]"  # type: ignore[union-attr]
    assert redacted.structured_content is None  # the hidden value does not leak through structuredContent


async def test_a_passed_through_answer_names_the_gateway_not_the_upstream_server() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process(protocol="2026-07-28"))  # its answers carry its serverInfo
        async with serving(McpGateway(registry, name="front")) as url, client(url + "/mcp", "2026-07-28") as downstream:
            with anyio.fail_after(60):
                echoed = await downstream.call_tool("demo__echo", {"text": "who"})
    assert echoed.content[0].text == "who"  # type: ignore[union-attr]
    assert echoed.meta is not None and echoed.meta["io.modelcontextprotocol/serverInfo"]["name"] == "front"
