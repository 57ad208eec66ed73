"""run_tool_calls / stream_tool_calls: order, concurrency bounds, failures, stopping, contexts."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from _calls import call
from toolmesh import (
    ConfigurationError,
    Disposition,
    ErrorKind,
    ToolCall,
    ToolContext,
    ToolExecutionError,
    ToolRegistry,
    ToolResult,
    TurnResult,
    run_tool_calls,
    stream_tool_calls,
)
from toolmesh.hooks import Hook, StopTurn, ToolResultAction


class InFlight:
    """Counts calls running at once; ``peak`` is the most seen."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    def enter(self) -> None:
        self.now += 1
        self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        self.now -= 1


async def test_results_come_back_in_call_order_whatever_order_calls_finish_in() -> None:
    registry = ToolRegistry()
    finished: list[int] = []
    release = [anyio.Event() for _ in range(3)]

    @registry.tool
    async def step(n: int) -> int:
        """Wait for our turn, then let the previous call finish."""
        await release[n].wait()
        finished.append(n)
        if n > 0:
            release[n - 1].set()
        return n * 10

    release[2].set()  # the last call finishes first, then the middle, then the first
    with anyio.fail_after(5):
        results = await run_tool_calls(registry.snapshot(), [call(f"c{n}", "step", n=n) for n in range(3)])

    assert finished == [2, 1, 0]
    assert [r.call_id for r in results] == ["c0", "c1", "c2"]
    assert [r.output.structured for r in results] == [0, 10, 20]
    assert isinstance(results, TurnResult) and len(results) == 3 and not results.stopped
    assert results[1] is results.results[1] and list(results[1:]) == list(results.results[1:])


async def test_max_concurrency_bounds_the_calls_in_flight() -> None:
    registry = ToolRegistry()
    flight = InFlight()
    full = anyio.Event()

    @registry.tool
    async def work(n: int) -> int:
        """Hold the slot until three calls are in flight."""
        flight.enter()
        if flight.now == 3:
            full.set()
        await full.wait()
        flight.leave()
        return n

    with anyio.fail_after(5):
        results = await run_tool_calls(
            registry.snapshot(), [call(str(n), "work", n=n) for n in range(10)], max_concurrency=3
        )
    assert flight.peak == 3
    assert [r.output.structured for r in results] == list(range(10))


async def test_unbounded_concurrency_runs_every_call_at_once() -> None:
    registry = ToolRegistry()
    flight = InFlight()
    everyone = anyio.Event()

    @registry.tool
    async def work(n: int) -> int:
        """Wait for all twenty."""
        flight.enter()
        if flight.now == 20:
            everyone.set()
        await everyone.wait()
        return n

    with anyio.fail_after(5):
        await run_tool_calls(registry.snapshot(), [call(str(n), "work", n=n) for n in range(20)], max_concurrency=None)
    assert flight.peak == 20


async def test_a_slow_call_and_a_failing_call_are_both_reported() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def slow() -> str:
        """Sleeps past its timeout."""
        await anyio.sleep(10)
        return "never"

    @registry.tool
    async def boom() -> str:
        """Fails."""
        raise RuntimeError("secret detail")

    @registry.tool
    async def fine() -> str:
        """Works."""
        return "ok"

    def contexts(c: ToolCall) -> ToolContext[Any]:
        return ToolContext(call_id=c.id, timeout=0.05 if c.name == "slow" else None)

    with anyio.fail_after(5):
        results = await run_tool_calls(
            registry.snapshot(), [call("a", "slow"), call("b", "boom"), call("c", "fine")], ctx_factory=contexts
        )
    slow_result, boom_result, fine_result = results
    assert slow_result.disposition is Disposition.FAILED and slow_result.error is not None
    assert slow_result.error.kind is ErrorKind.TIMEOUT
    assert boom_result.error is not None and boom_result.error.kind is ErrorKind.INTERNAL
    assert "secret detail" not in boom_result.presentation.as_text()
    assert fine_result.ok and fine_result.output.as_text() == "ok"


async def test_streaming_hands_out_calls_as_they_complete() -> None:
    registry = ToolRegistry()
    first_seen = anyio.Event()

    @registry.tool
    async def waits() -> str:
        """Finishes only after the host saw the other call."""
        await first_seen.wait()
        return "late"

    @registry.tool
    async def fails() -> str:
        """Fails at once."""
        raise ToolExecutionError("nope", kind=ErrorKind.UNAVAILABLE)

    seen: list[tuple[int, str, Disposition]] = []
    with anyio.fail_after(5):
        async with stream_tool_calls(registry, [call("w", "waits"), call("f", "fails")]) as stream:
            with pytest.raises(RuntimeError, match="still running"):
                _ = stream.result
            async for done in stream:
                seen.append((done.index, done.call.id, done.result.disposition))
                first_seen.set()
    assert seen == [(1, "f", Disposition.FAILED), (0, "w", Disposition.SUCCEEDED)]
    assert [r.call_id for r in stream.result] == ["w", "f"]


async def test_leaving_a_stream_early_cancels_the_calls_still_running() -> None:
    registry = ToolRegistry()
    cancelled = anyio.Event()

    @registry.tool
    async def forever() -> str:
        """Never finishes on its own."""
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "unreachable"

    @registry.tool
    async def quick() -> str:
        """Done at once."""
        return "quick"

    with anyio.fail_after(5):
        async with stream_tool_calls(registry, [call("1", "forever"), call("2", "quick")]) as stream:
            async for done in stream:
                assert done.call.id == "2"
                break
        await cancelled.wait()


async def test_an_error_in_the_hosts_loop_propagates_as_it_is() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def forever() -> str:
        """Never finishes on its own."""
        await anyio.sleep_forever()
        return "unreachable"

    @registry.tool
    async def quick() -> str:
        """Done at once."""
        return "quick"

    with anyio.fail_after(5), pytest.raises(ValueError, match="host bug"):
        async with stream_tool_calls(registry, [call("1", "forever"), call("2", "quick")]) as stream:
            async for _ in stream:
                raise ValueError("host bug")


async def test_stream_of_no_calls_ends_at_once() -> None:
    with anyio.fail_after(5):
        async with stream_tool_calls(ToolRegistry(), []) as stream:
            assert [done async for done in stream] == []
    assert stream.result == TurnResult(())


class StopWhen(Hook):
    """Stops the turn from on_tool_result when the named call's result arrives."""

    def __init__(self, call_id: str, done: anyio.Event | None = None) -> None:
        self.call_id = call_id
        self.done = done

    async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
        if call.id != self.call_id:
            return await super().on_tool_result(call, result, ctx)
        if self.done is not None:
            self.done.set()
        return StopTurn("enough")


async def test_stop_turn_skips_calls_not_started_and_lets_running_calls_finish() -> None:
    registry = ToolRegistry()
    ran: list[str] = []
    stopped = anyio.Event()

    @registry.tool
    async def job(label: str, ctx: ToolContext) -> str:
        """Records that it ran; 'long' waits until the turn has stopped."""
        ran.append(label)
        ctx.metadata["ran"] = label
        if label == "long":
            await stopped.wait()
        return label

    calls = [call("1", "job", label="long"), call("2", "job", label="stopper"), call("3", "job", label="later")]
    with anyio.fail_after(5):
        results = await run_tool_calls(registry.snapshot(), calls, hooks=[StopWhen("2", stopped)], max_concurrency=2)

    assert results.stopped and results.stop_reason == "enough"
    assert ran == ["long", "stopper"]
    long_, stopper, later = results
    assert long_.ok and long_.output.as_text() == "long"  # in flight: finished
    assert stopper.ok and stopper.metadata == {"ran": "stopper"}  # raw result recorded before the stop
    assert later.disposition is Disposition.SKIPPED and later.kind == "native"
    assert later.presentation.as_text() == "This call was not run because the turn was stopped: enough"
    assert later.output.blocks == [] and later.error is None


async def test_ctx_factory_builds_each_calls_context_and_the_call_id_is_the_calls() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def whoami(ctx: ToolContext[str]) -> str:
        """Report the context."""
        return f"{ctx.call_id}:{ctx.deps}:{ctx.tool_name}"

    made: list[str] = []

    def factory(c: ToolCall) -> ToolContext[Any]:
        made.append(c.id)
        return ToolContext(call_id="ignored", deps=f"user-{c.id}")

    results = await run_tool_calls(registry.snapshot(), [call("x", "whoami"), call("y", "whoami")], ctx_factory=factory)
    assert sorted(made) == ["x", "y"]
    assert [r.output.as_text() for r in results] == ["x:user-x:whoami", "y:user-y:whoami"]
    assert [r.call_id for r in results] == ["x", "y"]


async def test_a_failing_ctx_factory_fails_only_its_call() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def ping() -> str:
        """Pong."""
        return "pong"

    def factory(c: ToolCall) -> ToolContext[Any]:
        if c.id == "bad":
            raise LookupError("no session")
        return ToolContext(call_id=c.id)

    results = await run_tool_calls(
        registry.snapshot(), [call("bad", "ping"), call("good", "ping")], ctx_factory=factory
    )
    assert results[0].error is not None and results[0].error.kind is ErrorKind.INTERNAL
    assert "no session" in results[0].error.message and "no session" not in results[0].presentation.as_text()
    assert results[1].ok


async def test_each_call_runs_the_row_the_snapshot_captured() -> None:
    registry = ToolRegistry()

    async def old(arguments: dict[str, Any]) -> str:
        return "old"

    async def new(arguments: dict[str, Any]) -> str:
        return "new"

    registry.register_dynamic("impl", {"type": "object"}, old)
    snapshot = registry.snapshot()
    registry.register_dynamic("impl", {"type": "object"}, new, replace=True)

    before = await run_tool_calls(snapshot, [call("1", "impl")])
    after = await run_tool_calls(registry, [call("2", "impl")])
    assert before[0].output.as_text() == "old" and after[0].output.as_text() == "new"


async def test_unknown_names_and_bad_arguments_fail_without_hooks() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def add(x: int, y: int) -> int:
        """Add."""
        return x + y

    calls = [
        call("1", "ad", x=1, y=2),
        ToolCall.from_arguments("2", "add", "{not json"),
        ToolCall.from_arguments("3", "add", "[1, 2]"),
        call("4", "add", x="one"),
        call("5", "add", x=1, y=2),
    ]
    results = await run_tool_calls(registry.snapshot(), calls)
    kinds = [r.error.kind if r.error else None for r in results]
    assert kinds == [
        ErrorKind.NOT_FOUND,
        ErrorKind.INVALID_ARGUMENTS,
        ErrorKind.INVALID_ARGUMENTS,
        ErrorKind.INVALID_ARGUMENTS,
        None,
    ]
    assert results[0].kind == "unknown" and "Did you mean 'add'?" in results[0].presentation.as_text()
    assert "not valid JSON" in results[1].presentation.as_text()
    assert "JSON object" in results[2].presentation.as_text()
    assert results[4].output.structured == 3


async def test_max_concurrency_below_one_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="max_concurrency"):
        await run_tool_calls(ToolRegistry(), [], max_concurrency=0)
