"""``CallMetrics``: OpenTelemetry metrics of calls, after the MCP and GenAI semantic conventions.

Instruments (attribute names are the conventions' where they have one):

================================  =========  ==============================================================
instrument                        kind       what
================================  =========  ==============================================================
``toolmesh.tool.call.duration``   histogram  seconds each call's tool ran, every call (refused and unknown
                                             ones too, at 0 s): ``gen_ai.operation.name`` (``execute_tool``),
                                             ``gen_ai.tool.name``, ``toolmesh.row.kind``,
                                             ``toolmesh.disposition``, ``error.type`` (the error kind),
                                             ``toolmesh.server``, ``toolmesh.profile``
``mcp.client.operation.duration`` histogram  each ``tools/call`` sent to an upstream MCP server (the MCP
                                             convention): ``mcp.method.name``, ``gen_ai.tool.name`` (the
                                             wire name), ``error.type``, ``toolmesh.server``
``toolmesh.tool.call.active``     up-down    calls in flight: ``gen_ai.tool.name``, ``toolmesh.server``,
                                  counter    ``toolmesh.profile``
``toolmesh.mcp.server.up``        gauge      1 while an upstream server's session is up, else 0
                                             (``toolmesh.server``; with ``registry=``)
``toolmesh.mcp.server.reconnects``counter    lost sessions replaced by new ones (``toolmesh.server``)
================================  =========  ==============================================================

Counts of calls and of errors by kind are the histograms' counts (by ``error.type``), as
the conventions intend. A name no row has is counted without ``gen_ai.tool.name``: a
model's invented names must not grow the metrics without bound.

Off costs nothing measurable: with no meter provider (none given, none installed
globally) an observed call costs one slot read (``global_meter_provider``) per event;
the gateway adds the observer only when metrics are configured.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from opentelemetry import metrics

from toolmesh._context.context import ToolContext
from toolmesh._core.slots import global_meter_provider
from toolmesh._rows.rows import Entry

from .observer import CallObserver, RowLookup
from .record import CANCELLED, CallRecord, row_facts

if TYPE_CHECKING:
    from toolmesh._dispatch.registry import ToolRegistry

__all__ = ["DURATION_BUCKETS", "CallMetrics"]

DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""The histograms' bucket bounds in seconds: the MCP semantic conventions' advice."""


def _version() -> str:
    try:
        return version("toolmesh")
    except PackageNotFoundError:  # a source tree on the path, not installed
        return ""


@dataclass(frozen=True, slots=True)
class _Instruments:
    calls: metrics.Histogram
    upstream: metrics.Histogram
    active: metrics.UpDownCounter


class CallMetrics(CallObserver):
    """Record OpenTelemetry metrics of every call (a ``CallObserver``: put it among a turn's hooks, first).

    ::

        metrics = CallMetrics(registry=registry)    # the global meter provider, when one is installed
        results = await run_tool_calls(snapshot, calls, hooks=[metrics, *policy])

    Args:
        meter_provider: Where the instruments live; the global provider when None (no work
            at all while none is installed).
        registry: Report its upstream servers' session health (``toolmesh.mcp.server.up``,
            ``toolmesh.mcp.server.reconnects``), read when the metrics are collected.
        rows: As ``CallObserver``: where a refused call's row is found (``registry.get``).
        profile: As ``CallObserver``.
    """

    def __init__(
        self,
        *,
        meter_provider: metrics.MeterProvider | None = None,
        registry: ToolRegistry | None = None,
        rows: RowLookup | None = None,
        profile: str | None = None,
    ) -> None:
        super().__init__(rows=rows, profile=profile)
        self.meter_provider = meter_provider
        """The provider given (None: the global one)."""
        self._registry = registry
        self._cache: list[tuple[metrics.MeterProvider | None, _Instruments | None]] = [(None, None)]
        """The last (provider, instruments) pair, shared by the profile-bound copies."""

    def __repr__(self) -> str:
        return f"CallMetrics(meter_provider={self.meter_provider!r}, profile={self.profile!r})"

    def instruments(self) -> _Instruments | None:
        """The instruments of the current provider; None when there is none (metrics off)."""
        provider = self.meter_provider or global_meter_provider()
        if provider is None:
            return None
        cached, instruments = self._cache[0]
        if cached is provider:
            return instruments
        instruments = None if isinstance(provider, metrics.NoOpMeterProvider) else self._make(provider)
        self._cache[0] = (provider, instruments)
        return instruments

    def _make(self, provider: metrics.MeterProvider) -> _Instruments:
        meter = provider.get_meter("toolmesh", _version())
        if self._registry is not None:
            registry = self._registry
            meter.create_observable_gauge(
                "toolmesh.mcp.server.up",
                callbacks=[lambda options: _up(registry)],
                description="1 while the upstream MCP server's session is up, else 0.",
            )
            meter.create_observable_counter(
                "toolmesh.mcp.server.reconnects",
                callbacks=[lambda options: _reconnects(registry)],
                unit="{reconnect}",
                description="Lost sessions of the upstream MCP server replaced by new ones.",
            )
        return _Instruments(
            meter.create_histogram(
                "toolmesh.tool.call.duration",
                unit="s",
                description="How long each tool call ran, by tool, server, disposition and error kind.",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            ),
            meter.create_histogram(
                "mcp.client.operation.duration",
                unit="s",
                description="The duration of the MCP request as observed on the sender (tools/call upstream).",
                explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
            ),
            meter.create_up_down_counter(
                "toolmesh.tool.call.active", unit="{call}", description="Tool calls in flight."
            ),
        )

    def observing(self) -> bool:
        """Whether a meter provider is there (given, or installed globally)."""
        return self.instruments() is not None

    def started(self, entry: Entry, ctx: ToolContext[Any]) -> None:
        instruments = self.instruments()
        if instruments is not None:
            instruments.active.add(1, self._active_attributes(entry))

    def ended(self, entry: Entry, ctx: ToolContext[Any]) -> None:
        instruments = self.instruments()
        if instruments is not None:
            instruments.active.add(-1, self._active_attributes(entry))

    def _active_attributes(self, entry: Entry) -> dict[str, str]:
        attributes = {"gen_ai.tool.name": entry.name}
        server = row_facts(entry)[1]
        if server is not None:
            attributes["toolmesh.server"] = server
        if self.profile is not None:
            attributes["toolmesh.profile"] = self.profile
        return attributes

    def record(self, record: CallRecord) -> None:
        instruments = self.instruments()
        if instruments is None:
            return
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "toolmesh.row.kind": record.kind,
            "toolmesh.disposition": record.disposition,
        }
        if record.kind != "unknown":
            attributes["gen_ai.tool.name"] = record.tool
        if record.error_kind is not None:
            attributes["error.type"] = record.error_kind
        if record.server is not None:
            attributes["toolmesh.server"] = record.server
        if self.profile is not None:
            attributes["toolmesh.profile"] = self.profile
        instruments.calls.record(record.duration, attributes)
        if record.ran and record.server is not None and record.disposition != CANCELLED:
            upstream = {"mcp.method.name": "tools/call", "toolmesh.server": record.server}
            if record.wire_name is not None:
                upstream["gen_ai.tool.name"] = record.wire_name
            if record.error_kind is not None:
                upstream["error.type"] = record.error_kind
            instruments.upstream.record(record.duration, upstream)


def _up(registry: ToolRegistry) -> Iterable[metrics.Observation]:
    return [
        metrics.Observation(1 if c.state == "connected" else 0, {"toolmesh.server": c.label})
        for c in registry.connections()
    ]


def _reconnects(registry: ToolRegistry) -> Iterable[metrics.Observation]:
    return [metrics.Observation(c.reconnects, {"toolmesh.server": c.label}) for c in registry.connections()]
