"""ToolRegistry: one catalog of typed rows; register, introspect, dispatch.

A registry owns its rows; the MCP servers it connects are owned by its
``mcp._servers.McpServers``, which hands it their rows. Reading rows and dispatching
are shared with ``ToolSnapshot`` (``_snapshot``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from functools import partial
from types import TracebackType
from typing import Any, ParamSpec, TypeVar, Unpack, overload

from opentelemetry import trace

from toolmesh._context.asking import HostCallbacks
from toolmesh._context.context import ElicitationCallback, SamplingCallback, ToolContext
from toolmesh._core.capabilities import ToolCapabilities
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.errors import ConfigurationError, ErrorKind, NameCollisionError, ToolExecutionError
from toolmesh._core.names import NamePolicy
from toolmesh._rows.native import NativeTool, ToolOptions, caller_namespace, check_options
from toolmesh._rows.rows import (
    DynamicEntry,
    DynamicHandler,
    Entry,
    HostedEntry,
    McpEntry,
    NativeEntry,
    describe_row,
)
from toolmesh._search.matches import AsyncRanker, Ranker
from toolmesh._search.policy import DeferPolicy, deferred_names
from toolmesh.mcp._client.servers import McpServers

from .catalog import Catalog, catalog_index
from .changes import CatalogEvents, reported
from .execution import DispatchSettings, run_native
from .registry_mcp import McpMethods
from .searching import RegistrySearch
from .snapshot import SnapshotSearch, ToolSnapshot

__all__ = ["ToolRegistry"]


P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R")


class ToolRegistry(Catalog, CatalogEvents, McpMethods, RegistrySearch):
    """One catalog of typed rows: native functions, dynamic and hosted tools, MCP servers' tools.

    Use it as ``async with ToolRegistry() as registry:`` when it connects MCP servers,
    so leaving the block closes every session and ends every child process.
    """

    def __init__(
        self,
        *,
        show_error_details: bool = False,
        default_timeout: float | None = None,
        tracer_provider: trace.TracerProvider | None = None,
        names: NamePolicy | None = None,
        elicitation: ElicitationCallback | None = None,
        sampling: SamplingCallback | None = None,
        defer: DeferPolicy | None = None,
        ranker: Ranker | AsyncRanker | None = None,
    ) -> None:
        """Args:
        show_error_details: Show the text of unexpected exceptions to the model (default:
            only the kind's generic text; the detail stays in the error and the log).
        default_timeout: Seconds any call may take unless its row or context says otherwise.
        tracer_provider: Where dispatch spans go; the global OpenTelemetry provider if None.
        names: How MCP tools get model-visible names and which names are valid (native,
            dynamic and hosted names are checked against its provider rule); the default
            policy names MCP tools ``{server}__{tool}`` under the MCP name rule.
        elicitation: Answers tools' requests for user input (MCP elicitation, form and URL
            modes, and native ``ctx.elicit``) for every call whose context sets none. Only
            with it do MCP servers connected to this registry learn that the client supports
            elicitation (capabilities are declared at connect): without it, per-call
            ``ToolContext.elicitation`` callbacks answer native tools only.
        sampling: Answers tools' requests for a completion of the host's model (MCP sampling
            and native ``ctx.sample``) for every call whose context sets none; declares the
            sampling capability to MCP servers, as ``elicitation`` does for its own.
        defer: Which rows a turn leaves to be found by search (rows may also ask for it
            themselves with ``defer_loading``), and how calls of unfound rows are treated.
        ranker: A host ranking (``ranker(query, rows) -> {name: score}``) fused with the
            lexical one in every search of this registry and its snapshots (an ``async def``
            ranker is used by ``asearch`` and by a turn's search row; ``search`` refuses it).
        """
        if default_timeout is not None and default_timeout <= 0:
            raise ConfigurationError(f"default_timeout must be positive seconds, got {default_timeout!r}")
        self._rows, self._listeners = {}, []
        callbacks = HostCallbacks(elicitation, sampling) if elicitation or sampling else None
        self._settings = DispatchSettings(show_error_details, default_timeout, tracer_provider, callbacks)
        self._by_function: dict[int, NativeEntry] = {}
        self._names = names
        self._local: dict[str, Entry] = {}
        self._mcp = McpServers(lambda: self._rows, lambda: self.name_policy, self._rebuild, callbacks)
        """The one owner of MCP server state: connections, their rows, refreshes."""
        self._lifecycle = "new"
        if defer is not None and not isinstance(defer, DeferPolicy):
            raise ConfigurationError(f"defer must be a DeferPolicy, not {type(defer).__name__}")
        self._defer = defer
        self._ranker = ranker
        self._deferred: tuple[int, frozenset[str]] = (-1, frozenset())
        self._searches: tuple[int, dict[tuple[bool, bool], SnapshotSearch]] = (-1, {})

    @property
    def name_policy(self) -> NamePolicy:
        """The policy naming MCP tools (the default one when none was given)."""
        if self._names is None:
            self._names = NamePolicy()
        return self._names

    @property
    def ranker(self) -> Ranker | AsyncRanker | None:
        """The host ranker fused into this registry's searches (None: lexical only)."""
        return self._ranker

    @property
    def dispatch_settings(self) -> DispatchSettings:
        """How this registry dispatches: error details, default timeout, tracer, default callbacks."""
        return self._settings

    async def __aenter__(self) -> ToolRegistry:
        if self._lifecycle != "new":
            raise RuntimeError(
                f"this ToolRegistry is {self._lifecycle}; a registry can be entered once: make a new ToolRegistry()"
            )
        await self._mcp.__aenter__()
        self._lifecycle = "open"
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close everything the registry owns: every MCP session and stdio child process."""
        if self._lifecycle == "closed":
            return
        self._lifecycle = "closed"
        self._close_search()
        await self._mcp.aclose()

    def __repr__(self) -> str:
        servers = f", servers={self._mcp.labels()!r}" if self._mcp else ""
        return f"ToolRegistry({len(self._rows)} rows{servers})"

    # -- registration -------------------------------------------------------------

    def _check_name(self, name: str, what: str) -> None:
        self.name_policy.check_name(name, owner=what)

    @reported
    def _add(self, row: Entry, replace: bool) -> None:
        existing = self._rows.get(row.name)
        if isinstance(existing, McpEntry):
            raise NameCollisionError(
                row.name,
                describe_row(existing),
                describe_row(row),
                f"Register it under another name, or give the MCP tool another name with "
                f"aliases={{{existing.wire_name!r}: '<new name>'}} on server {existing.server!r}.",
            )
        if existing is not None and not replace:
            raise NameCollisionError(row.name, describe_row(existing), describe_row(row))
        if isinstance(existing, NativeEntry):
            self._forget_function(existing)
        self._local[row.name] = row
        if self._mcp and existing is None:
            self._rebuild()
        else:
            self._rows[row.name] = row
            self._touch()
        if isinstance(row, NativeEntry):
            self._by_function[id(row.tool)] = row
            self._by_function[id(row.tool.fn)] = row

    def _forget_function(self, row: NativeEntry) -> None:
        for key in (id(row.tool), id(row.tool.fn)):
            if self._by_function.get(key) is row:
                del self._by_function[key]

    def register(
        self,
        fn: NativeTool[P, T] | Callable[P, T],
        *,
        name: str | None = None,
        replace: bool = False,
        timeout: float | None = None,
        defer_loading: bool | None = None,
    ) -> NativeEntry:
        """Add a ``@tool`` (or a plain function, decorated on the way) as a native row.

        Raises:
            NameCollisionError: when the name is taken (``replace=True`` replaces in place).
            ConfigurationError: for a signature or name that cannot be a tool.
        """
        native = fn if isinstance(fn, NativeTool) else NativeTool(fn, localns=caller_namespace())
        row_name = name or native.name
        self._check_name(row_name, f"native tool {native.name!r}")
        definition = native.definition
        if row_name != native.name:
            definition = ToolDefinition(
                row_name, definition.description, definition.parameters, definition.output_schema
            )
        row = NativeEntry(
            row_name,
            definition,
            native.capabilities,
            native,
            timeout if timeout is not None else native.timeout,
            native.show_error_details,
            defer_loading if defer_loading is not None else native.defer_loading,
        )
        self._add(row, replace)
        return row

    @overload
    def tool(self, fn: Callable[P, T], /) -> NativeTool[P, T]: ...

    @overload
    def tool(
        self, *, replace: bool = False, **options: Unpack[ToolOptions]
    ) -> Callable[[Callable[P, T]], NativeTool[P, T]]: ...

    def tool(  # type: ignore[misc]
        self, fn: Callable[P, T] | None = None, /, *, replace: bool = False, **options: Unpack[ToolOptions]
    ) -> NativeTool[P, T] | Callable[[Callable[P, T]], NativeTool[P, T]]:
        """Decorator form of ``register``: ``@registry.tool`` or ``@registry.tool(name=...)`` (see ``ToolOptions``)."""
        check_options("registry.tool()", options)
        localns = caller_namespace()

        def decorate(func: Callable[P, T]) -> NativeTool[P, T]:
            native = NativeTool(func, localns=localns, **options)
            self.register(native, replace=replace)
            return native

        return decorate(fn) if fn is not None else decorate

    def register_dynamic(
        self,
        name: str,
        schema: Mapping[str, Any],
        handler: DynamicHandler,
        *,
        description: str = "",
        capabilities: ToolCapabilities | None = None,
        timeout: float | None = None,
        show_error_details: bool | None = None,
        replace: bool = False,
        defer_loading: bool | None = None,
    ) -> DynamicEntry:
        """Add a tool defined at run time: a JSON Schema and ``async handler(arguments[, ctx])``.

        Raises:
            NameCollisionError: when the name is taken.
            ConfigurationError: for an invalid schema or handler.
        """
        self._check_name(name, f"dynamic tool {name!r}")
        row = DynamicEntry.create(
            name,
            schema,
            handler,
            description=description,
            capabilities=capabilities,
            timeout=timeout,
            show_error_details=show_error_details,
            defer_loading=defer_loading,
        )
        self._add(row, replace)
        return row

    def register_hosted(
        self,
        name: str,
        provider_tool: Mapping[str, Any],
        *,
        description: str = "",
        provider: str | None = None,
        parameters: Mapping[str, Any] | None = None,
        replace: bool = False,
    ) -> HostedEntry:
        """Advertise a provider-executed tool (e.g. ``{"type": "web_search"}``); never run locally."""
        self._check_name(name, f"hosted tool {name!r}")
        if not isinstance(provider_tool, Mapping) or "type" not in provider_tool:
            raise ConfigurationError(
                f"hosted tool {name!r}: provider_tool must be the provider's declaration with a "
                f"'type', e.g. {{'type': 'web_search'}}; got {provider_tool!r:.80}"
            )
        definition = ToolDefinition(name, description, dict(parameters or {"type": "object", "properties": {}}))
        row = HostedEntry(name, definition, ToolCapabilities(), dict(provider_tool), provider)
        self._add(row, replace)
        return row

    @reported
    def unregister(self, name: str) -> Entry:
        """Remove the row named ``name`` and return it.

        Raises:
            ToolNotFoundError: when there is no such row (with close names suggested).
        """
        row = self[name]
        del self._rows[name]
        self._touch()
        if isinstance(row, McpEntry):
            self._mcp.forget(row)
        else:
            self._local.pop(name, None)
        if isinstance(row, NativeEntry):
            self._forget_function(row)
        return row

    # -- MCP servers ----------------------------------------------------------------

    def _rebuild(self, server: str | None = None, refused: Sequence[str] = ()) -> None:
        """Catalog order: local rows in registration order, then servers in connection order."""
        rows: dict[str, Entry] = dict(self._local)
        for server_rows in self._mcp.row_sets():
            rows.update(server_rows)
        with self._reporting():
            self._refuse(server, refused)
            self._rows = rows
        self._touch()

    def snapshot(self, active: Iterable[str] | None = None, *, defer: bool = True) -> ToolSnapshot:
        """Freeze the rows a turn advertises (all, or the ``active`` names, in catalog order).

        With ``defer`` (the default) the rows the registry defers are left to be found by the
        turn's search row; ``defer=False`` declares every row.

        Raises:
            ToolNotFoundError: when ``active`` names a row that does not exist.
        """
        search = self._snapshot_search(active is None, defer)
        if active is None:
            snapshot = ToolSnapshot(self._rows, self._settings, self._name_index, search)
            if self._name_index is None:  # indexed on the snapshot's own (frozen) rows
                index = catalog_index(snapshot._rows, self._last_index)
                snapshot._name_index = self._name_index = self._last_index = index
            # same names, same index: it is built at most once per catalog version
            return snapshot
        wanted = set(active)
        for name in wanted:
            if name not in self._rows:
                raise self._missing(name)
        return ToolSnapshot({n: r for n, r in self._rows.items() if n in wanted}, self._settings, None, search)

    def _snapshot_search(self, whole: bool, defer: bool) -> SnapshotSearch:
        """What a snapshot of this catalog version searches with (made once per version and kind)."""
        generation = self._generation
        cached = self._searches
        if cached[0] != generation:
            cached = self._searches = (generation, {})
        key = (whole, defer)
        search = cached[1].get(key)
        if search is None:
            deferred = self.deferred_names() if defer else frozenset()
            shared = partial(self._index_at, generation)
            search = cached[1][key] = SnapshotSearch(self._defer, self._ranker, deferred, shared, whole)
        return search

    def offered(self) -> list[Entry]:
        """The rows a provider declares for this registry: those not deferred (a turn's snapshot
        also offers the rows its searches found, and its search row)."""
        deferred = self.deferred_names()
        return [row for name, row in self._rows.items() if name not in deferred]

    def deferred_names(self) -> frozenset[str]:
        """The names of the rows a turn leaves to be found by search (row settings, then the ``DeferPolicy``)."""
        if self._deferred[0] != self._generation:
            self._deferred = (self._generation, deferred_names(self._rows, self._defer))
        return self._deferred[1]

    # -- typed direct calls -------------------------------------------------------

    @overload
    async def dispatch_native(
        self,
        fn: NativeTool[P, Coroutine[Any, Any, R]],
        /,
        *args: Any,
        ctx: ToolContext[Any] | None = None,
        **kwargs: Any,
    ) -> R: ...

    @overload
    async def dispatch_native(
        self,
        fn: Callable[..., Coroutine[Any, Any, R]],
        /,
        *args: Any,
        ctx: ToolContext[Any] | None = None,
        **kwargs: Any,
    ) -> R: ...

    @overload
    async def dispatch_native(
        self, fn: Callable[..., R], /, *args: Any, ctx: ToolContext[Any] | None = None, **kwargs: Any
    ) -> R: ...

    async def dispatch_native(
        self, fn: Callable[..., Any], /, *args: Any, ctx: ToolContext[Any] | None = None, **kwargs: Any
    ) -> Any:
        """Call a registered native tool with Python arguments; return its own return value.

        Arguments are validated (and coerced) by the tool's argument model, the call runs
        under the row's timeout and tracing, like ``dispatch``.

        Raises:
            ToolExecutionError: for unknown functions, invalid arguments, timeouts and
                whatever the tool raised (wrapped as kind ``internal`` unless deliberate).
        """
        row = self._by_function.get(id(fn))
        if row is None:
            label = getattr(fn, "__qualname__", repr(fn))
            raise ToolExecutionError(
                f"{label} is not registered in this registry; call registry.register({label}) first",
                kind=ErrorKind.NOT_FOUND,
            )
        return await run_native(row, args, kwargs, ctx, self._settings)
