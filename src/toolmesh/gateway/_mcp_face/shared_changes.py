"""Catalog changes carried between replicas over the shared state's pub/sub.

Each replica has its own registry and its own sessions to the upstream servers. An
upstream server may announce a change to one session only (the one whose call
caused it), and a native change happens in one process. So every change a replica's
registry reports is published on the channel ``catalog``; every other replica then
refreshes that server's rows (a change there is reported, and published, in turn:
replicas that already have it find nothing new, so it stops) and tells its own
clients, on their ``subscriptions/listen`` streams and legacy sessions, that the list
changed. After a subscription was lost and came back (``RESYNC``), every server is
refreshed and every client told, since changes may have been missed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import anyio

from toolmesh._dispatch.changes import CatalogChange
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._state.backend import Resync, StateBackend

__all__ = ["CHANNEL", "SharedChanges"]

logger = logging.getLogger("toolmesh.gateway")

CHANNEL = "catalog"
_MAX_MESSAGE = 4096


class SharedChanges:
    """Publishes this replica's catalog changes and applies the other replicas' ones."""

    def __init__(
        self, state: StateBackend, registry: ToolRegistry, tell_clients: Callable[[str | None], None], replica: str
    ) -> None:
        """Args:
        state: The shared backend.
        registry: This replica's catalog.
        tell_clients: Marks the catalog changed for this replica's clients (the server's label, or None).
        replica: This replica's name (``McpGateway.replica``, the one its retries and answers are routed by).
        """
        self.replica = replica
        """This replica's id in the messages (its own come back and are skipped)."""
        self._state = state
        self._registry = registry
        self._tell = tell_clients
        self._outbox: set[str | None] = set()
        self._wake = anyio.Event()

    def local(self, change: CatalogChange) -> None:
        """Queue a change this replica's registry reported, for the other replicas."""
        self._outbox.add(change.server)
        self._wake.set()

    async def run(self) -> None:
        """Publish and apply changes until cancelled."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._publish, name="toolmesh shared catalog changes: publish")
            await self._apply()

    async def _publish(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            servers, self._outbox = self._outbox, set()
            for server in servers:
                message = json.dumps({"replica": self.replica, "server": server}).encode()
                try:
                    await self._state.publish(CHANNEL, message)
                except Exception as exc:  # the others refresh everything when their subscription is back
                    logger.warning("catalog change of %r not sent to the other replicas: %s", server, exc)

    async def _apply(self) -> None:
        while True:
            try:
                async with self._state.subscribe(CHANNEL) as messages:
                    async for message in messages:
                        if isinstance(message, Resync):
                            await self._refresh_all()
                        else:
                            await self._received(message)
            except Exception as exc:  # never the gateway's end: its clients are served without the others' changes
                logger.warning("catalog changes of the other replicas not heard: %s; trying again", exc)
                await anyio.sleep(1.0)

    async def _received(self, message: bytes) -> None:
        try:
            decoded = json.loads(message[:_MAX_MESSAGE]) if len(message) <= _MAX_MESSAGE else None
        except ValueError:
            decoded = None
        if not isinstance(decoded, dict) or not isinstance(decoded.get("replica"), str):
            logger.warning("ignored a malformed catalog change message (%d bytes)", len(message))
            return
        server = decoded.get("server")
        if decoded["replica"] == self.replica or not (server is None or isinstance(server, str)):
            return
        if server is not None and any(c.label == server for c in self._registry.connections()):
            await self._refresh(server)
        self._tell(server)

    async def _refresh_all(self) -> None:
        for connection in self._registry.connections():
            await self._refresh(connection.label)
        self._tell(None)

    async def _refresh(self, label: str) -> None:
        try:
            await self._registry.refresh(label)
        except Exception as exc:  # the server's own trouble: its rows stay as they are
            logger.warning("refreshing %r after another replica's change failed: %s", label, exc)
