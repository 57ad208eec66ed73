"""The MCP SDK's spans with configured secrets starred out: a tracer in front of the SDK's own.

The SDK (``mcp`` 2.x) makes every span of its own through one module-level tracer,
``mcp.shared._otel._tracer``: a client span ``MCP send {method} {tool}`` for each
request (with the JSON-RPC error message of a failed one as its status, and an
``exception`` event for an error raised through it), and a server span
``{method} {tool}`` for each request a server of the SDK answers. The SDK has no switch
or hook for what goes on them. A span processor cannot help either: it is given a
finished span read-only, and only after the processors the host added before it (an
exporting one among them). So ``install`` puts a ``RedactingTracer`` in that slot: it
starts each span with the tracer it replaced (so the host's provider, sampler and
processors apply as before, whenever that provider was installed) and hands the SDK a
``RedactingSpan``, which stars the secrets out of whatever is set on it: its name,
attributes, events (an exception's message and stack trace), links and status.

This module is the one place that touches the SDK's private tracer slot. When a new
SDK moves it, ``install`` answers False and the guard says so in a warning.
"""

from __future__ import annotations

import importlib
import traceback
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode
from opentelemetry.util import types as otel_types

from toolmesh.mcp._spec.secrets import Secrets

__all__ = ["RedactingSpan", "RedactingTracer", "install", "redact_attributes"]

_SDK_TRACER_MODULE = "mcp.shared._otel"
_SDK_TRACER_SLOT = "_tracer"


def install(secrets: Callable[[], Secrets]) -> bool:
    """Put a ``RedactingTracer`` reading ``secrets()`` in front of the SDK's tracer.

    Idempotent; run again after someone replaced the slot, it wraps their tracer.

    Returns:
        Whether the SDK's spans now go through the redacting tracer.
    """
    try:
        module = importlib.import_module(_SDK_TRACER_MODULE)
    except ImportError:
        return False
    current = getattr(module, _SDK_TRACER_SLOT, None)
    if not isinstance(current, trace.Tracer):
        return False
    if not isinstance(current, RedactingTracer):
        setattr(module, _SDK_TRACER_SLOT, RedactingTracer(current, secrets))
    return True


def redact_attributes(secrets: Secrets, attributes: otel_types.Attributes) -> otel_types.Attributes:
    """``attributes`` with every secret starred out of their string values (the same object when none is)."""
    if not attributes:
        return attributes
    clean = {key: _value(secrets, value) for key, value in attributes.items()}
    if all(clean[key] is value for key, value in attributes.items()):
        return attributes
    return clean


def _value(secrets: Secrets, value: otel_types.AttributeValue) -> otel_types.AttributeValue:
    if isinstance(value, str):
        return secrets.redact(value)
    if isinstance(value, Sequence) and any(isinstance(item, str) and secrets.found_in(item) for item in value):
        return [secrets.redact(item) if isinstance(item, str) else item for item in value]
    return value


class RedactingTracer(trace.Tracer):
    """A tracer that starts its spans with ``inner`` and stars the current secrets out of them."""

    def __init__(self, inner: trace.Tracer, secrets: Callable[[], Secrets]) -> None:
        """Args:
        inner: The tracer that makes the spans (the SDK's own, usually OpenTelemetry's proxy
            of the global provider's).
        secrets: What to star out, read again at each span and at each change of one.
        """
        self.inner = inner
        self._secrets = secrets

    def start_span(
        self,
        name: str,
        context: otel_context.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: otel_types.Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> trace.Span:
        """The inner tracer's span, started with clean name, attributes and links, wrapped to stay clean."""
        secrets = self._secrets()
        if secrets:
            name = secrets.redact(name)
            attributes = redact_attributes(secrets, attributes)
            if links:
                links = [Link(link.context, redact_attributes(secrets, link.attributes)) for link in links]
        span = self.inner.start_span(
            name, context, kind, attributes, links, start_time, record_exception, set_status_on_exception
        )
        if not secrets or not span.is_recording():
            return span
        return RedactingSpan(span, self._secrets, record_exception, set_status_on_exception)

    @contextmanager  # OpenTelemetry's own decorator (``_agnosticcontextmanager``) is private
    def start_as_current_span(  # type: ignore[override]
        self,
        name: str,
        context: otel_context.Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: otel_types.Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Iterator[trace.Span]:
        """``start_span`` made the current span, as the SDK's tracer does it."""
        span = self.start_span(
            name, context, kind, attributes, links, start_time, record_exception, set_status_on_exception
        )
        with trace.use_span(
            span,
            end_on_exit=end_on_exit,
            record_exception=record_exception,
            set_status_on_exception=set_status_on_exception,
        ) as current:
            yield current


class RedactingSpan(trace.Span):
    """A recording span whose every name, attribute, event, link and status passes through ``redact``."""

    def __init__(
        self,
        inner: trace.Span,
        secrets: Callable[[], Secrets],
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> None:
        self.inner = inner
        self._secrets = secrets
        self._record_exception = record_exception
        self._set_status_on_exception = set_status_on_exception

    def __getattr__(self, name: str) -> Any:
        """What a reader of the SDK's span reads (``name``, ``attributes``, ``status``)."""
        if name == "inner":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"RedactingSpan({self.inner!r})"

    def end(self, end_time: int | None = None) -> None:
        self.inner.end(end_time)

    def get_span_context(self) -> SpanContext:
        return self.inner.get_span_context()

    def is_recording(self) -> bool:
        return self.inner.is_recording()

    def set_attributes(self, attributes: Mapping[str, otel_types.AttributeValue]) -> None:
        self.inner.set_attributes(redact_attributes(self._secrets(), attributes) or {})

    def set_attribute(self, key: str, value: otel_types.AttributeValue) -> None:
        self.inner.set_attribute(key, _value(self._secrets(), value))

    def add_event(self, name: str, attributes: otel_types.Attributes = None, timestamp: int | None = None) -> None:
        secrets = self._secrets()
        self.inner.add_event(secrets.redact(name), redact_attributes(secrets, attributes), timestamp)

    def add_link(self, context: SpanContext, attributes: otel_types.Attributes = None) -> None:
        self.inner.add_link(context, redact_attributes(self._secrets(), attributes))

    def update_name(self, name: str) -> None:
        self.inner.update_name(self._secrets().redact(name))

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        secrets = self._secrets()
        if isinstance(status, Status) and status.description:
            status = Status(status.status_code, secrets.redact(status.description))
        self.inner.set_status(status, None if description is None else secrets.redact(description))

    def record_exception(
        self,
        exception: BaseException,
        attributes: otel_types.Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """The ``exception`` event (OpenTelemetry's conventions), its message and stack trace starred out."""
        secrets = self._secrets()
        message, stacktrace = str(exception), "".join(traceback.format_exception(exception))
        attributes = redact_attributes(secrets, attributes)
        if not secrets.found_in(message) and not secrets.found_in(stacktrace):
            self.inner.record_exception(exception, attributes, timestamp, escaped)
            return
        kind = type(exception)
        event: dict[str, otel_types.AttributeValue] = {
            "exception.type": kind.__qualname__
            if kind.__module__ in ("builtins", "")
            else f"{kind.__module__}.{kind.__qualname__}",
            "exception.message": secrets.redact(message),
            "exception.stacktrace": secrets.redact(stacktrace),
            "exception.escaped": str(escaped),
        }
        event.update(attributes or {})
        self.inner.add_event("exception", event, timestamp)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: types.TracebackType | None,
    ) -> None:
        """End the span; as the SDK's span does, record an exception leaving it first."""
        if exc_type is not None and exc_val is not None and self.is_recording():
            if self._record_exception:
                self.record_exception(exc_val, escaped=True)
            if self._set_status_on_exception:
                self.set_status(Status(StatusCode.ERROR, f"{exc_type.__name__}: {exc_val}"))
        self.end()
