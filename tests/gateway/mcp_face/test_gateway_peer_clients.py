"""The clients of the libraries users already have, pointed at the gateway as at any MCP server.

Each connects over Streamable HTTP on loopback (fastmcp's `Client`, pydantic-ai's `MCPToolset`
driven by an `Agent`, the OpenAI Agents SDK's `MCPServerStreamableHttp` driven by an `Agent`'s
tools), lists the catalog and calls a native row and a proxied row through it. None of these
clients was written here: the test is that they accept what the gateway serves (names,
schemas, output schemas, structured results, `isError`).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import fastmcp
from agents import Agent as AgentsAgent
from agents import FunctionTool, RunContextWrapper
from agents.mcp import MCPServerStreamableHttp
from agents.tool_context import ToolContext
from fastmcp.exceptions import ToolError
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from _peers import peer_gateway_url

NATIVE = "multiply"
PROXIED = "demo__add"
PROXIED_TEXT = "demo__echo"
_WAIT = 60.0


async def test_fastmcp_client_lists_and_calls_native_and_proxied_tools() -> None:
    async with peer_gateway_url() as url, fastmcp.Client(url) as client:
        with anyio.fail_after(_WAIT):
            tools = {t.name: t for t in await client.list_tools()}
            assert {NATIVE, PROXIED, PROXIED_TEXT} <= set(tools)
            assert tools[NATIVE].output_schema is not None
            assert tools[PROXIED].output_schema is not None

            native = await client.call_tool(NATIVE, {"a": 6, "b": 7})
            assert native.structured_content == {"product": 42}
            assert native.data.product == 42  # fastmcp built its result type from the served outputSchema
            proxied = await client.call_tool(PROXIED, {"a": 2, "b": 3})
            assert proxied.structured_content == {"sum": 5}
            assert proxied.data.sum == 5
            text = await client.call_tool(PROXIED_TEXT, {"text": "through the gateway"})
            assert [block.text for block in text.content] == ["through the gateway"]

            failed = await client.call_tool("refuse", {"reason": "no"}, raise_on_error=False)
            assert failed.is_error
            try:
                await client.call_tool("demo__fail", {"reason": "upstream says no"})
            except ToolError as exc:
                assert "upstream says no" in str(exc)
            else:
                raise AssertionError("fastmcp did not see the proxied isError result")


async def test_pydantic_ai_agent_lists_and_calls_native_and_proxied_tools() -> None:
    offered: list[str] = []
    failures: list[str] = []  # what the model is told of an isError result (a tool return or a retry prompt)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts = [p for m in messages for p in getattr(m, "parts", ())]
        returns = [p for p in parts if isinstance(p, ToolReturnPart)]
        if not returns:
            offered.extend(t.name for t in info.function_tools)
            return ModelResponse(
                parts=[
                    ToolCallPart(NATIVE, {"a": 6, "b": 7}, tool_call_id="c1"),
                    ToolCallPart(PROXIED, {"a": 2, "b": 3}, tool_call_id="c2"),
                    ToolCallPart("demo__fail", {"reason": "upstream says no"}, tool_call_id="c3"),
                ]
            )
        failures.extend(
            str(p.content)
            for p in parts
            if isinstance(p, RetryPromptPart | ToolReturnPart) and p.tool_name == "demo__fail"
        )
        answers = {p.tool_name: p.content for p in returns if p.tool_name != "demo__fail"}
        return ModelResponse(parts=[TextPart(json.dumps(answers, sort_keys=True))])

    async with peer_gateway_url() as url:
        agent = Agent(FunctionModel(model), toolsets=[MCPToolset(url)])
        with anyio.fail_after(_WAIT):
            result = await agent.run("multiply and add")

    assert {NATIVE, PROXIED, PROXIED_TEXT} <= set(offered)
    assert json.loads(result.output) == {NATIVE: {"product": 42}, PROXIED: {"sum": 5}}
    assert len(failures) == 1
    assert "upstream says no" in failures[0]


async def test_openai_agents_mcp_server_lists_and_calls_native_and_proxied_tools() -> None:
    async def invoke(tools: dict[str, FunctionTool], name: str, arguments: dict[str, Any]) -> Any:
        text = json.dumps(arguments)
        ctx = ToolContext(context=None, tool_name=name, tool_call_id=f"call_{name}", tool_arguments=text)
        return await tools[name].on_invoke_tool(ctx, text)

    async with peer_gateway_url() as url, MCPServerStreamableHttp(params={"url": url}, name="toolmesh") as server:
        agent = AgentsAgent(name="assistant", mcp_servers=[server])
        with anyio.fail_after(_WAIT):
            listed = {t.name for t in await server.list_tools()}
            tools = {
                t.name: t for t in await agent.get_mcp_tools(RunContextWrapper(None)) if isinstance(t, FunctionTool)
            }
            native = await invoke(tools, NATIVE, {"a": 6, "b": 7})
            proxied = await invoke(tools, PROXIED, {"a": 2, "b": 3})
            echoed = await server.call_tool(PROXIED_TEXT, {"text": "through the gateway"})
            refused = await invoke(tools, "refuse", {"reason": "not today"})

    assert {NATIVE, PROXIED, PROXIED_TEXT} <= listed <= set(tools)
    assert json.loads(_text(native)) == {"product": 42}
    assert json.loads(_text(proxied)) == {"sum": 5}
    assert not echoed.is_error
    assert echoed.content[0].text == "through the gateway"
    assert "not today" in _text(refused)  # an isError result reaches the model as its text


def _text(output: Any) -> str:
    """The text an openai-agents MCP function tool handed the model (a string or a text output item)."""
    if isinstance(output, str):
        return output
    if isinstance(output, list) and len(output) == 1:
        output = output[0]
    text = getattr(output, "text", None)
    if text is None and isinstance(output, dict):
        text = output.get("text")
    assert isinstance(text, str), f"unexpected tool output {output!r}"
    return text
