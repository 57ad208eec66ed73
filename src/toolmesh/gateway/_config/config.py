"""``toolmesh.json``: the servers, native tools, names, policy, profiles and serve settings of a gateway.

``GatewayConfig.load(path)`` reads and checks the whole file before anything starts;
every error is a ``ServerConfigError`` naming the file, the key path and the fix.
Paths in the file (``include``, ``native`` files, token files, a stdio server's
working directory) are relative to the file that names them. Native modules are
imported, and servers started, only when the registry is built and connected.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn

from toolmesh._context.asking import no_callback
from toolmesh._context.context import ElicitationRequest, SamplingRequest
from toolmesh._core.errors import ConfigurationError, ServerConfigError
from toolmesh._core.names import PROVIDER_RULES, NamePolicy
from toolmesh._core.suggest import closest
from toolmesh._dispatch.native_loading import add_native, is_file_spec, load_ranker, split_spec
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._hooks.actions import Hook
from toolmesh._policy.limits import ConcurrencyLimit, RateLimit
from toolmesh._policy.rules import DenyAnnotated
from toolmesh._state.backend import StateBackend
from toolmesh._state.errors import StateConfigError
from toolmesh._state.opening import state_backend
from toolmesh.mcp._spec.defaults import DEFAULT_MAX_CONFIG_BYTES
from toolmesh.mcp._spec.files import read_json, servers_of
from toolmesh.mcp._spec.server import McpServer

from .auth_config import caller_hooks, pattern_rules, read_oauth
from .http_settings import BearerToken, HttpSettings, is_loopback
from .keys import DocumentKeys, PolicyKeys, ProfileKeys, ResponsesKeys, ServeKeys, validate
from .oauth_settings import OAuthSettings
from .observing import AuditSettings, MetricsSettings, audit_settings, metrics_settings
from .profiles import DEFAULT_PROFILE, PROFILE_NAME, Profile
from .state_settings import check_state, state_problem
from .tokens import TokenSource, read_tokens, refuse_literal_tokens

__all__ = ["GatewayConfig", "ServeSettings"]

PYTHON_COMMANDS = frozenset({"python", "python3"})
"""A stdio server whose command is literally one of these runs with this Python (``sys.executable``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeSettings:
    """How ``toolmesh serve`` serves: the transport, the stdio profile and the HTTP settings."""

    transport: Literal["http", "stdio"] = "http"
    host: str = "127.0.0.1"
    port: int = 8765
    path: str = "/mcp"
    profile: str = DEFAULT_PROFILE
    """The profile served over stdio (HTTP serves every profile, each at its own path)."""
    stateless: bool = False
    max_body_bytes: int = 4 * 1024 * 1024
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    tokens: tuple[TokenSource, ...] = field(default=(), repr=False)
    """Bearer tokens read from their environment variables or files (secret: never shown);
    none when loaded for stdio."""
    state: str | None = field(default=None, repr=False)
    """Where the shared state lives: None (or ``"memory"``) in this process, else a Redis URL
    (may hold a password: never shown)."""
    state_prefix: str = "toolmesh:"
    """What every key of this deployment's shared state starts with."""
    state_prefix_derived: bool = False
    """Whether ``state_prefix`` was derived from the config file (no ``serve.statePrefix``): replicas
    serving another version of the file then share nothing with these."""
    workers: int = 1
    """Processes serving HTTP on one port (more than one needs a shared ``state``)."""

    def __post_init__(self) -> None:
        problem = state_problem(self.state, self.workers, self.transport, complete=False)
        if problem is not None:
            raise StateConfigError(problem)

    def check_workers(self) -> None:
        """Check that the workers can share what they must (more than one needs a shared ``state``).

        Raises:
            StateConfigError: saying the fix.
        """
        problem = state_problem(self.state, self.workers, self.transport)
        if problem is not None:
            raise StateConfigError(problem)

    def state_backend(self) -> StateBackend:
        """The state backend these settings name (not yet connected: ``await backend.ping()`` checks it)."""
        return state_backend(self.state, prefix=self.state_prefix)

    oauth: OAuthSettings | None = None
    """OAuth 2.1 access tokens accepted (``serve.auth.oauth``); None when loaded for stdio."""
    audit: AuditSettings | None = None
    """``serve.audit``: one JSON line per call (None: no audit)."""
    metrics: MetricsSettings | None = None
    """``serve.metrics``: OpenTelemetry metrics of calls, maybe scraped by Prometheus (None: off, unless a
    global meter provider is installed)."""

    def http_settings(self) -> HttpSettings:
        """The gateway's ``HttpSettings`` for these settings.

        Raises:
            ConfigurationError: as ``HttpSettings`` does (e.g. a host that is not loopback, without tokens).
        """
        return HttpSettings(
            host=self.host,
            port=self.port,
            path=self.path,
            tokens=tuple(BearerToken(t.token, t.profiles, t.subject) for t in self.tokens),
            allowed_hosts=self.allowed_hosts,
            allowed_origins=self.allowed_origins,
            max_body_bytes=self.max_body_bytes,
            stateless=self.stateless,
            reuse_port=self.workers > 1,
            oauth=self.oauth,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GatewayConfig:
    """A checked ``toolmesh.json``: what to serve and how.

    Example:
        >>> config = GatewayConfig.load("examples/toolmesh.json")
        >>> [server.label for server in config.servers], sorted(config.profiles)
        (['notes'], ['notes', 'reader'])
    """

    path: Path | None = None
    """The file it was read from (None when built in Python)."""
    servers: list[McpServer] = field(default_factory=list)
    """The upstream MCP servers, in file order (``mcpServers``, then each ``include``)."""
    native: list[str] = field(default_factory=list)
    """Native tool specs: an absolute ``path/file.py:NAME``, or ``module:NAME``."""
    ranker: str | None = None
    """``search.ranker``: a host ranker fused into every search (``path/file.py:NAME`` or ``module:NAME``)."""
    names: NamePolicy | None = None
    """The name policy (None: the registry's default, ``{server}__{tool}`` under the MCP rule)."""
    hooks: list[Hook] = field(default_factory=list)
    """The policy as hooks: they decide which rows are listed and refuse calls to the rest."""
    profiles: dict[str, Profile] = field(default_factory=dict)
    """Named subsets besides ``default`` (everything the policy allows)."""
    serve: ServeSettings = field(default_factory=ServeSettings)
    responses: ResponsesKeys | None = None
    """The ``responses`` section as written (``ResponsesSettings`` are made from it when served)."""

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = DEFAULT_MAX_CONFIG_BYTES,
        transport: Literal["http", "stdio"] | None = None,
    ) -> GatewayConfig:
        """Read and check ``path``.

        ``transport`` is the one it will be served over (None: the file's ``serve.transport``).
        Over stdio the bearer tokens of ``serve.auth`` are not read (stdio has no tokens), so
        a config whose token comes from an unset variable still serves stdio.

        Raises:
            ServerConfigError: naming the file, the key path and the fix.
        """
        origin = os.fspath(path)
        folder = Path(origin).resolve().parent
        document = read_json(origin, max_bytes, "gateway config file")
        if not isinstance(document, dict):
            raise ServerConfigError(
                "the config must be a JSON object", fix='Use {"mcpServers": {...}, "native": [...]}', origin=origin
            )
        refuse_literal_tokens(document, origin)
        keys = validate(document, origin)
        servers = _servers(keys, document, folder, origin, max_bytes)
        profiles = _profiles(keys.profiles, origin)
        return cls(
            path=Path(origin),
            servers=servers,
            native=[_native(spec, f"native[{i}]", folder, origin) for i, spec in enumerate(keys.native)],
            ranker=_native(keys.search.ranker, "search.ranker", folder, origin) if keys.search.ranker else None,
            names=_names(keys, origin),
            hooks=_hooks(keys.policy, origin),
            profiles=profiles,
            serve=_serve(document, keys.serve, profiles, folder, origin, transport or keys.serve.transport),
            responses=keys.responses,
        )

    def registry(self) -> ToolRegistry:
        """A new registry under the name policy, with the native tools registered (servers not connected).

        It declares elicitation and sampling to its servers: each call the gateway runs answers
        them through the client that made the call (a call without one is refused at once).

        Raises:
            ConfigurationError: naming the file and the ``native`` entry that failed to load.
        """
        registry = self.empty_registry()
        for index in range(len(self.native)):
            self.add_native(registry, index)
        return registry

    def empty_registry(self) -> ToolRegistry:
        """A new registry under the name policy and with ``search.ranker``, answering elicitation and sampling
        as ``registry`` says.

        Raises:
            ConfigurationError: naming the file and ``search.ranker`` when it does not load or is no ranker.
        """
        origin = f"{self.path}: " if self.path is not None else ""
        ranker = None if self.ranker is None else load_ranker(self.ranker, where=f"{origin}key 'search.ranker'")
        return ToolRegistry(names=self.names, elicitation=_no_client, sampling=_no_client, ranker=ranker)

    def add_native(self, registry: ToolRegistry, index: int) -> None:
        """Import ``native[index]`` and register its tools in ``registry``.

        Raises:
            ConfigurationError: naming the file and the ``native`` entry that failed to load.
        """
        origin = f"{self.path}: " if self.path is not None else ""
        add_native(registry, self.native[index], where=f"{origin}key 'native[{index}]'")


def _servers(
    keys: DocumentKeys, document: dict[str, Any], folder: Path, origin: str, max_bytes: int
) -> list[McpServer]:
    servers: list[McpServer] = []
    owners: dict[str, str] = {}
    if keys.mcpServers is not None:
        try:
            found = servers_of({"mcpServers": document["mcpServers"]}, folder, max_bytes, McpServer)
        except ServerConfigError as exc:
            raise exc.with_origin(origin) from None
        servers.extend(_in_folder(s, folder) for s in found)
        owners.update({s.label: origin for s in found})
    includes = [keys.include] if isinstance(keys.include, str) else list(keys.include or ())
    for index, name in enumerate(includes):
        where = "include" if isinstance(keys.include, str) else f"include[{index}]"
        included = folder / os.path.expanduser(name)
        if not included.is_file():
            raise ServerConfigError(
                f"no file {name!r} (looked for {included})",
                key=where,
                fix="Give the path of an mcpServers file, relative to this config file",
                origin=origin,
            )
        for spec in McpServer.from_config(included, max_bytes=max_bytes):
            if spec.label in owners:
                raise ServerConfigError(
                    f"the server {spec.label!r} of {name} is also defined in {owners[spec.label]}",
                    key=where,
                    fix="Rename or remove one of them",
                    origin=origin,
                )
            owners[spec.label] = str(included)
            servers.append(spec)  # another host's file: its servers run as that host runs them
    return servers


def _in_folder(spec: McpServer, folder: Path) -> McpServer:
    """A stdio server of toolmesh.json runs in its folder (a relative ``cwd`` too), with this Python for ``python``."""
    if spec.transport != "stdio":
        return spec
    changes: dict[str, Any] = {"cwd": os.fspath(folder / spec.cwd) if spec.cwd is not None else os.fspath(folder)}
    if spec.command in PYTHON_COMMANDS:
        changes["command"] = sys.executable
    return dataclasses.replace(spec, **changes)


def _native(spec: str, key: str, folder: Path, origin: str) -> str:
    source, attribute = split_spec(spec)
    if not is_file_spec(source):
        return spec
    path = folder / os.path.expanduser(source)
    if not path.is_file():
        raise ServerConfigError(
            f"no file {source!r} (looked for {path})",
            key=key,
            fix='Give "path/to/file.py:NAME" relative to this config file, or an importable "package.module:NAME"',
            origin=origin,
        )
    return f"{path}:{attribute}"


def _names(keys: DocumentKeys, origin: str) -> NamePolicy | None:
    if keys.names is None:
        return None
    provider = keys.names.provider
    if provider is not None and provider not in PROVIDER_RULES:
        close = closest(provider, PROVIDER_RULES)
        hint = f"Did you mean {close!r}? " if close else ""
        raise ServerConfigError(
            f"unknown provider {provider!r}",
            key="names.provider",
            fix=f"{hint}Use one of "
            + ", ".join(map(repr, sorted(PROVIDER_RULES)))
            + ", or leave it out (the MCP rule)",
            origin=origin,
        )
    try:
        return NamePolicy(provider=provider, template=keys.names.template, dedupe=keys.names.dedupe)
    except ConfigurationError as exc:
        problem = str(exc).removeprefix("NamePolicy: ")
        raise ServerConfigError(problem, key="names.template", origin=origin) from None


def _hooks(policy: PolicyKeys | None, origin: str) -> list[Hook]:
    if policy is None:
        return []
    hooks = pattern_rules(policy, "policy", origin)
    if policy.deny_destructive:
        hooks.append(DenyAnnotated(destructive=True, mcp_defaults=True))  # as the gateway's clients read the rows
    hooks.extend(RateLimit(limit.calls, limit.per, tools=limit.tools) for limit in policy.rate_limits)
    hooks.extend(ConcurrencyLimit(limit.limit, tools=limit.tools) for limit in policy.concurrency_limits)
    return [*hooks, *caller_hooks(policy.callers, origin)]


def _profiles(profiles: dict[str, ProfileKeys], origin: str) -> dict[str, Profile]:
    made: dict[str, Profile] = {}
    for name, keys in profiles.items():
        if name == DEFAULT_PROFILE:
            raise ServerConfigError(
                "the profile 'default' always exists: it is every tool the policy allows",
                key="profiles.default",
                fix="Narrow the default with 'policy', or give this profile another name",
                origin=origin,
            )
        if not PROFILE_NAME.fullmatch(name):
            raise ServerConfigError(
                "a profile's name is a URL path segment",
                key=f"profiles.{name}",
                fix="Use 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit",
                origin=origin,
            )
        for key in ("tools", "exclude_tools", "servers"):
            if getattr(keys, key) == []:
                spelt = ProfileKeys.model_fields[key].alias or key
                raise ServerConfigError(
                    "is empty",
                    key=f"profiles.{name}.{spelt}",
                    fix="Give glob patterns, or remove the key",
                    origin=origin,
                )
        fields = keys.model_dump(exclude={"tools", "exclude_tools", "servers"})
        made[name] = Profile(
            name=name,
            tools=tuple(keys.tools) if keys.tools is not None else None,
            exclude_tools=tuple(keys.exclude_tools or ()),
            servers=tuple(keys.servers) if keys.servers is not None else None,
            **fields,
        )
    return made


def _serve(
    document: dict[str, Any],
    keys: ServeKeys,
    profiles: dict[str, Profile],
    folder: Path,
    origin: str,
    transport: Literal["http", "stdio"],
) -> ServeSettings:
    known = [DEFAULT_PROFILE, *profiles]
    _check_profile(keys.profile, known, "serve.profile", origin)
    if not keys.path.startswith("/") or keys.path.endswith("/"):
        raise ServerConfigError(
            f"must start with '/' and not end with one, not {keys.path!r}",
            key="serve.path",
            fix='E.g. "/mcp"',
            origin=origin,
        )
    token_keys = keys.auth.tokens if keys.auth else []
    for index, token_key in enumerate(token_keys):
        for position, name in enumerate(token_key.profiles or ()):
            _check_profile(name, known, f"serve.auth.tokens[{index}].profiles[{position}]", origin)
    tokens = read_tokens(token_keys, folder, origin) if transport == "http" else []
    oauth_keys = keys.auth.oauth if keys.auth else None
    oauth = read_oauth(oauth_keys, folder, origin, known, keys.path) if oauth_keys and transport == "http" else None
    if transport == "http" and not tokens and oauth is None and not is_loopback(keys.host):
        raise ServerConfigError(
            f"serving on {keys.host!r} without tokens would let anyone who can reach it call every tool",
            key="serve.host",
            fix='Add "auth": {"tokens": [{"env": "TOOLMESH_TOKEN"}]} to "serve", or bind "127.0.0.1"',
            origin=origin,
        )
    prefix = check_state(document, keys.state, keys.state_prefix, keys.workers, transport, origin)
    return ServeSettings(
        transport=transport,
        host=keys.host,
        port=keys.port,
        path=keys.path,
        profile=keys.profile,
        stateless=keys.stateless,
        max_body_bytes=keys.max_body_bytes,
        allowed_hosts=tuple(keys.allowed_hosts),
        allowed_origins=tuple(keys.allowed_origins),
        tokens=tuple(tokens),
        state=keys.state,
        state_prefix=prefix,
        state_prefix_derived=keys.state_prefix is None,
        workers=keys.workers,
        oauth=oauth,
        audit=audit_settings(keys.audit, folder, origin),
        metrics=metrics_settings(keys.metrics),
    )


def _check_profile(name: str, known: Iterable[str], key: str, origin: str) -> None:
    names = list(known)
    if name in names:
        return
    close = closest(name, names)
    hint = f"Did you mean {close!r}? " if close else ""
    raise ServerConfigError(
        f"no profile {name!r}", key=key, fix=f"{hint}The profiles are " + ", ".join(map(repr, names)), origin=origin
    )


async def _no_client(request: ElicitationRequest | SamplingRequest) -> NoReturn:
    """The registry's default answer: only the gateway's calls carry a client to ask; others have none."""
    raise no_callback(request)
