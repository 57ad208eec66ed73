"""A client no one here wrote: the Agents SDK's ``HostedMCPTool`` on ``OpenAIResponsesModel``, via the gateway."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from agents import Agent, HostedMCPTool, OpenAIResponsesModel, Runner, set_tracing_disabled
from agents.items import MCPApprovalRequestItem

from _responses import Reply, calc_server, scene


@pytest.fixture(autouse=True)
def _no_tracing() -> Iterator[None]:
    set_tracing_disabled(True)  # the SDK would otherwise export traces to OpenAI
    yield


def _agent(client: Any, tool: HostedMCPTool) -> Agent[Any]:
    return Agent(
        name="calculator",
        instructions="Use the calc server.",
        model=OpenAIResponsesModel(model="local-model", openai_client=client),
        tools=[tool],
    )


async def test_an_agent_with_a_hosted_mcp_tool_runs_a_whole_turn_through_the_gateway() -> None:
    calls: list[str] = []
    replies = [Reply(tool_calls=[("calc__add", '{"a": 20, "b": 22}')]), Reply(text="The answer is 42.")]
    async with scene(replies, server=calc_server(calls=calls)) as (client, upstream, url):
        tool = HostedMCPTool(
            tool_config={"type": "mcp", "server_label": "calc", "server_url": url, "require_approval": "never"}
        )
        result = await Runner.run(_agent(client, tool), "What is 20 + 22?")
    assert result.final_output == "The answer is 42."
    assert calls == ["add"]
    messages = upstream.requests[0]["messages"]
    assert messages[0] == {"role": "system", "content": "Use the calc server."}
    assert messages[-1]["content"] == "What is 20 + 22?"
    assert upstream.requests[1]["messages"][-1]["content"] == "42"


async def test_an_agent_approves_through_on_approval_request_and_the_call_runs() -> None:
    calls: list[str] = []
    asked: list[tuple[str, str]] = []

    def approve(request: Any) -> Any:
        item = request.data
        asked.append((item.server_label, item.name))
        return {"approve": True}

    replies = [Reply(tool_calls=[("calc__wipe", "{}")]), Reply(text="Wiped, as you allowed.")]
    async with scene(replies, server=calc_server(calls=calls)) as (client, upstream, url):
        tool = HostedMCPTool(
            tool_config={"type": "mcp", "server_label": "calc", "server_url": url, "require_approval": "always"},
            on_approval_request=approve,
        )
        result = await Runner.run(_agent(client, tool), "Wipe it.")
    assert asked == [("calc", "wipe")] and calls == ["wipe"]
    assert result.final_output == "Wiped, as you allowed."
    assert any(isinstance(item, MCPApprovalRequestItem) for item in result.new_items)
    assert upstream.requests[1]["messages"][-1]["content"] == "wiped"


async def test_without_on_approval_request_the_approval_is_an_interruption_the_caller_resumes() -> None:
    calls: list[str] = []
    replies = [Reply(tool_calls=[("calc__wipe", "{}")]), Reply(text="Wiped after your approval.")]
    async with scene(replies, server=calc_server(calls=calls)) as (client, upstream, url):
        tool = HostedMCPTool(
            tool_config={"type": "mcp", "server_label": "calc", "server_url": url, "require_approval": "always"}
        )
        agent = _agent(client, tool)
        paused = await Runner.run(agent, "Wipe it.")
        assert calls == [] and len(paused.interruptions) == 1
        state = paused.to_state()
        state.approve(paused.interruptions[0])
        result = await Runner.run(agent, state)
    assert calls == ["wipe"]
    assert result.final_output == "Wiped after your approval."
    assert upstream.requests[1]["messages"][-1]["content"] == "wiped"
