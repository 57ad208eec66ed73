"""``serve.audit`` and ``serve.metrics`` of ``toolmesh.json``: what the gateway records of its calls, and where.

``observing(...)`` turns them into the gateway's observers (``AuditLog``, ``CallMetrics``)
for as long as it serves: the audit file's handler is attached to the ``toolmesh.audit``
logger (and closed after), the Prometheus meter provider made (and shut down after).
Metrics are recorded when ``serve.metrics`` is set, or when a global meter provider is
installed before serving (``opentelemetry-instrument toolmesh serve``).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from toolmesh._core.errors import ServerConfigError
from toolmesh._core.slots import global_meter_provider
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._observe.audit import AUDIT_LOGGER, AuditLog, audit_file_handler
from toolmesh._observe.metrics import CallMetrics
from toolmesh._observe.observer import CallObserver
from toolmesh._observe.prometheus import PrometheusMetrics

from .keys import AuditKeys, MetricsKeys

__all__ = ["AuditSettings", "MetricsSettings", "Observing", "audit_settings", "metrics_settings", "observing"]

STDERR = "-"
"""``serve.audit.file`` that means the process's stderr."""


@dataclass(frozen=True, slots=True)
class AuditSettings:
    """Where audit lines go, and whether they hold the arguments."""

    file: Path | None
    """The file lines are appended to (None: stderr)."""
    arguments: bool = False
    """Write the arguments themselves (secrets starred out), not only their hash."""


@dataclass(frozen=True, slots=True)
class MetricsSettings:
    """Metrics of calls: to the global meter provider, or scraped by Prometheus on a listener of its own."""

    prometheus_host: str | None = None
    """The scrape endpoint's interface (None: no Prometheus endpoint)."""
    prometheus_port: int = 9464
    """Its port (0: any free one)."""
    allowed_hosts: tuple[str, ...] = ()
    """``Host`` header values its requests may carry besides loopback and the bound host (``name:*``: any port):
    the names a Prometheus server scrapes it by; any other is refused (DNS rebinding)."""


def audit_settings(keys: AuditKeys | None, folder: Path, origin: str) -> AuditSettings | None:
    """``serve.audit`` checked; a relative file is relative to the config file.

    Raises:
        ServerConfigError: for an empty file name or a folder that does not exist.
    """
    if keys is None:
        return None
    if keys.file == STDERR:
        return AuditSettings(None, keys.arguments)
    if not keys.file.strip():
        raise ServerConfigError(
            "is empty", key="serve.audit.file", fix='Give a file path, or "-" for stderr', origin=origin
        )
    path = folder / os.path.expanduser(keys.file)
    if not path.parent.is_dir():
        raise ServerConfigError(
            f"no folder {path.parent} for the audit file",
            key="serve.audit.file",
            fix="Create the folder, or give a path in an existing one",
            origin=origin,
        )
    return AuditSettings(path, keys.arguments)


def metrics_settings(keys: MetricsKeys | None) -> MetricsSettings | None:
    """``serve.metrics`` as settings (None when the key is absent)."""
    if keys is None:
        return None
    if keys.prometheus is None:
        return MetricsSettings()
    return MetricsSettings(keys.prometheus.host, keys.prometheus.port, tuple(keys.prometheus.allowed_hosts))


@dataclass(slots=True)
class Observing:
    """The gateway's observers while it serves, and the Prometheus endpoint when configured."""

    observers: list[CallObserver] = field(default_factory=list)
    """Give them to ``McpGateway(observers=...)``."""
    prometheus: PrometheusMetrics | None = None
    """The meter provider a scrape reads (serve its ``app()``), when ``serve.metrics.prometheus`` is set."""


@contextmanager
def observing(
    audit: AuditSettings | None,
    metrics: MetricsSettings | None,
    registry: ToolRegistry,
    secrets: Iterable[str] = (),
) -> Iterator[Observing]:
    """The observers these settings ask for, their file handler attached and their provider up for the block.

    Args:
        audit: ``serve.audit``.
        metrics: ``serve.metrics``.
        registry: The served registry (its rows and its servers' session health).
        secrets: Strings never to write in an audit line besides the servers' (the gateway's tokens).

    Raises:
        ConfigurationError: when Prometheus is asked for without the ``prometheus`` extra.
        OSError: when the audit file cannot be opened.
    """
    found = Observing()
    handler: logging.Handler | None = None
    logger = logging.getLogger(AUDIT_LOGGER)
    level, propagate = logger.level, logger.propagate
    try:
        if audit is not None:
            handler = _handler(audit.file)
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
            logger.propagate = False  # audit lines go to their file only, never to the gateway's stderr log
            found.observers.append(AuditLog(logger, include_arguments=audit.arguments, secrets=secrets))
        if metrics is not None and metrics.prometheus_host is not None:
            found.prometheus = PrometheusMetrics()
            found.observers.append(CallMetrics(meter_provider=found.prometheus.meter_provider, registry=registry))
        elif metrics is not None or global_meter_provider() is not None:
            found.observers.append(CallMetrics(registry=registry))
        yield found
    finally:
        if handler is not None:
            logger.removeHandler(handler)
            handler.close()
            logger.setLevel(level)
            logger.propagate = propagate
        if found.prometheus is not None:
            found.prometheus.shutdown()


def _handler(file: Path | None) -> logging.Handler:
    if file is None:
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        return handler
    return audit_file_handler(file)
