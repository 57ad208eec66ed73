"""The MCP servers one registry owns: their connections, rows, refreshes and lifecycle.

``ToolRegistry`` holds rows and dispatches; this module is the one owner of server
state. It connects servers (one, or several all or nothing), keeps each server's rows
in connection order, refreshes a server's rows when its tool list changes (background
refreshes of one server coalesce: one in flight and one pending, started at least
``REFRESH_GAP`` after the previous one ended, so a server announcing changes in a loop
costs a listing a second, not one per announcement; a listing older than one already
applied is dropped), and closes every session when the registry closes. The registry sees the
server rows through ``row_sets()`` and is told to rebuild its catalog on every change.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from toolmesh._core.errors import ConfigurationError, ErrorKind, ToolExecutionError
from toolmesh._rows.rows import Entry, McpEntry, describe_row

if TYPE_CHECKING:
    from toolmesh._context.asking import HostCallbacks
    from toolmesh._core.names import NamePolicy
    from toolmesh._core.output import ToolOutput
    from toolmesh.mcp._spec.server import McpServer

    from .connection import McpConnection

__all__ = ["McpServers"]

_logger = logging.getLogger("toolmesh")

REFRESH_GAP = 1.0
"""Seconds from the end of one background refresh of a server to the start of the next: the
announcements of changes that arrive meanwhile wait, and are all answered by that one."""


@dataclass(slots=True)
class _Server:
    connection: McpConnection
    """The server's supervised session."""
    rows: dict[str, McpEntry]
    """The server's rows by model-visible name, in the server's order."""
    issued: int = 0
    """The last listing generation a refresh asked for."""
    applied: int = 0
    """The last listing generation whose rows were applied."""


@dataclass(slots=True)
class _Discovered:
    connection: McpConnection
    """An open connection whose rows are not added yet."""
    tools: list[Any]
    """The listed tools, after the spec's filters."""


async def _close(connection: McpConnection) -> None:
    with anyio.CancelScope(shield=True):
        await connection.aclose()


class McpServers:
    """The connected MCP servers of one registry, in connection order.

    Args:
        rows: The registry's current rows (every family), to find names already owned.
        names: The registry's name policy.
        changed: Called (without awaiting) whenever a server's rows were added,
            replaced or removed, so the registry rebuilds its catalog; after a refresh
            with the server's label and the names it was refused.
        callbacks: The registry's default elicitation and sampling callbacks: each one
            present is declared as a capability to every server connected.
    """

    def __init__(
        self,
        rows: Callable[[], Mapping[str, Entry]],
        names: Callable[[], NamePolicy],
        changed: Callable[[str | None, Sequence[str]], None],
        callbacks: HostCallbacks | None = None,
    ) -> None:
        self._rows = rows
        self._callbacks = callbacks
        self._names = names
        self._changed = changed
        self._servers: dict[str, _Server] = {}
        self._refreshing: set[str] = set()
        self._refresh_again: set[str] = set()
        self._refreshed_at: dict[str, float] = {}
        """When each server's last background refresh ended (``anyio.current_time()``)."""
        self._resource_listeners: list[Callable[[str, str], None]] = []
        self._exit_stack = AsyncExitStack()
        self._task_group: anyio.abc.TaskGroup | None = None
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------

    async def __aenter__(self) -> McpServers:
        self._task_group = await self._exit_stack.enter_async_context(anyio.create_task_group())
        self._exit_stack.push_async_callback(self._close_servers)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every session (and stdio child process); connecting afterwards is refused."""
        self._closed = True
        await self._exit_stack.aclose()

    async def _close_servers(self) -> None:
        connections = [server.connection for server in self._servers.values()]
        for label in list(self._servers):
            self._drop(label)
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for connection in connections:
                    group.start_soon(connection.aclose)
        if self._task_group is not None:
            # Reconnect attempts still sleeping or starting have nothing left to serve.
            self._task_group.cancel_scope.cancel()

    def _require_open(self, what: str) -> anyio.abc.TaskGroup:
        if self._closed:
            raise ConfigurationError(f"{what}: this ToolRegistry is closed; make a new one")
        if self._task_group is None:
            raise ConfigurationError(
                f"{what}: MCP servers need the registry's lifecycle; use "
                "`async with ToolRegistry() as registry:` and connect inside the block, so leaving it "
                "closes every session and child process"
            )
        return self._task_group

    # -- what the registry reads ----------------------------------------------------

    def __bool__(self) -> bool:
        return bool(self._servers)

    def labels(self) -> list[str]:
        """The connected servers' labels, in connection order."""
        return list(self._servers)

    def row_sets(self) -> Iterator[Mapping[str, McpEntry]]:
        """Each server's rows, servers in connection order."""
        return (server.rows for server in self._servers.values())

    def forget(self, row: McpEntry) -> None:
        """Stop tracking a row the registry removed (the server stays connected)."""
        server = self._servers.get(row.server)
        if server is not None:
            server.rows.pop(row.name, None)

    def _known(self) -> str:
        return ", ".join(repr(k) for k in self._servers) or "none"

    def connection(self, label: str) -> McpConnection:
        """The connection of the server ``label``.

        Raises:
            ConfigurationError: when no server of that label is connected.
        """
        try:
            return self._servers[label].connection
        except KeyError:
            raise ConfigurationError(f"no MCP server {label!r} is connected (connected: {self._known()})") from None

    def connections(self) -> list[McpConnection]:
        """Every connected server's connection, in connection order."""
        return [server.connection for server in self._servers.values()]

    # -- connecting -----------------------------------------------------------------

    def _check_free(self, label: str) -> None:
        if label in self._servers:
            raise ConfigurationError(
                f"MCP server {label!r} is already connected; give the other server another label, "
                f"or disconnect({label!r}) first"
            )

    async def _discover(self, server: McpServer) -> _Discovered:
        from .connection import McpConnection

        group = self._require_open(f"connect({server.label!r})")
        self._check_free(server.label)
        connection = McpConnection(server, group, self._callbacks)
        return _Discovered(connection, await connection.open())  # the tools the spec's filters keep

    def _commit(self, found: _Discovered) -> None:
        """Add one server's rows, all or nothing (no await: nothing can interleave)."""
        from .tool_listing import build_rows, owners

        connection = found.connection
        label = connection.label
        self._check_free(label)
        rows = build_rows(connection.spec, found.tools, self._names(), owners(self._rows(), describe_row), connection)
        if not rows:
            _logger.warning("MCP server %r is connected but offers no tools (after filters)", label)
        self._servers[label] = _Server(connection, {row.name: row for row in rows})
        self._changed(None, ())
        connection.on_tools_changed = self._tools_changed
        connection.resources.on_updated = self._resource_updated

    def _drop(self, label: str) -> McpConnection:
        server = self._servers.pop(label)
        self._refreshed_at.pop(label, None)
        self._changed(None, ())
        return server.connection

    async def connect(self, server: McpServer) -> McpConnection:
        """Connect one server and add its rows, all or nothing (see ``ToolRegistry.connect``)."""
        found = await self._discover(server)
        try:
            self._commit(found)
        except BaseException:
            await _close(found.connection)
            raise
        return found.connection

    async def connect_all(
        self,
        servers: Iterable[McpServer],
        *,
        skip_failures: bool = False,
        on_progress: Callable[[McpServer, int | Exception], None] | None = None,
    ) -> list[McpConnection]:
        """Connect several servers in parallel (see ``ToolRegistry.connect_all``).

        Every connection made is entered on an exit stack as it opens: a failure or a
        cancellation anywhere closes them all; only a call that succeeds (or skips its
        failures) keeps them, with ``pop_all()``.
        """
        specs = list(servers)
        labels = [spec.label for spec in specs]
        for label in labels:
            if labels.count(label) > 1:
                raise ConfigurationError(f"connect_all: the label {label!r} is given twice; labels must be unique")
        outcomes: list[_Discovered | Exception | None] = [None] * len(specs)

        async with AsyncExitStack() as opened:

            async def discover(index: int) -> None:
                try:
                    outcomes[index] = found = await self._discover(specs[index])
                except Exception as exc:
                    outcomes[index] = exc
                    if on_progress is not None:
                        on_progress(specs[index], exc)
                else:
                    opened.push_async_callback(_close, found.connection)
                    if on_progress is not None:
                        on_progress(specs[index], len(found.tools))

            async with anyio.create_task_group() as group:
                for index in range(len(specs)):
                    group.start_soon(discover, index)

            # Commit (or roll back) without awaiting, so no other task sees a half-done state.
            connected: list[McpConnection] = []
            failures: list[Exception] = []
            rejected: list[McpConnection] = []
            for outcome in outcomes:
                if isinstance(outcome, _Discovered):
                    try:
                        self._commit(outcome)
                    except Exception as exc:
                        failures.append(exc)
                        rejected.append(outcome.connection)
                        if on_progress is not None:
                            on_progress(outcome.connection.spec, exc)
                    else:
                        connected.append(outcome.connection)
                elif isinstance(outcome, Exception):
                    failures.append(outcome)
            if failures and not skip_failures:
                for connection in connected:
                    self._drop(connection.label)
                first = failures[0]
                for other in failures[1:]:
                    first.add_note(f"also: {other}")
                raise first  # leaving the stack closes every connection of this call
            opened.pop_all()
        for connection in rejected:
            await _close(connection)
        for failure in failures:
            _logger.warning("connect_all: skipped a server: %s", failure)
        return connected

    async def disconnect(self, label: str) -> None:
        """Remove a server's rows and close its session (see ``ToolRegistry.disconnect``)."""
        if label not in self._servers:
            raise ConfigurationError(f"disconnect: no MCP server {label!r} is connected (connected: {self._known()})")
        await _close(self._drop(label))

    def on_resource_updated(self, callback: Callable[[str, str], None]) -> Callable[[], None]:
        """Call ``callback(label, uri)`` on each update of a subscribed resource; returns the remover."""
        self._resource_listeners.append(callback)

        def remove() -> None:
            if callback in self._resource_listeners:
                self._resource_listeners.remove(callback)

        return remove

    def _resource_updated(self, label: str, uri: str) -> None:
        for callback in list(self._resource_listeners):
            callback(label, uri)

    # -- refreshing -----------------------------------------------------------------

    def _tools_changed(self, connection: McpConnection) -> None:
        """Refresh a server whose tool list changed, in the background; changes coalesce."""
        label = connection.label
        server = self._servers.get(label)
        if self._task_group is None or server is None or server.connection is not connection:
            return
        if label in self._refreshing:
            self._refresh_again.add(label)
            return
        self._refreshing.add(label)
        self._task_group.start_soon(self._auto_refresh, label, name=f"toolmesh MCP refresh {label!r}")

    async def _auto_refresh(self, label: str) -> None:
        """Refresh ``label`` once its gap is over, and again while changes were announced meanwhile.

        Calls never wait for this: it runs beside them, and the gap leaves the event loop
        (and the server) to them between refreshes.
        """
        try:
            while label in self._servers:
                last = self._refreshed_at.get(label)
                wait = 0.0 if last is None else last + REFRESH_GAP - anyio.current_time()
                if wait > 0:
                    await anyio.sleep(wait)
                    if label not in self._servers:
                        return
                self._refresh_again.discard(label)  # this refresh answers every announcement so far
                try:
                    await self.refresh(label)
                except Exception as exc:  # a background refresh must never take the registry down
                    _logger.warning("MCP server %r: refreshing its tools failed: %s", label, exc)
                finally:
                    self._refreshed_at[label] = anyio.current_time()
                if label not in self._refresh_again:
                    return
        finally:
            self._refreshing.discard(label)

    async def refresh(self, label: str) -> list[McpEntry]:
        """List a server's tools again and reconcile its rows (see ``ToolRegistry.refresh``)."""
        from .tool_listing import owners, rebuild_rows

        connection = self.connection(label)
        server = self._servers[label]
        server.issued += 1
        generation = server.issued
        tools = await connection.list_tools()  # the tools the spec's filters keep
        current = self._servers.get(label)
        if current is None or current.connection is not connection:
            return []  # disconnected (or replaced) while listing: its rows are retired already
        if generation < current.applied:
            return list(current.rows.values())
        others = {name: row for name, row in self._rows().items() if name not in current.rows}
        refused: list[str] = []
        taken = owners(others, describe_row)
        previous = {row.wire_name: row for row in current.rows.values()}
        rows = rebuild_rows(connection.spec, tools, self._names(), taken, connection, refused, previous)
        current.applied = generation
        current.rows = {row.name: row for row in rows}
        self._changed(label, refused)
        return rows

    # -- resources ------------------------------------------------------------------

    async def read_resource(self, server: str, uri: str) -> ToolOutput:
        """Read a resource of a connected server (see ``ToolRegistry.read_resource``)."""
        if server not in self._servers:
            raise ToolExecutionError(
                f"read_resource: no MCP server {server!r} is connected (connected: {self._known()})",
                kind=ErrorKind.NOT_FOUND,
            )
        return await self._servers[server].connection.read_resource(uri)
