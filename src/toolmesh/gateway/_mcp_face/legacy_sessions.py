"""``LegacySessions``: a face's handshake-era (2025-11-25) connections, kept while each is open.

A list-changed notification, a resource update or a log message for a 2025-11-25 client
needs that client's connection; the SDK offers it to handlers only for the length of a
request. So the face keeps one session per connection here, with what the client asked
of it: its log level and its resource subscriptions.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import get_args

import mcp_types
from mcp.server.session import ServerSession

__all__ = ["LegacySessions"]

_SEVERITY = {level: rank for rank, level in enumerate(get_args(mcp_types.LoggingLevel))}
"""MCP log level -> its rank, debug (0) to emergency (7)."""


class LegacySessions:
    """The handshake-era connections of one face, kept until each connection closes.

    The SDK hands handlers a per-request ``ServerSession``; its connection-wide channel
    (the one a list-changed notification travels on) is the same for every request of
    a connection, so one session per connection is kept, keyed by the connection.
    Reading the connection off the session is the one place this module touches an SDK
    private attribute (``ServerSession._connection``): the SDK offers no other handle.
    """

    def __init__(self, release: Callable[[int, set[str]], Awaitable[None]]) -> None:
        """Args:
        release: Lets go of a closed connection's resource subscriptions (its key, its URIs).
        """
        self._release = release
        self._by_connection: dict[int, ServerSession] = {}
        self._log_levels: dict[int, int] = {}
        """Connection -> the lowest severity (``_SEVERITY`` rank) its ``logging/setLevel`` asked for."""
        self._subscriptions: dict[int, set[str]] = {}
        """Connection -> the resource URIs it subscribed to."""
        self._session_ids: dict[int, str | None] = {}
        """Connection -> its ``Mcp-Session-Id`` (None over stdio and in memory)."""

    def remember(self, session: ServerSession) -> int | None:
        """Keep ``session``'s connection until it closes; its key, or None when it has no connection."""
        connection = getattr(session, "_connection", None)
        if connection is None:
            return None
        key = id(connection)
        if key in self._by_connection:
            return key
        self._by_connection[key] = session
        session_id = getattr(connection, "session_id", None)
        self._session_ids[key] = session_id if isinstance(session_id, str) else None
        connection.exit_stack.push_async_callback(self._closed, key)
        return key

    async def _closed(self, key: int) -> None:
        self._by_connection.pop(key, None)
        self._session_ids.pop(key, None)
        self._log_levels.pop(key, None)
        uris = self._subscriptions.pop(key, set())
        if uris:
            await self._release(key, uris)

    def subscribed_to(self, uri: str) -> list[ServerSession]:
        """The open connections subscribed to ``uri``."""
        keys = [key for key, uris in self._subscriptions.items() if uri in uris]
        return [self._by_connection[key] for key in keys if key in self._by_connection]

    def subscribe(self, key: int, uri: str, on: bool = True) -> None:
        """Record (``on``) or drop the connection's subscription to ``uri``."""
        if on:
            self._subscriptions.setdefault(key, set()).add(uri)
        else:
            self._subscriptions.get(key, set()).discard(uri)

    def set_log_level(self, session: ServerSession, level: str) -> None:
        """Send this connection the log messages at ``level`` and above from now on."""
        key = self.remember(session)
        if key is not None:
            self._log_levels[key] = _SEVERITY[level]

    def wants_log(self, session: ServerSession, level: str) -> bool:
        """Whether the connection asked for messages at ``level`` (all of them, until it sets a level)."""
        connection = getattr(session, "_connection", None)
        floor = self._log_levels.get(id(connection)) if connection is not None else None
        return floor is None or _SEVERITY.get(level, len(_SEVERITY)) >= floor

    def __len__(self) -> int:
        return len(self._by_connection)

    def all(self) -> list[tuple[ServerSession, str | None]]:
        """Every open connection's session, with its ``Mcp-Session-Id`` (None without one)."""
        return [(session, self._session_ids.get(key)) for key, session in self._by_connection.items()]
