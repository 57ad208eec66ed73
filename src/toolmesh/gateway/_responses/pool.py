"""ServerPool: connections to request-declared MCP servers, shared across requests by (URL, headers).

Each pooled connection is a one-server ``ToolRegistry`` kept open by a task of the
pool's own task group (a registry is entered and left in one task), so a request only
borrows it: ``async with pool.lease(key, spec) as registry:``. Two requests share a
connection only when the URL, the checked address and every header (credentials
included) are equal. A connection nobody uses closes after the idle TTL; past the cap,
the least recently used idle one closes first, and when every pooled connection is busy
a new one serves its request and closes after it. A failed connect is not kept: the
next request tries again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc

from toolmesh._core.names import NamePolicy
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh.mcp._spec.server import McpServer

__all__ = ["ServerPool"]

logger = logging.getLogger("toolmesh.gateway")


@dataclass(eq=False)
class _Pooled:
    key: Hashable
    ready: anyio.Event = field(default_factory=anyio.Event)
    close: anyio.Event = field(default_factory=anyio.Event)
    closed: anyio.Event = field(default_factory=anyio.Event)
    registry: ToolRegistry | None = None
    error: BaseException | None = None
    users: int = 0
    idle_since: float = field(default_factory=time.monotonic)
    transient: bool = False


class ServerPool:
    """Pooled connections to declared servers, alive while ``async with pool:`` runs."""

    def __init__(self, *, idle_seconds: float, size: int) -> None:
        self._idle = idle_seconds
        self._size = size
        self._entries: dict[Hashable, _Pooled] = {}
        self._group: anyio.abc.TaskGroup | None = None

    def __len__(self) -> int:
        return sum(not entry.transient for entry in self._entries.values())

    async def __aenter__(self) -> ServerPool:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._reap, name="toolmesh responses pool reaper")
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._group is not None
        for entry in list(self._entries.values()):
            entry.close.set()
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)
        self._group = None
        self._entries.clear()

    @asynccontextmanager
    async def lease(self, key: Hashable, spec: McpServer | Callable[[], McpServer]) -> AsyncIterator[ToolRegistry]:
        """A connected one-server registry for ``spec`` for the block (see ``acquire``)."""
        registry, release = await self.acquire(key, spec)
        try:
            yield registry
        finally:
            release()

    async def acquire(
        self, key: Hashable, spec: McpServer | Callable[[], McpServer]
    ) -> tuple[ToolRegistry, Callable[[], None]]:
        """A connected one-server registry for ``spec`` (the pooled one for ``key`` when there is one).

        ``spec`` may be a function making the spec, called only when a connection is made.

        Returns:
            The registry and the function that gives it back (call it exactly once).

        Raises:
            ServerConnectionError: when the server cannot be connected or listed (nothing is kept).
            RuntimeError: outside ``async with pool``.
        """
        if self._group is None:
            raise RuntimeError("the server pool is not running")
        entry = self._entries.get(key)
        if entry is None or entry.close.is_set():
            server = spec if isinstance(spec, McpServer) else spec()
            entry = _Pooled(key)
            if len(self) >= self._size and not self._evict_one():
                entry.transient = True
            else:
                self._entries[key] = entry
            self._group.start_soon(self._hold, entry, server, name=f"toolmesh responses pool {server.label}")
        entry.users += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            entry.users -= 1
            entry.idle_since = time.monotonic()
            if entry.error is not None or (entry.transient and not entry.users):
                self._forget(entry)

        try:
            await entry.ready.wait()
        except BaseException:
            release()
            raise
        if entry.error is not None or entry.registry is None:
            release()
            raise entry.error or RuntimeError("the pooled connection closed")
        return entry.registry, release

    def _forget(self, entry: _Pooled) -> None:
        entry.close.set()
        if self._entries.get(entry.key) is entry:
            del self._entries[entry.key]

    def _evict_one(self) -> bool:
        idle = [entry for entry in self._entries.values() if not entry.users and entry.ready.is_set()]
        if not idle:
            return False
        self._forget(min(idle, key=lambda entry: entry.idle_since))
        return True

    async def _hold(self, entry: _Pooled, spec: McpServer) -> None:
        try:
            async with ToolRegistry(names=NamePolicy(dedupe=True)) as registry:
                try:
                    await registry.connect(spec)
                except Exception as exc:
                    entry.error = exc
                    return
                entry.registry = registry
                entry.ready.set()
                await entry.close.wait()
        except Exception as exc:  # closing failed: the connection is gone either way
            logger.debug("closing a pooled MCP connection failed: %r", exc)
            entry.error = entry.error or exc
        finally:
            entry.registry = None
            entry.ready.set()
            entry.closed.set()
            if entry.error is not None and self._entries.get(entry.key) is entry:
                del self._entries[entry.key]

    async def _reap(self) -> None:
        while True:
            await anyio.sleep(min(self._idle / 2, 30.0))
            now = time.monotonic()
            for entry in list(self._entries.values()):
                if not entry.users and entry.ready.is_set() and now - entry.idle_since >= self._idle:
                    self._forget(entry)
