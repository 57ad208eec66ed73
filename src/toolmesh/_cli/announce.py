"""What ``toolmesh serve`` does once its catalog is connected: serve it and say so.

The listening announcement (URLs per profile, auth, the Responses endpoint), the serving
itself over stdio or HTTP, and the stderr lines about upstream servers lost and back.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable, Iterator

import anyio
from rich.text import Text

from toolmesh._core.errors import ConfigurationError
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._observe.prometheus import METRICS_PATH, PrometheusMetrics
from toolmesh._rows.rows import McpEntry
from toolmesh._state.errors import redact_url
from toolmesh.gateway._auth.resource import ResourceServer
from toolmesh.gateway._config.config import GatewayConfig, ServeSettings
from toolmesh.gateway._config.http_settings import HttpSettings
from toolmesh.gateway._config.observing import MetricsSettings
from toolmesh.gateway._config.profiles import DEFAULT_PROFILE
from toolmesh.gateway._config.state_settings import is_shared
from toolmesh.gateway._mcp_face.gateway import McpGateway
from toolmesh.gateway._mcp_face.lifecycle import serve
from toolmesh.gateway._responses.settings import ResponsesSettings
from toolmesh.gateway._shared.http import HostChecked, security_settings

from .app import console, note


class _UpstreamLines(logging.Handler):
    """While serving, a stderr line when an upstream session is lost or back (and every warning, as before)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING or record.msg == _RECONNECTED:
            note(record.getMessage())


_RECONNECTED = "MCP server %r: reconnected (session %d)"
"""The connection's log message for an upstream server back after its session was lost."""


@contextlib.contextmanager
def upstream_lines() -> Iterator[None]:
    logger = logging.getLogger("toolmesh.mcp")
    handler, level = _UpstreamLines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(min(logger.getEffectiveLevel(), logging.INFO))
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


async def serve_catalog(
    gateway: McpGateway,
    http: HttpSettings | None,
    settings: ServeSettings,
    gateway_config: GatewayConfig,
    registry: ToolRegistry,
    sizes: dict[str, int],
    responses: ResponsesSettings | None,
    listening: Callable[[str], None] | None = None,
    resource_server: ResourceServer | None = None,
) -> None:
    """Serve over stdio (``http`` None) or HTTP (with the Responses endpoint) until stdin ends or cancelled.

    ``listening(base_url)`` is called once the HTTP socket listens (after the announcement);
    ``resource_server`` is the primed OAuth resource server of ``http.oauth``.
    """
    if http is None:
        note(catalog_line(registry, sizes))
        size = sizes[settings.profile]
        note(f"serving the profile {settings.profile!r} ({size} tool{'s' * (size != 1)}) over stdio")
        await gateway.run_stdio(settings.profile)
    else:
        endpoint = None
        if responses is not None:
            from toolmesh.gateway._responses.app import ResponsesEndpoint

            endpoint = ResponsesEndpoint.for_gateway(gateway, responses)

        def ready(base: str) -> None:
            _announce(base, settings, gateway_config, registry, sizes)
            if responses is not None:
                for line in responses_lines(base, responses, gateway_config, sizes):
                    console.print(Text(line), soft_wrap=True, highlight=False)
                sys.stdout.flush()
            if listening is not None:
                listening(base)

        try:
            await gateway.serve_http(http, on_ready=ready, responses=endpoint, resource_server=resource_server)
        except OSError as exc:
            raise ConfigurationError(
                f"cannot listen on {http.host}:{http.port} ({exc.strerror or exc}); "
                "is another gateway running there? Give another --port (0: any free one)"
            ) from None


def responses_lines(base: str, responses: ResponsesSettings, config: GatewayConfig, sizes: dict[str, int]) -> list[str]:
    """The Responses endpoint's banner: its URL, what the catalog offers without approval, the approval secret."""
    lines = [f"responses: {base}{responses.path} (upstream {responses.upstream})"]
    if responses.offer_catalog:
        size = sizes[responses.profile]
        lines.append(
            f"  offers the profile {responses.profile!r} ({size} tool{'s' * (size != 1)}) to every request; "
            "they run WITHOUT approval (require_approval applies to request-declared servers only)"
        )
    else:
        lines.append("  the catalog is not offered (responses.offerCatalog: false): request-declared servers only")
    secret_env = config.responses.secret_env if config.responses is not None else None
    if secret_env:
        lines.append(f"  approval secret: from ${secret_env}")
    else:
        lines.append(
            "  approval secret: per-process (a restart invalidates pending approvals; set responses.secretEnv)"
        )
    return lines


def catalog_line(registry: ToolRegistry, sizes: dict[str, int]) -> str:
    rows = registry.entries()
    mcp_rows = [row for row in rows if isinstance(row, McpEntry)]
    servers = len({row.server for row in mcp_rows})
    return (
        f"catalog: {len(rows)} tools ({len(rows) - len(mcp_rows)} native, {len(mcp_rows)} from "
        f"{servers} server{'s' * (servers != 1)}); the policy lets {sizes[DEFAULT_PROFILE]} through"
    )


def profile_size(config: GatewayConfig, name: str, count: int) -> str:
    """``lean (39 tools, in search mode)``: a profile's size as ``check`` says it."""
    profile = config.profiles.get(name)
    return f"{name} ({count} tools{', in search mode' * (profile is not None and profile.search)})"


def _announce(
    base: str, settings: ServeSettings, config: GatewayConfig, registry: ToolRegistry, sizes: dict[str, int]
) -> None:
    """What ``serve`` prints once it listens (stdout): the URL, each profile's URL and size, the auth."""
    stateless = " (stateless: no per-client state; 2025-11-25 clients get no notifications)" * settings.stateless
    lines = [catalog_line(registry, sizes), f"listening on {base}{settings.path}{stateless}"]
    urls = {name: base + ("" if name == DEFAULT_PROFILE else f"/{name}") + settings.path for name in sizes}
    width, url_width = max(map(len, sizes)), max(map(len, urls.values()))
    for name, size in sizes.items():
        profile = config.profiles.get(name)
        about = profile.description if profile is not None else "every tool the policy allows"
        line = f"  {name.ljust(width)}  {urls[name].ljust(url_width)}  {size} tool{'s' * (size != 1)}"
        if profile is not None and profile.search:
            line += " in search mode (listed as search_tools and call_tool)"
        lines.append(line + (f" — {about}" if about else ""))
    if settings.audit is not None:
        where = settings.audit.file if settings.audit.file is not None else "stderr"
        lines.append(f"audit: one JSON line per call to {where}" + " (with arguments)" * settings.audit.arguments)
    if settings.tokens:
        lines.append("auth: bearer tokens from " + ", ".join(token.source for token in settings.tokens))
    if settings.oauth is not None:
        lines.append(f"auth: OAuth access tokens of {settings.oauth.issuer} for {settings.oauth.resource}")
    if not settings.tokens and settings.oauth is None:
        lines.append("auth: none (loopback only)")
    if is_shared(settings.state):
        lines.append(f"shared state: {redact_url(settings.state or '')} (prefix {settings.state_prefix})")
        if settings.state_prefix_derived:
            lines.append(
                "  the prefix comes from this toolmesh.json: replicas serving another version of it (a rolling "
                "update) share nothing with these; set serve.statePrefix to keep one deployment's state"
            )
    lines.append("stop with Ctrl-C (or SIGTERM)")
    for line in lines:
        console.print(Text(line), soft_wrap=True, highlight=False)
    sys.stdout.flush()


async def with_metrics(
    serving: Awaitable[None], prometheus: PrometheusMetrics, settings: MetricsSettings, stdio: bool
) -> None:
    """Await ``serving`` with the Prometheus scrape endpoint served beside it (stopped when ``serving`` ends)."""
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(serve_metrics, prometheus, settings, stdio)
            await serving
            group.cancel_scope.cancel()
    except ExceptionGroup as failed:
        if len(failed.exceptions) == 1:  # one side failed: its own error, as serving alone would raise it
            raise failed.exceptions[0] from None
        raise


async def serve_metrics(
    prometheus: PrometheusMetrics,
    settings: MetricsSettings,
    stdio: bool,
    listening: Callable[[str], None] | None = None,
) -> None:
    """Serve the Prometheus scrape endpoint on its own listener until cancelled, and say where.

    The listener takes requests whose ``Host`` is its own (loopback, its host, or one of
    ``settings.allowed_hosts``), as the gateway's endpoints do (DNS rebinding); ``listening(base_url)``
    is called once it listens.

    Raises:
        ConfigurationError: when its address cannot be bound.
    """
    host = settings.prometheus_host or "127.0.0.1"

    def ready(base: str) -> None:
        line = f"metrics: {base}{METRICS_PATH} (Prometheus; no authentication: keep it on a network only it reaches)"
        if stdio:
            note(line)
        else:
            console.print(Text(line), soft_wrap=True, highlight=False)
            sys.stdout.flush()
        if listening is not None:
            listening(base)

    app = prometheus.app()
    app.add_middleware(HostChecked, security=security_settings(host, settings.allowed_hosts))
    try:
        await serve(app, None, host, settings.prometheus_port, ready)
    except OSError as exc:
        raise ConfigurationError(
            f"cannot listen on {host}:{settings.prometheus_port} for metrics ({exc.strerror or exc}); "
            "give another serve.metrics.prometheus.port (0: any free one)"
        ) from None
