"""``MemoryState``: the state backend of one process (the default): nothing leaves it."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from .backend import RESYNC, Resync, StateBackend

__all__ = ["MemoryState"]

_QUEUED = 1024
"""Messages one subscriber may fall behind by; past it they are dropped for one ``RESYNC``."""


class MemoryState(StateBackend):
    """Shared state held in this process: the same operations as ``RedisState``, for one process only."""

    def __init__(self, prefix: str = "toolmesh:", *, clock: Callable[[], float] = time.monotonic) -> None:
        self.prefix = prefix
        self._clock = clock
        self._values: dict[str, tuple[Any, float]] = {}
        self._subscribers: dict[str, list[MemoryObjectSendStream[bytes | Resync]]] = {}

    @property
    def shared(self) -> bool:
        return False

    @property
    def url(self) -> str:
        return "memory"

    def __repr__(self) -> str:
        return f"MemoryState(prefix={self.prefix!r})"

    def _read(self, name: str) -> Any:
        key = self.key(name)
        found = self._values.get(key)
        if found is None:
            return None
        if found[1] <= self._clock():
            del self._values[key]
            self._sweep()
            return None
        return found[0]

    def _write(self, name: str, value: Any, ttl: float) -> None:
        self._values[self.key(name)] = (value, self._clock() + ttl)

    def _sweep(self) -> None:
        now = self._clock()
        for key in [key for key, (_, until) in self._values.items() if until <= now]:
            del self._values[key]

    async def take_token(self, name: str, *, capacity: int, per: float) -> float:
        now, rate = self._clock(), capacity / per
        tokens, then = self._read(name) or (float(capacity), now)
        tokens = min(float(capacity), tokens + max(0.0, now - then) * rate)
        wait = 0.0 if tokens >= 1.0 else (1.0 - tokens) / rate
        self._write(name, (tokens - 1.0 if wait == 0.0 else tokens, now), per + 1.0)
        return wait

    async def acquire_slot(self, name: str, holder: str, *, limit: int, lease: float) -> bool:
        now = self._clock()
        held: dict[str, float] = {h: until for h, until in (self._read(name) or {}).items() if until > now}
        if len(held) >= limit and holder not in held:
            return False
        held[holder] = now + lease
        self._write(name, held, lease)
        return True

    async def renew_slot(self, name: str, holder: str, *, lease: float) -> None:
        held: dict[str, float] | None = self._read(name)
        if held is not None and holder in held:
            held[holder] = self._clock() + lease
            self._write(name, held, lease)

    async def release_slot(self, name: str, holder: str) -> None:
        held: dict[str, float] | None = self._read(name)
        if held is not None:
            held.pop(holder, None)

    async def increment(self, name: str, *, ttl: float, amount: int = 1) -> int:
        value = int(self._read(name) or 0) + amount
        self._write(name, value, ttl)
        return value

    async def claim(self, name: str, *, ttl: float, value: bytes = b"1") -> bool:
        if self._read(name) is not None:
            return False
        self._write(name, value, ttl)
        return True

    async def swap(self, name: str, value: bytes, *, ttl: float) -> bytes | None:
        before = self._read(name)
        self._write(name, value, ttl)
        return before if isinstance(before, bytes) else None

    async def get(self, name: str, *, refresh_ttl: float | None = None) -> bytes | None:
        value = self._read(name)
        if value is not None and refresh_ttl is not None:
            self._write(name, value, refresh_ttl)
        return value if isinstance(value, bytes) else None

    async def set(self, name: str, value: bytes, *, ttl: float) -> None:
        self._write(name, value, ttl)

    async def delete(self, name: str) -> None:
        self._values.pop(self.key(name), None)

    async def publish(self, channel: str, message: bytes) -> None:
        for stream in self._subscribers.get(self.key(channel), ()):
            with contextlib.suppress(anyio.WouldBlock):  # one this far behind sees RESYNC instead (below)
                stream.send_nowait(message)

    @asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[AsyncIterator[bytes | Resync]]:
        send, receive = anyio.create_memory_object_stream[bytes | Resync](_QUEUED)
        streams = self._subscribers.setdefault(self.key(channel), [])
        streams.append(send)

        async def messages() -> AsyncIterator[bytes | Resync]:
            async with receive:
                while True:
                    lost = receive.statistics().current_buffer_used >= _QUEUED
                    message = await receive.receive()
                    yield message
                    if lost:
                        yield RESYNC

        try:
            yield messages()
        finally:
            streams.remove(send)
            send.close()
            receive.close()

    async def ping(self) -> float:
        return 0.0

    async def aclose(self) -> None:
        self._subscribers.clear()
