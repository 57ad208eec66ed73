"""`registry.stream` on MCP rows: progress as events, the result last, early close cancels the request.

In-process on both protocol versions (the logic), then the real program over stdio and
Streamable HTTP (the transports), all with tests/fixtures/stream_server.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from _mcp import count_in, wait_until
from _servers import FIXTURES, fixture_server, http_server, stdio_params
from toolmesh import ProgressEvent, ResultEvent, Text, ToolContext, ToolEvent, ToolRegistry, ToolStream
from toolmesh.mcp import McpServer

STREAM = FIXTURES / "stream_server.py"
PROTOCOLS = ["2025-11-25", "2026-07-28"]


async def _all(stream: ToolStream) -> list[ToolEvent]:
    with anyio.fail_after(60):
        async with stream as events:
            return [event async for event in events]


async def _streams_progress_then_the_result(registry: ToolRegistry, name: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    events = await _all(registry.stream(name, {"steps": 3}, ToolContext(call_id="m1", progress=progress)))
    assert events[:-1] == [ProgressEvent(i, 3, f"step {i}", "m1", name) for i in (1, 2, 3)]
    final = events[-1]
    assert isinstance(final, ResultEvent) and final.result.ok, final
    assert final.result.output.blocks == [Text("dripped 3")]
    assert (final.call_id, final.tool_name, final.result.kind) == ("m1", name, "mcp")
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]  # the host's callback too


async def _closing_early_cancels_the_request(registry: ToolRegistry, name: str, cancel_log: Path) -> None:
    before = count_in(cancel_log, "drip cancelled")
    with anyio.fail_after(60):
        async with registry.stream(name, {"steps": 2, "hold": True}) as events:
            assert isinstance(await anext(events), ProgressEvent)
            assert isinstance(await anext(events), ProgressEvent)  # the server is now holding the call
    await wait_until(lambda: count_in(cancel_log, "drip cancelled") > before, 60)
    # the session is still usable
    assert (await registry.dispatch(name, {"steps": 1})).ok


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_in_process_progress_streams_on_both_protocols(protocol: str) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("s", fixture_server(STREAM), protocol=protocol))
        await _streams_progress_then_the_result(registry, "s__drip")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_in_process_early_close_cancels_on_both_protocols(protocol: str, tmp_path: Path) -> None:
    cancel_log = tmp_path / "cancel.log"
    server = fixture_server(STREAM, {"FIXTURE_CANCEL_LOG": str(cancel_log)})
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("s", server, protocol=protocol))
        await _closing_early_cancels_the_request(registry, "s__drip", cancel_log)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cancel_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stream") / "cancel.log"


@pytest.fixture(scope="module")
async def programs(cancel_log: Path) -> AsyncIterator[ToolRegistry]:
    """One registry with the stream fixture as a child process over stdio ("pipe") and over HTTP ("web")."""
    env = {"FIXTURE_CANCEL_LOG": str(cancel_log)}
    command, args, child_env = stdio_params(STREAM, env)
    async with http_server(STREAM, env) as url, ToolRegistry() as registry:
        await registry.connect_all([McpServer.stdio("pipe", command, args, env=child_env), McpServer.http("web", url)])
        yield registry


@pytest.mark.parametrize("label", ["pipe", "web"])
async def test_a_server_program_streams_progress(programs: ToolRegistry, label: str) -> None:
    await _streams_progress_then_the_result(programs, f"{label}__drip")


@pytest.mark.parametrize("label", ["pipe", "web"])
async def test_closing_a_server_programs_stream_cancels_its_request(
    programs: ToolRegistry, label: str, cancel_log: Path
) -> None:
    await _closing_early_cancels_the_request(programs, f"{label}__drip", cancel_log)


@pytest.mark.parametrize("label", ["pipe", "web"])
async def test_a_stalled_consumer_holds_back_its_own_call_only(programs: ToolRegistry, label: str) -> None:
    name = f"{label}__drip"
    with anyio.fail_after(60):
        async with programs.stream(name, {"steps": 3}, max_queued=0) as events:
            first = await anext(events)
            # nobody reads this stream now: its next progress waits, the session serves other calls
            other = await programs.dispatch(name, {"steps": 1})
            assert other.ok and other.output.blocks == [Text("dripped 1")]
            rest = [event async for event in events]
    assert [e.progress for e in [first, *rest] if isinstance(e, ProgressEvent)] == [1, 2, 3]
    assert isinstance(rest[-1], ResultEvent) and rest[-1].result.ok
