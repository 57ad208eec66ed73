"""McpGateway: a registry served as MCP servers, one per profile, over stdio or Streamable HTTP.

The gateway composes what the library already does: rows come from the registry,
calls go through ``run_tool_calls`` with the gateway's hooks, names are the registry's
model-visible names. It owns no upstream session: the registry (owned by the caller)
does, and closes them when it is closed.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette

from toolmesh._core.errors import ConfigurationError
from toolmesh._dispatch.changes import CatalogChange
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._hooks.actions import Hook
from toolmesh._hooks.stack import HookStack
from toolmesh._observe.observer import CallObserver
from toolmesh._rows.rows import Entry
from toolmesh._state.backend import StateBackend, share_state
from toolmesh._state.memory import MemoryState
from toolmesh.gateway._config.http_settings import HttpSettings
from toolmesh.gateway._config.profiles import DEFAULT_PROFILE, PROFILE_NAME
from toolmesh.gateway._shared.catalog_view import CatalogView, row_rules, server_rules
from toolmesh.gateway._shared.http import Endpoint, build_app, prime
from toolmesh.gateway._shared.parts import AppExtension, ServedProfile

from .face import ProfileFace, TellingClaim
from .handoff import Handoff
from .lean import lean_paths
from .lifecycle import Lifecycle, serve, session_managers
from .passthrough import Upstream
from .rounds import ROUND_TIMEOUT, InputRounds
from .shared_changes import SharedChanges

if TYPE_CHECKING:
    from toolmesh.gateway._auth.resource import ResourceServer
    from toolmesh.gateway._sessions.deployment import SharedSessions

__all__ = ["McpGateway"]

logger = logging.getLogger("toolmesh.gateway")


class McpGateway:
    """A registry served as MCP: ``tools/*`` of its rows, ``resources/*`` and ``prompts/*`` of its servers.

    Each profile is one MCP server: ``"default"`` serves every row the hooks' row rules
    (``AllowTools``, ``DenyServers``, ``DenyAnnotated``, ...) allow; another profile serves
    the rows of the default profile its predicate accepts.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        profiles: Mapping[str, Callable[[Entry], bool]] | None = None,
        hooks: Sequence[Hook] = (),
        observers: Sequence[CallObserver] = (),
        name: str = "toolmesh",
        instructions: str | None = None,
        search: Iterable[str] = (),
        state: StateBackend | None = None,
    ) -> None:
        """Args:
        registry: The catalog to serve (its owner opens and closes it).
        profiles: Named subsets, by row predicate; each is served at ``{path}/<name>``.
        hooks: Hooks every call goes through (policy included), in order.
        observers: Observers of every call (``AuditLog``, ``CallMetrics``): each profile's calls
            go through a copy bound to that profile (``for_profile``), ahead of ``hooks``.
        name: The server name clients are told.
        instructions: Instructions for the model, sent to clients.
        search: Profiles (``"default"`` included) served in search mode: two tools,
            ``search_tools`` and ``call_tool``, instead of every row.
        state: Where state shared across replicas lives (the caller opens and closes it).
            A shared one (``RedisState``) is given to every hook that keeps state
            (rate and concurrency limits, pins), and carries catalog changes to every
            replica's clients; None keeps everything in this process.

        Raises:
            ConfigurationError: for a profile named ``"default"`` or a name that cannot
                be a URL path segment, a predicate that is not callable, or a hook that
                is not a hook.
        """
        predicates: dict[str, Callable[[Entry], bool] | None] = {DEFAULT_PROFILE: None}
        for profile, predicate in (profiles or {}).items():
            if profile == DEFAULT_PROFILE:
                raise ConfigurationError(
                    "McpGateway: the profile 'default' always exists (every row the policy allows); "
                    "give your profile another name"
                )
            if not isinstance(profile, str) or not PROFILE_NAME.match(profile):
                raise ConfigurationError(
                    f"McpGateway: profile name {profile!r} must be 1-64 letters, digits, '_', '-' or '.', "
                    "starting with a letter or digit (it becomes a URL path segment)"
                )
            if not callable(predicate):
                raise ConfigurationError(f"McpGateway: profile {profile!r} needs a predicate Entry -> bool")
            predicates[profile] = predicate
        searched = set(search)
        for profile in searched - predicates.keys():
            raise ConfigurationError(f"McpGateway: search names profile {profile!r}, which does not exist")
        self.registry = registry
        self.state: StateBackend = state if state is not None else MemoryState()
        """The state backend (in-process unless one was given)."""
        if self.state.shared:
            share_state(hooks, self.state)
        self._sessions: SharedSessions | None = None
        self._hooks = HookStack(hooks)
        rules, servers = row_rules(self._hooks), server_rules(self._hooks)
        upstream = Upstream(registry)
        self._rounds = InputRounds()
        self._observers = tuple(observers)
        self.replica = secrets.token_hex(6)
        """This gateway's name among the replicas sharing its state (it routes retries and answers back here)."""
        if self.state.shared:
            self._rounds.handoff = Handoff(self.state, self.replica, ROUND_TIMEOUT)
        self._faces = {
            profile: ProfileFace(
                profile,
                CatalogView(registry, predicate, rules, servers),
                self._profile_hooks(profile),
                upstream,
                self._rounds,
                name=name,
                instructions=instructions,
                search=profile in searched,
            )
            for profile, predicate in predicates.items()
        }
        self._wake: anyio.Event | None = None
        self._servers_changed = False
        self._running = 0
        self._catalog_changed = False
        self._states: dict[str | None, str] = {}
        """Server label (None: native rows) -> the state it changed to, not yet told (only with a shared state)."""
        self._told: dict[str | None, str] = {}
        """Server label -> the last state this replica told its clients of: hearing of it again tells no one."""
        self._updated: dict[str, str] = {}
        """Resource URI -> server label, of the updates not yet passed on to subscribed clients."""
        self._shared = SharedChanges(self.state, registry, self._marked, self.replica) if self.state.shared else None
        self._unsubscribe = registry.on_change(self._changed)
        self._unsubscribe_updates = registry.on_resource_updated(self._resource_updated)

    def _profile_hooks(self, profile: str) -> HookStack:
        """The hooks of one profile's calls: its bound observers first, then the gateway's hooks."""
        if not self._observers:
            return self._hooks
        bound = [observer.for_profile(profile, self.registry.get) for observer in self._observers]
        return HookStack([*bound, self._hooks])

    def __repr__(self) -> str:
        return f"McpGateway(profiles={self.profiles!r}, registry={self.registry!r})"

    @property
    def profiles(self) -> list[str]:
        """The profile names, ``"default"`` first."""
        return list(self._faces)

    def served_profile(self, profile: str) -> ServedProfile:
        """Profile ``profile`` as another endpoint offers it: its rows, hooks, name policy and dispatch defaults.

        Raises:
            ConfigurationError: for an unknown profile.
        """
        face = self._face(profile)
        registry = self.registry
        return ServedProfile(
            face.view.snapshot,
            face.hooks,
            registry.name_policy,
            registry.dispatch_settings,
            self.state,
            registry.ranker,
        )

    def _face(self, profile: str) -> ProfileFace:
        face = self._faces.get(profile)
        if face is None:
            raise ConfigurationError(f"McpGateway: no profile {profile!r}; the profiles are {self.profiles!r}")
        return face

    def server(self, profile: str = DEFAULT_PROFILE) -> Server[Any]:
        """The SDK's low-level server for one profile (for ``mcp.Client(server)`` or your own transport).

        Raises:
            ConfigurationError: for an unknown profile.
        """
        return self._face(profile).server

    # -- list changes -------------------------------------------------------------

    def _changed(self, change: CatalogChange) -> None:
        self._marked(change.server, self._shared.local(change) if self._shared is not None else None)

    def _marked(self, server: str | None, state: str | None = None) -> None:
        """The catalog changed (here, or on another replica; ``state``: what ``server`` changed to, with a shared
        state backend): clients of every profile are told, once per state."""
        for face in self._faces.values():
            face.view.invalidate()
        if state is not None:
            if self._states.get(server, self._told.get(server)) == state:
                return
            self._states[server] = state
        self._servers_changed = self._servers_changed or server is not None
        self._catalog_changed = True
        if self._wake is not None:
            self._wake.set()

    def _resource_updated(self, label: str, uri: str) -> None:
        self._updated[uri] = label
        if self._wake is not None:
            self._wake.set()

    async def _fan_out(self) -> None:
        """Tell every connected client of every profile when the catalog changed or a subscribed resource
        was updated (bursts coalesce)."""
        while True:
            self._wake = anyio.Event()
            if not (self._catalog_changed or self._updated):
                await self._wake.wait()
            changed, self._catalog_changed = self._catalog_changed, False
            servers, self._servers_changed = self._servers_changed, False
            updated, self._updated = self._updated, {}
            states, self._states = self._states, {}
            claim = self._claim(states)
            for face in self._faces.values():
                try:
                    if changed:
                        await face.notify_changed(servers, claim)
                    for uri, label in updated.items():
                        await face.notify_updated(label, uri)
                except Exception:  # one profile's failure must neither stop the fan-out nor the server
                    logger.exception("profile %r: telling clients of a change failed", face.profile)

    def _claim(self, states: dict[str | None, str]) -> TellingClaim | None:
        """Whether a 2025-11-25 session is this replica's to tell of these states (None: every one is)."""
        self._told.update(states)
        shared = self._shared
        if shared is None or not states:
            return None

        async def claim(profile: str, session_id: str) -> bool:
            return await shared.tell_session(profile, session_id, states)

        return claim

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Keep the list-changed fan-out and the parked calls' tasks going for the block (nested uses share one)."""
        self._running += 1
        try:
            if self._running > 1:
                yield
                return
            async with anyio.create_task_group() as group:
                group.start_soon(self._fan_out, name="toolmesh gateway list-changed fan-out")
                if self._shared is not None:
                    group.start_soon(self._shared.run, name="toolmesh gateway shared catalog changes")
                self._rounds.group = group
                if self._rounds.handoff is not None:
                    group.start_soon(self._rounds.handoff.serve, self._rounds.resume, group)
                try:
                    yield
                finally:
                    self._rounds.group = None
                    group.cancel_scope.cancel()
        finally:
            self._running -= 1
            if not self._running:
                self._wake = None

    # -- transports ---------------------------------------------------------------

    def _shared_sessions(self) -> SharedSessions | None:
        """2025-11-25 sessions in the shared state (one replica name per gateway), or None without one."""
        if self._sessions is None and self.state.shared:
            from toolmesh.gateway._sessions.deployment import SharedSessions  # imports redis: only when shared

            self._sessions = SharedSessions.of(self.state, self.replica)
        return self._sessions

    async def run_stdio(self, profile: str = DEFAULT_PROFILE) -> None:
        """Serve one profile on this process's stdin/stdout until stdin ends.

        Raises:
            ConfigurationError: for an unknown profile.
        """
        from mcp.server.stdio import stdio_server

        server = self._face(profile).server
        async with self.running(), stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    def http_app(
        self, settings: HttpSettings, *, responses: AppExtension | None = None, lean: bool = True
    ) -> Starlette:
        """The ASGI app serving every profile: ``{path}`` the default one, ``/<profile>{path}`` the others.

        Its lifespan runs the profiles' session managers: serve it with an ASGI server
        that runs lifespans (uvicorn does). With ``responses``, the app also serves that
        Responses endpoint (``/v1/responses``), open for the app's lifetime. With a shared
        state backend, 2025-11-25 sessions are kept in it, so that any replica serves them.
        ``lean=False`` sends every request through the SDK's server (no lean path for ``tools/*``).
        """
        managers = session_managers(settings, self._faces, self._shared_sessions())
        app = build_app(
            settings, self._endpoints(settings, managers, lean), Lifecycle(managers, self._faces, self.running).lifespan
        )
        if responses is not None:
            responses.mount(app)
        return app

    def _endpoints(
        self, settings: HttpSettings, managers: Mapping[str, StreamableHTTPSessionManager], lean: bool
    ) -> Mapping[str, Endpoint]:
        """Each profile's endpoint behind the guard: its session manager, behind the lean path unless not ``lean``."""
        return lean_paths(self._faces, managers, settings.max_body_bytes) if lean else managers

    async def serve_http(
        self,
        settings: HttpSettings,
        *,
        on_ready: Callable[[str], None] | None = None,
        responses: AppExtension | None = None,
        lean: bool = True,
        resource_server: ResourceServer | None = None,
    ) -> None:
        """Serve every profile over HTTP with uvicorn until cancelled; then close every client session.

        ``on_ready(base_url)`` is called once the socket listens and the app runs, with
        the real port (``http://127.0.0.1:PORT``; profiles are under ``settings.path``).
        ``lean=False`` sends every request through the SDK's server. With ``settings.oauth``,
        the issuer's metadata and keys are fetched before the socket listens, unless
        ``resource_server`` (made for ``settings.oauth`` and primed: ``toolmesh serve`` does so
        before it starts any upstream server) did already.

        Raises:
            OSError: when the address cannot be bound.
            ConfigurationError: when the issuer's keys cannot be fetched.
        """
        managers = session_managers(settings, self._faces, self._shared_sessions())
        lifecycle = Lifecycle(managers, self._faces, self.running)
        app = build_app(settings, self._endpoints(settings, managers, lean), None, resource_server)
        await prime(app)
        if responses is None:
            await serve(app, lifecycle, settings.host, settings.port, on_ready, reuse_port=settings.reuse_port)
            return
        responses.route(app)
        async with responses.running():
            await serve(app, lifecycle, settings.host, settings.port, on_ready, reuse_port=settings.reuse_port)
