"""Limits a policy puts on calls: how many run at once, how often, and how large their arguments are.

One limit object may serve many turns at once: its slots and counts are shared. Given
a shared ``StateBackend`` (``state=``, or by ``McpGateway(state=...)``), the slots and
counts live there and hold across every process using it: ``RateLimit(10, per=60)``
then means 10 calls a minute across all replicas. When that backend cannot be
reached, calls are refused as ``unavailable`` (retryable), never let through.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ConfigurationError, ErrorKind
from toolmesh._hooks.actions import PROCEED, Hook, Refuse, ToolCallAction
from toolmesh._rows.rows import Entry
from toolmesh._state.backend import StateBackend
from toolmesh._state.errors import StateUnavailableError

from .rules import matcher
from .shared_slots import shared_slot

__all__ = ["ArgumentSizeLimit", "ConcurrencyLimit", "RateLimit"]

logger = logging.getLogger("toolmesh.policy")


class ConcurrencyLimit(Hook):
    """At most ``limit`` calls of each matching row run at once; the others wait for a slot.

    Each row has its own slots, held only while its tool runs (refused and skipped
    calls never take one), and released however the call ends.
    """

    __slots__ = ("_match", "_slots", "_state", "limit", "tools")

    def __init__(self, limit: int, *, tools: Iterable[str] = ("*",), state: StateBackend | None = None) -> None:
        if limit < 1:
            raise ConfigurationError(f"ConcurrencyLimit needs a limit of at least 1, got {limit!r}")
        self.limit = limit
        """Calls of one row that may run at once (in every process sharing ``state``)."""
        self.tools = (tools,) if isinstance(tools, str) else tuple(tools)
        """The patterns of the rows it limits."""
        self._match = matcher(self.tools, "ConcurrencyLimit(tools=...)")
        self._slots: dict[str, anyio.Semaphore] = {}
        self._state = state

    def use_state(self, state: StateBackend) -> None:
        """Hold the slots in ``state`` (unless given a backend already): the limit then holds across processes."""
        if self._state is None:
            self._state = state

    def around_tool_call(
        self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]
    ) -> AbstractAsyncContextManager[object] | None:
        if not self._match(entry.name):
            return None
        slots = self._slots.get(entry.name)
        if slots is None:
            slots = self._slots[entry.name] = anyio.Semaphore(self.limit)
        if self._state is None:
            return slots
        return self._shared(slots, self._state, entry.name)

    @asynccontextmanager
    async def _shared(self, slots: anyio.Semaphore, state: StateBackend, name: str) -> AsyncIterator[None]:
        async with slots, shared_slot(state, f"slots:{self.limit}:{name}", self.limit, name):
            yield  # this process's waiters queue here first: only `limit` of them ask the backend

    def __repr__(self) -> str:
        return f"ConcurrencyLimit({self.limit})"


class RateLimit(Hook):
    """At most ``calls`` calls of each matching row per ``per`` seconds (a token bucket per row).

    A call over the limit is refused with kind ``rate_limited`` (retryable) and the
    model is told how long to wait. Bursts of up to ``calls`` are allowed.
    """

    __slots__ = ("_buckets", "_clock", "_match", "_rate", "_state", "calls", "per", "tools")

    def __init__(
        self,
        calls: int,
        per: float = 1.0,
        *,
        tools: Iterable[str] = ("*",),
        clock: Callable[[], float] = time.monotonic,
        state: StateBackend | None = None,
    ) -> None:
        if calls < 1 or per <= 0:
            raise ConfigurationError(
                f"RateLimit needs calls >= 1 and per > 0 seconds, got calls={calls!r}, per={per!r}"
            )
        self.calls = calls
        """Calls allowed per period (and the largest burst)."""
        self.per = per
        """The period, in seconds."""
        self._rate = calls / per
        self.tools = (tools,) if isinstance(tools, str) else tuple(tools)
        """The patterns of the rows it limits."""
        self._match = matcher(self.tools, "RateLimit(tools=...)")
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._state = state

    def use_state(self, state: StateBackend) -> None:
        """Keep the buckets in ``state`` (unless given a backend already): the rate then holds across processes."""
        if self._state is None:
            self._state = state

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if not self._match(entry.name):
            return PROCEED
        if self._state is not None:
            return await self._shared(self._state, entry.name)
        now = self._clock()
        tokens, then = self._buckets.get(entry.name, (float(self.calls), now))
        tokens = min(float(self.calls), tokens + (now - then) * self._rate)
        if tokens >= 1.0:
            self._buckets[entry.name] = (tokens - 1.0, now)
            return PROCEED
        self._buckets[entry.name] = (tokens, now)
        return self._limited(entry.name, (1.0 - tokens) / self._rate)

    async def _shared(self, state: StateBackend, name: str) -> ToolCallAction:
        try:
            wait = await state.take_token(f"rate:{self.calls}/{self.per:g}:{name}", capacity=self.calls, per=self.per)
        except StateUnavailableError as exc:
            logger.warning("RateLimit: %s; refusing calls of %r until it is back", exc, name)
            return Refuse(
                f"The rate limit of the tool {name!r} cannot be checked just now. Try again in a moment.",
                kind=ErrorKind.UNAVAILABLE,
            )
        return PROCEED if wait == 0.0 else self._limited(name, wait)

    def _limited(self, name: str, wait: float) -> Refuse:
        return Refuse(
            f"The tool {name!r} is rate limited to {self.calls} calls per {self.per:g} seconds. "
            f"Try again in {wait:.1f} seconds.",
            kind=ErrorKind.RATE_LIMITED,
        )

    def __repr__(self) -> str:
        return f"RateLimit({self.calls}, per={self.per:g})"


class ArgumentSizeLimit(Hook):
    """Refuse calls whose arguments, as JSON text, are larger than ``max_bytes`` (UTF-8)."""

    __slots__ = ("_match", "max_bytes")

    def __init__(self, max_bytes: int, *, tools: Iterable[str] = ("*",)) -> None:
        if max_bytes < 2:
            raise ConfigurationError(f"ArgumentSizeLimit needs max_bytes of at least 2 ('{{}}'), got {max_bytes!r}")
        self.max_bytes = max_bytes
        """The largest argument text allowed, in bytes."""
        self._match = matcher(tools, "ArgumentSizeLimit(tools=...)")

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if len(call.arguments) * 4 <= self.max_bytes or not self._match(entry.name):
            return PROCEED  # a str of n characters is at most 4n bytes in UTF-8
        size = len(call.arguments.encode())
        if size <= self.max_bytes:
            return PROCEED
        return Refuse(
            f"The arguments are {size} bytes; the tool {entry.name!r} accepts at most {self.max_bytes} bytes. "
            "Send smaller arguments."
        )

    def __repr__(self) -> str:
        return f"ArgumentSizeLimit({self.max_bytes})"
