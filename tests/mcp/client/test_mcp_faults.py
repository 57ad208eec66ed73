"""Sessions that die: the server process exits or the HTTP endpoint goes away, mid-call or idle.

Each test starts its own servers, since it breaks them.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from typing import Any

import anyio
import pytest

from _mcp import DEMO, child_pids, demo_http, demo_stdio, wait_until
from _servers import http_server
from toolmesh import ErrorKind, ToolRegistry, ToolResult


def only(pids: set[int]) -> int:
    (pid,) = pids
    return pid


async def test_stdio_server_dying_mid_call_is_unavailable_then_respawned() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        connection = await registry.connect(demo_stdio(call_timeout=20))
        first = only(child_pids() - before)
        start = time.perf_counter()
        result = await registry.dispatch("demo__die")
        assert time.perf_counter() - start < 5  # well within call_timeout
        assert result.error is not None and result.error.kind is ErrorKind.UNAVAILABLE
        assert result.error.retryable
        assert "'demo'" in result.error.message
        # The registry stays usable: the next call starts a new process.
        again = await registry.dispatch("demo__echo", {"text": "back"})
        assert again.ok, again.error
        assert again.output.as_text() == "back"
        assert connection.reconnects == 1 and connection.state == "connected"
        second = only(child_pids() - before)
        assert second != first
    assert child_pids() - before == set()


async def test_every_call_in_flight_ends_when_the_session_dies() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_stdio(call_timeout=20))
        results: list[ToolResult] = []

        async def slow() -> None:
            results.append(await registry.dispatch("demo__slow", {"seconds": 15}))

        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(slow)
            await anyio.sleep(0.3)
            await registry.dispatch("demo__die")
        assert time.perf_counter() - start < 5
        assert [r.error.kind if r.error else None for r in results] == [ErrorKind.UNAVAILABLE] * 3


async def test_stdio_server_killed_while_idle_is_respawned_on_the_next_call() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        connection = await registry.connect(demo_stdio())
        pid = only(child_pids() - before)
        os.kill(pid, signal.SIGKILL)
        await wait_until(lambda: pid not in child_pids())
        await anyio.sleep(0.2)  # the transport notices the end of its stdout
        result = await registry.dispatch("demo__echo", {"text": "x"})
        assert result.ok, result.error
        assert connection.reconnects == 1
    assert child_pids() - before == set()


@pytest.mark.parametrize("death", ["mid-call", "while-idle"])
async def test_a_lost_session_is_logged_once_before_the_reconnect_and_a_closed_one_never(
    death: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Whoever finds the session dead first (the failed call, the supervisor, the next call's reconnect) says so."""
    before = child_pids()
    with caplog.at_level(logging.INFO, logger="toolmesh.mcp"):
        async with ToolRegistry() as registry:
            await registry.connect(demo_stdio(call_timeout=20))
            if death == "mid-call":
                assert (await registry.dispatch("demo__die")).error is not None
            else:
                pid = only(child_pids() - before)
                os.kill(pid, signal.SIGKILL)
                await wait_until(lambda: pid not in child_pids())
            with anyio.fail_after(20):
                while not (await registry.dispatch("demo__echo", {"text": "x"})).ok:
                    pass  # a call may still meet the dead session; the next one reconnects
    messages = [record.getMessage() for record in caplog.records]
    lost = [i for i, message in enumerate(messages) if message.startswith("MCP server 'demo': session lost: ")]
    back = [i for i, message in enumerate(messages) if message == "MCP server 'demo': reconnected (session 2)"]
    assert len(lost) == 1 and len(back) == 1 and lost[0] < back[0], messages
    assert [r.levelno for r in caplog.records if "session lost" in r.getMessage()] == [logging.WARNING]


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])
async def test_http_endpoint_going_away_mid_call_then_coming_back(lean: bool) -> None:
    async with http_server(DEMO) as url, ToolRegistry() as registry:
        connection = await registry.connect(demo_http(url, "web", call_timeout=20))
        connection.lean = lean
        port = url.port
        result = await registry.dispatch("web__die")
        assert result.error is not None and result.error.kind is ErrorKind.UNAVAILABLE
        if lean:
            # A lean POST's failure is its own call's: the session goes down only once the
            # server cannot be reached at all (the next call's POST cannot connect).
            assert connection.state == "connected"
            unreachable = await registry.dispatch("web__echo", {"text": "x"})
            assert unreachable.error is not None and unreachable.error.kind is ErrorKind.UNAVAILABLE
        assert connection.state == "down"
        # Nothing listens now: the reconnect fails, and the next calls fail fast (backoff).
        down = await registry.dispatch("web__echo", {"text": "x"})
        assert down.error is not None and down.error.kind is ErrorKind.UNAVAILABLE
        assert "reconnect" in down.error.message
        start = time.perf_counter()
        fast = await registry.dispatch("web__echo", {"text": "x"})
        assert (
            time.perf_counter() - start < 2.0
        )  # no connect attempt (that would take seconds); generous for a busy machine
        assert fast.error is not None and fast.error.kind is ErrorKind.UNAVAILABLE
        assert "next reconnect" in fast.error.message
        async with http_server(DEMO, port=port):
            await anyio.sleep(0.6)  # past the first back-off step
            back = await registry.dispatch("web__echo", {"text": "back"})
            assert back.ok, back.error
            assert back.output.as_text() == "back"
            assert connection.reconnects == 1 and connection.state == "connected"
            await registry.disconnect("web")  # before the server stops: it waits for open streams


async def test_http_server_restarted_while_idle_keeps_working() -> None:
    async with http_server(DEMO) as url, ToolRegistry() as registry:
        connection = await registry.connect(demo_http(url, "web"))
        port = url.port
        url.process.kill()
        await url.process.wait()
        async with http_server(DEMO, port=port):
            results: list[Any] = []
            for _ in range(2):
                results.append(await registry.dispatch("web__echo", {"text": "x"}))
                if results[-1].ok:
                    break
            # A 2026-07-28 session has no server-side state, so the restarted server may answer
            # it; when the session noticed the loss (its listen stream broke), the call
            # reconnects first. Either way at most one call finds out, and the next one works.
            assert results[-1].ok, results[-1].error
            assert all(r.error.kind is ErrorKind.UNAVAILABLE for r in results[:-1])
            assert connection.reconnects <= 1
            await registry.disconnect("web")  # before the server stops: it waits for open streams


async def test_closing_the_registry_ends_calls_in_flight_and_processes() -> None:
    before = child_pids()
    results: list[ToolResult] = []
    async with anyio.create_task_group() as group:
        async with ToolRegistry() as registry:
            await registry.connect(demo_stdio(call_timeout=30))

            async def slow() -> None:
                results.append(await registry.dispatch("demo__slow", {"seconds": 20}))

            group.start_soon(slow)
            await anyio.sleep(0.3)
            start = time.perf_counter()
        assert time.perf_counter() - start < 8
    assert child_pids() - before == set()
    assert results[0].error is not None and results[0].error.kind is ErrorKind.UNAVAILABLE


async def test_disconnect_fails_later_calls_of_held_rows() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_stdio(include=["echo"]))
        snapshot = registry.snapshot()
        await registry.disconnect("demo")
        assert "demo__echo" not in registry
        result = await snapshot.dispatch("demo__echo", {"text": "x"})
        assert result.error is not None and result.error.kind is ErrorKind.UNAVAILABLE
        assert "disconnected" in result.error.message and not result.error.retryable
        assert result.presentation.as_text() == "The tool 'demo__echo' is no longer available."


async def test_callers_after_a_death_share_one_reconnect() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        connection = await registry.connect(demo_stdio(call_timeout=20))
        assert (await registry.dispatch("demo__die")).error is not None
        results: list[ToolResult] = []

        async def call(i: int) -> None:
            results.append(await registry.dispatch("demo__echo", {"text": str(i)}))

        async with anyio.create_task_group() as group:
            for i in range(10):
                group.start_soon(call, i)
        assert all(r.ok for r in results), [r.error for r in results if not r.ok]
        assert sorted(r.output.as_text() for r in results) == sorted(str(i) for i in range(10))
        assert connection.reconnects == 1
        assert len(child_pids() - before) == 1
    assert child_pids() - before == set()
