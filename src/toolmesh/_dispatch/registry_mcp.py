"""The MCP half of ``ToolRegistry``'s API: connecting servers and reaching them.

Every method hands over to the registry's ``McpServers`` (``self._mcp``), which owns the
sessions, their rows and refreshes; this mixin only gives those operations their public
names and documentation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from toolmesh.mcp._client import resources as _resources

if TYPE_CHECKING:
    import mcp_types

    from toolmesh._core.output import ToolOutput
    from toolmesh._rows.rows import McpEntry
    from toolmesh.mcp._client.connection import McpConnection
    from toolmesh.mcp._client.servers import McpServers
    from toolmesh.mcp._spec.server import McpServer

__all__ = ["McpMethods"]


class McpMethods:
    """Connect, disconnect, refresh and reach the MCP servers of a registry."""

    _mcp: McpServers

    async def connect(self, server: McpServer) -> McpConnection:
        """Connect an MCP server and add its tools as ``McpEntry`` rows (after the existing rows).

        Connecting is the handshake plus every page of ``tools/list``, within the spec's
        ``timeout``. The server's rows are added all or nothing.

        Returns:
            The server's connection (protocol version, server info, capabilities).

        Raises:
            ServerConnectionError: when the server cannot be started, reached or listed in
                time; the registry is unchanged.
            NameCollisionError: when a tool's model-visible name is taken (naming both
                owners); the registry is unchanged and the session closed.
            ConfigurationError: outside ``async with ToolRegistry()``, or for a label that
                is already connected.
        """
        return await self._mcp.connect(server)

    async def connect_all(
        self,
        servers: Iterable[McpServer],
        *,
        skip_failures: bool = False,
        on_progress: Callable[[McpServer, int | Exception], None] | None = None,
    ) -> list[McpConnection]:
        """Connect several servers in parallel; rows are added in the order of ``servers``.

        By default it is all or nothing: when any server fails (connect or name
        collision), every server of this call is closed, the registry is unchanged and
        the first failure (in the order given) is raised, with the others as notes.
        With ``skip_failures=True`` failed servers are logged and left out.
        ``on_progress(spec, outcome)``, for progress displays, is called as each server's
        outcome becomes known: the number of tools it listed, or the exception that failed it.

        Returns:
            The connections made, in the order of ``servers``.

        Raises:
            ServerConnectionError, NameCollisionError, ConfigurationError: as ``connect``.
        """
        return await self._mcp.connect_all(servers, skip_failures=skip_failures, on_progress=on_progress)

    async def disconnect(self, label: str) -> None:
        """Remove a server's rows and close its session (and its stdio child process).

        Raises:
            ConfigurationError: when no server of that label is connected.
        """
        await self._mcp.disconnect(label)

    async def refresh(self, label: str) -> list[McpEntry]:
        """List a connected server's tools again and reconcile its rows with the answer.

        New tools get rows, tools the server no longer lists lose theirs, the others are
        rebuilt from the new listing; the server keeps its place in the catalog order.
        The listing is fetched without holding anything, and an answer older than one
        already applied is dropped, so a slow refresh never rolls back a newer one. A
        tool whose name is now owned by another row (native or another server's) is left
        out with a warning: a refresh never takes a name. Snapshots taken before keep
        their rows.

        Returns:
            The server's rows after the refresh, in the server's order.

        Raises:
            ServerConnectionError: when listing fails; the rows are unchanged.
            ConfigurationError: when no server of that label is connected.
        """
        return await self._mcp.refresh(label)

    def connection(self, label: str) -> McpConnection:
        """The connection of the server ``label``.

        Raises:
            ConfigurationError: when no server of that label is connected.
        """
        return self._mcp.connection(label)

    def connections(self) -> list[McpConnection]:
        """Every connected server's connection, in connection order."""
        return self._mcp.connections()

    async def set_server_log_level(self, label: str, level: str) -> None:
        """Ask server ``label`` for log messages at ``level`` and above (``ConfigurationError``: no such server)."""
        await self.connection(label).server_log.set_level(level)

    async def read_resource(self, server: str, uri: str) -> ToolOutput:
        """Read a resource of a connected server (``resources/read``) as output blocks.

        Raises:
            ToolExecutionError: ``not_found`` for an unknown server or URI, ``unavailable``
                when the server cannot be reached, ``timeout`` after its ``call_timeout``.
        """
        return await self._mcp.read_resource(server, uri)

    # -- resources and prompts (answers pass through as MCP types; see mcp._resources) --

    async def list_resources(self, server: str) -> list[mcp_types.Resource]:
        """Every resource server ``server`` lists (all pages).

        Raises:
            ConfigurationError: when no server of that label is connected.
            ToolExecutionError: when the server cannot be reached or answers with an error.
        """
        return await _resources.list_resources(self.connection(server))

    async def list_resource_templates(self, server: str) -> list[mcp_types.ResourceTemplate]:
        """Every resource template server ``server`` lists (errors as ``list_resources``)."""
        return await _resources.list_resource_templates(self.connection(server))

    async def read_resource_result(self, server: str, uri: str) -> mcp_types.ReadResourceResult:
        """Server ``server``'s own ``resources/read`` answer for ``uri`` (errors as ``read_resource``)."""
        return await _resources.read_resource(self.connection(server), uri)

    async def list_prompts(self, server: str) -> list[mcp_types.Prompt]:
        """Every prompt server ``server`` lists (errors as ``list_resources``)."""
        return await _resources.list_prompts(self.connection(server))

    async def get_prompt(
        self, server: str, name: str, arguments: dict[str, str] | None = None
    ) -> mcp_types.GetPromptResult:
        """Server ``server``'s prompt ``name`` (its own name), filled with ``arguments``.

        Raises:
            ConfigurationError: when no server of that label is connected.
            ToolExecutionError: ``not_found``/``invalid_arguments`` as the server answers,
                ``unavailable`` when it cannot be reached.
        """
        return await _resources.get_prompt(self.connection(server), name, arguments)

    async def complete(
        self,
        server: str,
        ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
        argument: dict[str, str],
        context_arguments: dict[str, str] | None = None,
    ) -> mcp_types.CompleteResult:
        """Server ``server``'s completions for one argument (``{"name": ..., "value": ...}``) of its prompt
        or resource template (its own names); errors as ``get_prompt``."""
        return await _resources.complete(self.connection(server), ref, argument, context_arguments)

    async def subscribe_resource(self, server: str, uri: str, *, subscribe: bool = True) -> None:
        """Ask server ``server`` for (or, ``subscribe=False``, stop) updates about resource ``uri``."""
        await _resources.subscribe_resource(self.connection(server), uri, on=subscribe)

    def on_resource_updated(self, callback: Callable[[str, str], None]) -> Callable[[], None]:
        """Call ``callback(server, uri)`` when a server says a resource subscribed to changed.

        Subscriptions (``subscribe_resource``) last across reconnects, on either protocol
        version. The callback runs synchronously in the session's reader: keep it short.
        Returns the function that stops it.
        """
        return self._mcp.on_resource_updated(callback)
