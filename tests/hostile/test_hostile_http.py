"""A Streamable HTTP server that answers badly: statuses stay with their request, answers are bounded.

The raw server (servers/raw_server.py) runs on 127.0.0.1 in its own process.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from _hostile import CALL_TIMEOUT, FAST, RAW, RAW_TOOLS, raw_http

from _servers import http_server
from toolmesh import ErrorKind, ServerConnectionError, ToolContext, ToolExecutionError, ToolRegistry, ToolResult
from toolmesh.mcp import McpConnection

ERAS = {"2025-11-25": {}, "2026-07-28": {"HOSTILE_MODERN": "1"}}
"""The raw server's protocol: on 2026-07-28 a call is one POST of toolmesh's own (the lean client path)."""


@pytest.fixture(params=list(ERAS))
def era(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def _connect(registry: ToolRegistry, url: str, era: str, **options: Any) -> McpConnection:
    connection = await registry.connect(raw_http(url, **options))
    assert connection.protocol_version == era
    return connection


async def _echo_ok(registry: ToolRegistry) -> None:
    result = await registry.dispatch("rawweb__echo", {"text": "still here"})
    assert result.ok, result.error
    assert result.output.blocks[0].text == "still here"  # type: ignore[union-attr]


async def test_200_concurrent_calls_answered_429_are_all_rate_limited_with_their_status(era: str) -> None:
    async with http_server(RAW, ERAS[era]) as url, ToolRegistry() as registry:
        await _connect(registry, url, era)
        results: list[ToolResult] = []

        async def call(i: int) -> None:
            results.append(await registry.dispatch("rawweb__throttled", {"text": str(i)}))

        with anyio.fail_after(CALL_TIMEOUT):
            async with anyio.create_task_group() as group:
                for i in range(200):
                    group.start_soon(call, i)
        assert len(results) == 200
        wrong = [r.error for r in results if r.error is None or r.error.kind is not ErrorKind.RATE_LIMITED]
        assert wrong == []
        assert all(r.error is not None and r.error.http_status == 429 and r.error.retryable for r in results)
        with anyio.fail_after(FAST):
            await _echo_ok(registry)


@pytest.mark.parametrize("tool", ["array_result", "no_result"])
async def test_an_unreadable_answer_fails_its_call_at_once(tool: str, era: str) -> None:
    async with http_server(RAW, ERAS[era]) as url, ToolRegistry() as registry:
        connection = await _connect(registry, url, era)
        with anyio.fail_after(FAST):
            result = await registry.dispatch(f"rawweb__{tool}", {})
        assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR, result.error
        assert "answer could not be read" in result.error.message
        with anyio.fail_after(FAST):
            await _echo_ok(registry)
        assert connection.reconnects == 0


async def test_a_result_over_max_result_bytes_is_upstream_error_naming_the_limit(era: str) -> None:
    limit = 1024 * 1024
    async with http_server(RAW, ERAS[era], HOSTILE_HUGE_BYTES=str(20 * 1024 * 1024)) as url, ToolRegistry() as registry:
        connection = await _connect(registry, url, era, max_result_bytes=limit)
        start = time.perf_counter()
        with anyio.fail_after(FAST * 2):
            result = await registry.dispatch("rawweb__huge", {})
        assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR, result.error
        assert f"max_result_bytes ({limit} bytes)" in result.error.message
        assert "raise max_result_bytes" in result.error.message
        assert time.perf_counter() - start < CALL_TIMEOUT / 3
        with anyio.fail_after(FAST):
            await _echo_ok(registry)
        assert connection.reconnects == 0


async def test_a_result_under_max_result_bytes_arrives_whole(era: str) -> None:
    async with http_server(RAW, ERAS[era], HOSTILE_HUGE_BYTES=str(3 * 1024 * 1024)) as url, ToolRegistry() as registry:
        await _connect(registry, url, era)
        with anyio.fail_after(FAST * 2):
            result = await registry.dispatch("rawweb__huge", {})
        assert result.ok, result.error
        assert len(result.output.blocks[0].text) == 3 * 1024 * 1024  # type: ignore[union-attr]


async def test_an_unencodable_message_fails_only_its_call_and_not_the_one_in_flight(era: str) -> None:
    async with http_server(RAW, ERAS[era]) as url, ToolRegistry() as registry:
        connection = await _connect(registry, url, era)
        slow_result: list[ToolResult] = []

        async def slow() -> None:
            slow_result.append(await registry.dispatch("rawweb__slow", {"text": "in flight", "seconds": 1.0}))

        with anyio.fail_after(FAST):
            async with anyio.create_task_group() as group:
                group.start_soon(slow)
                await anyio.lowlevel.checkpoint()
                # Straight to the connection: the argument layer would refuse this before the wire.
                with pytest.raises(ToolExecutionError) as caught:
                    await connection.call_tool(registry["rawweb__echo"], {"text": "\ud800"}, ToolContext())  # type: ignore[arg-type]
                assert slow_result == []  # the slow call is still in flight
        assert caught.value.kind is ErrorKind.INVALID_ARGUMENTS
        assert "not valid Unicode" in caught.value.message
        (done,) = slow_result
        assert done.ok, done.error
        assert connection.reconnects == 0 and connection.state == "connected"
        await _echo_ok(registry)


async def test_an_answer_with_a_wrong_id_fails_its_call_at_once_and_the_session_stays(era: str) -> None:
    async with http_server(RAW, ERAS[era]) as url, ToolRegistry() as registry:
        connection = await _connect(registry, url, era)
        with anyio.fail_after(FAST):
            result = await registry.dispatch("rawweb__wrong_id", {})
        assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR, result.error
        assert "answered with id 987654321" in result.error.message
        with anyio.fail_after(FAST):
            await _echo_ok(registry)
        assert connection.reconnects == 0


async def test_an_sse_answer_cut_before_its_result_fails_only_its_call() -> None:
    async with http_server(RAW, ERAS["2026-07-28"]) as url, ToolRegistry() as registry:
        connection = await _connect(registry, url, "2026-07-28")
        heard: list[Any] = []

        async def on_log(message: Any) -> None:
            heard.append(message.data)

        with anyio.fail_after(FAST):
            result = await registry.dispatch("rawweb__sse_cut", {}, ctx=ToolContext(on_log=on_log))
        assert result.error is not None and result.error.kind is ErrorKind.UNAVAILABLE, result.error
        assert result.error.retryable
        assert heard == ["cut next"]  # what came before the cut reached the call
        with anyio.fail_after(FAST):
            await _echo_ok(registry)
        assert connection.reconnects == 0 and connection.state == "connected"


async def test_a_server_request_on_a_call_stream_fails_the_call_at_once() -> None:
    async with http_server(RAW, ERAS["2026-07-28"]) as url, ToolRegistry() as registry:
        connection = await _connect(registry, url, "2026-07-28")
        with anyio.fail_after(FAST):
            result = await registry.dispatch("rawweb__sse_request", {})
        assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR, result.error
        assert "answer could not be read" in result.error.message
        assert "elicitation/create" in result.error.message
        with anyio.fail_after(FAST):
            await _echo_ok(registry)
        assert connection.reconnects == 0


async def test_a_schema_too_deep_to_parse_fails_connect_at_once_saying_so() -> None:
    async with http_server(RAW, HOSTILE_LIST="deep") as url, ToolRegistry() as registry:
        start = time.perf_counter()
        with anyio.fail_after(FAST), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(raw_http(url))
        assert "answer could not be read" in str(caught.value) and "tools/list" in str(caught.value)
        assert time.perf_counter() - start < FAST
        assert list(registry.entries()) == []


async def test_a_large_listing_is_refused_or_cut_before_its_tools_are_read() -> None:
    """30,000 tools in one page of about 5 MB, unreadable past the 2,000th: each limit answers before they are read."""
    env = {"HOSTILE_TOOLS": "30000", "HOSTILE_UNREADABLE_FROM": "2000"}
    async with http_server(RAW, **env) as url, ToolRegistry() as registry:
        with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(raw_http(url, max_page_bytes=100_000))
        assert "a tools/list page is larger than 100000 bytes (max_page_bytes), so it was not read" in str(caught.value)
        with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(raw_http(url))
        assert f"tools/list has {30000 + len(RAW_TOOLS)} tools, more than max_tools=1000" in str(caught.value)
        with anyio.fail_after(60):
            await registry.connect(raw_http(url, "first", max_tools=50, on_too_many_tools="keep_first"))
        assert len(registry.entries()) == 50
        with anyio.fail_after(FAST):
            result = await registry.dispatch("first__echo", {"text": "here"})
        assert result.ok, result.error
