"""Limits a policy puts on calls: how many run at once, how often, and how large their arguments are.

One limit object may serve many turns at once: its slots and counts are shared.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ConfigurationError, ErrorKind
from toolmesh._hooks.actions import PROCEED, Hook, Refuse, ToolCallAction
from toolmesh._rows.rows import Entry

from .rules import matcher

__all__ = ["ArgumentSizeLimit", "ConcurrencyLimit", "RateLimit"]


class ConcurrencyLimit(Hook):
    """At most ``limit`` calls of each matching row run at once; the others wait for a slot.

    Each row has its own slots, held only while its tool runs (refused and skipped
    calls never take one), and released however the call ends.
    """

    __slots__ = ("_match", "_slots", "limit")

    def __init__(self, limit: int, *, tools: Iterable[str] = ("*",)) -> None:
        if limit < 1:
            raise ConfigurationError(f"ConcurrencyLimit needs a limit of at least 1, got {limit!r}")
        self.limit = limit
        """Calls of one row that may run at once."""
        self._match = matcher(tools, "ConcurrencyLimit(tools=...)")
        self._slots: dict[str, anyio.Semaphore] = {}

    def around_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> anyio.Semaphore | None:
        if not self._match(entry.name):
            return None
        slots = self._slots.get(entry.name)
        if slots is None:
            slots = self._slots[entry.name] = anyio.Semaphore(self.limit)
        return slots

    def __repr__(self) -> str:
        return f"ConcurrencyLimit({self.limit})"


class RateLimit(Hook):
    """At most ``calls`` calls of each matching row per ``per`` seconds (a token bucket per row).

    A call over the limit is refused with kind ``rate_limited`` (retryable) and the
    model is told how long to wait. Bursts of up to ``calls`` are allowed. With
    ``per_caller=True`` each caller (``ToolContext.identity.key``; calls without an
    identity share one bucket) has its own buckets.
    """

    __slots__ = ("_buckets", "_clock", "_match", "_rate", "calls", "per", "per_caller")

    def __init__(
        self,
        calls: int,
        per: float = 1.0,
        *,
        tools: Iterable[str] = ("*",),
        clock: Callable[[], float] = time.monotonic,
        per_caller: bool = False,
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
        self.per_caller = per_caller
        """Whether each caller (identity) has its own buckets."""
        self._match = matcher(tools, "RateLimit(tools=...)")
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if not self._match(entry.name):
            return PROCEED
        now = self._clock()
        key = self.bucket(entry, ctx)
        tokens, then = self._buckets.get(key, (float(self.calls), now))
        tokens = min(float(self.calls), tokens + (now - then) * self._rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)
            return PROCEED
        self._buckets[key] = (tokens, now)
        wait = (1.0 - tokens) / self._rate
        return Refuse(
            f"The tool {entry.name!r} is rate limited to {self.calls} calls per {self.per:g} seconds. "
            f"Try again in {wait:.1f} seconds.",
            kind=ErrorKind.RATE_LIMITED,
        )

    def bucket(self, entry: Entry, ctx: ToolContext[Any]) -> str:
        """The bucket a call counts against: its row's, and with ``per_caller`` its caller's (``Identity.key``)."""
        if not self.per_caller:
            return entry.name
        return f"{ctx.identity.key if ctx.identity is not None else ''}\x00{entry.name}"

    def __repr__(self) -> str:
        return f"RateLimit({self.calls}, per={self.per:g}{', per_caller=True' if self.per_caller else ''})"


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
