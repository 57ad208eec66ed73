"""The gateway served other ways: stateless HTTP, in process, a catalog larger than one page."""

from __future__ import annotations

from typing import Any

import anyio
import mcp
import pytest

from _gateway import client, serving
from toolmesh import TaskSupport, ToolAnnotations, ToolCapabilities, ToolRegistry
from toolmesh.gateway import HttpSettings, McpGateway

MODES = ["legacy", "2026-07-28"]


async def _echo(arguments: dict[str, Any]) -> str:
    return str(arguments.get("text", ""))


def _registry(rows: int) -> ToolRegistry:
    registry = ToolRegistry()
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    for index in range(rows):
        registry.register_dynamic(f"echo_{index}", schema, _echo, description=f"Echo number {index}.")
    return registry


@pytest.mark.parametrize("mode", MODES)
async def test_stateless_http_lists_and_calls(mode: Any) -> None:
    settings = HttpSettings(port=0, stateless=True)
    async with serving(McpGateway(_registry(2)), settings) as url, client(url + "/mcp", mode) as downstream:
        with anyio.fail_after(60):
            names = [t.name for t in (await downstream.list_tools()).tools]
            echoed = await downstream.call_tool("echo_1", {"text": "stateless"})
    assert names == ["echo_0", "echo_1"]
    assert echoed.content[0].text == "stateless"  # type: ignore[union-attr]


async def test_a_profiles_server_serves_an_in_process_client() -> None:
    gateway = McpGateway(_registry(3), profiles={"first": lambda row: row.name == "echo_0"})
    async with mcp.Client(gateway.server("first"), mode="legacy") as downstream:
        with anyio.fail_after(60):
            names = [t.name for t in (await downstream.list_tools()).tools]
            echoed = await downstream.call_tool("echo_0", {"text": "in process"})
    assert names == ["echo_0"]
    assert echoed.content[0].text == "in process"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_a_large_catalog_is_listed_in_pages_and_read_whole(mode: Any) -> None:
    pages: list[int] = []
    async with serving(McpGateway(_registry(1234))) as url, client(url + "/mcp", mode) as downstream:
        with anyio.fail_after(120):
            names: list[str] = []
            cursor = None
            while True:
                listed = await downstream.list_tools(cursor=cursor)
                pages.append(len(listed.tools))
                names.extend(t.name for t in listed.tools)
                cursor = listed.next_cursor
                if cursor is None:
                    break
    assert pages == [500, 500, 234]
    assert names == [f"echo_{i}" for i in range(1234)]


async def test_a_native_rows_capabilities_are_listed_as_mcp_fields() -> None:
    registry = ToolRegistry()
    capabilities = ToolCapabilities(
        title="Look up",
        annotations=ToolAnnotations(read_only=True, open_world=False),
        icons=({"src": "https://example.com/icon.png", "mimeType": "image/png"},),
        task_support=TaskSupport.OPTIONAL,
        meta={"team": "search"},
        output_schema={"type": "object", "properties": {"hits": {"type": "integer"}}},
    )
    registry.register_dynamic(
        "lookup", {"type": "object", "properties": {"q": {"type": "string"}}}, _echo, capabilities=capabilities
    )
    async with mcp.Client(McpGateway(registry).server(), mode="legacy") as downstream:
        (listed,) = (await downstream.list_tools()).tools
    assert listed.title == "Look up"
    assert listed.annotations is not None and listed.annotations.read_only_hint is True
    assert listed.annotations.open_world_hint is False
    assert listed.icons is not None and str(listed.icons[0].src) == "https://example.com/icon.png"
    assert listed.execution is None  # the gateway runs tasks itself: clients call directly
    assert listed.meta == {"team": "search"}
    assert listed.output_schema == {"type": "object", "properties": {"hits": {"type": "integer"}}}
    assert listed.input_schema["properties"] == {"q": {"type": "string"}}
