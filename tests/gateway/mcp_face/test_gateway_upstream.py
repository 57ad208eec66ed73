"""Resources and prompts of upstream servers through the gateway: listed, read, got, subscribed."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from _gateway import client, serving
from _mcp import demo_in_process
from toolmesh import McpServer, ToolRegistry
from toolmesh.gateway import McpGateway
from toolmesh.policy import DenyServers

MODES = ["legacy", "2026-07-28"]


def _notes() -> MCPServer:
    server = MCPServer("notes")

    @server.resource("notes://static", mime_type="text/plain")
    def static() -> str:
        """A fixed note."""
        return "static note"

    @server.resource("notes://by-name/{name}")
    def by_name(name: str) -> str:
        """A note by name."""
        return f"note {name}"

    @server.prompt()
    def summarize(topic: str) -> str:
        """Summarize a topic."""
        return f"Please summarize {topic}."

    @server.tool()
    def noop() -> str:
        """Nothing."""
        return "ok"

    return server


class Subscribable:
    """A low-level upstream server that records the resource subscriptions it is asked for."""

    def __init__(self) -> None:
        self.subscribed: list[str] = []
        self.unsubscribed: list[str] = []

        async def list_resources(ctx: Any, params: Any) -> mcp_types.ListResourcesResult:
            return mcp_types.ListResourcesResult(resources=[mcp_types.Resource(uri="live://feed", name="feed")])

        async def subscribe(ctx: Any, params: mcp_types.SubscribeRequestParams) -> mcp_types.EmptyResult:
            self.subscribed.append(str(params.uri))
            return mcp_types.EmptyResult()

        async def unsubscribe(ctx: Any, params: mcp_types.UnsubscribeRequestParams) -> mcp_types.EmptyResult:
            self.unsubscribed.append(str(params.uri))
            return mcp_types.EmptyResult()

        async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
            return mcp_types.ListToolsResult(tools=[])

        self.server: Server[Any] = Server(
            "live",
            on_list_tools=list_tools,
            on_list_resources=list_resources,
            on_subscribe_resource=subscribe,
            on_unsubscribe_resource=unsubscribe,
        )


@pytest.mark.parametrize("mode", MODES)
async def test_resources_of_every_server_are_listed_and_read_with_their_own_uris(mode: Any) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process())
        await registry.connect(McpServer.in_process("notes", _notes()))
        async with serving(McpGateway(registry)) as url, client(url + "/mcp", mode) as downstream:
            with anyio.fail_after(60):
                listed = await downstream.list_resources()
                templates = await downstream.list_resource_templates()
                readme = await downstream.read_resource("demo://readme")
                static = await downstream.read_resource("notes://static")
                templated = await downstream.read_resource("notes://by-name/ada")
                with pytest.raises(MCPError):
                    await downstream.read_resource("nowhere://x")
    uris = [str(resource.uri) for resource in listed.resources]
    assert "demo://readme" in uris and "notes://static" in uris
    assert [t.uri_template for t in templates.resource_templates] == ["notes://by-name/{name}"]
    assert isinstance(readme.contents[0], mcp_types.TextResourceContents) and readme.contents[0].text
    assert static.contents[0].text == "static note"  # type: ignore[union-attr]
    assert templated.contents[0].text == "note ada"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_prompts_are_named_like_tools_and_filled_by_their_server(mode: Any) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("notes", _notes()))
        async with serving(McpGateway(registry)) as url, client(url + "/mcp", mode) as downstream:
            with anyio.fail_after(60):
                listed = await downstream.list_prompts()
                got = await downstream.get_prompt("notes__summarize", {"topic": "tides"})
                with pytest.raises(MCPError):
                    await downstream.get_prompt("elsewhere__summarize", {"topic": "x"})
    assert [prompt.name for prompt in listed.prompts] == ["notes__summarize"]
    assert listed.prompts[0].arguments is not None and listed.prompts[0].arguments[0].name == "topic"
    assert got.messages[0].content.text == "Please summarize tides."  # type: ignore[union-attr]


async def test_resource_subscriptions_pass_through_to_the_owning_server() -> None:
    live = Subscribable()
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("live", live.server))
        async with serving(McpGateway(registry)) as url, client(url + "/mcp", "legacy") as downstream:
            with anyio.fail_after(60):
                await downstream.list_resources()
                subscribe = mcp_types.SubscribeRequestParams(uri="live://feed")
                unsubscribe = mcp_types.UnsubscribeRequestParams(uri="live://feed")
                await downstream.session.send_request(
                    mcp_types.SubscribeRequest(params=subscribe), mcp_types.EmptyResult
                )
                await downstream.session.send_request(
                    mcp_types.UnsubscribeRequest(params=unsubscribe), mcp_types.EmptyResult
                )
    assert live.subscribed == ["live://feed"]
    assert live.unsubscribed == ["live://feed"]


async def test_a_denied_servers_resources_and_prompts_are_not_served() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process())
        await registry.connect(McpServer.in_process("notes", _notes()))
        gateway = McpGateway(registry, hooks=[DenyServers("notes")])
        async with serving(gateway) as url, client(url + "/mcp", "legacy") as downstream:
            with anyio.fail_after(60):
                uris = [str(r.uri) for r in (await downstream.list_resources()).resources]
                prompts = (await downstream.list_prompts()).prompts
                with pytest.raises(MCPError):
                    await downstream.read_resource("notes://static")
    assert "demo://readme" in uris and "notes://static" not in uris
    assert prompts == []


async def test_an_unprefixed_servers_prompts_keep_their_own_names() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("notes", _notes(), prefix=False))
        async with serving(McpGateway(registry)) as url, client(url + "/mcp", "legacy") as downstream:
            with anyio.fail_after(60):
                names = [prompt.name for prompt in (await downstream.list_prompts()).prompts]
                got = await downstream.get_prompt("summarize", {"topic": "tides"})
                tools = [t.name for t in (await downstream.list_tools()).tools]
    assert names == ["summarize"] and tools == ["noop"]  # named as the server's tools are
    assert got.messages[0].content.text == "Please summarize tides."  # type: ignore[union-attr]


async def test_a_read_resource_names_the_gateway_not_the_upstream_server() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process(protocol="2026-07-28"))
        async with serving(McpGateway(registry, name="front")) as url, client(url + "/mcp", "2026-07-28") as downstream:
            with anyio.fail_after(60):
                read = await downstream.read_resource("demo://readme")
    assert read.meta is not None and read.meta["io.modelcontextprotocol/serverInfo"]["name"] == "front"
