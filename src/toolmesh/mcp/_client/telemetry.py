"""Configured secrets kept out of every log record and every MCP SDK span while a session is up.

A connection's secrets (``Secrets.of(spec)``: header and ``env`` values, URL tokens,
flagged ``args``, and the credentials its ``auth`` put on requests) reach more than
toolmesh's own text: the SDK logs full URLs (``Connecting to StreamableHTTP endpoint:
...?token=...``) and every message it receives at DEBUG, ``httpx2`` logs each request's
URL, and the SDK's own spans take a JSON-RPC error's message (which a server may fill
with the ``Authorization`` header it got) as their status. ``TELEMETRY_GUARD`` holds the
secrets of every connection with a session up (``hold`` / ``update`` / ``release``) and
stars them out of:

- **log records**, of any logger (toolmesh, ``mcp``, ``client``, ``httpx2``,
  ``httpcore2``, ``asyncio``, the host's): a log record factory wrapped around the
  process's own redacts each record as it is made, before any filter or handler sees it:
  its message (then kept as plain text without arguments), a secret in arguments the
  message does not show, the exception it carries (redacted in place along its causes,
  and its text) and its stack;
- **the SDK's spans** (``sdk_spans``): a tracer in front of the SDK's own redacts each
  span's name, attributes, events, links and status as they are set.

Both are put in place at the first ``hold`` (and again at a later one when something
replaced them) and stay: with nothing held they hand records and spans through
untouched, so whether the host installs its logging or its tracer provider before or
after the registry makes no difference. toolmesh's own spans never hold server text.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import traceback
from typing import Any

from toolmesh.mcp._spec.secrets import Secrets

from . import sdk_spans

__all__ = ["TELEMETRY_GUARD", "TelemetryGuard", "redact_record"]

logger = logging.getLogger("toolmesh.mcp")


class TelemetryGuard:
    """The secrets of every connection with a session up, starred out of log records and SDK spans."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[object, tuple[Secrets, int]] = {}
        self._warned = False
        self.secrets = Secrets()
        """The union of the held secrets: what is starred out right now."""

    def hold(self, owner: object, secrets: Secrets) -> None:
        """Star ``secrets`` out until ``owner`` releases them as often as it held them."""
        with self._lock:
            _, count = self._held.get(owner, (secrets, 0))
            self._held[owner] = (secrets, count + 1)
            self._update()
            self._install()

    def update(self, owner: object, secrets: Secrets) -> None:
        """Replace what ``owner`` holds (it learned a credential); nothing when it holds nothing."""
        with self._lock:
            if owner in self._held:
                self._held[owner] = (secrets, self._held[owner][1])
                self._update()

    def release(self, owner: object) -> None:
        """Undo one ``hold`` of ``owner``; its secrets are no longer starred out after the last."""
        with self._lock:
            held = self._held.get(owner)
            if held is None:
                return
            if held[1] > 1:
                self._held[owner] = (held[0], held[1] - 1)
            else:
                del self._held[owner]
            self._update()

    def current(self) -> Secrets:
        """What is starred out right now (read by the SDK's span wrapper at each change)."""
        return self.secrets

    def _update(self) -> None:
        values = {value for secrets, _ in self._held.values() for value in secrets.values}
        self.secrets = Secrets(tuple(sorted(values, key=lambda s: (-len(s), s))))

    def _install(self) -> None:
        factory = logging.getLogRecordFactory()
        if not isinstance(factory, _RedactingRecordFactory):
            logging.setLogRecordFactory(_RedactingRecordFactory(factory, self))
        if not sdk_spans.install(self.current) and not self._warned:
            self._warned = True
            logger.warning(
                "toolmesh cannot reach the MCP SDK's tracer (mcp.shared._otel._tracer) in this SDK version: "
                "the SDK's own spans may hold configured secrets"
            )


class _RedactingRecordFactory:
    """The process's log record factory, with ``redact_record`` applied to what it makes."""

    def __init__(self, inner: Any, guard: TelemetryGuard) -> None:
        self.inner = inner
        self._guard = guard

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record: logging.LogRecord = self.inner(*args, **kwargs)
        secrets = self._guard.secrets
        if secrets:
            redact_record(record, secrets)
        return record


def redact_record(record: logging.LogRecord, secrets: Secrets) -> None:
    """Star ``secrets`` out of ``record``: its message and arguments, exception and stack.

    A record whose message or arguments hold a secret keeps its redacted message as plain
    text (``args`` None), so no handler can format the secret back in. The exception it
    carries is redacted in place (its arguments and text attributes along its causes, as
    toolmesh does with its own errors) and its formatted text is kept redacted, so
    formatters that read either find no secret.
    """
    try:
        message = record.getMessage()
    except Exception:  # a broken record is the handler's to report, with its own message
        return
    clean = secrets.redact(message)
    if clean is not message or (record.args and secrets.found_in(repr(record.args))):
        record.msg, record.args = clean, None
    exc = record.exc_info[1] if record.exc_info else None
    if exc is not None:
        text = "".join(traceback.format_exception(exc))
        if secrets.found_in(text):
            with contextlib.suppress(Exception):  # a type refusing new arguments: the text below is clean anyway
                secrets.redact_exception(exc)
            record.exc_text = secrets.redact(logging.Formatter().formatException(record.exc_info))  # type: ignore[arg-type]
    if record.stack_info:
        record.stack_info = secrets.redact(record.stack_info)


TELEMETRY_GUARD = TelemetryGuard()
"""The process's one guard (logging and the SDK's tracer are process-wide)."""
