"""The Responses endpoint's turn, non-streamed: declared MCP servers' tools offered, run and reported.

Real pieces everywhere but the model: the openai SDK's client calls the gateway's
``/v1/responses`` over HTTP, the gateway calls a scripted Chat Completions server over
HTTP, and the declared MCP servers are ``MCPServer``s served over Streamable HTTP.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer

from _responses import Reply, calc_server, mcp_tool, scene, strict_response
from _servers import free_port
from toolmesh import ToolRegistry, tool


def _types(response: Any) -> list[str]:
    return [item.type for item in response.output]


def _offered(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["function"]["name"]: tool["function"] for tool in request.get("tools", [])}


async def test_a_declared_tool_is_offered_as_label__tool_and_called_under_its_own_name() -> None:
    replies = [
        Reply(tool_calls=[("calc__add", '{"a": 2, "b": 3}')], usage=(11, 3)),
        Reply(text="It is 5.", usage=(20, 4)),
    ]
    async with scene(replies) as (client, upstream, url):
        response = await client.responses.create(model="m", input="2+3?", tools=[mcp_tool("calc", url)])
    strict_response(response)
    assert _types(response) == ["mcp_list_tools", "mcp_call", "message"]
    listing, call, _ = response.output
    assert listing.server_label == "calc" and [t.name for t in listing.tools] == ["add", "fail", "wipe"]
    assert listing.error is None
    assert (call.server_label, call.name, json.loads(call.arguments)) == ("calc", "add", {"a": 2, "b": 3})
    assert (call.status, call.output, call.error) == ("completed", "5", None)
    assert response.output_text == "It is 5." and response.status == "completed"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.total_tokens) == (31, 7, 38)
    offered = _offered(upstream.requests[0])
    assert sorted(offered) == ["calc__add", "calc__fail", "calc__wipe"]
    assert offered["calc__add"]["parameters"]["properties"] == listing.tools[0].input_schema["properties"]
    assert offered["calc__add"]["description"] == "Add two integers."
    second = upstream.requests[1]["messages"]
    assert second[0] == {"role": "user", "content": "2+3?"}
    assert second[1]["tool_calls"][0]["function"]["name"] == "calc__add"
    assert second[2]["role"] == "tool" and second[2]["content"] == "5"


async def test_invalid_arguments_give_a_failed_mcp_call_and_a_completed_response() -> None:
    replies = [Reply(tool_calls=[("calc__add", '{"a": "two"}')]), Reply(text="sorry")]
    async with scene(replies) as (client, upstream, url):
        response = await client.responses.create(model="m", input="add", tools=[mcp_tool("calc", url)])
    strict_response(response)
    call = response.output[1]
    assert call.type == "mcp_call" and call.status == "failed" and call.output is None
    assert call.error.type == "mcp_protocol_error" and call.error.code == -32602
    assert response.status == "completed" and response.output_text == "sorry"
    fed_back = upstream.requests[1]["messages"][-1]["content"]
    assert "b" in fed_back and "calc__add" in fed_back


async def test_a_server_side_error_is_a_failed_mcp_call_with_the_servers_content() -> None:
    replies = [Reply(tool_calls=[("calc__fail", '{"reason": "disk full"}')]), Reply(text="it failed")]
    async with scene(replies) as (client, upstream, url):
        response = await client.responses.create(model="m", input="go", tools=[mcp_tool("calc", url)])
    strict_response(response)
    call = response.output[1]
    assert (call.name, call.status) == ("fail", "failed")
    assert call.error.type == "mcp_tool_execution_error"
    assert "disk full" in json.dumps(call.error.content)
    assert response.status == "completed"
    assert "disk full" in upstream.requests[1]["messages"][-1]["content"]


async def test_a_server_that_cannot_be_listed_gives_an_mcp_list_tools_error_and_no_tools() -> None:
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    async with scene([Reply(text="no tools today")], connect_timeout=10) as (client, upstream, _):
        response = await client.responses.create(model="m", input="hi", tools=[mcp_tool("gone", dead)])
    strict_response(response)
    assert _types(response) == ["mcp_list_tools", "message"]
    assert response.output[0].error and response.output[0].tools == []
    assert response.status == "completed"
    assert "tools" not in upstream.requests[0]


async def test_an_empty_server_is_listed_empty_and_offers_nothing() -> None:
    async with scene([Reply(text="hi")], server=MCPServer("empty")) as (client, upstream, url):
        response = await client.responses.create(model="m", input="hi", tools=[mcp_tool("empty", url)])
    strict_response(response)
    listing = response.output[0]
    assert (listing.type, listing.tools, listing.error) == ("mcp_list_tools", [], None)
    assert "tools" not in upstream.requests[0]


@pytest.mark.parametrize(
    ("allowed", "hint"),
    [(["nope"], None), ({"tool_names": ["calc__add"]}, "'calc__add' is 'add' there")],
)
async def test_allowed_tools_that_select_nothing_say_so_in_the_listing(allowed: Any, hint: str | None) -> None:
    async with scene([Reply(text="no tools")]) as (client, upstream, url):
        tool = mcp_tool("calc", url, allowed_tools=allowed)
        response = await client.responses.create(model="m", input="hi", tools=[tool])
    strict_response(response)
    listing = response.output[0]
    assert listing.type == "mcp_list_tools" and listing.tools == []
    assert listing.error is not None and "allowed_tools selects none of the 3 tools" in listing.error
    assert "(add, fail, wipe)" in listing.error
    assert hint is None or hint in listing.error
    assert response.status == "completed" and "tools" not in upstream.requests[0]


async def test_a_tool_that_vanishes_before_its_call_gives_a_failed_mcp_call() -> None:
    server = calc_server()

    def vanish(request: dict[str, Any]) -> Any:
        server.remove_tool("wipe")
        return Reply(tool_calls=[("calc__wipe", "{}")])

    async with scene([vanish, Reply(text="gone")], server=server) as (client, _, url):
        response = await client.responses.create(model="m", input="wipe", tools=[mcp_tool("calc", url)])
    strict_response(response)
    call = response.output[1]
    assert (call.type, call.name, call.status) == ("mcp_call", "wipe", "failed")
    assert "wipe" in json.dumps(call.error.model_dump())
    assert response.status == "completed"


async def test_allowed_tools_as_a_list_and_as_a_filter() -> None:
    replies = [Reply(text="a"), Reply(text="b"), Reply(text="c")]
    async with scene(replies) as (client, upstream, url):
        by_list = await client.responses.create(
            model="m", input="x", tools=[mcp_tool("calc", url, allowed_tools=["add", "wipe"])]
        )
        read_only = await client.responses.create(
            model="m", input="x", tools=[mcp_tool("calc", url, allowed_tools={"read_only": True})]
        )
        by_names = await client.responses.create(
            model="m", input="x", tools=[mcp_tool("calc", url, allowed_tools={"tool_names": ["fail"]})]
        )
    assert [t.name for t in by_list.output[0].tools] == ["add", "wipe"]
    assert sorted(_offered(upstream.requests[0])) == ["calc__add", "calc__wipe"]
    assert [t.name for t in read_only.output[0].tools] == ["add"]
    assert sorted(_offered(upstream.requests[1])) == ["calc__add"]
    assert [t.name for t in by_names.output[0].tools] == ["fail"]
    assert sorted(_offered(upstream.requests[2])) == ["calc__fail"]


async def test_an_echoed_mcp_list_tools_item_is_not_listed_again_and_echoed_calls_reach_the_model() -> None:
    replies = [Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')]), Reply(text="2"), Reply(text="yes")]
    async with scene(replies) as (client, upstream, url):
        tools: Any = [mcp_tool("calc", url)]
        first = await client.responses.create(model="m", input="1+1", tools=tools)
        history = [{"role": "user", "content": "1+1"}] + [item.model_dump(exclude_none=True) for item in first.output]
        second = await client.responses.create(
            model="m", input=[*history, {"role": "user", "content": "sure?"}], tools=tools
        )
    strict_response(second)
    assert _types(second) == ["message"]
    messages = upstream.requests[2]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "calc__add"
    assert messages[2]["content"] == "2"


async def test_client_function_tools_end_the_turn_with_function_call_items() -> None:
    replies = [Reply(tool_calls=[("lookup", '{"q": "x"}')]), Reply(text="found it")]
    function = {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}}
    async with scene(replies) as (client, upstream, _):
        first = await client.responses.create(model="m", input="find", tools=[function])
        call = first.output[0]
        assert (call.type, call.name, call.arguments) == ("function_call", "lookup", '{"q": "x"}')
        second = await client.responses.create(
            model="m",
            input=[
                {"role": "user", "content": "find"},
                call.model_dump(exclude_none=True),
                {"type": "function_call_output", "call_id": call.call_id, "output": "x is here"},
            ],
            tools=[function],
        )
    strict_response(first)
    strict_response(second)
    assert second.output_text == "found it"
    answer = upstream.requests[1]["messages"][-1]
    assert answer == {"role": "tool", "tool_call_id": call.call_id, "content": "x is here"}


async def test_the_catalog_rows_are_offered_and_run_through_the_registry() -> None:
    @tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    registry = ToolRegistry()
    registry.register(shout)
    replies = [Reply(tool_calls=[("shout", '{"text": "hi"}')]), Reply(text="HI")]
    async with scene(replies, registry=registry, offer_catalog=True) as (client, upstream, _):
        response = await client.responses.create(model="m", input="shout hi")
    strict_response(response)
    call = response.output[0]
    assert (call.type, call.server_label, call.name, call.output) == ("mcp_call", "toolmesh", "shout", "HI")
    assert "shout" in _offered(upstream.requests[0])


async def test_the_tool_rounds_limit_ends_the_response_incomplete() -> None:
    replies = [Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')]) for _ in range(3)]
    async with scene(replies, max_rounds=2) as (client, upstream, url):
        response = await client.responses.create(model="m", input="loop", tools=[mcp_tool("calc", url)])
    strict_response(response)
    assert response.status == "incomplete" and response.incomplete_details.reason == "max_messages"
    assert len(upstream.requests) == 3
    assert _types(response).count("mcp_call") == 2


async def test_read_mcp_resource_is_offered_when_opted_in_and_reads_a_declared_servers_resource() -> None:
    server = calc_server()

    @server.resource("notes://today", mime_type="text/plain")
    def today() -> str:
        """Today's note."""
        return "buy milk"

    read = Reply(tool_calls=[("read_mcp_resource", '{"server_label": "calc", "uri": "notes://today"}')])
    replies = [Reply(text="no reader"), read, Reply(text="milk")]
    async with scene(replies, server=server) as (client, upstream, url):
        await client.responses.create(model="m", input="note?", tools=[mcp_tool("calc", url)])
    assert "read_mcp_resource" not in _offered(upstream.requests[0])
    async with scene(replies[1:], server=server, read_resource=True) as (client, upstream, url):
        response = await client.responses.create(model="m", input="note?", tools=[mcp_tool("calc", url)])
    strict_response(response)
    offered = _offered(upstream.requests[0])["read_mcp_resource"]
    assert offered["parameters"]["properties"]["server_label"]["enum"] == ["calc"]
    call = response.output[1]
    assert (call.server_label, call.name, call.output, call.status) == (
        "toolmesh",
        "read_mcp_resource",
        "buy milk",
        "completed",
    )


async def test_a_traced_response_is_one_span_over_its_upstream_calls_and_tool_calls() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    replies = [Reply(tool_calls=[("calc__add", '{"a": 1, "b": 2}')], usage=(7, 2)), Reply(text="3", usage=(9, 1))]
    async with scene(replies, registry=ToolRegistry(tracer_provider=provider)) as (client, _, url):
        await client.responses.create(model="m", input="1+2", tools=[mcp_tool("calc", url)])
    spans = {span.name: span for span in exporter.get_finished_spans()}
    names = [span.name for span in exporter.get_finished_spans()]
    assert sorted(names) == ["chat m", "chat m", "execute_tool calc__add", "invoke_agent m"]
    turn = spans["invoke_agent m"]
    assert turn.attributes is not None and turn.attributes["gen_ai.usage.input_tokens"] == 16
    for span in exporter.get_finished_spans():
        if span is not turn:
            assert span.parent is not None and span.parent.span_id == turn.context.span_id
