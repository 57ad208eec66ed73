"""Run one model turn's tool calls against a snapshot: concurrently, through hooks, in call order.

``run_tool_calls`` returns every result at once; ``stream_tool_calls`` hands them out
as calls complete. Both are the same driver. How a call goes:

1. A call with an unknown name or arguments that did not parse, or (when hooks are
   given) arguments its row rejects locally, goes to ``on_invalid_tool_call``
   hooks: fail, skip, or repair once (the repaired call starts again at 1).
2. ``on_tool_call`` hooks decide: proceed, rewrite the arguments, skip, refuse, stop.
3. The tool runs inside every hook's ``around_tool_call`` context. A dispatch that
   fails with ``invalid_arguments`` (an MCP server's validation, or a tool raising
   it) goes to step 1's hooks, unless the call was already repaired.
4. ``on_tool_result`` hooks see the result, whatever its disposition.

A hook that raises (or returns a wrong action) fails only its call, with kind
``internal``; the other calls go on.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, overload

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ConfigurationError, ErrorKind, HookError, ToolExecutionError, hook_label
from toolmesh._core.output import ToolOutput
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._hooks.actions import Fail, Hook, InvalidCall, Refuse, Repair, SkipWith, StopTurn
from toolmesh._hooks.stack import HookStack, InvalidDecision, arguments_json, as_output
from toolmesh._rows.rows import Entry

from .invalid import argument_error, invalid_arguments, unknown_name, unparsed_arguments
from .registry import ToolRegistry
from .snapshot import ToolSnapshot

__all__ = ["CompletedCall", "TurnResult", "TurnStream", "run_tool_calls", "stream_tool_calls"]

logger = logging.getLogger("toolmesh")

ContextFactory = Callable[[ToolCall], ToolContext[Any]]
"""Builds the ``ToolContext`` of one call (its ``call_id`` is set to the call's id)."""


@dataclass(frozen=True, slots=True)
class TurnResult(Sequence[ToolResult]):
    """A turn's results, one per call, in call order; and whether a hook stopped the turn."""

    results: tuple[ToolResult, ...]
    """The results, in the order of the calls."""
    stop_reason: str | None = None
    """The ``StopTurn`` reason when a hook stopped the turn (the first one, if several did)."""

    @property
    def stopped(self) -> bool:
        """Whether a hook stopped the turn."""
        return self.stop_reason is not None

    @overload
    def __getitem__(self, index: int) -> ToolResult: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ToolResult]: ...

    def __getitem__(self, index: int | slice) -> ToolResult | Sequence[ToolResult]:
        return self.results[index]

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[ToolResult]:
        return iter(self.results)


@dataclass(frozen=True, slots=True)
class CompletedCall:
    """One call of a streamed turn, done."""

    index: int
    """The call's position in the turn."""
    call: ToolCall
    """The call as the model made it (before any rewrite or repair)."""
    result: ToolResult
    """Its result."""


class TurnStream:
    """The calls of a running turn, as they complete: ``async for done in stream``."""

    __slots__ = ("_receive", "_result")

    def __init__(self, receive: MemoryObjectReceiveStream[CompletedCall]) -> None:
        self._receive = receive
        self._result: TurnResult | None = None

    def __aiter__(self) -> TurnStream:
        return self

    async def __anext__(self) -> CompletedCall:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    @property
    def result(self) -> TurnResult:
        """Every result in call order, once the stream is exhausted.

        Raises:
            RuntimeError: while calls are still running.
        """
        if self._result is None:
            raise RuntimeError("the turn is still running; iterate the stream to its end first")
        return self._result


async def run_tool_calls(
    snapshot: ToolSnapshot | ToolRegistry,
    calls: Iterable[ToolCall],
    *,
    ctx_factory: ContextFactory | None = None,
    hooks: Iterable[Hook | HookStack] = (),
    max_concurrency: int | None = 8,
) -> TurnResult:
    """Run one turn's calls concurrently, each against the row ``snapshot`` captured.

    Never raises for anything a call does wrong: every call gets a result, in call
    order. Only cancellation of the awaiting task propagates.

    Args:
        snapshot: The rows the turn advertised (a registry is snapshotted first). The calls are
            one step of the snapshot's turn: the step ends when they have run.
        calls: The model's calls, e.g. from a provider's ``parse_tool_calls``.
        ctx_factory: Builds each call's context; ``ToolContext(call_id=call.id)`` by default.
        hooks: Hooks (or stacks), run in order for every call.
        max_concurrency: How many calls may run at once (None: no bound). Calls start
            in call order.

    Raises:
        ConfigurationError: for a ``max_concurrency`` below 1 or an object that is not a hook.
    """
    turn = _Turn(snapshot, calls, hooks, ctx_factory, max_concurrency)
    return await turn.run(None)


@asynccontextmanager
async def stream_tool_calls(
    snapshot: ToolSnapshot | ToolRegistry,
    calls: Iterable[ToolCall],
    *,
    ctx_factory: ContextFactory | None = None,
    hooks: Iterable[Hook | HookStack] = (),
    max_concurrency: int | None = 8,
) -> AsyncIterator[TurnStream]:
    """Run a turn like ``run_tool_calls``, handing out each call as it completes.

    ::

        async with stream_tool_calls(snapshot, calls) as stream:
            async for done in stream:
                print(done.index, done.result.disposition)
        results = stream.result

    Leaving the block before the stream ends cancels the calls still running.

    Raises:
        ConfigurationError: as ``run_tool_calls``.
    """
    turn = _Turn(snapshot, calls, hooks, ctx_factory, max_concurrency)
    send, receive = anyio.create_memory_object_stream[CompletedCall](max(1, len(turn.calls)))
    stream = TurnStream(receive)

    async def drive() -> None:
        with send:
            stream._result = await turn.run(send.send_nowait)

    failure: Exception | None = None
    async with receive, anyio.create_task_group() as group:
        group.start_soon(drive)
        try:
            yield stream
        except Exception as exc:
            failure = exc  # re-raised below as it is, not wrapped in the group's ExceptionGroup
        finally:
            group.cancel_scope.cancel()
    if failure is not None:
        raise failure


def _default_context(call: ToolCall) -> ToolContext[Any]:
    return ToolContext(call_id=call.id)


class _Turn:
    """One turn's state: the next call to start, results so far, and whether it was stopped.

    ``min(len(calls), max_concurrency)`` workers take calls in call order, so at most
    that many run at once and a call not yet taken when the turn stops is skipped.
    """

    __slots__ = (
        "_check_ahead",
        "_found",
        "_hooks",
        "_make_context",
        "_max_concurrency",
        "_next",
        "_snapshot",
        "calls",
        "results",
        "stop_reason",
    )

    def __init__(
        self,
        snapshot: ToolSnapshot | ToolRegistry,
        calls: Iterable[ToolCall],
        hooks: Iterable[Hook | HookStack],
        ctx_factory: ContextFactory | None,
        max_concurrency: int | None,
    ) -> None:
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigurationError(f"max_concurrency must be at least 1 (or None), got {max_concurrency!r}")
        self._snapshot = snapshot.snapshot() if isinstance(snapshot, ToolRegistry) else snapshot
        self.calls = list(calls)
        self._hooks = hooks if isinstance(hooks, HookStack) else HookStack(hooks)
        self._make_context = ctx_factory or _default_context
        self._max_concurrency = max_concurrency
        self._next = 0
        # checking arguments ahead of dispatch only matters when hooks would see the call first
        self._check_ahead = self._hooks.handles_calls or self._hooks.handles_invalid
        self.results: list[ToolResult | None] = [None] * len(self.calls)
        self.stop_reason: str | None = None
        # what the model had found when it asked for these calls: a search among them loads its finds for the next step
        self._found = frozenset(self._snapshot.ledger.found_names)

    async def run(self, emit: Callable[[CompletedCall], None] | None) -> TurnResult:
        workers = len(self.calls) if self._max_concurrency is None else min(len(self.calls), self._max_concurrency)
        if workers <= 1:
            await self._work(emit)
        else:
            # the awaiting task is one of the workers: a one-call turn starts no task at all
            async with anyio.create_task_group() as group:
                for _ in range(workers - 1):
                    group.start_soon(self._work, emit)
                await self._work(emit)
        self._snapshot.end_step()
        return TurnResult(tuple(r for r in self.results if r is not None), self.stop_reason)

    async def _work(self, emit: Callable[[CompletedCall], None] | None) -> None:
        """Take the next call not yet started, in call order, until none is left."""
        while self._next < len(self.calls):
            index = self._next
            self._next += 1
            call = self.calls[index]
            if self.stop_reason is not None:
                result = self._not_run(call)
            else:
                try:
                    result = await self._call(call)
                except Exception as exc:
                    # a failing ctx_factory (or a hook context failing on exit) loses only this call
                    result = self._internal_failure(call, f"running the call of {call.name!r} failed: {exc!r}", exc)
            self._finish(index, call, result, emit)

    def _finish(
        self, index: int, call: ToolCall, result: ToolResult, emit: Callable[[CompletedCall], None] | None
    ) -> None:
        self.results[index] = result
        if emit is not None:
            emit(CompletedCall(index, call, result))

    def _stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason

    # -- one call -------------------------------------------------------------------

    async def _call(self, call: ToolCall) -> ToolResult:
        ctx = self._make_context(call)
        if ctx.call_id != call.id:
            ctx.call_id = call.id
        try:
            call, result = await self._attempt(call, ctx, repaired=False)
        except HookError as exc:
            result = self._internal_failure(call, str(exc), exc)
        if not self._hooks.handles_results:
            return result
        try:
            decision = await self._hooks.on_tool_result(call, result, ctx)
        except HookError as exc:
            return self._internal_failure(call, str(exc), exc, result)
        if decision.stop is not None:
            self._stop(decision.stop.reason)
        return decision.result

    async def _attempt(self, call: ToolCall, ctx: ToolContext[Any], *, repaired: bool) -> tuple[ToolCall, ToolResult]:
        entry = self._snapshot.get(call.name)
        if entry is None:
            return await self._invalid(call, await unknown_name(self._snapshot, call), ctx, repaired, None)
        if self._snapshot.ledger.deferred:
            refused = self._snapshot.unoffered(call.name, call.id, self._found)
            if refused is not None:
                return call, refused
        if call.problem is not None:
            return await self._invalid(call, unparsed_arguments(entry, call, call.problem), ctx, repaired, None)
        if self._check_ahead:
            error = argument_error(entry, call.arguments)
            if error is not None:
                return await self._invalid(call, invalid_arguments(entry, error), ctx, repaired, None)
        if self._hooks.handles_calls:
            decision = await self._hooks.on_tool_call(call, entry, ctx)
            call = decision.call
            if decision.action is not None:
                return call, self._decided(call, entry.kind, decision.action, decision.hook)
        result = await self._dispatch(call, entry, ctx)
        error = result.error
        if (
            not repaired
            and error is not None
            and error.kind is ErrorKind.INVALID_ARGUMENTS
            and result.disposition is Disposition.FAILED
            and self._hooks.handles_invalid
        ):
            return await self._invalid(call, invalid_arguments(entry, error), ctx, repaired, result)
        return call, result

    async def _dispatch(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolResult:
        if not self._hooks.holds_calls:
            if self.stop_reason is not None:
                return self._not_run(call)
            return await self._snapshot.dispatch(call.name, call.arguments, ctx)
        try:
            async with self._hooks.around_tool_call(call, entry, ctx):
                # waiting for a hook's slot may take a while: the turn may have stopped meanwhile
                if self.stop_reason is not None:
                    return self._not_run(call)
                return await self._snapshot.dispatch(call.name, call.arguments, ctx)
        except ToolExecutionError as exc:  # a hook's context would not hold the call (dispatch itself never raises)
            return ToolResult.failure(call.id, call.name, entry.kind, exc)

    async def _invalid(
        self,
        call: ToolCall,
        problem: InvalidCall,
        ctx: ToolContext[Any],
        repaired: bool,
        failed: ToolResult | None,
    ) -> tuple[ToolCall, ToolResult]:
        if repaired or not self._hooks.handles_invalid:
            decision = InvalidDecision(Fail())
        else:
            decision = await self._hooks.on_invalid_tool_call(call, problem, ctx)
        kind = problem.entry.kind if problem.entry is not None else "unknown"
        match decision.action:
            case Repair(name=name, arguments=arguments):
                fixed = call if name is None else replace(call, name=name)
                if arguments is not None:
                    fixed = arguments_json(fixed, arguments, decision.hook, "on_invalid_tool_call")
                return await self._attempt(fixed, ctx, repaired=True)
            case SkipWith():
                return call, _skipped(call, kind, decision.action)
            case Fail(feedback=feedback):
                name = call.name if isinstance(call.name, str) else ""  # a model may send any JSON as a name
                result = failed if failed is not None else ToolResult.failure(call.id, name, kind, problem.error)
                if feedback is not None and result.error is not None:
                    error = result.error.with_model_feedback(feedback)
                    result = replace(result, error=error, presentation=ToolOutput.text(feedback))
                return call, result

    def _decided(
        self, call: ToolCall, kind: str, action: SkipWith | Refuse | StopTurn, hook: Hook | None
    ) -> ToolResult:
        match action:
            case SkipWith():
                return _skipped(call, kind, action)
            case Refuse(reason=reason):
                error = ToolExecutionError(
                    f"{hook_label(hook)} refused the call of {call.name!r}: {reason}",
                    kind=action.kind,
                    retryable=action.retryable,
                    model_feedback=reason,
                )
                return ToolResult(
                    call.id, call.name, kind, Disposition.REFUSED, ToolOutput(), ToolOutput.text(reason), error=error
                )
            case StopTurn(reason=reason):
                self._stop(reason)
                return self._not_run(call, kind, reason)

    # -- results made here ----------------------------------------------------------------

    def _kind(self, name: str) -> str:
        entry = self._snapshot.get(name)
        return entry.kind if entry is not None else "unknown"

    def _not_run(self, call: ToolCall, kind: str | None = None, reason: str | None = None) -> ToolResult:
        reason = reason if reason is not None else self.stop_reason
        text = "This call was not run because the turn was stopped" + (f": {reason}" if reason else ".")
        output = ToolOutput.text(text)
        return ToolResult(call.id, call.name, kind or self._kind(call.name), Disposition.SKIPPED, ToolOutput(), output)

    def _internal_failure(
        self, call: ToolCall, message: str, exc: Exception, recorded: ToolResult | None = None
    ) -> ToolResult:
        logger.error("%s", message, exc_info=exc)
        error = ToolExecutionError(
            message, kind=ErrorKind.INTERNAL, model_feedback=ErrorKind.INTERNAL.default_feedback, cause=exc
        )
        if recorded is None:
            return ToolResult.failure(call.id, call.name, self._kind(call.name), error)
        # the tool ran: its raw output and metadata stay on the result
        return ToolResult.failure(
            recorded.call_id,
            recorded.name,
            recorded.kind,
            error,
            metadata=recorded.metadata,
            duration=recorded.duration,
            output=recorded.output,
        )


def _skipped(call: ToolCall, kind: str, action: SkipWith) -> ToolResult:
    if action.result is not None:
        return action.result if action.result.call_id == call.id else replace(action.result, call_id=call.id)
    output = as_output(action.output if action.output is not None else ToolOutput())
    return ToolResult(call.id, call.name, kind, Disposition.SKIPPED, output, output)
