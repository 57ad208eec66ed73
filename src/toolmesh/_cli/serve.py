"""``toolmesh check`` and ``toolmesh serve``: a gateway config (``toolmesh.json``) from the command line.

``check`` connects everything the config names and reports each server (ok, tools,
protocol version, time, or the error); exit code 1 when anything failed. ``serve``
serves the catalog as one MCP endpoint until SIGINT or SIGTERM, which close the
clients' sessions, the upstream sessions and their child processes (exit code 0).

Without ``--config`` both read ``./toolmesh.json``, else the bundled example
(``examples/toolmesh.json`` of the source tree). Over stdio, stdout carries nothing
but the protocol: every status line goes to stderr.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, cast

import typer
from rich.text import Text

from toolmesh._core.errors import ConfigurationError, ToolmeshError
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._rows.rows import McpEntry
from toolmesh.gateway._auth.resource import ResourceServer
from toolmesh.gateway._config.config import GatewayConfig, ServeSettings
from toolmesh.gateway._config.oauth_settings import OAuthSettings
from toolmesh.gateway._config.observing import observing
from toolmesh.gateway._config.profiles import DEFAULT_PROFILE, Profile
from toolmesh.gateway._config.state_settings import STATE_ENV
from toolmesh.gateway._config.unmatched import unmatched_patterns
from toolmesh.gateway._mcp_face.gateway import McpGateway
from toolmesh.gateway._responses.settings import settings_from_config
from toolmesh.gateway._shared.catalog_view import CatalogView, row_rules
from toolmesh.mcp._spec.defaults import DEFAULT_MAX_CONFIG_BYTES
from toolmesh.mcp._spec.server import McpServer

from .announce import profile_size, serve_catalog, upstream_lines, with_metrics
from .app import (
    INTERRUPTED,
    MaxBytesOption,
    SkipOption,
    SkippedServerFilter,
    Sources,
    StderrOption,
    app,
    connect,
    console,
    fail,
    fast_loop,
    note,
    run_guarded,
)
from .server_log import stderr_tail, tail_note
from .shared_state import open_shared_state, state_health
from .workers import WORKER_ENV, serve_with_workers, worker_processes

__all__ = ["BUNDLED_CONFIG", "check", "config_path", "serve"]

_T = TypeVar("_T")
StrictOption = Annotated[
    bool, typer.Option("--strict", help="A policy or profile pattern that matches nothing is an error (exit 2).")
]
StateOption = Annotated[
    str | None,
    typer.Option(
        "--state",
        metavar="URL",
        envvar=STATE_ENV,
        show_envvar=True,
        help="Where shared state lives: memory (this process, the default) or redis://host:port/db "
        "(every replica given the same URL shares limits, approvals, pins and catalog changes).",
    ),
]
_STOPPING = "stopping: closing the client sessions, the upstream sessions and the servers… (again: kill them now)"


def _bundled_config() -> Path:
    """The example config: shipped in the wheel (``toolmesh/_bundled``), else the checkout's ``examples/``."""
    package = Path(__file__).resolve().parents[1]
    shipped = package / "_bundled" / "toolmesh.json"
    return shipped if shipped.is_file() else package.parents[1] / "examples" / "toolmesh.json"


BUNDLED_CONFIG = _bundled_config()
"""The example config: the example tools and MCP server, nothing from the network."""

GatewayConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="The gateway config (default: ./toolmesh.json, else the bundled example).",
    ),
]


def _patterns_match(count: int) -> str:
    return f"{count} pattern matches" if count == 1 else f"{count} patterns match"


def config_path(given: Path | None) -> Path:
    """``given``, else ``./toolmesh.json``, else the bundled example; exits with code 2 when none exists."""
    if given is not None:
        return given
    here = Path("toolmesh.json")
    if here.is_file():
        return here
    if BUNDLED_CONFIG.is_file():
        note(f"no ./toolmesh.json here: using the bundled example {BUNDLED_CONFIG}")
        return BUNDLED_CONFIG
    fail(
        "no ./toolmesh.json here and no bundled example (it ships in the wheel, and in a checkout's examples/); "
        "write a toolmesh.json (see the gateway guide) or give --config path/to/toolmesh.json"
    )


def load_config(given: Path | None, max_bytes: int, transport: Literal["http", "stdio"] | None = None) -> GatewayConfig:
    """The checked config, for ``transport`` (None: the file's); a problem exits with code 2 before anything starts."""
    try:
        return GatewayConfig.load(config_path(given), max_bytes=max_bytes, transport=transport)
    except ToolmeshError as exc:
        fail(str(exc))


# -- check ------------------------------------------------------------------------------------


@dataclass
class _Outcome:
    """One line of ``toolmesh check``."""

    name: str
    seconds: float
    tools: int | None = None
    protocol: str | None = None
    error: str | None = None
    detail: str | None = None
    """What an ok line says instead of its tool count (the shared state, the ``oauth`` line)."""


@app.command(short_help="Connect a gateway config's servers and report each.")
def check(
    config: GatewayConfigOption = None,
    server_stderr: StderrOption = False,
    max_config_bytes: MaxBytesOption = DEFAULT_MAX_CONFIG_BYTES,
    strict: StrictOption = False,
    state: StateOption = None,
) -> None:
    """Connect everything the gateway config names and report each server; exit 1 if any failed."""
    gateway_config = load_config(config, max_config_bytes)
    settings = _with_state(gateway_config.serve, state)
    sources = Sources([], gateway_config.servers, skip_failures=True, server_stderr=server_stderr)
    stdio = {server.label for server in gateway_config.servers if server.transport == "stdio"}

    async def work(
        log_path: str | None,
    ) -> tuple[list[_Outcome], dict[str, int], list[str], int, list[str], str | None]:
        outcomes = []
        started = time.perf_counter()
        registry = gateway_config.empty_registry()
        loaded = not gateway_config.native
        for index in range(len(gateway_config.native)):  # each module's failure reported, not just the first
            try:
                gateway_config.add_native(registry, index)
                loaded = True
            except ConfigurationError as exc:
                outcomes.append(_Outcome("native", time.perf_counter() - started, error=str(exc)))
        if loaded and gateway_config.native:  # no line for natives the config does not name
            native = sum(not isinstance(row, McpEntry) for row in registry.entries())
            outcomes.insert(0, _Outcome("native", time.perf_counter() - started, tools=native))
        async with registry:
            outcomes.extend(await _check_servers(registry, gateway_config.servers))
            if settings.state is not None:
                seconds, about, error = await state_health(settings)
                outcomes.append(_Outcome("state", seconds, error=error and f"{about}: {error}", detail=about))
            if gateway_config.serve.oauth is not None:
                outcomes.append(await _check_oauth(gateway_config.serve.oauth, gateway_config.serve.path))
            profiles = _profile_sizes(registry, gateway_config)
            unmatched = unmatched_patterns(gateway_config, (row.name for row in registry.entries()))
            total = len(registry.entries())
            tail = stderr_tail(log_path, [o.name for o in outcomes if o.error is not None and o.name in stdio])
        return outcomes, profiles, unmatched, total, tail, log_path

    done = run_guarded(sources, work, stop_signals=(signal.SIGINT, signal.SIGTERM), first=_STOPPING)
    if done is None:
        fail("interrupted", INTERRUPTED)
    outcomes, profiles, unmatched, total, tail, log_path = done
    for line in _check_lines(outcomes):
        console.print(line, soft_wrap=True)
    if profiles:
        console.print(
            Text(
                "profiles: " + ", ".join(profile_size(gateway_config, name, count) for name, count in profiles.items())
            ),
            soft_wrap=True,
        )
    if gateway_config.hooks:
        removed = total - profiles[DEFAULT_PROFILE]
        console.print(Text(f"policy: removes {removed} of {total} tools"), soft_wrap=True)
    for warning in unmatched:
        note(f"warning: {warning}")
    failed = [o.name for o in outcomes if o.error is not None]
    if tail:
        note(tail_note(tail).lstrip("\n"))
        note(f"server stderr: {log_path}")
    if strict and unmatched:
        fail(f"--strict: {_patterns_match(len(unmatched))} nothing (see above)")
    if failed:
        note(f"{len(failed)} failed: {', '.join(failed)}")
        raise typer.Exit(1)


async def _check_servers(registry: ToolRegistry, servers: list[McpServer]) -> list[_Outcome]:
    """Connect every server at once; each one's outcome with the time it took (from the common start)."""
    started = time.perf_counter()
    seen: dict[str, tuple[float, int | Exception]] = {}

    def progress(spec: McpServer, outcome: int | Exception) -> None:
        seen[spec.label] = (time.perf_counter() - started, outcome)

    skipped_filter = SkippedServerFilter()
    logger = logging.getLogger("toolmesh")
    logger.addFilter(skipped_filter)
    try:
        await registry.connect_all(servers, skip_failures=True, on_progress=progress)
    finally:
        logger.removeFilter(skipped_filter)
    protocols = {c.label: c.protocol_version for c in registry.connections()}
    outcomes = []
    for spec in servers:
        seconds, outcome = seen.get(spec.label, (time.perf_counter() - started, Exception("not connected")))
        if spec.label in protocols and isinstance(outcome, int):
            tools = sum(isinstance(row, McpEntry) and row.server == spec.label for row in registry.entries())
            outcomes.append(_Outcome(spec.label, seconds, tools=tools, protocol=protocols[spec.label]))
        else:
            outcomes.append(_Outcome(spec.label, seconds, error=str(outcome)))
    return outcomes


async def _check_oauth(settings: OAuthSettings, path: str) -> _Outcome:
    """The ``oauth`` line: the extra is installed and the issuer's keys are fetched, as ``serve`` needs to start."""
    started = time.perf_counter()
    try:
        await ResourceServer.primed(settings, path)
    except ConfigurationError as exc:
        return _Outcome("oauth", time.perf_counter() - started, error=str(exc))
    source = f"signing keys from {settings.jwks_uri}" if settings.jwks_uri else "introspection only"
    return _Outcome("oauth", time.perf_counter() - started, detail=f"{settings.issuer}, {source}")


def _profile_sizes(registry: ToolRegistry, config: GatewayConfig) -> dict[str, int]:
    """How many tools each profile lists (the policy's row rules, then the profile's conditions)."""
    rules = row_rules(config.hooks)
    predicates: dict[str, Profile | None] = {DEFAULT_PROFILE: None, **config.profiles}
    return {
        name: len(CatalogView(registry, profile.allows if profile else None, rules).snapshot())
        for name, profile in predicates.items()
    }


def _check_lines(outcomes: list[_Outcome]) -> list[Text]:
    """One line per source: ✓ label, ok, tools, protocol, time; or ✗ label, the error, time."""
    width = max(len(o.name) for o in outcomes)
    lines = []
    for o in outcomes:
        if o.error is None:
            mark, tools = Text("✓", style="green"), o.detail or f"{o.tools} tool{'s' * (o.tools != 1)}"
            status = f"ok  {tools}" + (f"  protocol {o.protocol}" if o.protocol else "")
        else:
            mark, status = Text("✗", style="red"), f"failed: {o.error}"
        lines.append(Text.assemble(mark, " ", (o.name.ljust(width), "bold"), f"  {status}  {o.seconds:.2f} s"))
    return lines


# -- serve ------------------------------------------------------------------------------------


@app.command(short_help="Serve the catalog as one MCP endpoint.")
def serve(
    config: GatewayConfigOption = None,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            "-p",
            metavar="NAME",
            help="The profile served over stdio (HTTP serves each at /<profile><path>).",
        ),
    ] = None,
    transport: Annotated[
        str | None, typer.Option("--transport", "-t", metavar="http|stdio", help="http or stdio.")
    ] = None,
    host: Annotated[str | None, typer.Option("--host", metavar="HOST", help="The interface to bind (HTTP).")] = None,
    port: Annotated[
        int | None, typer.Option("--port", min=0, max=65535, metavar="PORT", help="The port (HTTP; 0: any free one).")
    ] = None,
    stateless: Annotated[
        bool | None, typer.Option("--stateless/--stateful", help="Keep no per-client state (HTTP, 2026-07-28).")
    ] = None,
    responses_upstream: Annotated[
        str | None,
        typer.Option(
            "--responses-upstream",
            metavar="URL",
            help="Also serve POST /v1/responses, running MCP tools for this Chat Completions server "
            "(e.g. http://127.0.0.1:8000/v1).",
        ),
    ] = None,
    skip_failures: SkipOption = False,
    server_stderr: StderrOption = False,
    max_config_bytes: MaxBytesOption = DEFAULT_MAX_CONFIG_BYTES,
    strict: StrictOption = False,
    state: StateOption = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            max=256,
            metavar="N",
            help="Processes serving the port (HTTP); more than one needs a shared --state.",
        ),
    ] = None,
) -> None:
    """Serve the catalog as one MCP endpoint (profiles at /<profile><path>) until Ctrl-C or SIGTERM."""
    if transport not in (None, "http", "stdio"):
        fail(f"--transport {transport!r}: use http or stdio")
    gateway_config = load_config(config, max_config_bytes, cast(Literal["http", "stdio"] | None, transport))
    given: dict[str, Any] = {
        "profile": profile,
        "transport": transport,
        "host": host,
        "port": port,
        "stateless": stateless,
        "workers": workers,
    }
    settings = _with_state(gateway_config.serve, state, **{k: v for k, v in given.items() if v is not None})
    known = [DEFAULT_PROFILE, *gateway_config.profiles]
    if settings.profile not in known:
        fail(f"--profile {settings.profile!r}: no such profile; the profiles are {', '.join(known)}")
    stdio = settings.transport == "stdio"
    if profile is not None and not stdio:
        where = settings.path if profile == DEFAULT_PROFILE else f"/{profile}{settings.path}"
        note(
            f"warning: --profile picks the profile served over stdio; over HTTP every profile is served "
            f"at its own URL ({profile!r} at {where})"
        )
    try:
        http = None if stdio else settings.http_settings()
    except ConfigurationError as exc:
        fail(str(exc))
    worker = os.environ.get(WORKER_ENV) is not None
    if http is not None and worker:  # one of `--workers N`: shares its parent's port
        http = dataclasses.replace(http, reuse_port=True)
    helpers = None
    if http is not None and settings.workers > 1:
        flags = {"--skip-failures": skip_failures, "--strict": strict, "--server-stderr": server_stderr}
        options = {"--responses-upstream": responses_upstream, "--max-config-bytes": str(max_config_bytes)}
        helpers = worker_processes(config_path(config), settings, flags, options)
    try:
        responses = settings_from_config(gateway_config.responses, responses_upstream)
    except ConfigurationError as exc:
        fail(str(exc))
    if responses is not None:
        _require_openai()
    if responses is not None and stdio:
        fail("the Responses endpoint is served over HTTP: leave out --transport stdio, or --responses-upstream")
    if responses is not None and responses.profile not in known:
        fail(f"responses.profile {responses.profile!r}: no such profile; the profiles are {', '.join(known)}")
    sources = Sources([], gateway_config.servers, skip_failures=skip_failures, server_stderr=server_stderr)

    async def work(log_path: str | None) -> bool:
        oauth = http.oauth if http is not None else None  # checked before anything starts: a bad issuer fails at once
        checker = await ResourceServer.primed(oauth, settings.path) if oauth is not None else None
        with contextlib.redirect_stdout(sys.stderr) if stdio else contextlib.nullcontext():
            registry = gateway_config.registry()  # a module printing as it loads must not break stdio
        async with await open_shared_state(settings) as shared, registry:
            if gateway_config.servers:
                await connect(registry, sources, log_path)
            unmatched = unmatched_patterns(gateway_config, (row.name for row in registry.entries()))
            for warning in unmatched:
                note(f"warning: {warning}")
            if strict and unmatched:
                raise ConfigurationError(
                    f"--strict: {_patterns_match(len(unmatched))} nothing (see above); "
                    "fix them, or serve without --strict"
                )
            tokens = [token.token for token in settings.tokens]
            with observing(settings.audit, settings.metrics, registry, tokens) as observed:
                gateway = McpGateway(
                    registry,
                    profiles={name: p.allows for name, p in gateway_config.profiles.items()},
                    hooks=gateway_config.hooks,
                    observers=observed.observers,
                    search=[name for name, p in gateway_config.profiles.items() if p.search],
                    state=shared,
                )
                sizes = _profile_sizes(registry, gateway_config)
                with upstream_lines():

                    async def serving(listening: Callable[[str], None] | None) -> None:
                        catalog = serve_catalog(
                            gateway, http, settings, gateway_config, registry, sizes, responses, listening, checker
                        )
                        if observed.prometheus is None or settings.metrics is None:
                            await catalog
                        else:
                            await with_metrics(catalog, observed.prometheus, settings.metrics, stdio)

                    await serve_with_workers(serving, helpers, worker=worker)
        return True

    run_guarded(sources, work, stop_signals=(signal.SIGINT, signal.SIGTERM), first=_STOPPING, loop_options=fast_loop())
    note("stopped: the client sessions, the upstream sessions and the servers' processes are closed")


def _with_state(settings: ServeSettings, state: str | None, **given: Any) -> ServeSettings:
    """The file's serve settings with the command line's (``--state`` and ``$TOOLMESH_STATE`` first); exits 2 on a
    combination that cannot work."""
    if state is not None:
        given["state"] = state
    try:
        settings = dataclasses.replace(settings, **given)
        settings.check_workers()
    except ConfigurationError as exc:
        fail(str(exc))
    return settings


def _require_openai() -> None:
    """Exit with the install line when the ``openai`` package (the endpoint's upstream client) is missing."""
    try:
        import openai  # noqa: F401
    except ModuleNotFoundError:
        fail("the Responses endpoint needs the openai package: pip install 'toolmesh[responses]'")
