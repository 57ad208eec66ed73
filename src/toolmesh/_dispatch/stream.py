"""``registry.stream``: one call run as ``dispatch`` runs it, its events handed out as they happen.

The call gets a fork of the host's context whose callbacks (progress, partial output,
log messages, elicitation, sampling) first put a typed event (``_events``) on a bounded
queue, then hand the same value to the host's own callback, if any. The call runs in a
task the stream owns; the consumer reads the queue. Nothing here is on ``dispatch``'s
path: a host that does not stream pays nothing for it.

Backpressure: the queue holds ``max_queued`` events; when it is full, whatever produced
the next event waits until the consumer takes one. A native tool's ``report_progress``
or ``yield`` waits, as does an MCP progress or log notification's handler (the MCP
session itself keeps running: the SDK handles each notification in its own task). No
event is dropped while the consumer reads, so partial outputs arrive whole and in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from toolmesh._context.context import ElicitationRequest, LogMessage, SamplingRequest, ToolContext, new_call_id
from toolmesh._core.output import ToolOutput

from .events import ElicitationEvent, LogEvent, PartialEvent, ProgressEvent, ResultEvent, SamplingEvent, ToolEvent

if TYPE_CHECKING:
    from toolmesh._context.asking import HostCallbacks
    from toolmesh._core.result import ToolResult

Dispatch = Callable[[str, "str | Mapping[str, Any] | None", "ToolContext[Any] | None"], Awaitable["ToolResult"]]
"""A catalog's bound ``dispatch``: what a stream runs its call with."""

__all__ = ["ToolStream"]

_logger = logging.getLogger("toolmesh")

Req = TypeVar("Req", ElicitationRequest, SamplingRequest)
Res = TypeVar("Res")


class _Call:
    """What the call's task holds: the queue's sending end and the host's callbacks.

    Kept apart from ``ToolStream`` so the running task does not keep the stream alive:
    a stream the consumer drops (``break`` out of ``async for``) is collected at once,
    and collecting it cancels the call.
    """

    __slots__ = ("call_id", "defaults", "host", "send", "tool_name")

    def __init__(
        self,
        send: MemoryObjectSendStream[ToolEvent],
        host: ToolContext[Any] | None,
        defaults: HostCallbacks | None,
        call_id: str,
        tool_name: str,
    ) -> None:
        self.send = send
        self.host = host
        self.defaults = defaults
        self.call_id = call_id
        self.tool_name = tool_name

    async def run(self, dispatch: Dispatch, name: str, arguments: str | Mapping[str, Any] | None) -> None:
        with self.send:
            result = await dispatch(name, arguments, self.context())
            await self.emit(ResultEvent(result))

    def context(self) -> ToolContext[Any]:
        """The host's context (or a new one) with every callback reporting to the stream first.

        A callback the host's context lacks is the registry's default (``defaults``).
        """
        host, defaults = self.host, self.defaults
        elicitation = (host.elicitation if host is not None else None) or (
            defaults.elicitation if defaults is not None else None
        )
        sampling = (host.sampling if host is not None else None) or (
            defaults.sampling if defaults is not None else None
        )
        wrapped: dict[str, Any] = {
            "progress": self.progress,
            "on_partial": self.partial,
            "on_log": self.log,
            # absence stays absence: a server asking without a callback gets its error at once
            "elicitation": None if elicitation is None else self.asking(elicitation, ElicitationEvent),
            "sampling": None if sampling is None else self.asking(sampling, SamplingEvent),
        }
        if host is None:
            return ToolContext(call_id=self.call_id, **wrapped)
        return dataclasses.replace(host, metadata={}, **wrapped)

    async def emit(self, event: ToolEvent) -> None:
        # the consumer closed the stream, or the call is over: nobody reads this event
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self.send.send(event)

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.emit(ProgressEvent(progress, total, message, self.call_id, self.tool_name))
        if self.host is not None and self.host.progress is not None:
            await self.host.progress(progress, total, message)

    async def partial(self, output: ToolOutput) -> None:
        await self.emit(PartialEvent(output, self.call_id, self.tool_name))
        if self.host is not None and self.host.on_partial is not None:
            await self.host.on_partial(output)

    async def log(self, message: LogMessage) -> None:
        await self.emit(LogEvent(message, self.call_id, self.tool_name))
        if self.host is not None and self.host.on_log is not None:
            await self.host.on_log(message)

    def asking(
        self, answer: Callable[[Req], Awaitable[Res]], event: Callable[[Req, str, str], ToolEvent]
    ) -> Callable[[Req], Awaitable[Res]]:
        """``answer``, reporting each request to the stream before it answers."""

        async def ask(request: Req) -> Res:
            await self.emit(event(request, self.call_id, self.tool_name))
            return await answer(request)

        return ask


class ToolStream:
    """The events of one call as it runs; the last one is always its ``ResultEvent``.

    ::

        async with registry.stream("search", {"q": "x"}) as events:
            async for event in events:
                ...

    The call starts at the first ``anext`` and runs in a task this stream owns.
    Closing the stream (leaving the ``async with`` block, ``aclose()``, or dropping it
    after a ``break``) cancels the call if it is still running: an MCP row's request is
    cancelled on the server, as when a ``dispatch`` is cancelled. Runs under asyncio.
    """

    __slots__ = ("_arguments", "_call", "_closed", "_dispatch", "_name", "_receive", "_task")

    def __init__(
        self,
        dispatch: Dispatch,
        defaults: HostCallbacks | None,
        name: str,
        arguments: str | Mapping[str, Any] | None,
        ctx: ToolContext[Any] | None,
        max_queued: int,
    ) -> None:
        send, self._receive = anyio.create_memory_object_stream[ToolEvent](max_queued)
        call_id = ctx.call_id if ctx is not None else new_call_id()
        self._call = _Call(send, ctx, defaults, call_id, name if isinstance(name, str) else "")
        self._dispatch: Dispatch | None = dispatch
        self._name = name
        self._arguments = arguments
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def call_id(self) -> str:
        """The id of the call (the host context's, or a generated one)."""
        return self._call.call_id

    def __aiter__(self) -> ToolStream:
        return self

    async def __anext__(self) -> ToolEvent:
        if self._task is None:
            dispatch = self._dispatch
            if dispatch is None:
                raise StopAsyncIteration
            self._dispatch = None
            call = self._call.run(dispatch, self._name, self._arguments)
            self._task = asyncio.get_running_loop().create_task(call, name=f"toolmesh.stream {self._call.tool_name}")
        try:
            return await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            pass
        task = self._task
        if not self._closed and task is not None:
            await asyncio.wait({task})
            failure = None if task.cancelled() else task.exception()
            if failure is not None:  # dispatch raises only on a bug: surface it (once), never end quietly
                self._task = None
                raise failure
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """Stop reading: cancel the call if it still runs, and wait until it has unwound."""
        if self._closed:
            return
        self._closed = True
        self._dispatch = None
        self._receive.close()
        task = self._task
        if task is None:
            self._call.send.close()
            return
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
        if not task.cancelled() and (failure := task.exception()) is not None:
            _logger.error("a streamed call of %r failed after its stream was closed", self._name, exc_info=failure)

    async def __aenter__(self) -> ToolStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def __del__(self) -> None:
        self._receive.close()
        task = self._task
        if task is None:
            self._call.send.close()
        elif not task.done():
            with contextlib.suppress(RuntimeError):  # the event loop is already closed: nothing runs anyway
                task.cancel()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "new" if self._task is None else "running"
        return f"ToolStream({self._name!r}, call_id={self.call_id!r}, {state})"
