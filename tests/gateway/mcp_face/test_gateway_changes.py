"""Tool-list changes reach connected clients of both protocol versions, and the capability is advertised."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types

from _gateway import client, serving
from _mcp import demo_in_process
from toolmesh import ToolRegistry
from toolmesh.gateway import McpGateway


async def _ping(arguments: dict[str, Any]) -> str:
    return "pong"


def _add_tool(registry: ToolRegistry, name: str) -> None:
    registry.register_dynamic(name, {"type": "object", "properties": {}}, _ping, description="added while serving")


async def test_a_legacy_client_is_notified_and_sees_the_new_tool() -> None:
    registry = ToolRegistry()
    _add_tool(registry, "first")
    gateway = McpGateway(registry)
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            heard.set()

    async with serving(gateway) as url, client(url + "/mcp", "legacy", message_handler=on_message) as legacy:
        assert legacy.server_capabilities.tools is not None and legacy.server_capabilities.tools.list_changed
        assert [t.name for t in (await legacy.list_tools()).tools] == ["first"]
        added = 0
        with anyio.fail_after(60):
            while not heard.is_set():
                # the client opens its notification stream (GET) on its own after the handshake:
                # a change made before it is open reaches no one, so changes repeat until one is heard
                added += 1
                _add_tool(registry, f"added_{added}")
                with anyio.move_on_after(2):
                    await heard.wait()
            names = [t.name for t in (await legacy.list_tools(cache_mode="refresh")).tools]
    assert names == ["first", *(f"added_{i}" for i in range(1, added + 1))]


async def test_a_2026_client_hears_the_change_on_its_listen_stream() -> None:
    registry = ToolRegistry()
    gateway = McpGateway(registry)
    async with serving(gateway) as url, client(url + "/mcp", "2026-07-28") as modern:
        assert (await modern.list_tools()).tools == []
        with anyio.fail_after(60):
            async with modern.listen(tools_list_changed=True) as subscription:
                _add_tool(registry, "late")
                async for _event in subscription:
                    break
            names = [t.name for t in (await modern.list_tools(cache_mode="refresh")).tools]
    assert names == ["late"]


async def test_list_changed_is_advertised_to_a_discovering_2026_client() -> None:
    async with serving(McpGateway(ToolRegistry())) as url, client(url + "/mcp", "auto") as discovering:
        assert discovering.protocol_version == "2026-07-28"
        tools = discovering.server_capabilities.tools
        assert tools is not None and tools.list_changed


async def test_an_upstream_servers_new_tool_reaches_a_connected_client() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process())  # in process: the 2025-11-25 handshake, so it announces changes
        gateway = McpGateway(registry)
        async with serving(gateway) as url, client(url + "/mcp", "2026-07-28") as modern:
            with anyio.fail_after(60):
                async with modern.listen(tools_list_changed=True) as subscription:
                    grown = await modern.call_tool("demo__grow", {"name": "fresh"})
                    async for _event in subscription:  # the server announced it, the registry refreshed its rows
                        break
                names = [t.name for t in (await modern.list_tools(cache_mode="refresh")).tools]
                fresh = await modern.call_tool("demo__fresh", {"text": "hi"})
    assert grown.content[0].text == "added fresh"  # type: ignore[union-attr]
    assert "demo__fresh" in names
    assert fresh.content[0].text == "fresh text=hi"  # type: ignore[union-attr]


async def test_a_server_connecting_announces_resource_and_prompt_lists_too() -> None:
    async with ToolRegistry() as registry:
        gateway = McpGateway(registry)
        async with serving(gateway) as url, client(url + "/mcp", "2026-07-28") as modern:
            with anyio.fail_after(60):
                async with modern.listen(resources_list_changed=True, prompts_list_changed=True) as subscription:
                    await registry.connect(demo_in_process())
                    kinds = []
                    async for event in subscription:
                        kinds.append(type(event).__name__)
                        if len(kinds) == 2:
                            break
                uris = [str(r.uri) for r in (await modern.list_resources(cache_mode="refresh")).resources]
    assert sorted(kinds) == ["PromptsListChanged", "ResourcesListChanged"]
    assert "demo://readme" in uris
