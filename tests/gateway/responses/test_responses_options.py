"""Request options reaching the upstream (tool_choice, parallel calls, sampling), limits, policy and failures."""

from __future__ import annotations

import json
from typing import Any

import anyio
import openai
import pytest
from mcp.server.mcpserver import MCPServer

from _responses import Reply, calc_server, mcp_tool, scene, strict_event, strict_response
from toolmesh.policy import DenyTools

FUNCTION = {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}}


async def test_tool_choice_applies_to_the_first_upstream_call_only() -> None:
    add = Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')])
    replies = [add, Reply(text="2"), Reply(tool_calls=[("lookup", "{}")]), Reply(text="plain")]
    async with scene(replies) as (client, upstream, url):
        tools: Any = [mcp_tool("calc", url), FUNCTION]
        choice: Any = {"type": "mcp", "server_label": "calc", "name": "add"}
        await client.responses.create(model="m", input="x", tools=tools, tool_choice=choice)
        await client.responses.create(
            model="m", input="x", tools=tools, tool_choice={"type": "function", "name": "lookup"}
        )
        await client.responses.create(model="m", input="x", tools=tools, tool_choice="none")
    first, second, forced, none = upstream.requests
    assert first["tool_choice"] == "required"
    assert [t["function"]["name"] for t in first["tools"]] == ["calc__add"]
    assert "tool_choice" not in second and len(second["tools"]) == 4
    assert forced["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    assert none["tool_choice"] == "none"


async def test_sampling_settings_pass_to_the_upstream_and_metadata_is_echoed() -> None:
    async with scene([Reply(text="ok")]) as (client, upstream, _):
        response = await client.responses.create(
            model="m",
            input="x",
            temperature=0.2,
            top_p=0.9,
            max_output_tokens=50,
            metadata={"ticket": "T-1"},
            instructions="Be brief.",
        )
    strict_response(response)
    sent = upstream.requests[0]
    assert (sent["temperature"], sent["top_p"], sent["max_tokens"]) == (0.2, 0.9, 50)
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert response.metadata == {"ticket": "T-1"} and response.instructions == "Be brief."


async def test_developer_messages_and_images_are_translated() -> None:
    image = "data:image/png;base64,iVBORw0KGgo="
    given: Any = [
        {"role": "developer", "content": "Only facts."},
        {
            "role": "user",
            "content": [{"type": "input_text", "text": "What is this?"}, {"type": "input_image", "image_url": image}],
        },
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A pixel."}]},
    ]
    async with scene([Reply(text="ok")]) as (client, upstream, _):
        await client.responses.create(model="m", input=given)
    messages = upstream.requests[0]["messages"]
    assert messages[0] == {"role": "system", "content": "Only facts."}
    assert messages[1]["content"][1] == {"type": "image_url", "image_url": {"url": image, "detail": "auto"}}
    assert messages[2] == {"role": "assistant", "content": "A pixel."}


async def test_parallel_tool_calls_false_runs_the_calls_one_after_the_other() -> None:
    server = MCPServer("steps")
    seen: list[str] = []

    @server.tool()
    async def step(n: int) -> str:
        """One step."""
        seen.append(f"start {n}")
        await anyio.lowlevel.checkpoint()
        seen.append(f"end {n}")
        return str(n)

    calls = [("steps__step", '{"n": 1}'), ("steps__step", '{"n": 2}')]
    async with scene([Reply(tool_calls=calls), Reply(text="done")], server=server) as (client, upstream, url):
        response = await client.responses.create(
            model="m", input="x", tools=[mcp_tool("steps", url)], parallel_tool_calls=False
        )
    assert seen == ["start 1", "end 1", "start 2", "end 2"]
    assert upstream.requests[0]["parallel_tool_calls"] is False
    assert [item.output for item in response.output if item.type == "mcp_call"] == ["1", "2"]


async def test_max_tool_calls_leaves_later_calls_unrun_and_tells_the_model() -> None:
    calls: list[str] = []
    two = [("calc__add", '{"a": 1, "b": 1}'), ("calc__add", '{"a": 2, "b": 2}')]
    async with scene([Reply(tool_calls=two), Reply(text="one done")], server=calc_server(calls=calls)) as (
        client,
        upstream,
        url,
    ):
        response = await client.responses.create(model="m", input="x", tools=[mcp_tool("calc", url)], max_tool_calls=1)
    strict_response(response)
    assert calls == ["add"] and [i.type for i in response.output].count("mcp_call") == 1
    assert "at most 1 tool calls" in upstream.requests[1]["messages"][-1]["content"]


async def test_the_gateways_policy_applies_to_declared_servers() -> None:
    calls: list[str] = []
    replies = [Reply(tool_calls=[("calc__wipe", "{}")]), Reply(text="refused")]
    async with scene(replies, server=calc_server(calls=calls), hooks=[DenyTools("calc__wipe")]) as (
        client,
        upstream,
        url,
    ):
        response = await client.responses.create(model="m", input="wipe", tools=[mcp_tool("calc", url)])
    assert [t.name for t in response.output[0].tools] == ["add", "fail"]
    assert "calc__wipe" not in [t["function"]["name"] for t in upstream.requests[0]["tools"]]
    assert calls == [] and [item.type for item in response.output] == ["mcp_list_tools", "message"]
    told = upstream.requests[1]["messages"][-1]
    assert told["role"] == "tool" and "calc__wipe" in told["content"]


async def test_upstream_failures_are_errors_or_a_failed_response() -> None:
    replies = [Reply(status=404, text="no such model"), Reply(status=500, text="boom"), Reply(status=500, text="boom")]
    async with scene(replies) as (client, _, _):
        with pytest.raises(openai.NotFoundError) as missing:
            await client.responses.create(model="m", input="x")
        with pytest.raises(openai.APIStatusError) as broken:
            await client.responses.create(model="m", input="x")
        stream = await client.responses.create(model="m", input="x", stream=True)
        events = [strict_event(event) async for event in stream]
    assert "no such model" in json.dumps(missing.value.body)
    assert broken.value.status_code == 502
    assert [e.type for e in events] == ["response.created", "response.in_progress", "response.failed"]
    assert events[-1].response.status == "failed" and "500" in events[-1].response.error.message


async def test_a_json_schema_text_format_becomes_the_upstreams_response_format() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    text: Any = {"format": {"type": "json_schema", "name": "answer", "schema": schema, "strict": True}}
    async with scene([Reply(text='{"n": 4}')]) as (client, upstream, _):
        response = await client.responses.create(model="m", input="2+2 as JSON", text=text)
    strict_response(response)
    assert upstream.requests[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": schema, "strict": True},
    }
    assert json.loads(response.output_text) == {"n": 4}
    assert response.text.format.type == "json_schema"


async def test_server_descriptions_tell_the_model_what_each_server_is_for() -> None:
    async with scene([Reply(text="ok")]) as (client, upstream, url):
        tool = mcp_tool("calc", url, server_description="Exact integer arithmetic.")
        await client.responses.create(model="m", input="x", instructions="Be brief.", tools=[tool])
    messages = upstream.requests[0]["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1]["role"] == "system" and "- calc: Exact integer arithmetic." in messages[1]["content"]
    assert messages[2] == {"role": "user", "content": "x"}


async def test_a_rounds_calls_run_at_once_when_parallel_calls_are_allowed() -> None:
    server = MCPServer("pair")
    arrived = {1: anyio.Event(), 2: anyio.Event()}

    @server.tool()
    async def meet(n: int) -> str:
        """Wait for the other call."""
        arrived[n].set()
        with anyio.fail_after(30):  # only reached when the calls run one after the other
            await arrived[3 - n].wait()
        return "met"

    calls = [("pair__meet", '{"n": 1}'), ("pair__meet", '{"n": 2}')]
    async with scene([Reply(tool_calls=calls), Reply(text="done")], server=server) as (client, _, url):
        response = await client.responses.create(model="m", input="x", tools=[mcp_tool("pair", url)])
    assert [item.output for item in response.output if item.type == "mcp_call"] == ["met", "met"]


async def test_tool_calls_without_distinct_ids_get_their_own() -> None:
    calls = [("calc__add", '{"a": 1, "b": 1}'), ("calc__add", '{"a": 2, "b": 2}')]
    async with scene([Reply(tool_calls=calls, ids=["", ""]), Reply(text="2 and 4")]) as (client, upstream, url):
        response = await client.responses.create(model="m", input="x", tools=[mcp_tool("calc", url)])
    assert [item.output for item in response.output if item.type == "mcp_call"] == ["2", "4"]
    assistant, first, second = upstream.requests[1]["messages"][-3:]
    ids = [call["id"] for call in assistant["tool_calls"]]
    assert len(set(ids)) == 2 and all(ids)
    assert [first["tool_call_id"], second["tool_call_id"]] == ids
    assert [first["content"], second["content"]] == ["2", "4"]
