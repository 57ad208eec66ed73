"""Running one call of one row: timeout, error mapping, tracing, the result.

The hot path of toolmesh. It pays only for what is configured: a timeout scope only
when a timeout is set, a span only when a real OpenTelemetry tracer provider is
installed (``_hot_path`` says why each speed measure exists).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from time import perf_counter
from types import MappingProxyType
from typing import Any, TypeVar

import anyio
from opentelemetry import trace

from toolmesh._context.asking import HostCallbacks
from toolmesh._context.context import ToolContext
from toolmesh._core.errors import ErrorKind, OutputConversionError, ToolExecutionError
from toolmesh._core.output import ToolOutput, presentation_of, truncate_presentation
from toolmesh._core.result import Disposition, ToolResult, new_result
from toolmesh._core.slots import global_tracer_provider
from toolmesh._rows.native import NativeTool
from toolmesh._rows.rows import Entry, NativeEntry

logger = logging.getLogger("toolmesh")

X = TypeVar("X")
NO_METADATA: Mapping[str, Any] = MappingProxyType({})
"""The metadata of a call whose tool wrote none (shared, read-only)."""
SUCCEEDED = Disposition.SUCCEEDED
_NO_TRACING = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
_SPAN_NAME_CHARS = 128
"""How much of a model-written name no row has goes into a span."""


@dataclass(frozen=True, slots=True)
class DispatchSettings:
    """Registry-wide defaults for running calls."""

    show_error_details: bool = False
    """Show unexpected exceptions' text to the model."""
    default_timeout: float | None = None
    """Seconds any call may take, unless the row or the call says otherwise."""
    tracer_provider: trace.TracerProvider | None = None
    """Where spans go; the global provider when None."""
    callbacks: HostCallbacks | None = None
    """The registry's default elicitation and sampling callbacks, put on each call's context."""
    _tracer_cache: list[tuple[trace.TracerProvider | None, trace.Tracer | None]] = field(
        default_factory=lambda: [(None, None)], init=False, repr=False, compare=False
    )
    """The last (provider, tracer) pair: a provider's tracer is made once, not per call."""
    plain: bool = field(init=False, repr=False, compare=False)
    """No default timeout and no tracer provider of the registry's own: a call may run plain."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "plain", self.default_timeout is None and self.tracer_provider is None)

    def tracer(self) -> trace.Tracer | None:
        """A tracer when a real provider is installed; None means "do not trace"."""
        provider = self.tracer_provider or global_tracer_provider()
        if provider is None:
            return None
        cached_provider, tracer = self._tracer_cache[0]
        if cached_provider is provider:
            return tracer
        tracer = None if isinstance(provider, _NO_TRACING) else provider.get_tracer("toolmesh")
        self._tracer_cache[0] = (provider, tracer)
        return tracer


def unexpected_error(row: Entry, exc: Exception, settings: DispatchSettings) -> ToolExecutionError:
    """Wrap an exception the tool did not raise on purpose: detail for the operator only."""
    if isinstance(exc, OutputConversionError):
        message = f"tool {row.name!r} returned a value with no output form: {exc}"
    else:
        message = f"tool {row.name!r} raised {type(exc).__name__}: {exc}"
    show = row.show_error_details if row.show_error_details is not None else settings.show_error_details
    feedback = f"{type(exc).__name__}: {exc}" if show else ErrorKind.INTERNAL.default_feedback
    logger.error("%s", message, exc_info=exc)
    return ToolExecutionError(message, kind=ErrorKind.INTERNAL, cause=exc, model_feedback=feedback)


def call_timeout(row: Entry, ctx: ToolContext[Any] | None, settings: DispatchSettings) -> float | None:
    """The seconds one call may take: its context's, else its row's, else the registry's default.

    The one place that rule is written; None means no limit.
    """
    if ctx is not None and ctx.timeout is not None:
        return ctx.timeout
    if row.timeout is not None:
        return row.timeout
    return settings.default_timeout


def _timeout_error(row: Entry, seconds: float) -> ToolExecutionError:
    return ToolExecutionError(
        f"tool {row.name!r} did not finish within {seconds:g}s",
        kind=ErrorKind.TIMEOUT,
        model_feedback=f"The tool {row.name!r} did not finish within {seconds:g} seconds. You may try again.",
    )


async def guarded(
    row: Entry,
    ctx: ToolContext[Any],
    settings: DispatchSettings,
    call: Callable[..., Awaitable[X]],
    *args: Any,
) -> X:
    """Await ``call(*args)`` under the call's timeout; every failure becomes ToolExecutionError.

    Cancellation of the awaiting task is never caught: it propagates to the caller.

    Raises:
        ToolExecutionError: for anything the call did wrong.
    """
    timeout = call_timeout(row, ctx, settings)
    try:
        if timeout is None:
            return await call(*args)
        with anyio.move_on_after(timeout):
            return await call(*args)
        # reached only when the scope's deadline cancelled the call
        raise _timeout_error(row, timeout)
    except ToolExecutionError:
        raise
    except Exception as exc:
        raise unexpected_error(row, exc, settings) from exc


def execute(
    row: Entry,
    arguments: str | Mapping[str, Any] | None,
    ctx: ToolContext[Any] | None,
    settings: DispatchSettings,
) -> Coroutine[Any, Any, ToolResult]:
    """Dispatch one call to ``row``: a coroutine describing what happened; raises only on cancellation.

    A plain function handing back the coroutine of the call, so an untraced dispatch
    has one coroutine layer less. ``Catalog.dispatch`` runs a plain async native tool
    (``NativeEntry.plain_tool``) itself when ``DispatchSettings.plain`` and nothing else
    asks for a timeout or a span: its context copy would be seen by nobody.
    """
    tracer = settings.tracer()
    call_ctx = ToolContext.for_call(ctx, row.name)
    if settings.callbacks is not None:
        settings.callbacks.fill(call_ctx)
    if tracer is None:
        return _execute(row, arguments, call_ctx, settings)
    return _traced(tracer, row, arguments, call_ctx, settings)


def failed(
    row: Entry, error: ToolExecutionError, call_id: str, start: float, metadata: Mapping[str, Any] = NO_METADATA
) -> ToolResult:
    """The failed result of one call (the error logged unless it is ``internal``, logged already)."""
    if error.kind is not ErrorKind.INTERNAL:
        logger.info("tool %r failed (%s): %s", row.name, error.kind.value, error.message)
    return ToolResult.failure(call_id, row.name, row.kind, error, metadata=metadata, duration=perf_counter() - start)


async def _traced(
    tracer: trace.Tracer,
    row: Entry,
    arguments: str | Mapping[str, Any] | None,
    ctx: ToolContext[Any],
    settings: DispatchSettings,
) -> ToolResult:
    with open_span(tracer, row.name, row.kind, ctx.call_id) as span:
        result = await _execute(row, arguments, ctx, settings)
        record_outcome(span, result.disposition, result.error)
        return result


def open_span(tracer: trace.Tracer, name: str, kind: str, call_id: str) -> Any:
    """The ``execute_tool {name}`` span of one call (OpenTelemetry GenAI conventions)."""
    return tracer.start_as_current_span(
        f"execute_tool {name}",
        kind=trace.SpanKind.INTERNAL,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "toolmesh.row.kind": kind,
        },
        record_exception=False,
    )


def trace_not_found(result: ToolResult, settings: DispatchSettings) -> ToolResult:
    """Record the span of a call of a name no row has (when tracing), as every dispatch has one.

    The name is the model's: the span shows at most its first 128 characters.
    """
    tracer = settings.tracer()
    if tracer is not None:
        with open_span(tracer, result.name[:_SPAN_NAME_CHARS], result.kind, result.call_id) as span:
            record_outcome(span, result.disposition, result.error)
    return result


def record_outcome(span: trace.Span, disposition: Disposition, error: ToolExecutionError | None) -> None:
    """Put a call's disposition (and error kind) on its span."""
    span.set_attribute("toolmesh.disposition", disposition.value)
    if error is not None:
        span.set_attribute("error.type", error.kind.value)
        span.set_status(trace.StatusCode.ERROR, error.kind.value)


async def _execute(
    row: Entry, arguments: str | Mapping[str, Any] | None, ctx: ToolContext[Any], settings: DispatchSettings
) -> ToolResult:
    start = perf_counter()
    try:
        if call_timeout(row, ctx, settings) is None:
            # guarded() inlined for the common untimed call: one coroutine layer less
            try:
                output: ToolOutput = await row.invoke(arguments, ctx)
            except ToolExecutionError:
                raise
            except Exception as exc:
                raise unexpected_error(row, exc, settings) from exc
        else:
            output = await guarded(row, ctx, settings, row.invoke, arguments, ctx)
    except ToolExecutionError as error:
        return failed(row, error, ctx.call_id, start, ctx.metadata or NO_METADATA)
    limit = row.max_presentation_chars
    shown = output if output.__class__ is ToolOutput else presentation_of(output)
    return new_result(
        ctx.call_id,
        row.name,
        row.kind,
        SUCCEEDED,
        output,
        shown if limit is None else truncate_presentation(shown, limit),
        None,
        ctx.metadata or NO_METADATA,
        perf_counter() - start,
    )


async def run_native(
    row: NativeEntry,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    ctx: ToolContext[Any] | None,
    settings: DispatchSettings,
) -> Any:
    """``registry.dispatch_native``: the tool's own return value, or a raised ``ToolExecutionError``.

    The Python arguments are bound and validated by the tool's argument model, and the
    call runs under the row's timeout and tracing, as ``execute`` runs a model's call.
    A plain async tool (it takes no context) called untraced and untimed runs at once:
    its own context copy would be seen by nobody, so none is made.
    """
    native = row.tool
    tracer = settings.tracer()
    if tracer is None and native.plain_async and call_timeout(row, ctx, settings) is None:
        try:
            return await native.fn(**native.validate_call(args, kwargs))
        except ToolExecutionError:
            raise
        except Exception as exc:
            raise unexpected_error(row, exc, settings) from exc
    call_ctx = ToolContext.for_call(ctx, row.name)
    if settings.callbacks is not None:
        settings.callbacks.fill(call_ctx)
    if tracer is None:
        return await guarded(row, call_ctx, settings, _run_native, native, args, kwargs, call_ctx)
    with open_span(tracer, row.name, row.kind, call_ctx.call_id) as span:
        try:
            value = await guarded(row, call_ctx, settings, _run_native, native, args, kwargs, call_ctx)
        except ToolExecutionError as error:
            record_outcome(span, Disposition.FAILED, error)
            raise
        record_outcome(span, Disposition.SUCCEEDED, None)
        return value


async def _run_native(
    native: NativeTool[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any], ctx: ToolContext[Any]
) -> Any:
    return await native.run(native.validate_call(args, kwargs), ctx)
