"""The Responses endpoint honours ``defer_loading: true`` on a request-declared ``mcp`` tool.

The upstream Chat Completions model is offered the turn's ``search_tools`` function instead of
the server's tools; what it finds is offered from its next call on; the response reports the
search as ``tool_search_call`` / ``tool_search_output`` items, and the listing and the call as
``mcp_list_tools`` and ``mcp_call`` items, as without deferral.
"""

from __future__ import annotations

import json
from typing import Any

from _responses import Reply, mcp_tool, scene, strict_response


def _offered(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


async def test_a_deferred_server_is_searched_then_its_found_tool_is_called() -> None:
    replies = [
        Reply(tool_calls=[("search_tools", '{"query": "add two numbers"}')]),
        Reply(tool_calls=[("calc__add", '{"a": 2, "b": 3}')]),
        Reply(text="It is 5."),
    ]
    async with scene(replies) as (client, upstream, url):
        response = await client.responses.create(
            model="m", input="2+3?", tools=[mcp_tool("calc", url, defer_loading=True)]
        )
    strict_response(response)
    assert [item.type for item in response.output] == [
        "mcp_list_tools",
        "tool_search_call",
        "tool_search_output",
        "mcp_call",
        "message",
    ]
    listing, search_call, search_output, call, _ = response.output
    assert [tool.name for tool in listing.tools] == ["add", "fail", "wipe"]  # the listing stays whole
    assert search_call.arguments == {"query": "add two numbers"}
    assert search_output.call_id == search_call.call_id
    assert search_output.tools[0].type == "mcp" and search_output.tools[0].server_label == "calc"
    assert "add" in search_output.tools[0].allowed_tools
    assert (call.server_label, call.name, call.output, call.status) == ("calc", "add", "5", "completed")

    assert _offered(upstream.requests[0]) == ["search_tools"]  # not the server's tools
    assert "calc__add" in _offered(upstream.requests[1])  # found: offered on the next call
    tool_message = upstream.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and json.loads(tool_message["content"])["tools"][0]["name"] == "calc__add"


async def test_a_deferred_tool_called_before_any_search_is_refused() -> None:
    replies = [Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')]), Reply(text="ok")]
    calls: list[str] = []
    from _responses import calc_server

    async with scene(replies, server=calc_server(calls=calls)) as (client, upstream, url):
        response = await client.responses.create(
            model="m", input="1+1?", tools=[mcp_tool("calc", url, defer_loading=True)]
        )
    strict_response(response)
    call = response.output[1]
    assert call.type == "mcp_call" and call.status == "failed"
    assert calls == []  # never reached the server
    assert "search_tools" in upstream.requests[1]["messages"][-1]["content"]


async def test_without_defer_loading_nothing_changes() -> None:
    replies = [Reply(text="hi")]
    async with scene(replies) as (client, upstream, url):
        await client.responses.create(model="m", input="hi", tools=[mcp_tool("calc", url, defer_loading=False)])
    assert sorted(_offered(upstream.requests[0])) == ["calc__add", "calc__fail", "calc__wipe"]


async def test_a_streamed_search_gives_valid_events_in_order() -> None:
    from _responses import strict_event

    replies = [
        Reply(tool_calls=[("search_tools", '{"query": "add"}')]),
        Reply(tool_calls=[("calc__add", '{"a": 1, "b": 2}')]),
        Reply(text="3"),
    ]
    async with scene(replies) as (client, _upstream, url):
        stream = await client.responses.create(
            model="m", input="1+2", tools=[mcp_tool("calc", url, defer_loading=True)], stream=True
        )
        events = [strict_event(event) async for event in stream]
    done = [event.item.type for event in events if event.type == "response.output_item.done"]
    assert done == ["mcp_list_tools", "tool_search_call", "tool_search_output", "mcp_call", "message"]
    final = events[-1]
    assert final.type == "response.completed" and final.response.output[3].output == "3"


async def test_the_catalogs_ranker_searches_a_deferred_declared_server() -> None:
    from collections.abc import Mapping, Sequence

    from toolmesh import Entry, ToolRegistry

    seen: list[list[str]] = []

    async def ranker(query: str, rows: Sequence[Entry]) -> Mapping[str, float]:
        """What an embedding ranker knows: "what do 2 and 3 come to" is an addition."""
        seen.append(sorted(row.name for row in rows))
        return {"calc__add": 1.0} if "come to" in query else {}

    replies = [
        Reply(tool_calls=[("search_tools", '{"query": "what do 2 and 3 come to"}')]),
        Reply(tool_calls=[("calc__add", '{"a": 2, "b": 3}')]),
        Reply(text="It is 5."),
    ]
    async with scene(replies, registry=ToolRegistry(ranker=ranker)) as (client, upstream, url):
        response = await client.responses.create(
            model="m", input="2 and 3?", tools=[mcp_tool("calc", url, defer_loading=True)]
        )
    strict_response(response)
    search_output, call = response.output[2], response.output[3]
    assert search_output.type == "tool_search_output" and search_output.tools[0].allowed_tools == ["add"]
    assert (call.type, call.name, call.output) == ("mcp_call", "add", "5")
    assert seen == [["calc__add", "calc__fail", "calc__wipe"]]  # the declared server's deferred rows
    assert "calc__add" in _offered(upstream.requests[1])
