"""``completion/complete`` through the gateway: routed to the server owning the prompt or resource template."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from _gateway import client, serving
from toolmesh import McpServer, ToolRegistry
from toolmesh.gateway import McpGateway

MODES = ["legacy", "2026-07-28"]


def _cities(label: str, asked: list[tuple[str, str]]) -> MCPServer:
    """A server with a ``trip`` prompt and a ``{label}://city/{name}`` template whose arguments complete."""
    server = MCPServer(label)

    @server.prompt()
    def trip(city: str) -> str:
        """Plan a trip."""
        return f"Plan a trip to {city}."

    @server.resource(f"{label}://city/{{name}}")
    def city(name: str) -> str:
        """A city."""
        return name

    @server.completion()
    async def complete(
        ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
        argument: mcp_types.CompletionArgument,
        context: mcp_types.CompletionContext | None,
    ) -> mcp_types.Completion:
        subject = ref.name if isinstance(ref, mcp_types.PromptReference) else ref.uri
        asked.append((subject, argument.name))
        values = [f"{label}-{v}" for v in ("paris", "park") if v.startswith(argument.value)]
        return mcp_types.Completion(values=values, total=len(values), has_more=False)

    return server


@pytest.mark.parametrize("mode", MODES)
async def test_completions_come_from_the_server_owning_the_prompt_or_template(mode: Any) -> None:
    asked: dict[str, list[tuple[str, str]]] = {"east": [], "west": []}
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("east", _cities("east", asked["east"])))
        await registry.connect(McpServer.in_process("west", _cities("west", asked["west"])))
        async with serving(McpGateway(registry)) as url, client(url + "/mcp", mode) as downstream:
            with anyio.fail_after(60):
                by_prompt = await downstream.complete(
                    mcp_types.PromptReference(type="ref/prompt", name="west__trip"), {"name": "city", "value": "par"}
                )
                by_template = await downstream.complete(
                    mcp_types.ResourceTemplateReference(type="ref/resource", uri="east://city/{name}"),
                    {"name": "name", "value": "pa"},
                )
                with pytest.raises(MCPError, match="unknown prompt 'nowhere__trip'"):
                    await downstream.complete(
                        mcp_types.PromptReference(type="ref/prompt", name="nowhere__trip"),
                        {"name": "city", "value": ""},
                    )
            if mode == "legacy":
                assert downstream.server_capabilities.completions is not None
    assert by_prompt.completion.values == ["west-paris", "west-park"]
    assert by_template.completion.values == ["east-paris", "east-park"]
    assert asked == {"east": [("east://city/{name}", "name")], "west": [("trip", "city")]}
