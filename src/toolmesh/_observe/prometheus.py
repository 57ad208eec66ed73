"""``PrometheusMetrics``: a meter provider whose metrics a Prometheus server scrapes at ``GET /metrics``.

For operators without an OpenTelemetry collector. It needs the ``prometheus`` extra
(``pip install 'toolmesh[prometheus]'``: the OpenTelemetry SDK, its Prometheus exporter
and ``prometheus-client``). The metrics live in a collector registry of their own (not
``prometheus_client``'s global one), so two gateways in one process never mix theirs.

``toolmesh serve`` serves ``app()`` on a listener of its own (``serve.metrics``), apart
from the MCP and Responses endpoints: a scraper needs no bearer token, and the gateway's
tokens never reach a monitoring system.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolmesh._core.errors import ConfigurationError

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics import MeterProvider

__all__ = ["METRICS_PATH", "PrometheusMetrics"]

METRICS_PATH = "/metrics"
"""Where the scrape endpoint answers."""

_INSTALL = "pip install 'toolmesh[prometheus]'"


class PrometheusMetrics:
    """A meter provider (``meter_provider``) and the text a Prometheus scrape reads (``scrape()``, ``app()``).

    ::

        prometheus = PrometheusMetrics()
        metrics = CallMetrics(meter_provider=prometheus.meter_provider, registry=registry)
        app = prometheus.app()          # GET /metrics, for any ASGI server

    Raises:
        ConfigurationError: when the ``prometheus`` extra is not installed.
    """

    def __init__(self) -> None:
        try:
            from opentelemetry.exporter.prometheus import PrometheusMetricReader
            from opentelemetry.sdk.metrics import MeterProvider
            from prometheus_client import CollectorRegistry
        except ModuleNotFoundError as exc:
            raise ConfigurationError(f"Prometheus metrics need {exc.name}: {_INSTALL}") from None
        self._registry = CollectorRegistry(auto_describe=False)
        self._reader = PrometheusMetricReader(registry=self._registry)
        self.meter_provider: MeterProvider = MeterProvider(metric_readers=[self._reader])
        """Give it to ``CallMetrics(meter_provider=...)``."""

    def __repr__(self) -> str:
        return "PrometheusMetrics()"

    def scrape(self) -> tuple[bytes, str]:
        """The current metrics in the Prometheus text format, and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self._registry), CONTENT_TYPE_LATEST

    def app(self) -> Starlette:
        """An ASGI app answering ``GET /metrics`` with ``scrape()`` (any other path: 404)."""

        async def metrics(request: Request) -> Response:
            body, content_type = self.scrape()
            return Response(body, media_type=content_type)

        return Starlette(routes=[Route(METRICS_PATH, metrics, methods=["GET"])])

    def shutdown(self) -> None:
        """Stop the provider (its instruments record nothing more) and leave the registry."""
        self.meter_provider.shutdown()

    def __enter__(self) -> PrometheusMetrics:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
