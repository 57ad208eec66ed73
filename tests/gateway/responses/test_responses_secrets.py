"""A declared server's credentials never come back: not in listing errors, call errors, nor the echoed tools."""

from __future__ import annotations

import json

import pytest

from _responses import Reply, mcp_tool, scene, strict_response
from _servers import FIXTURES, fixture_module

SECRET = "s3cret-token-0123456789"


def _echo() -> object:
    return fixture_module(FIXTURES / "echo_server.py").build_server()


async def test_a_listing_error_echoing_the_credentials_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIXTURE_LIST_FAIL", "1")
    async with scene([Reply(text="ok")], server=_echo()) as (client, upstream, url):
        tool = mcp_tool("echo", url, authorization=SECRET, headers={"X-Api-Key": SECRET + "-header"})
        response = await client.responses.create(model="m", input="hi", tools=[tool])
    strict_response(response)
    assert response.output[0].error
    assert SECRET not in json.dumps(response.model_dump()) and SECRET not in json.dumps(upstream.requests)


async def test_a_call_error_echoing_the_credentials_is_redacted() -> None:
    replies = [Reply(tool_calls=[("echo__reveal_error", "{}"), ("echo__reveal", "{}")]), Reply(text="ok")]
    async with scene(replies, server=_echo()) as (client, upstream, url):
        tool = mcp_tool("echo", url, authorization=SECRET)
        response = await client.responses.create(model="m", input="hi", tools=[tool])
    strict_response(response)
    failed, revealed = (item for item in response.output if item.type == "mcp_call")
    assert failed.status == "failed" and revealed.status == "completed"
    assert "authorization" in (revealed.output or "").lower()
    assert SECRET not in json.dumps(response.model_dump()) and SECRET not in json.dumps(upstream.requests)
