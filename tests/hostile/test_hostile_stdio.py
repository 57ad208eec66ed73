"""A stdio server that writes what the SDK cannot read: each call fails at once, saying why, and the registry lives on.

The raw server (servers/raw_server.py) answers each tool in a broken way of its own.
"""

from __future__ import annotations

import time

import anyio
import anyio.lowlevel
import pytest
from _hostile import CALL_TIMEOUT, FAST, RAW, raw_stdio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from _mcp import child_pids
from toolmesh import ErrorKind, ToolContext, ToolExecutionError, ToolRegistry


async def _echo_ok(registry: ToolRegistry, label: str = "raw") -> None:
    result = await registry.dispatch(f"{label}__echo", {"text": "still here"})
    assert result.ok, result.error
    assert result.output.blocks[0].text == "still here"  # type: ignore[union-attr]


async def test_a_byte_that_is_not_utf8_fails_the_call_at_once_and_the_next_call_reconnects() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        connection = await registry.connect(raw_stdio())
        (first,) = child_pids() - before
        start = time.perf_counter()
        with anyio.fail_after(FAST):
            result = await registry.dispatch("raw__bad_byte", {})
        elapsed = time.perf_counter() - start
        assert result.error is not None and result.error.kind is ErrorKind.UNAVAILABLE
        assert result.error.retryable
        assert "not valid UTF-8 (byte 0xff" in result.error.message
        assert connection.state == "down"  # not "connected": the next call reconnects
        assert "raw__bad_byte" in (result.error.model_feedback or "") or "bad_byte" in result.error.message
        assert elapsed < CALL_TIMEOUT / 3
        with anyio.fail_after(FAST * 3):
            await _echo_ok(registry)
        assert connection.reconnects == 1 and connection.state == "connected"
        assert child_pids() - before != {first}
    assert child_pids() - before == set()


async def test_a_line_that_is_not_json_fails_the_call_at_once_saying_so() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        await registry.connect(raw_stdio())
        with anyio.fail_after(FAST):
            result = await registry.dispatch("raw__not_json", {})
        assert result.error is not None and result.error.kind is ErrorKind.UNAVAILABLE
        assert "is not JSON" in result.error.message and "this is not JSON" in result.error.message
        with anyio.fail_after(FAST * 3):
            await _echo_ok(registry)
    assert child_pids() - before == set()


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        ("array_result", "not a JSON-RPC response"),
        ("no_result", "not a JSON-RPC response"),
        ("bad_byte_answer", "not valid UTF-8 (byte 0xe9"),
    ],
)
async def test_an_unreadable_answer_fails_only_its_call_and_the_session_stays(tool: str, says: str) -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        connection = await registry.connect(raw_stdio())
        pids = child_pids() - before
        with anyio.fail_after(FAST):
            result = await registry.dispatch(f"raw__{tool}", {})
        assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR, result.error
        assert "answer could not be read" in result.error.message and says in result.error.message
        assert not result.error.retryable
        with anyio.fail_after(FAST):
            await _echo_ok(registry)
        assert connection.reconnects == 0 and child_pids() - before == pids
    assert child_pids() - before == set()


async def test_an_answer_with_a_wrong_id_fails_the_waiting_call_at_once() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        await registry.connect(raw_stdio())
        with anyio.fail_after(FAST):
            result = await registry.dispatch("raw__wrong_id", {})
        assert result.error is not None and result.error.kind is ErrorKind.UNAVAILABLE
        assert "987654321" in result.error.message and "never sent" in result.error.message
        with anyio.fail_after(FAST * 3):
            await _echo_ok(registry)
    assert child_pids() - before == set()


@pytest.mark.parametrize("id_last", [False, True], ids=["id_first", "id_last"])
async def test_a_result_over_max_result_bytes_is_upstream_error_naming_the_limit(id_last: bool) -> None:
    before = child_pids()
    limit = 1024 * 1024
    env = {"HOSTILE_HUGE_BYTES": str(20 * 1024 * 1024), "HOSTILE_ID_LAST": "1" if id_last else "0"}
    async with ToolRegistry() as registry:
        connection = await registry.connect(raw_stdio(env=env, max_result_bytes=limit))
        start = time.perf_counter()
        with anyio.fail_after(FAST * 2):
            result = await registry.dispatch("raw__huge", {})
        elapsed = time.perf_counter() - start
        assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
        assert f"max_result_bytes ({limit} bytes)" in result.error.message
        assert "raise max_result_bytes" in result.error.message
        assert elapsed < CALL_TIMEOUT / 3
        with anyio.fail_after(FAST):
            await _echo_ok(registry)
        assert connection.reconnects == 0
    assert child_pids() - before == set()


async def test_a_result_under_max_result_bytes_arrives_whole() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        await registry.connect(raw_stdio(env={"HOSTILE_HUGE_BYTES": str(3 * 1024 * 1024)}))
        with anyio.fail_after(FAST * 2):
            result = await registry.dispatch("raw__huge", {})
        assert result.ok, result.error
        assert len(result.output.blocks[0].text) == 3 * 1024 * 1024  # type: ignore[union-attr]
    assert child_pids() - before == set()


async def test_a_schema_too_deep_to_parse_fails_connect_at_once_saying_so() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        start = time.perf_counter()
        with anyio.fail_after(FAST), pytest.raises(Exception) as caught:
            await registry.connect(raw_stdio(env={"HOSTILE_LIST": "deep"}))
        assert type(caught.value).__name__ == "ServerConnectionError"
        assert "nested deeper than the JSON parser allows" in str(caught.value)
        assert "tools/list" in str(caught.value)
        assert time.perf_counter() - start < 25
        await registry.connect(raw_stdio("again"))
        await _echo_ok(registry, "again")
    assert child_pids() - before == set()


async def test_an_unencodable_message_fails_only_its_call_and_not_the_one_in_flight() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        connection = await registry.connect(raw_stdio())
        pids = child_pids() - before
        slow_result: list[object] = []

        async def slow() -> None:
            slow_result.append(await registry.dispatch("raw__slow", {"text": "in flight", "seconds": 1.0}))

        with anyio.fail_after(FAST):
            async with anyio.create_task_group() as group:
                group.start_soon(slow)
                await anyio.lowlevel.checkpoint()  # let the slow call go out first
                # Straight to the connection: the argument layer would refuse this before the wire.
                with pytest.raises(ToolExecutionError) as caught:
                    await connection.call_tool(registry["raw__echo"], {"text": "\ud800"}, ToolContext())  # type: ignore[arg-type]
                assert slow_result == []  # the slow call is still in flight
        assert caught.value.kind is ErrorKind.INVALID_ARGUMENTS
        assert "not valid Unicode" in caught.value.message
        (done,) = slow_result
        assert done.ok, done.error  # type: ignore[attr-defined]
        assert connection.reconnects == 0 and connection.state == "connected"
        assert child_pids() - before == pids
        await _echo_ok(registry)
    assert child_pids() - before == set()


async def test_sdk_stdio_still_needs_replacing() -> None:
    """toolmesh.mcp._client.stdio replaces the SDK's stdio reader because one bad byte hangs it.

    When this test fails, the SDK reports a bad byte by itself: drop ``_stdio`` and use
    ``mcp.client.stdio.stdio_client`` again.
    """
    import os
    import sys

    before = child_pids()
    params = StdioServerParameters(command=sys.executable, args=[str(RAW), "stdio"], env=dict(os.environ))
    hung = False
    with pytest.raises(BaseExceptionGroup) as caught:  # the reader died on the byte; the session never knew
        async with Client(stdio_client(params), mode="legacy") as client:
            with anyio.move_on_after(3) as scope:
                await client.call_tool("bad_byte", {})
            hung = scope.cancelled_caught
    assert hung, "the SDK's stdio client no longer hangs on a byte that is not UTF-8: retire toolmesh.mcp._client.stdio"
    assert caught.value.subgroup(UnicodeDecodeError) is not None
    assert child_pids() - before == set()


async def test_a_late_answer_to_a_cancelled_call_leaves_the_session_and_the_other_calls_alone() -> None:
    """The raw server answers ``slow`` even after its call was cancelled: such a late answer is
    dropped; it closed the session (and failed every call in flight) before."""
    async with ToolRegistry() as registry:
        connection = await registry.connect(raw_stdio())
        waiting: list[object] = []
        late_scope = anyio.CancelScope()

        async def wait_for_answer() -> None:
            waiting.append(await registry.dispatch("raw__slow", {"text": "waited", "seconds": 3.0}))

        async def cancelled_call() -> None:
            with late_scope:
                await registry.dispatch("raw__slow", {"text": "late", "seconds": 0.3})

        with anyio.fail_after(FAST):
            async with anyio.create_task_group() as group:
                group.start_soon(wait_for_answer)
                group.start_soon(cancelled_call)
                await anyio.wait_all_tasks_blocked()  # both calls are out, waiting for their answers
                late_scope.cancel()
        (done,) = waiting
        assert done.ok, done.error  # type: ignore[attr-defined]
        assert connection.reconnects == 0 and connection.state == "connected"
        await _echo_ok(registry)
