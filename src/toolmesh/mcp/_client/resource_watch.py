"""Resource subscriptions of one connection, whatever protocol version its sessions speak.

The connection's consumers subscribe to resource URIs here; the set outlives sessions
(a reconnect subscribes again, and reports every URI updated: what changed while no
session was up is not known) and each update the server announces goes to
``on_updated(label, uri)``:

* 2025-11-25 sessions: ``resources/subscribe`` / ``resources/unsubscribe`` requests
  (the server's refusal is the caller's error), ``notifications/resources/updated``
  from the server (``Session`` hands them over);
* 2026-07-28 sessions, where those methods do not exist: one ``subscriptions/listen``
  stream whose filter is the set's URIs, re-opened when the set changes (events are
  not replayed: an update in the instant between two streams is not seen) and after
  a drop (then every subscribed URI is reported updated, since what changed meanwhile
  is not known). Subscribing returns once a stream covering the URI is acknowledged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import mcp_types
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .wire import _EXCHANGE

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["ResourceWatch", "subscribe"]

logger = logging.getLogger("toolmesh.mcp")

_ACK_WAIT = 10.0
"""Seconds a subscription waits for the listen stream covering it before going on without it."""
_RETRY = 1.0
_RETRY_MAX = 30.0


class ResourceWatch:
    """The URIs a connection is subscribed to, and where the server's updates about them go."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.uris: set[str] = set()
        """The subscribed URIs (kept across sessions)."""
        self.on_updated: Callable[[str, str], None] | None = None
        """Called with ``(label, uri)`` when the server says a subscribed resource changed."""
        self._covered: frozenset[str] = frozenset()
        """The URIs the open 2026-07-28 listen stream was acknowledged for."""
        self._wanted = anyio.Event()
        """Set when ``uris`` changed: the listen stream is re-opened."""
        self._acked = anyio.Event()
        """Set (and replaced) each time a listen stream is acknowledged or fails."""
        self._failed = False
        """Whether the last listen stream failed before its acknowledgment."""

    def updated(self, uri: str) -> None:
        """The server announced that ``uri`` changed."""
        if uri in self.uris and self.on_updated is not None:
            try:
                self.on_updated(self.label, uri)
            except Exception:  # a consumer's failure must not end the session's reader
                logger.exception("MCP server %r: a resource-update listener failed", self.label)

    async def add_modern(self, uri: str) -> None:
        """Subscribe ``uri`` on a 2026-07-28 session: re-open the stream, wait (bounded) for its ack."""
        self.uris.add(uri)
        self._wanted.set()
        with anyio.move_on_after(_ACK_WAIT):
            while uri not in self._covered:
                await self._acked.wait()
                if self._failed:
                    return  # the stream failed: it is retried in the background

    def remove_modern(self, uri: str) -> None:
        """Stop following ``uri`` on a 2026-07-28 session."""
        self.uris.discard(uri)
        self._wanted.set()

    async def keep(self, client: Client) -> None:
        """For one session's life (its task group): subscribe its server to the set, follow the set's changes."""
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            for uri in sorted(self.uris):  # a new session after a reconnect: subscribe again
                try:
                    await subscribe(client, uri)
                except Exception as exc:
                    logger.warning("MCP server %r: resubscribing to %r failed: %s", self.label, uri, exc)
                self.updated(uri)  # what changed while no session was up is not known: read it again
            return
        _EXCHANGE.set(None)  # a listen stream is long-lived: no answer-size bound, no status slot
        delay = _RETRY
        dropped = bool(self.uris)  # a new session after a reconnect: report every URI, as after a drop
        while True:
            wanted = frozenset(self.uris)
            self._wanted = anyio.Event()
            if not wanted:
                self._covered = frozenset()
                await self._wanted.wait()
                continue
            try:
                async with client.listen(resource_subscriptions=sorted(wanted)) as subscription:
                    self._acknowledged(wanted)
                    if dropped:  # no replay: whatever changed meanwhile is read again
                        for uri in sorted(wanted):
                            self.updated(uri)
                    delay, dropped = _RETRY, False
                    async with anyio.create_task_group() as group:

                        async def drain() -> None:
                            async for event in subscription:
                                if isinstance(event, ResourceUpdated):
                                    self.updated(event.uri)
                            group.cancel_scope.cancel()

                        group.start_soon(drain)
                        await self._wanted.wait()
                        group.cancel_scope.cancel()
                if self._wanted.is_set():
                    continue  # the set changed: listen again at once
            except Exception as exc:  # a lost stream must not end the session
                logger.debug("MCP server %r: resource subscription stream ended: %r", self.label, exc)
                self._acknowledged(frozenset(), failed=True)
                dropped = True
            await anyio.sleep(delay)
            delay = min(delay * 2, _RETRY_MAX)

    def _acknowledged(self, uris: frozenset[str], *, failed: bool = False) -> None:
        self._covered, self._failed = uris, failed
        acked, self._acked = self._acked, anyio.Event()
        acked.set()


async def subscribe(client: Client, uri: str, *, on: bool = True) -> None:
    """``resources/subscribe`` (``on``) or ``resources/unsubscribe`` of ``uri`` on a 2025-11-25 session."""
    if on:
        request: mcp_types.ClientRequest = mcp_types.SubscribeRequest(params=mcp_types.SubscribeRequestParams(uri=uri))
    else:
        request = mcp_types.UnsubscribeRequest(params=mcp_types.UnsubscribeRequestParams(uri=uri))
    await client.session.send_request(request, mcp_types.EmptyResult)
