"""One profile's view of a registry: the rows it serves, as a snapshot and as MCP tools.

A profile shows every row the gateway's row rules (``AllowTools``, ``DenyServers``,
``DenyAnnotated``, ... among its hooks) allow and its own predicate accepts, except
rows no MCP client could call: hosted rows (the provider runs them). A tool that runs
as a task upstream is listed without ``execution``: the gateway runs the task itself
(polling, cancelling) and answers the client's call directly. Both the snapshot and the MCP listing are built once per
catalog version: ``invalidate`` (called on every ``CatalogChange``) drops them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import mcp_types

from toolmesh._core.capabilities import ToolAnnotations
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._hooks.actions import Hook
from toolmesh._policy.rules import AllowServers, DenyServers, RowRule, matcher
from toolmesh._rows.rows import Entry, HostedEntry, McpEntry

__all__ = ["CatalogView", "RowPredicate", "mcp_tool", "output_schema", "row_rules", "server_rules"]

RowPredicate = Callable[[Entry], bool]
"""Whether a profile shows a row."""


def row_rules(hooks: Iterable[Hook]) -> tuple[Callable[[Entry], bool], ...]:
    """The hooks that decide by the row alone, as predicates "the rule lets this row be called"."""
    return tuple(_allows(hook) for hook in hooks if isinstance(hook, RowRule))


def server_rules(hooks: Iterable[Hook]) -> tuple[Callable[[str], bool], ...]:
    """The ``AllowServers``/``DenyServers`` rules among the hooks, as predicates "the rule allows this server label"."""
    return tuple(_allows_server(hook) for hook in hooks if isinstance(hook, AllowServers | DenyServers))


def _allows_server(rule: AllowServers | DenyServers) -> Callable[[str], bool]:
    match = matcher(rule.patterns, type(rule).__name__)
    return lambda label: match(label) is rule.allows


def _allows(rule: RowRule) -> Callable[[Entry], bool]:
    return lambda entry: rule.refusal(entry) is None


def _annotations(hints: ToolAnnotations | None) -> mcp_types.ToolAnnotations | None:
    if hints is None:
        return None
    return mcp_types.ToolAnnotations(
        title=hints.title,
        read_only_hint=hints.read_only,
        destructive_hint=hints.destructive,
        idempotent_hint=hints.idempotent,
        open_world_hint=hints.open_world,
    )


def output_schema(row: Entry) -> dict[str, Any] | None:
    """The row's output schema as MCP can declare it: an object schema, or none.

    MCP's ``outputSchema`` describes ``structuredContent``, which is an object; a native
    tool returning a scalar or a list has a schema of another type, and declares none.
    """
    schema = row.definition.output_schema
    if schema is None or schema.get("type") != "object":
        return None
    return dict(schema)


def mcp_tool(row: Entry) -> mcp_types.Tool:
    """What ``tools/list`` shows of ``row`` under its model-visible name.

    An MCP row is its server's own ``Tool`` renamed, so every field the server sent
    (title, annotations, icons, ``_meta``, schemas) passes through as it came, except
    ``execution``: the gateway runs a task-capable tool's task itself, so clients call
    it directly. Other rows are built from their definition and capabilities.
    """
    if isinstance(row, McpEntry):
        if row.tool.name == row.name and row.tool.execution is None:
            return row.tool
        return row.tool.model_copy(update={"name": row.name, "execution": None})
    definition, capabilities = row.definition, row.capabilities
    fields: dict[str, Any] = {
        "name": row.name,
        "description": definition.description or None,
        "input_schema": dict(definition.parameters),
        "output_schema": output_schema(row),
        "title": capabilities.title,
        "annotations": _annotations(capabilities.annotations),
        "icons": [mcp_types.Icon.model_validate(icon) for icon in capabilities.icons] or None,
        "meta": dict(capabilities.meta) if capabilities.meta else None,
    }
    return mcp_types.Tool(**{key: value for key, value in fields.items() if value is not None})


class CatalogView:
    """The rows one profile serves, cached until the catalog changes."""

    __slots__ = ("_predicate", "_registry", "_rules", "_server_rules", "_snapshot", "_tools")

    def __init__(
        self,
        registry: ToolRegistry,
        predicate: RowPredicate | None,
        rules: tuple[Callable[[Entry], bool], ...],
        server_rules: tuple[Callable[[str], bool], ...] = (),
    ) -> None:
        self._registry = registry
        self._predicate = predicate
        self._rules = rules
        self._server_rules = server_rules
        self._snapshot: ToolSnapshot | None = None
        self._tools: list[mcp_types.Tool] | None = None

    def invalidate(self) -> None:
        """Forget the cached rows: the catalog changed."""
        self._snapshot = None
        self._tools = None

    def shows(self, row: Entry) -> bool:
        """Whether this profile serves ``row``."""
        if isinstance(row, HostedEntry):
            return False
        if not all(rule(row) for rule in self._rules):
            return False
        return self._predicate is None or bool(self._predicate(row))

    def snapshot(self) -> ToolSnapshot:
        """The profile's rows, frozen: what ``tools/call`` dispatches against."""
        snapshot = self._snapshot
        if snapshot is None:
            rows = self._registry.entries()
            # MCP has no deferred tools: a profile lists (or, in search mode, searches) every row it serves
            if self._predicate is None and not self._rules and all(self.shows(row) for row in rows):
                snapshot = self._registry.snapshot(defer=False)
            else:
                snapshot = self._registry.snapshot([row.name for row in rows if self.shows(row)], defer=False)
            self._snapshot = snapshot
        return snapshot

    def servers(self) -> list[str]:
        """The labels of the MCP servers whose resources and prompts this profile serves.

        The default profile serves every connected server the ``AllowServers`` and
        ``DenyServers`` rules allow; another profile the servers with at least one row
        in it. In connection order.
        """
        labels = [connection.label for connection in self._registry.connections()]
        if self._predicate is None:
            return [label for label in labels if all(rule(label) for rule in self._server_rules)]
        shown = {row.server for row in self.snapshot().entries() if isinstance(row, McpEntry)}
        return [label for label in labels if label in shown]

    def tools(self) -> list[mcp_types.Tool]:
        """The profile's rows as MCP tools, in catalog order."""
        tools = self._tools
        if tools is None:
            tools = self._tools = [mcp_tool(row) for row in self.snapshot().entries()]
        return tools
