"""Declared servers' connections, pooled by (URL, headers): shared, never across credentials, idle-closed, capped."""

from __future__ import annotations

import json
from typing import Any

import anyio

from _mcp import wait_until
from _responses import Reply, ScriptedUpstream, calc_server, mcp_tool, responses_gateway, serve_asgi
from toolmesh import McpServer
from toolmesh.gateway._responses.pool import ServerPool


class Recorder:
    """ASGI middleware recording each request's JSON-RPC method and Authorization header."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str | None, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            method = json.loads(body).get("method") if body else None
        except ValueError:
            method = None
        self.seen.append((method, dict(scope["headers"]).get(b"authorization", b"").decode()))
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def methods(self, method: str) -> list[str]:
        return [auth for seen, auth in self.seen if seen == method]


async def test_requests_with_the_same_url_and_headers_share_a_connection_and_credentials_never_do() -> None:
    recorder = Recorder(calc_server().streamable_http_app())
    add = Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')])
    upstream = ScriptedUpstream([add, Reply(text="2"), add, Reply(text="2"), add, Reply(text="2")])
    async with (
        serve_asgi(upstream.app) as model,
        serve_asgi(recorder) as base,
        responses_gateway(model + "/v1") as (client, _),
    ):
        with anyio.fail_after(60):
            for secret in ("alpha", "alpha", "beta"):
                tool = mcp_tool("calc", base + "/mcp", authorization=secret)
                response = await client.responses.create(model="m", input="1+1", tools=[tool])
                assert response.output[1].output == "2"
    assert recorder.methods("tools/list") == ["Bearer alpha", "Bearer beta"]
    assert recorder.methods("tools/call") == ["Bearer alpha", "Bearer alpha", "Bearer beta"]


async def test_an_idle_connection_closes_after_the_ttl() -> None:
    async with ServerPool(idle_seconds=0.2, size=4) as pool:
        async with pool.lease("a", McpServer.in_process("declared", calc_server())) as registry:
            assert [row.wire_name for row in registry.entries()] == ["add", "fail", "wipe"]  # type: ignore[union-attr]
            assert len(pool) == 1
        await wait_until(lambda: len(pool) == 0, seconds=30)


async def test_the_pool_cap_closes_the_least_recently_used_idle_connection_first() -> None:
    async with ServerPool(idle_seconds=300, size=2) as pool:
        for key in ("a", "b"):
            async with pool.lease(key, McpServer.in_process("declared", calc_server())):
                pass
        async with pool.lease("a", McpServer.in_process("declared", calc_server())):
            pass  # "a" is now the most recently used
        async with pool.lease("c", McpServer.in_process("declared", calc_server())):
            assert sorted(pool._entries) == ["a", "c"]
            # both pooled ones busy: a new key gets a connection of its own, closed after use
            async with (
                pool.lease("a", McpServer.in_process("declared", calc_server())),
                pool.lease("d", McpServer.in_process("declared", calc_server())) as registry,
            ):
                assert registry.entries() and sorted(pool._entries) == ["a", "c"]
        assert len(pool) == 2


async def test_the_per_request_tool_limit() -> None:
    from _responses import scene, strict_response

    replies = [Reply(text="none"), Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')]), Reply(text="2")]
    async with scene(replies, max_tools=2) as (client, upstream, url):
        over = await client.responses.create(model="m", input="x", tools=[mcp_tool("calc", url)])
        narrowed = await client.responses.create(
            model="m", input="x", tools=[mcp_tool("calc", url, allowed_tools=["add"])]
        )
    strict_response(over)
    assert over.output[0].tools == [] and "limit of 2 tools" in (over.output[0].error or "")
    assert "tools" not in upstream.requests[0]
    assert [t.name for t in narrowed.output[0].tools] == ["add"]
    assert narrowed.output[1].output == "2"


async def test_a_result_over_the_byte_limit_fails_its_call_not_the_response() -> None:
    from mcp.server.mcpserver import MCPServer

    from _responses import scene, strict_response

    server = MCPServer("big")

    @server.tool()
    def big(chars: int) -> str:
        """A long text."""
        return "a" * chars

    replies = [Reply(tool_calls=[("big__big", '{"chars": 100000}')]), Reply(text="too big")]
    async with scene(replies, server=server, max_result_bytes=16384) as (client, upstream, url):
        response = await client.responses.create(model="m", input="x", tools=[mcp_tool("big", url)])
    strict_response(response)
    call = response.output[1]
    assert call.status == "failed" and response.status == "completed"
    assert "too large" in upstream.requests[1]["messages"][-1]["content"]
