"""A tool's questions mid-call reach the client that called: by request (2025-11-25), by input rounds (2026-07-28)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from mcp.shared.exceptions import MCPError

from _gateway import client, serving
from toolmesh import ElicitationRequest, SamplingRequest, ToolContext, ToolRegistry, tool
from toolmesh.gateway import McpGateway

MODES = ["legacy", "2026-07-28"]
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@tool
async def greet(ctx: ToolContext[Any]) -> str:
    """Ask the user's name, then ask the model for a greeting."""
    assert ctx.elicitation is not None and ctx.sampling is not None, (
        "the gateway gives every call its client's callbacks"
    )
    form = mcp_types.ElicitRequestFormParams(message="Your name?", requested_schema=SCHEMA)
    answer = await ctx.elicitation(ElicitationRequest(form, ctx.call_id, ctx.tool_name, None))
    assert answer.content is not None
    name = answer.content["name"]
    message = mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(type="text", text=f"Greet {name}"))
    sampled = await ctx.sampling(
        SamplingRequest(
            mcp_types.CreateMessageRequestParams(messages=[message], max_tokens=20), ctx.call_id, None, None
        )
    )
    return f"{name}: {sampled.content.text}"  # type: ignore[union-attr]


class Downstream:
    """The downstream client's callbacks: they answer, and remember being asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(self, context: Any, params: Any) -> mcp_types.ElicitResult:
        self.asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(self, context: Any, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        self.asked.append(params.messages[0].content.text)  # type: ignore[union-attr]
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text="Hello, Ada!"), model="downstream"
        )


@pytest.mark.parametrize("mode", MODES)
async def test_questions_of_a_call_are_answered_by_the_client_that_made_it(mode: Any) -> None:
    registry = ToolRegistry()
    registry.register(greet)
    downstream = Downstream()
    async with (
        serving(McpGateway(registry)) as url,
        client(
            url + "/mcp", mode, elicitation_callback=downstream.elicit, sampling_callback=downstream.sample
        ) as caller,
    ):
        with anyio.fail_after(60):
            result = await caller.call_tool("greet", {})
    assert not result.is_error, result
    assert result.content[0].text == "Ada: Hello, Ada!"  # type: ignore[union-attr]
    assert downstream.asked == ["Your name?", "Greet Ada"]


async def test_a_2026_client_that_can_answer_still_cancels_its_call() -> None:
    started, cancelled = anyio.Event(), anyio.Event()

    @tool
    async def hang() -> str:
        """Wait until cancelled."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"  # pragma: no cover

    registry = ToolRegistry()
    registry.register(hang)
    downstream = Downstream()
    async with (
        serving(McpGateway(registry)) as url,
        client(url + "/mcp", "2026-07-28", elicitation_callback=downstream.elicit) as caller,
    ):
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(caller.call_tool, "hang", {})
                await started.wait()
                group.cancel_scope.cancel()
            await cancelled.wait()


async def test_a_retry_with_an_unknown_request_state_is_refused() -> None:
    registry = ToolRegistry()
    registry.register(greet)
    async with serving(McpGateway(registry)) as url, client(url + "/mcp", "2026-07-28") as caller:
        params = mcp_types.CallToolRequestParams(name="greet", arguments={}, request_state="forged")
        with anyio.fail_after(60), pytest.raises(MCPError, match="requestState"):
            await caller.session.send_request(mcp_types.CallToolRequest(params=params), mcp_types.CallToolResult)
