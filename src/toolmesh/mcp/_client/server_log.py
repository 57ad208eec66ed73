"""A server's log messages (``notifications/message``) as records of Python's ``logging``.

Each record goes to the ``toolmesh.server.<label>`` logger (never to stdout), at the
Python level matching the MCP level, with the spec's secrets redacted. The host sets
the level the server sends at with ``ServerLog.set_level`` (through the registry's
``set_server_log_level``); the level outlives reconnects:

* 2025-11-25 sessions: a ``logging/setLevel`` request, sent only when the server
  advertises ``logging``, and sent again on each new session;
* 2026-07-28 sessions: the per-request ``io.modelcontextprotocol/logLevel`` opt-in in
  ``_meta`` (servers there send log messages only for requests that carry it); a call
  with an ``on_log`` callback opts in at ``debug`` when the host set no level.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Callable
from typing import Any, Literal, get_args

import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolmesh._context.asking import LEVELS

from .in_flight import call_wants_logs

__all__ = ["LoggingLevel", "ServerLog"]

LoggingLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class ServerLog:
    """The log side of one connection: where its server's messages go, and the level asked for."""

    def __init__(self, label: str, redact: Callable[[str], str] | None) -> None:
        self.logger = logging.getLogger(f"toolmesh.server.{label}")
        """Where the server's messages go."""
        self.level: LoggingLevel | None = None
        """The level the host asked for, or None (the server's own default)."""
        self._redact = redact
        self._client: Client | None = None

    def emit(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        """Log one server message (``data`` as text; JSON for anything but a string)."""
        level = LEVELS.get(params.level, logging.WARNING)
        if not self.logger.isEnabledFor(level):
            return
        data = params.data
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        if self._redact is not None:
            text = self._redact(text)
        extra = {"mcp_level": params.level, "mcp_logger": params.logger}
        self.logger.log(level, "%s", text, extra=extra)

    async def attach(self, client: Client) -> None:
        """A new session is up: make it send at the level asked for."""
        self._client = client
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            _stamp_log_level(client, lambda: self.level or ("debug" if call_wants_logs() else None))
        elif self.level is not None:
            await _set_level(client, self.level)

    def detach(self, client: Client) -> None:
        """The session that ``client`` belongs to has ended."""
        if self._client is client:
            self._client = None

    async def set_level(self, level: str) -> None:
        """Ask the server to send messages at ``level`` and above, now and after reconnects.

        Raises:
            ValueError: ``level`` is not one of the eight MCP levels.
        """
        if level not in get_args(LoggingLevel):
            raise ValueError(f"unknown MCP log level {level!r}; use one of {', '.join(get_args(LoggingLevel))}")
        self.level = level  # type: ignore[assignment]  # checked just above
        client = self._client
        if client is not None and client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            await _set_level(client, level)


async def _set_level(client: Client, level: str) -> None:
    """``logging/setLevel`` on a 2025-11-25 session, when the server advertises ``logging``."""
    if client.server_capabilities.logging is None:
        return
    with warnings.catch_warnings():  # deprecated in 2026-07-28 (SEP-2577); the 2025-11-25 way
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.session.set_logging_level(level)  # type: ignore[arg-type]


def _stamp_log_level(client: Client, level: Callable[[], str | None]) -> None:
    """Add the current log level to every request's ``_meta`` on a 2026-07-28 session.

    The SDK takes the level only when the ``Client`` is made, baked into its private
    request stamp; this wraps that stamp so a later ``set_level`` counts. The only reach
    into SDK internals here: when the SDK changes, log messages stop arriving on
    2026-07-28 sessions and the stdio log test fails.
    """
    session: Any = client.session
    inner = session._stamp

    def stamp(data: dict[str, Any], opts: Any) -> None:
        current = level()
        if current is not None:
            data.setdefault("params", {}).setdefault("_meta", {}).setdefault(mcp_types.LOG_LEVEL_META_KEY, current)
        inner(data, opts)

    session._stamp = stamp
