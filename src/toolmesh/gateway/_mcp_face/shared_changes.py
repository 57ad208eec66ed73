"""Catalog changes carried between replicas over the shared state's pub/sub.

Each replica has its own registry and its own sessions to the upstream servers. An
upstream server may announce a change to one session only (the one whose call
caused it), and a native change happens in one process. So every change a replica's
registry reports is published on the channel ``catalog``; every other replica then
refreshes that server's rows and tells its own clients, on their
``subscriptions/listen`` streams and legacy sessions, that the list changed. What
that refresh finds is the same change: it is not published again (each replica
refreshes once per change, and no echo comes back).

A change is named by what it led to: a digest of the server's rows after it (the
*state*). Replicas that see one change (the one that made it, the others that
refreshed, those whose own session to the server announced it too) name it alike,
so a replica tells its clients of a state once, however many times it hears of it.
A replica whose own rows of that server did not change (a server of its own under
the same label, native rows) tells the state it was sent.

A 2025-11-25 session is one client however many replicas hold a copy of it, and a
notification any copy sends reaches the client's one GET stream (the session's events
in Redis). So a copy tells its client only after swapping the state into the shared
state (``told:<profile>:<session>:<server>``, ``StateBackend.swap``): the one replica
that finds another state there sends the notification. One notification per change,
whichever replicas hold copies; none lost (a server changing back is a new state
again).

After a subscription was lost and came back (``RESYNC``), every server is refreshed
and every client told (as a state no one told before), since changes may have been missed.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from uuid import uuid4

import anyio

from toolmesh._dispatch.changes import CatalogChange
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._state.backend import Resync, StateBackend

__all__ = ["CHANNEL", "TOLD_TTL", "SharedChanges"]

logger = logging.getLogger("toolmesh.gateway")

CHANNEL = "catalog"
_MAX_MESSAGE = 4096
_MAX_STATE = 64
TOLD_TTL = 1800.0
"""Seconds the state a session was last told of a server is kept (a session's own idle lifetime)."""
_APPLYING: ContextVar[list[str] | None] = ContextVar("toolmesh_applying_change", default=None)
"""While this task applies another replica's change: the states its refresh found (not published again)."""


class SharedChanges:
    """Publishes this replica's catalog changes and applies the other replicas' ones."""

    def __init__(
        self,
        state: StateBackend,
        registry: ToolRegistry,
        tell_clients: Callable[[str | None, str], None],
        replica: str,
    ) -> None:
        """Args:
        state: The shared backend.
        registry: This replica's catalog.
        tell_clients: Marks the catalog changed for this replica's clients: the server's label (None for
            native rows), the state it changed to.
        replica: This replica's name (``McpGateway.replica``, the one its retries and answers are routed by).
        """
        self.replica = replica
        """This replica's id in the messages (its own come back and are skipped)."""
        self._state = state
        self._registry = registry
        self._tell = tell_clients
        self._outbox: dict[str | None, str] = {}
        self._wake = anyio.Event()

    def local(self, change: CatalogChange) -> str:
        """The state a change this replica's registry reported led to; published unless it was found while
        applying another replica's change."""
        state = self.state_of(change.server)
        found = _APPLYING.get()
        if found is not None:
            found.append(state)
        else:
            self._outbox[change.server] = state
            self._wake.set()
        return state

    def state_of(self, server: str | None) -> str:
        """A digest of what clients are shown of ``server``'s rows (None: the native, dynamic and hosted rows)."""
        digest = hashlib.sha256()
        for row in self._registry.entries():
            if (getattr(row, "server", None) if row.kind == "mcp" else None) == server:
                digest.update(repr((row.name, row.kind, row.definition, row.capabilities)).encode())
        return digest.hexdigest()[:32]

    async def tell_session(self, profile: str, session_id: str, states: Mapping[str | None, str]) -> bool:
        """Whether this replica tells session ``session_id`` that servers changed to ``states``: it is the
        one that found another state recorded for the session (of one of them at least).

        When the shared state cannot be reached, True: a client told twice is better than one never told.
        """
        tell = False
        for server, state in states.items():
            name = f"told:{profile}:{session_id}:{server if server is not None else ''}"
            try:
                before = await self._state.swap(name, state.encode(), ttl=TOLD_TTL)
            except Exception as exc:
                logger.warning("a session is told of a change without asking the other replicas: %s", exc)
                return True
            tell = tell or before != state.encode()
        return tell

    async def run(self) -> None:
        """Publish and apply changes until cancelled."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._publish, name="toolmesh shared catalog changes: publish")
            await self._apply()

    async def _publish(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            servers, self._outbox = self._outbox, {}
            for server, state in servers.items():
                message = json.dumps({"replica": self.replica, "server": server, "state": state}).encode()
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
        server, state = decoded.get("server"), decoded.get("state")
        if decoded["replica"] == self.replica or not (server is None or isinstance(server, str)):
            return
        if not isinstance(state, str) or not 0 < len(state) <= _MAX_STATE:
            state = uuid4().hex  # a replica of an older version: its change is told as a new state
        connected = server is not None and any(c.label == server for c in self._registry.connections())
        if connected and server is not None and await self._refresh(server):
            return  # told already, as the state this replica's rows changed to
        self._tell(server, state)

    async def _refresh_all(self) -> None:
        for connection in self._registry.connections():
            await self._refresh(connection.label)
        self._tell(None, uuid4().hex)

    async def _refresh(self, label: str) -> bool:
        """Refresh server ``label``'s rows; whether they changed."""
        found: list[str] = []
        applying = _APPLYING.set(found)
        try:
            await self._registry.refresh(label)
        except Exception as exc:  # the server's own trouble: its rows stay as they are
            logger.warning("refreshing %r after another replica's change failed: %s", label, exc)
        finally:
            _APPLYING.reset(applying)
        return bool(found)
