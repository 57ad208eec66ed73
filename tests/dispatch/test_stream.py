"""`registry.stream`: a call's events as they happen, then the result `dispatch` would give.

Native, dynamic and hosted rows here; MCP rows in test_stream_mcp.py. Elicitation,
sampling and log events are produced by native tools calling the context's callbacks
directly (the stand-in for `ctx.elicit` / `ctx.sample` / `ctx.log`).
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types
import pytest

from toolmesh import (
    ElicitationEvent,
    ElicitationRequest,
    ErrorKind,
    LogEvent,
    LogMessage,
    PartialEvent,
    ProgressEvent,
    ResultEvent,
    SamplingEvent,
    SamplingRequest,
    Text,
    ToolContext,
    ToolEvent,
    ToolOutput,
    ToolRegistry,
    ToolStream,
    tool,
)


async def _all(stream: ToolStream) -> list[ToolEvent]:
    with anyio.fail_after(30):
        async with stream as events:
            return [event async for event in events]


@tool
async def count(ctx: ToolContext[None], n: int) -> AsyncIterator[str]:
    """Report progress, then yield each step."""
    for i in range(n):
        await ctx.report_progress(i, n, f"step {i}")
        yield f"part {i}"


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(count)
    return registry


async def test_a_native_stream_gives_progress_and_partials_in_order_then_the_result() -> None:
    registry = _registry()
    events = await _all(registry.stream("count", {"n": 2}, ToolContext(call_id="c1")))
    assert events[:-1] == [
        ProgressEvent(0, 2, "step 0", "c1", "count"),
        PartialEvent(ToolOutput([Text("part 0")]), "c1", "count"),
        ProgressEvent(1, 2, "step 1", "c1", "count"),
        PartialEvent(ToolOutput([Text("part 1")]), "c1", "count"),
    ]
    final = events[-1]
    assert isinstance(final, ResultEvent)
    assert (final.call_id, final.tool_name) == ("c1", "count")
    assert final.result.ok and final.result.output.blocks == [Text("part 0"), Text("part 1")]
    dispatched = await registry.dispatch("count", {"n": 2}, ToolContext(call_id="c1"))
    assert (dispatched.disposition, dispatched.output, dispatched.presentation) == (
        final.result.disposition,
        final.result.output,
        final.result.presentation,
    )


async def test_the_host_callbacks_still_receive_everything() -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    partials: list[ToolOutput] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def on_partial(output: ToolOutput) -> None:
        partials.append(output)

    ctx = ToolContext(progress=on_progress, on_partial=on_partial)
    events = await _all(_registry().stream("count", {"n": 2}, ctx))
    assert progress == [(0, 2, "step 0"), (1, 2, "step 1")]
    assert partials == [e.output for e in events if isinstance(e, PartialEvent)]
    assert {e.call_id for e in events} == {ctx.call_id}


async def test_a_dynamic_row_streams_its_progress() -> None:
    async def handler(arguments: dict[str, Any], ctx: ToolContext[None]) -> str:
        await ctx.report_progress(1, None, "half")
        ctx.metadata["seen"] = arguments["x"]
        return "whole"

    registry = ToolRegistry()
    registry.register_dynamic("half", {"type": "object", "properties": {"x": {"type": "integer"}}}, handler)
    stream = registry.stream("half", '{"x": 7}')
    events = await _all(stream)
    assert events[0] == ProgressEvent(1, None, "half", stream.call_id, "half")
    final = events[1]
    assert isinstance(final, ResultEvent) and len(events) == 2
    assert final.result.output.blocks == [Text("whole")] and final.result.metadata == {"seen": 7}
    assert final.call_id == stream.call_id


@pytest.mark.parametrize(
    ("name", "arguments", "kind"),
    [
        ("cuont", {"n": 1}, ErrorKind.NOT_FOUND),  # unknown: a close name is suggested
        (["not", "a", "name"], None, ErrorKind.NOT_FOUND),
        ("count", '{"n": "many"}', ErrorKind.INVALID_ARGUMENTS),
        ("count", "[1]", ErrorKind.INVALID_ARGUMENTS),
        ("search", None, ErrorKind.NOT_FOUND),  # hosted: never run locally
    ],
)
async def test_a_call_that_cannot_run_gives_one_result_event_as_dispatch_would(
    name: Any, arguments: Any, kind: ErrorKind
) -> None:
    registry = _registry()
    registry.register_hosted("search", {"type": "web_search"})
    events = await _all(registry.stream(name, arguments, ToolContext(call_id="c9")))
    assert len(events) == 1 and isinstance(events[0], ResultEvent)
    result = events[0].result
    dispatched = await registry.dispatch(name, arguments, ToolContext(call_id="c9"))
    assert result.error is not None and dispatched.error is not None
    assert result.error.kind is kind
    assert (result.disposition, result.call_id, result.name, result.error.model_feedback) == (
        dispatched.disposition,
        "c9",
        dispatched.name,
        dispatched.error.model_feedback,
    )


async def test_a_timeout_ends_the_stream_with_the_timeout_result() -> None:
    @tool
    async def stall(ctx: ToolContext[None]) -> str:
        await ctx.report_progress(1)
        await anyio.sleep_forever()
        return "never"

    registry = ToolRegistry()
    registry.register(stall)
    events = await _all(registry.stream("stall", None, ToolContext(timeout=0.2)))
    assert isinstance(events[0], ProgressEvent)
    final = events[-1]
    assert isinstance(final, ResultEvent) and len(events) == 2
    assert final.result.error is not None and final.result.error.kind is ErrorKind.TIMEOUT


class _Slow:
    """A native tool that reports once and then waits until cancelled, recording the cancellation."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.cancelled = anyio.Event()

        @tool
        async def slow(ctx: ToolContext[None]) -> str:
            await ctx.report_progress(0, None, "started")
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                raise
            return "never"

        registry.register(slow)


async def test_leaving_the_block_early_cancels_the_call() -> None:
    registry = ToolRegistry()
    slow = _Slow(registry)
    with anyio.fail_after(30):
        async with registry.stream("slow") as events:
            assert isinstance(await anext(events), ProgressEvent)
        assert slow.cancelled.is_set()  # aclose waits until the call has unwound
        assert await anext(events, None) is None


async def test_break_out_of_async_for_cancels_the_call() -> None:
    registry = ToolRegistry()
    slow = _Slow(registry)
    with anyio.fail_after(30):
        async for event in registry.stream("slow"):
            assert isinstance(event, ProgressEvent)
            break
        gc.collect()  # the dropped stream is collected at once in CPython; this makes it certain
        await slow.cancelled.wait()


async def test_a_slow_consumer_makes_the_tool_wait() -> None:
    reported: list[int] = []

    @tool
    async def chatty(ctx: ToolContext[None]) -> str:
        for i in range(5):
            await ctx.report_progress(i)
            reported.append(i)
        return "done"

    registry = ToolRegistry()
    registry.register(chatty)
    with anyio.fail_after(30):
        async with registry.stream("chatty", max_queued=1) as events:
            first = await anext(events)
            await anyio.wait_all_tasks_blocked()
            assert reported == [0, 1]  # one event taken, one queued: the third report waits
            rest = [event async for event in events]
    assert [e.progress for e in [first, *rest] if isinstance(e, ProgressEvent)] == [0, 1, 2, 3, 4]
    assert isinstance(rest[-1], ResultEvent) and rest[-1].result.ok


async def test_elicitation_sampling_and_logs_become_events_and_reach_the_host() -> None:
    asked: list[object] = []
    logged: list[LogMessage] = []

    async def elicitation(request: ElicitationRequest) -> mcp_types.ElicitResult:
        asked.append(request)
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sampling(request: SamplingRequest) -> mcp_types.CreateMessageResult:
        asked.append(request)
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text="Hello, Ada"), model="host"
        )

    async def on_log(message: LogMessage) -> None:
        logged.append(message)

    @tool
    async def greet(ctx: ToolContext[None]) -> str:
        assert ctx.elicitation is not None and ctx.sampling is not None and ctx.on_log is not None
        form = mcp_types.ElicitRequestFormParams(
            message="Your name?", requested_schema={"type": "object", "properties": {"name": {"type": "string"}}}
        )
        answer = await ctx.elicitation(ElicitationRequest(form, ctx.call_id, ctx.tool_name, None))
        await ctx.on_log(LogMessage("info", {"answer": answer.action}, None, ctx.call_id, ctx.tool_name, None))
        params = mcp_types.CreateMessageRequestParams(
            messages=[mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(type="text", text="hi"))],
            max_tokens=10,
        )
        sampled = await ctx.sampling(SamplingRequest(params, ctx.call_id, ctx.tool_name, None))
        assert isinstance(sampled.content, mcp_types.TextContent)
        return sampled.content.text

    registry = ToolRegistry()
    registry.register(greet)
    ctx = ToolContext(call_id="c2", elicitation=elicitation, sampling=sampling, on_log=on_log)
    events = await _all(registry.stream("greet", None, ctx))
    assert [type(e) for e in events] == [ElicitationEvent, LogEvent, SamplingEvent, ResultEvent]
    elicited, log, sampled, final = events
    assert isinstance(elicited, ElicitationEvent) and isinstance(sampled, SamplingEvent)
    assert [elicited.request, sampled.request] == asked  # the events carry what the host's callbacks answered
    assert isinstance(log, LogEvent) and logged == [log.message] and log.message.data == {"answer": "accept"}
    assert isinstance(final, ResultEvent) and final.result.output.blocks == [Text("Hello, Ada")]
    assert all((e.call_id, e.tool_name) == ("c2", "greet") for e in events)


async def test_without_an_elicitation_callback_the_tool_sees_none_and_no_event_is_made() -> None:
    @tool
    async def ask(ctx: ToolContext[None]) -> str:
        return f"elicitation={ctx.elicitation is not None} sampling={ctx.sampling is not None}"

    registry = ToolRegistry()
    registry.register(ask)
    events = await _all(registry.stream("ask"))
    assert len(events) == 1 and isinstance(events[0], ResultEvent)
    assert events[0].result.output.blocks == [Text("elicitation=False sampling=False")]


async def test_the_registry_default_elicitation_answers_when_the_call_has_none() -> None:
    async def default(request: ElicitationRequest) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="decline")

    @tool
    async def ask(ctx: ToolContext[None]) -> str:
        assert ctx.elicitation is not None
        params = mcp_types.ElicitRequestURLParams(message="Sign in", url="https://example.invalid/login")
        return (await ctx.elicitation(ElicitationRequest(params, ctx.call_id, ctx.tool_name, None))).action

    registry = ToolRegistry(elicitation=default)
    registry.register(ask)
    events = await _all(registry.stream("ask"))
    assert [type(e) for e in events] == [ElicitationEvent, ResultEvent]
    events = await _all(registry.snapshot().stream("ask"))
    assert [type(e) for e in events] == [ElicitationEvent, ResultEvent]
    assert events[-1].result.output.blocks == [Text("decline")]  # type: ignore[union-attr]


async def test_a_snapshot_streams_the_rows_it_captured() -> None:
    registry = _registry()
    snapshot = registry.snapshot()
    registry.unregister("count")
    events = await _all(snapshot.stream("count", {"n": 1}))
    assert [type(e) for e in events] == [ProgressEvent, PartialEvent, ResultEvent]


async def test_a_negative_queue_size_is_refused() -> None:
    with pytest.raises(ValueError, match="max_queued must be a whole number of events, 0 or more; got -1"):
        _registry().stream("count", max_queued=-1)


async def test_an_unbuffered_stream_hands_each_event_over() -> None:
    events = await _all(_registry().stream("count", {"n": 2}, max_queued=0))
    assert [type(e) for e in events] == [ProgressEvent, PartialEvent, ProgressEvent, PartialEvent, ResultEvent]


async def test_a_stream_never_iterated_runs_nothing_and_closes_quietly() -> None:
    registry = ToolRegistry()
    slow = _Slow(registry)
    stream = registry.stream("slow")
    assert "new" in repr(stream)
    await stream.aclose()
    assert await anext(stream, None) is None
    assert not slow.cancelled.is_set()
    registry.stream("slow")  # dropped unread: nothing runs, nothing warns
    gc.collect()


async def test_a_failure_outside_the_call_is_raised_to_the_consumer_not_swallowed() -> None:
    class Broken(ToolRegistry):
        async def dispatch(self, name: str, arguments: Any = None, ctx: ToolContext[Any] | None = None) -> Any:
            assert ctx is not None
            await ctx.report_progress(1)
            raise RuntimeError("a bug in dispatch")

    stream = Broken().stream("anything")
    with anyio.fail_after(30):
        assert isinstance(await anext(stream), ProgressEvent)
        with pytest.raises(RuntimeError, match="a bug in dispatch"):
            await anext(stream)
        assert await anext(stream, None) is None  # raised once; then the stream is over
    await stream.aclose()
