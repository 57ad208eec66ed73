"""Approvals without server state: HMAC-bound ``mcp_approval_request`` ids; approve, deny, tampered; filters."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from _responses import Reply, calc_server, mcp_tool, scene, strict_response
from toolmesh.gateway._responses.approvals import Approvals


def _declared(url: str, **fields: Any) -> dict[str, Any]:
    tool = mcp_tool("calc", url, **fields)
    if "require_approval" not in fields:
        del tool["require_approval"]  # OpenAI's default: always
    return tool


def _history(first: Any, question: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": question}] + [item.model_dump(exclude_none=True) for item in first.output]


async def test_by_default_a_call_waits_for_approval_then_runs_exactly_that_call() -> None:
    calls: list[str] = []
    replies = [Reply(tool_calls=[("calc__add", '{"a": 2, "b": 2}')]), Reply(text="4, as approved")]
    async with scene(replies, server=calc_server(calls=calls)) as (client, upstream, url):
        tools: Any = [_declared(url)]
        first = await client.responses.create(model="m", input="2+2", tools=tools)
        strict_response(first)
        assert [item.type for item in first.output] == ["mcp_list_tools", "mcp_approval_request"]
        request = first.output[1]
        assert (request.server_label, request.name, json.loads(request.arguments)) == ("calc", "add", {"a": 2, "b": 2})
        assert request.id.startswith("mcpr_") and first.status == "completed" and calls == []
        answer = {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}
        second = await client.responses.create(model="m", input=[*_history(first, "2+2"), answer], tools=tools)
    strict_response(second)
    assert [item.type for item in second.output] == ["mcp_call", "message"]
    call = second.output[0]
    assert (call.approval_request_id, call.name, call.output, call.status) == (request.id, "add", "4", "completed")
    assert calls == ["add"]
    messages = upstream.requests[1]["messages"]
    assert messages[-2]["tool_calls"][0]["id"] == request.id
    assert messages[-1] == {"role": "tool", "tool_call_id": request.id, "content": "4"}
    assert second.output_text == "4, as approved"


async def test_a_denied_call_is_not_run_and_the_model_is_told_why() -> None:
    calls: list[str] = []
    replies = [Reply(tool_calls=[("calc__wipe", "{}")]), Reply(text="ok, not wiping")]
    async with scene(replies, server=calc_server(calls=calls)) as (client, upstream, url):
        tools: Any = [_declared(url)]
        first = await client.responses.create(model="m", input="wipe", tools=tools)
        request = first.output[1]
        answer = {
            "type": "mcp_approval_response",
            "approval_request_id": request.id,
            "approve": False,
            "reason": "too risky",
        }
        second = await client.responses.create(model="m", input=[*_history(first, "wipe"), answer], tools=tools)
    strict_response(second)
    assert [item.type for item in second.output] == ["message"] and calls == []
    told = upstream.requests[1]["messages"][-1]
    assert told["role"] == "tool" and "denied" in told["content"] and "too risky" in told["content"]


async def test_a_tampered_approval_request_is_refused() -> None:
    calls: list[str] = []
    async with scene([Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')])], server=calc_server(calls=calls)) as (
        client,
        upstream,
        url,
    ):
        tools: Any = [_declared(url)]
        first = await client.responses.create(model="m", input="1+1", tools=tools)
        history = _history(first, "1+1")
        request_id = first.output[1].id
        history[-1]["arguments"] = '{"a": 1000, "b": 1}'
        answer = {"type": "mcp_approval_response", "approval_request_id": request_id, "approve": True}
        with pytest.raises(openai.BadRequestError) as tampered:
            await client.responses.create(model="m", input=[*history, answer], tools=tools)
        alone = {"type": "mcp_approval_response", "approval_request_id": "mcpr_invented", "approve": True}
        with pytest.raises(openai.BadRequestError) as orphan:
            await client.responses.create(model="m", input=[alone], tools=tools)
    assert isinstance(tampered.value.body, dict) and tampered.value.body["param"] == "input[2]"
    assert "not made by this gateway" in tampered.value.body["message"]
    assert isinstance(orphan.value.body, dict) and "send the request item back" in orphan.value.body["message"]
    assert calls == [] and len(upstream.requests) == 1


async def test_require_approval_filters_pick_which_calls_wait() -> None:
    calls: list[str] = []
    both = [("calc__add", '{"a": 1, "b": 2}'), ("calc__wipe", "{}")]
    replies = [Reply(tool_calls=both), Reply(tool_calls=both), Reply(text="done")]
    async with scene(replies, server=calc_server(calls=calls)) as (client, _, url):
        read_only_free = [_declared(url, require_approval={"never": {"read_only": True}})]
        first = await client.responses.create(model="m", input="x", tools=read_only_free)
        assert [(i.type, getattr(i, "name", None)) for i in first.output[1:]] == [
            ("mcp_call", "add"),
            ("mcp_approval_request", "wipe"),
        ]
        assert calls == ["add"]
        add_always = [_declared(url, require_approval={"always": {"tool_names": ["add"]}, "never": {}})]
        second = await client.responses.create(model="m", input="x", tools=add_always)
        assert [(i.type, getattr(i, "name", None)) for i in second.output[1:]] == [
            ("mcp_approval_request", "add"),
            ("mcp_call", "wipe"),
        ]
        assert calls == ["add", "wipe"]
        never = await client.responses.create(model="m", input="x", tools=[_declared(url, require_approval="never")])
    assert never.output_text == "done"


def test_approval_ids_verify_only_for_their_call_and_their_secret() -> None:
    approvals = Approvals(b"k" * 32)
    request_id = approvals.request_id("calc", "add", '{"a": 1}')
    assert approvals.verify(request_id, "calc", "add", '{"a": 1}')
    assert not approvals.verify(request_id, "calc", "add", '{"a": 2}')
    assert not approvals.verify(request_id, "calc", "wipe", '{"a": 1}')
    assert not approvals.verify(request_id, "other", "add", '{"a": 1}')
    assert not Approvals(b"j" * 32).verify(request_id, "calc", "add", '{"a": 1}')
    assert not approvals.verify(request_id[:-2], "calc", "add", '{"a": 1}')
    assert Approvals(b"k" * 32).verify(request_id, "calc", "add", '{"a": 1}')
