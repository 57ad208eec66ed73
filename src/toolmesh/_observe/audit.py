"""``AuditLog``: one JSON line per call, to a ``logging`` logger (a file through its handler).

A line says when the call ended, who made it (the identity's subject, client id and
issuer, never a token), through which profile, which tool (model-visible and wire name) of
which server, how it ended (disposition and error kind) and how long the tool ran, with
a SHA-256 of the arguments; the arguments themselves only with ``include_arguments``.
Errors' messages and results' texts are never written.

Secrets: before a line is made, every configured secret toolmesh knows is starred out of
it (the secrets of the connected servers, which the telemetry guard holds: header and
``env`` values, URL tokens, flagged ``args``, sent credentials; plus ``secrets`` given
here, such as the gateway's own bearer tokens), and so is every string shaped like a JWT
(an access token a model copied into a tool's arguments). The arguments are hashed after
that, so the hash of arguments holding a secret cannot be checked against a guess of it.

Rotation is the logging setup's: ``audit_file_handler`` gives a ``WatchedFileHandler``,
which reopens its file when logrotate moved it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import logging.handlers
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from toolmesh.mcp._client.telemetry import TELEMETRY_GUARD
from toolmesh.mcp._spec.secrets import Secrets

from .observer import CallObserver, RowLookup
from .record import CallRecord

__all__ = ["AUDIT_LOGGER", "AuditLog", "audit_file_handler", "audit_line"]

ONLY_JWTS = Secrets(jwts=True)
"""What an audit line stars out besides the telemetry guard's secrets when it is given none."""
AUDIT_LOGGER = "toolmesh.audit"
"""The logger audit lines go to unless another is given."""


class AuditLog(CallObserver):
    """Audit every call as one JSON line (a ``CallObserver``: put it among a turn's hooks, first).

    ::

        audit = AuditLog()                      # lines to the "toolmesh.audit" logger, at INFO
        results = await run_tool_calls(snapshot, calls, hooks=[audit, *policy])

    Args:
        logger: The logger (or its name) the lines go to, at INFO. Nothing is made while
            it is not enabled for INFO.
        include_arguments: Write the arguments too (secrets starred out), not only their hash.
        secrets: More strings to star out besides the connected servers' (the gateway's
            bearer tokens, say); values shorter than 8 characters are not secrets. Strings
            shaped like a JWT are starred out whatever is given.
        rows: As ``CallObserver``: where a refused call's row is found (``registry.get``).
        profile: As ``CallObserver``.
    """

    def __init__(
        self,
        logger: logging.Logger | str = AUDIT_LOGGER,
        *,
        include_arguments: bool = False,
        secrets: Iterable[str] = (),
        rows: RowLookup | None = None,
        profile: str | None = None,
    ) -> None:
        super().__init__(rows=rows, profile=profile)
        self.logger = logging.getLogger(logger) if isinstance(logger, str) else logger
        """Where the lines go."""
        self.include_arguments = include_arguments
        """Whether the arguments themselves are written."""
        self._secrets = Secrets.from_values(secrets, jwts=True)

    def __repr__(self) -> str:
        return f"AuditLog({self.logger.name!r}, include_arguments={self.include_arguments!r})"

    def observing(self) -> bool:
        """Whether the logger is enabled for INFO (nothing is made while it is not)."""
        return self.logger.isEnabledFor(logging.INFO)

    def record(self, record: CallRecord) -> None:
        self.logger.info("%s", audit_line(record, self._secrets, include_arguments=self.include_arguments))


def audit_line(record: CallRecord, secrets: Secrets = ONLY_JWTS, *, include_arguments: bool = False) -> str:
    """The JSON line of one call, with the known secrets starred out (``secrets`` and the telemetry guard's)."""
    held = TELEMETRY_GUARD.secrets
    arguments = _clean(_clean(record.arguments, held), secrets)
    line: dict[str, Any] = {
        "time": datetime.fromtimestamp(record.time, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "call_id": record.call_id,
        "profile": record.profile,
        "subject": record.subject,
        "client_id": record.client_id,
        "issuer": record.issuer,
        "tool": record.tool,
        "wire_name": record.wire_name,
        "server": record.server,
        "kind": record.kind,
        "disposition": record.disposition,
        "error_kind": record.error_kind,
        "duration_ms": round(record.duration * 1000, 3),
        "arguments_sha256": hashlib.sha256(arguments.encode("utf-8", "surrogatepass")).hexdigest(),
    }
    if include_arguments:
        line["arguments"] = arguments
    text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
    return _clean(_clean(text, held), secrets)


def _clean(text: str, secrets: Secrets) -> str:
    return secrets.redact(text) if secrets else text


def audit_file_handler(path: str | os.PathLike[str]) -> logging.Handler:
    """A handler writing audit lines, one per line and nothing else, to ``path`` (appended).

    A ``WatchedFileHandler``: when logrotate (or anything) moves or removes the file, the
    next line goes to a new file at ``path``; use logrotate without ``copytruncate``.
    """
    handler = logging.handlers.WatchedFileHandler(os.fspath(path), encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(message)s"))
    return handler
