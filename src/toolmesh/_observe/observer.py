"""``CallObserver``: the one way toolmesh observes calls, a hook that turns each finished call into a ``CallRecord``.

An observer is a ``Hook``: ``on_tool_result`` sees every call's result, whatever its
disposition (succeeded, failed, refused by a policy hook, a name no row has, invalid
arguments, skipped), and ``around_tool_call`` is held while the tool runs, so an
observer also knows which calls are in flight and records a call whose caller went away
while it ran (``cancelled``: no result is ever made for it). Audit (``AuditLog``) and
metrics (``CallMetrics``) are observers; so is any host's own subclass.

Put observers first among a turn's hooks: then ``on_tool_result`` sees every result
before any other hook can stop the chain, and a later hook's ``around_tool_call`` that
fails on exit is still recorded. ``McpGateway(observers=...)`` does so, and binds each
observer to the profile the call came through (``for_profile``).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from time import perf_counter
from typing import Any, Self

import anyio

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ErrorKind, ToolExecutionError
from toolmesh._core.result import ToolResult
from toolmesh._hooks.actions import KEEP, Hook, Keep
from toolmesh._rows.rows import Entry

from .record import CallRecord, make_record

__all__ = ["CallObserver", "RowLookup"]

RowLookup = Callable[[str], Entry | None]
"""Finds a row by its model-visible name (``registry.get``, ``snapshot.get``)."""


class CallObserver(Hook):
    """A hook that hands ``record`` one ``CallRecord`` per finished call; subclass it and override ``record``.

    Args:
        rows: Where to find the row of a call that never reached its tool (refused,
            invalid), for its server and wire name: ``registry.get`` for instance. A call
            that ran always knows its row.
        profile: The gateway profile the observed calls come through (``McpGateway`` binds
            it with ``for_profile``).
    """

    def __init__(self, *, rows: RowLookup | None = None, profile: str | None = None) -> None:
        self.rows = rows
        """Where a call's row is found when the call never reached it."""
        self.profile = profile
        """The profile this observer's calls come through (None outside a gateway)."""
        self._running: dict[int, tuple[Entry, float]] = {}

    def for_profile(self, profile: str, rows: RowLookup | None = None) -> Self:
        """This observer for the calls of one gateway profile: the same outputs, the profile on each record.

        The copy shares everything the observer writes to (a logger, instruments); it
        keeps ``rows`` unless given new ones.
        """
        bound = copy.copy(self)
        bound.profile = profile
        bound.rows = rows if rows is not None else self.rows
        bound._running = {}
        return bound

    def record(self, record: CallRecord) -> None:
        """Take one finished call (called once per call, on the event loop: keep it quick)."""

    def started(self, entry: Entry, ctx: ToolContext[Any]) -> None:
        """A call reached its tool and is in flight (until ``ended``)."""

    def ended(self, entry: Entry, ctx: ToolContext[Any]) -> None:
        """A call ``started`` is no longer in flight (finished, failed or cancelled)."""

    def observing(self) -> bool:
        """Whether calls are recorded now (the logger is enabled, a meter provider is installed...).

        Checked at each event: while it is False a call costs the hook calls and this check, nothing more.
        """
        return True

    def around_tool_call(
        self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]
    ) -> AbstractAsyncContextManager[None]:
        if not self.observing():
            return _UNWATCHED
        return _Running(self, call, entry, ctx)

    async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> Keep:
        running = self._running.pop(id(ctx), None) if self._running else None
        if not self.observing():
            return KEEP
        if running is not None:
            entry: Entry | None = running[0]
        else:
            entry = self.rows(result.name) if self.rows is not None and isinstance(result.name, str) else None
        self.record(
            make_record(time.time(), call, entry, ctx, self.profile, result, result.duration, running is not None)
        )
        return KEEP


class _Unwatched:
    """The context of a call run while its observer records nothing."""

    __slots__ = ()

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: object) -> None:
        return None


_UNWATCHED = _Unwatched()


class _Running:
    """One call in flight, as its observer sees it: started, then ended (and recorded when no result will come)."""

    __slots__ = ("call", "ctx", "entry", "observer", "start")

    def __init__(self, observer: CallObserver, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> None:
        self.observer, self.call, self.entry, self.ctx = observer, call, entry, ctx
        self.start = 0.0

    async def __aenter__(self) -> None:
        self.start = perf_counter()
        self.observer._running[id(self.ctx)] = (self.entry, self.start)
        self.observer.started(self.entry, self.ctx)

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        observer, entry, call = self.observer, self.entry, self.call
        observer.ended(entry, self.ctx)
        if exc is None:
            return
        # no result will be made: the caller went away (cancelled), or a hook failed on exit (internal)
        observer._running.pop(id(self.ctx), None)
        result = None
        if not isinstance(exc, anyio.get_cancelled_exc_class()):
            error = ToolExecutionError("a hook failed as the call ended", kind=ErrorKind.INTERNAL)
            result = ToolResult.failure(call.id, entry.name, entry.kind, error)
        duration = perf_counter() - self.start
        observer.record(make_record(time.time(), call, entry, self.ctx, observer.profile, result, duration, True))
