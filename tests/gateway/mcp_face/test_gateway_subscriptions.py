"""Resource subscriptions through the gateway, whatever protocol version each side speaks.

A downstream client subscribes (``resources/subscribe`` on 2025-11-25, a ``subscriptions/listen``
stream naming the URI on 2026-07-28); the gateway follows the resource upstream (the same
methods on a 2025-11-25 upstream session, a listen stream on a 2026-07-28 one) and passes each
update on to the clients subscribed to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.server.lowlevel.server import Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from _gateway import client, serving
from _mcp import wait_until
from _servers import FIXTURES, stdio_params
from toolmesh import ErrorKind, McpServer, ToolRegistry
from toolmesh.gateway import McpGateway

UPSTREAM = ["2025-11-25", "2026-07-28"]
DOWNSTREAM = ["legacy", "2026-07-28"]
FEED = "live://feed"


class Live:
    """An upstream server with one resource, and a ``touch`` tool that announces the resource changed."""

    def __init__(self) -> None:
        self.subscribed: list[str] = []
        self.released = anyio.Event()
        """Set when the gateway lets go of the resource: unsubscribed, or its listen stream ended."""
        bus = InMemorySubscriptionBus()
        listen = ListenHandler(bus)

        async def list_resources(ctx: Any, params: Any) -> mcp_types.ListResourcesResult:
            return mcp_types.ListResourcesResult(resources=[mcp_types.Resource(uri=FEED, name="feed")])

        async def subscribe(ctx: Any, params: mcp_types.SubscribeRequestParams) -> mcp_types.EmptyResult:
            self.subscribed.append(str(params.uri))
            return mcp_types.EmptyResult()

        async def unsubscribe(ctx: Any, params: mcp_types.UnsubscribeRequestParams) -> mcp_types.EmptyResult:
            self.released.set()
            return mcp_types.EmptyResult()

        async def listen_then_release(
            ctx: Any, params: mcp_types.SubscriptionsListenRequestParams
        ) -> mcp_types.SubscriptionsListenResult:
            try:
                return await listen(ctx, params)
            finally:
                if FEED in (params.notifications.resource_subscriptions or ()):
                    self.released.set()

        async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
            touch = mcp_types.Tool(name="touch", input_schema={"type": "object"})
            return mcp_types.ListToolsResult(tools=[touch])

        async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
            if ctx.protocol_version == "2026-07-28":
                await bus.publish(ResourceUpdated(FEED))
            else:
                await ctx.session.send_resource_updated(FEED)
            return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="touched")])

        self.server: Server[Any] = Server(
            "live",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_subscribe_resource=subscribe,
            on_unsubscribe_resource=unsubscribe,
            on_subscriptions_listen=listen_then_release,
        )


@pytest.mark.parametrize("downstream_mode", DOWNSTREAM)
@pytest.mark.parametrize("upstream_protocol", UPSTREAM)
async def test_a_subscribed_client_hears_the_upstream_resources_updates(
    upstream_protocol: Any, downstream_mode: Any
) -> None:
    live = Live()
    updated = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification) and str(message.params.uri) == FEED:
            updated.set()

    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("live", live.server, protocol=upstream_protocol))
        watch = registry.connection("live").resources
        async with (
            serving(McpGateway(registry)) as url,
            client(url + "/mcp", downstream_mode, message_handler=on_message) as downstream,
        ):
            with anyio.fail_after(60):
                if downstream_mode == "legacy":
                    await downstream.session.send_request(
                        mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=FEED)),
                        mcp_types.EmptyResult,
                    )
                    assert watch.uris == {FEED}
                    await downstream.call_tool("live__touch", {})
                    await updated.wait()
                    await downstream.session.send_request(
                        mcp_types.UnsubscribeRequest(params=mcp_types.UnsubscribeRequestParams(uri=FEED)),
                        mcp_types.EmptyResult,
                    )
                else:
                    async with downstream.listen(resource_subscriptions=[FEED]) as subscription:
                        assert watch.uris == {FEED}
                        await downstream.call_tool("live__touch", {})
                        event = await subscription.__anext__()
                    assert event == ResourceUpdated(FEED)
                await live.released.wait()  # the last subscriber gone: the gateway lets go upstream
        assert watch.uris == set()
    if upstream_protocol == "2025-11-25":
        assert live.subscribed == [FEED]


async def test_a_client_that_leaves_releases_its_subscriptions_upstream() -> None:
    live = Live()
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("live", live.server, protocol="2025-11-25"))
        async with serving(McpGateway(registry)) as url:
            async with client(url + "/mcp") as first, client(url + "/mcp") as second:
                with anyio.fail_after(60):
                    for downstream in (first, second):
                        await downstream.session.send_request(
                            mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=FEED)),
                            mcp_types.EmptyResult,
                        )
            with anyio.fail_after(60):
                await live.released.wait()  # both clients gone: the gateway lets go of the resource
        assert live.subscribed == [FEED]  # the second subscriber shared the first one's upstream subscription
        assert registry.connection("live").resources.uris == set()


async def test_a_refused_subscription_says_resource_not_tool() -> None:
    async def list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=[])

    async def list_resources(ctx: Any, params: Any) -> mcp_types.ListResourcesResult:
        return mcp_types.ListResourcesResult(resources=[mcp_types.Resource(uri=FEED, name="feed")])

    still = Server[Any]("still", on_list_tools=list_tools, on_list_resources=list_resources)  # no subscribe
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("still", still, protocol="2025-11-25"))
        async with serving(McpGateway(registry)) as url, client(url + "/mcp") as downstream:
            with anyio.fail_after(60), pytest.raises(MCPError) as refused:
                await downstream.session.send_request(
                    mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=FEED)),
                    mcp_types.EmptyResult,
                )
        assert registry.connection("still").resources.uris == set()
    assert f"Subscribing to the resource '{FEED}' failed" in str(refused.value)
    assert "tool" not in str(refused.value)


@pytest.mark.parametrize("protocol", UPSTREAM)
async def test_a_reconnected_server_is_subscribed_again(protocol: Any, tmp_path: Path) -> None:
    log = tmp_path / "subscriptions.log"
    log.touch()
    command, args, env = stdio_params(FIXTURES / "watched_server.py", {"FIXTURE_SUBSCRIPTIONS": str(log)})
    asked = "subscribe watched://feed" if protocol == "2025-11-25" else "listen watched://feed"

    def lines() -> list[str]:
        return log.read_text().splitlines()

    heard: list[tuple[str, str]] = []
    reported = anyio.Event()

    def on_updated(server: str, uri: str) -> None:
        heard.append((server, uri))
        reported.set()

    async with ToolRegistry() as registry:
        registry.on_resource_updated(on_updated)
        connection = await registry.connect(McpServer.stdio("watched", command, args, env=env, protocol=protocol))
        with anyio.fail_after(60):
            await registry.subscribe_resource("watched", "watched://feed")
            assert lines() == [asked]
            died = await registry.dispatch("watched__die")
            assert died.error is not None and died.error.kind is ErrorKind.UNAVAILABLE
            await registry.list_resources("watched")  # the next request starts a new process
            await wait_until(lambda: len(lines()) == 2, seconds=60)
            await reported.wait()
        assert lines() == [asked, asked] and connection.reconnects == 1
        assert heard == [("watched", "watched://feed")]  # updates while it was down are unknown: read it again
