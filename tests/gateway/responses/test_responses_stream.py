"""``stream: true``: the SDK's own event types, numbered, text relayed as it arrives, a disconnect cancelling work."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from _responses import Reply, mcp_tool, scene, strict_event, strict_response
from _servers import free_port


async def _events(stream: Any) -> list[Any]:
    return [strict_event(event) async for event in stream]


async def test_a_streamed_turn_sends_every_event_in_order_with_sequence_numbers() -> None:
    replies = [Reply(tool_calls=[("calc__add", '{"a": 2, "b": 3}')]), Reply(text="It is 5.", chunks=3)]
    async with scene(replies) as (client, upstream, url):
        stream = await client.responses.create(model="m", input="2+3", tools=[mcp_tool("calc", url)], stream=True)
        events = await _events(stream)
    assert [event.sequence_number for event in events] == list(range(len(events)))
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[2:6] == [
        "response.output_item.added",
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.output_item.done",
    ]
    assert kinds[6:12] == [
        "response.output_item.added",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
        "response.output_item.done",
    ]
    assert kinds[12:14] == ["response.output_item.added", "response.content_part.added"]
    assert kinds[14:17] == ["response.output_text.delta"] * 3
    assert kinds[17:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "It is 5."
    final = strict_response(events[-1].response)
    assert [item.type for item in final.output] == ["mcp_list_tools", "mcp_call", "message"]
    assert final.output[1].output == "5" and final.output_text == "It is 5." and final.usage.total_tokens == 30
    assert all(request.get("stream") for request in upstream.requests)


async def test_text_is_relayed_before_the_upstream_has_finished() -> None:
    hold = anyio.Event()
    async with scene([Reply(text="first second", chunks=2, hold=hold)]) as (client, _, _):
        stream = await client.responses.create(model="m", input="hi", stream=True)
        seen = []
        early = False
        async for event in stream:
            seen.append(strict_event(event))
            if event.type == "response.output_text.delta" and not hold.is_set():
                early = True  # the upstream is still waiting for `hold` before its second chunk
                hold.set()
    assert early
    deltas = [e.delta for e in seen if e.type == "response.output_text.delta"]
    assert deltas == ["first ", "second"] and seen[-1].type == "response.completed"


async def test_function_calls_and_failed_listings_stream_their_events() -> None:
    function = {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}}
    dead = mcp_tool("gone", f"http://127.0.0.1:{free_port()}/mcp")
    async with scene([Reply(tool_calls=[("lookup", '{"q": 1}')])], connect_timeout=10) as (client, _, _):
        stream = await client.responses.create(model="m", input="x", tools=[function, dead], stream=True)
        events = await _events(stream)
    kinds = [event.type for event in events]
    assert "response.mcp_list_tools.failed" in kinds
    assert kinds[-5:] == [
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert events[-3].arguments == '{"q": 1}' and events[-3].name == "lookup"


async def test_a_client_going_away_cancels_the_upstream_call() -> None:
    async with scene([Reply(text="never ending", hang=True)]) as (client, upstream, _):
        stream = await client.responses.create(model="m", input="hi", stream=True)
        async for event in stream:
            if event.type == "response.output_text.delta":
                break
        await stream.close()
        with anyio.fail_after(30):
            await upstream.cancelled.wait()


async def test_a_client_going_away_cancels_the_tool_calls_in_flight() -> None:
    started, cancelled = anyio.Event(), anyio.Event()
    server = MCPServer("slow")

    @server.tool()
    async def wait() -> str:
        """Waits forever."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    async with scene([Reply(tool_calls=[("slow__wait", "{}")])], server=server) as (client, _, url):
        stream = await client.responses.create(model="m", input="x", tools=[mcp_tool("slow", url)], stream=True)
        async for event in stream:
            if event.type == "response.mcp_call.in_progress":
                break
        with anyio.fail_after(30):
            await started.wait()
        await stream.close()
        with anyio.fail_after(30):
            await cancelled.wait()


async def test_approvals_stream_their_items_and_the_approved_call() -> None:
    replies = [Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')]), Reply(text="2")]
    async with scene(replies) as (client, _, url):
        tools: Any = [{**mcp_tool("calc", url), "require_approval": "always"}]
        first = await _events(await client.responses.create(model="m", input="1+1", tools=tools, stream=True))
        request = first[-1].response.output[1]
        assert request.type == "mcp_approval_request"
        assert [e.type for e in first[-3:]] == [
            "response.output_item.added",
            "response.output_item.done",
            "response.completed",
        ]
        history = [{"role": "user", "content": "1+1"}] + [
            item.model_dump(exclude_none=True) for item in first[-1].response.output
        ]
        answer = {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}
        second = await _events(
            await client.responses.create(model="m", input=[*history, answer], tools=tools, stream=True)
        )
    kinds = [e.type for e in second]
    assert "response.mcp_call.completed" in kinds and kinds[-1] == "response.completed"
    call = second[-1].response.output[0]
    assert (call.type, call.approval_request_id, call.output) == ("mcp_call", request.id, "2")
    assert second[-1].response.output_text == "2"
