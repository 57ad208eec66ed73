"""A request's declared MCP servers as rows: checked, connected (pooled), listed, filtered and named.

Every declared server becomes a ``Declared``: its rows (``McpEntry`` rows of the pooled
connection, renamed ``{label}__{tool}`` by the name policy and labelled with the
request's ``server_label``, so a result's metadata reports the request's label), and
what its ``mcp_list_tools`` item says. A server that cannot be reached or listed gives
a listing with ``error`` and no rows; it never fails the response. Request mistakes (a
duplicate label, two exposed names colliding, a URL the policy refuses, too many
servers) are ``RequestError``s (400).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import anyio

from toolmesh._core.errors import (
    ConfigurationError,
    ErrorKind,
    NameCollisionError,
    ServerConnectionError,
    ToolExecutionError,
)
from toolmesh._core.names import NamePolicy
from toolmesh._core.output import ToolOutput
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._rows.rows import DynamicEntry, Entry, McpEntry
from toolmesh.mcp._spec.server import McpServer

from .pool import ServerPool
from .request import McpToolSpec, RequestError, ResponsesRequest
from .settings import ResponsesSettings
from .urls import CheckedUrl, PinnedAddress, UrlPolicy

__all__ = ["READ_RESOURCE", "Declared", "discover", "resource_reader"]

READ_RESOURCE = "read_mcp_resource"
"""The name of the opt-in row reading a declared server's resources."""

_POOL_LABEL = "declared"
"""The label of every pooled connection (rows are relabelled per request)."""


@dataclass
class Declared:
    """One declared server as this request sees it."""

    spec: McpToolSpec
    index: int
    """Its position in the request's ``tools``."""
    rows: list[McpEntry] = field(default_factory=list)
    """The rows offered to the model (after ``allowed_tools``), named for this request."""
    listing: list[dict[str, Any]] = field(default_factory=list)
    """The ``tools`` of its ``mcp_list_tools`` item."""
    error: str | None = None
    """Why it could not be listed (its ``mcp_list_tools`` item's ``error``)."""
    registry: ToolRegistry | None = field(default=None, repr=False)
    """The pooled connection's registry (None when it could not be connected)."""

    @property
    def label(self) -> str:
        return self.spec.server_label

    def needs_approval(self, row: McpEntry) -> bool:
        """Whether a call of ``row`` waits for the client's ``mcp_approval_response``."""
        return self.spec.needs_approval(row.wire_name, _read_only(row))


def _read_only(row: McpEntry) -> bool:
    hints = row.tool.annotations
    return bool(hints is not None and hints.read_only_hint)


def _headers(spec: McpToolSpec) -> dict[str, str]:
    headers = dict(spec.headers or {})
    if spec.authorization:
        headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        headers["Authorization"] = f"Bearer {spec.authorization}"
    return headers


def _server(spec: McpToolSpec, checked: CheckedUrl, settings: ResponsesSettings) -> McpServer:
    return McpServer.http(
        _POOL_LABEL,
        checked.url,
        headers=_headers(spec),
        auth=PinnedAddress(checked),
        timeout=settings.connect_timeout,
        call_timeout=settings.call_timeout,
        max_result_bytes=settings.max_result_bytes,
        prefix=False,
    )


async def discover(
    request: ResponsesRequest,
    settings: ResponsesSettings,
    policy: UrlPolicy,
    pool: ServerPool,
    names: NamePolicy,
    taken: dict[str, str],
    stack: AsyncExitStack,
    rules: tuple[Callable[[Entry], bool], ...] = (),
) -> list[Declared]:
    """Check, connect and list every declared server of ``request`` (at once); leases end with ``stack``.

    ``taken`` holds the names already offered (the catalog's and the client's functions:
    name -> owner); the declared rows' names are added to it. ``rules`` are the gateway
    policy's row rules: a row one of them refuses is neither offered nor listed.

    Raises:
        RequestError: for too many servers, a duplicate label, a refused URL or a name collision.
    """
    specs = [(index, tool) for index, tool in enumerate(request.tools) if isinstance(tool, McpToolSpec)]
    if len(specs) > settings.max_servers:
        raise RequestError(
            f"`tools`: {len(specs)} mcp servers declared; this gateway takes at most {settings.max_servers} a request",
            "tools",
        )
    seen: dict[str, int] = {}
    for index, spec in specs:
        if spec.server_label in seen:
            raise RequestError(
                f"`tools[{index}].server_label`: {spec.server_label!r} is already the label of "
                f"tools[{seen[spec.server_label]}]; give every mcp tool its own server_label",
                f"tools[{index}].server_label",
            )
        seen[spec.server_label] = index
    checked = [await policy.check(spec.server_url or "", f"tools[{index}].server_url") for index, spec in specs]
    declared = [Declared(spec, index) for index, spec in specs]
    registries: list[Any] = [None] * len(specs)

    async def connect(position: int) -> None:
        spec, url = specs[position][1], checked[position]
        key = (url.url, url.address, tuple(sorted(_headers(spec).items())))
        try:
            registry, release = await pool.acquire(key, lambda: _server(spec, url, settings))
        except ServerConnectionError as exc:
            declared[position].error = _reason(exc)
            return
        except ConfigurationError as exc:  # e.g. a header the HTTP client cannot send
            declared[position].error = f"cannot connect: {exc}"
            return
        stack.callback(release)
        registries[position] = registry
        declared[position].registry = registry

    async with anyio.create_task_group() as group:
        for position in range(len(specs)):
            group.start_soon(connect, position)
    budget = settings.max_tools
    for server, registry in zip(declared, registries, strict=True):
        if registry is None:
            continue
        listed = [row for row in registry.entries() if isinstance(row, McpEntry)]
        rows = [row for row in listed if server.spec.allows(row.wire_name, _read_only(row))]
        if listed and not rows:
            server.error = _selects_nothing(server.spec, [row.wire_name for row in listed])
            continue
        if len(rows) > budget:
            server.error = (
                f"the server lists {len(rows)} tools, over what is left of this gateway's limit of "
                f"{settings.max_tools} tools a request; narrow it with allowed_tools"
            )
            continue
        budget -= len(rows)
        named = _named(server, rows, names, taken)
        server.rows = [row for row in named if all(rule(row) for rule in rules)]
        server.listing = [_listed(row) for row in server.rows]
    return declared


def _selects_nothing(spec: McpToolSpec, listed: list[str]) -> str:
    """Why ``allowed_tools`` left none of the server's tools: what it asked for, what the server lists."""
    shown = ", ".join(listed[:20]) + (f" and {len(listed) - 20} more" if len(listed) > 20 else "")
    text = f"allowed_tools selects none of the {len(listed)} tools this server lists ({shown})"
    selected = spec.allowed_tools
    wanted = selected if isinstance(selected, list) else (selected.tool_names if selected is not None else None) or []
    prefixed = [name for name in wanted if name.startswith(f"{spec.server_label}__")]
    if prefixed:
        text += (
            f"; it takes the server's own tool names, not the names the model sees "
            f"({prefixed[0]!r} is {prefixed[0].removeprefix(f'{spec.server_label}__')!r} there)"
        )
    return text


def _named(server: Declared, rows: list[McpEntry], names: NamePolicy, taken: dict[str, str]) -> list[McpEntry]:
    try:
        assigned = names.assign(server.label, [row.wire_name for row in rows], taken=taken)
    except NameCollisionError as exc:
        raise RequestError(
            f"`tools[{server.index}]`: {exc}; give the servers other server_label values or narrow allowed_tools",
            f"tools[{server.index}]",
        ) from None
    renamed = []
    for row in rows:
        name = assigned[row.wire_name]
        taken[name] = f"tool {row.wire_name!r} of mcp server {server.label!r}"
        renamed.append(_renamed(row, name, server.label))
    return renamed


_RENAMED: dict[tuple[int, str, str], tuple[McpEntry, McpEntry]] = {}
"""(pooled row id, name, label) -> (that pooled row, its renamed copy): a request naming a pooled
server's tools as an earlier one did reuses the copies, so their provider declarations stay cached."""
_RENAMED_MAX = 8192


def _renamed(row: McpEntry, name: str, label: str) -> McpEntry:
    key = (id(row), name, label)
    cached = _RENAMED.get(key)
    if cached is not None and cached[0] is row:
        return cached[1]
    if len(_RENAMED) >= _RENAMED_MAX:
        _RENAMED.clear()
    definition = dataclasses.replace(row.definition, name=name)
    copy = dataclasses.replace(row, name=name, server=label, definition=definition)
    _RENAMED[key] = (row, copy)
    return copy


def _listed(row: McpEntry) -> dict[str, Any]:
    tool = row.tool
    annotations = (
        tool.annotations.model_dump(mode="json", by_alias=True, exclude_none=True) if tool.annotations else None
    )
    return {
        "name": row.wire_name,
        "input_schema": tool.input_schema,
        "description": tool.description,
        "annotations": annotations,
    }


def _reason(exc: ServerConnectionError) -> str:
    text = str(exc)
    prefix = f"MCP server {_POOL_LABEL!r}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


def resource_reader(declared: list[Declared]) -> DynamicEntry | None:
    """The ``read_mcp_resource(server_label, uri)`` row over this request's connected servers (None: none)."""
    servers = {server.label: server.registry for server in declared if server.registry is not None}
    if not servers:
        return None

    async def read(arguments: dict[str, Any]) -> ToolOutput:
        registry = servers.get(arguments["server_label"])
        if registry is None:  # pragma: no cover - the schema's enum admits only connected labels
            raise ToolExecutionError(f"no server {arguments['server_label']!r}", kind=ErrorKind.INVALID_ARGUMENTS)
        return await registry.read_resource(_POOL_LABEL, arguments["uri"])

    schema = {
        "type": "object",
        "properties": {
            "server_label": {"type": "string", "enum": sorted(servers), "description": "The MCP server to read from."},
            "uri": {"type": "string", "description": "The resource's URI, as the server lists it."},
        },
        "required": ["server_label", "uri"],
        "additionalProperties": False,
    }
    description = "Read a resource (a file, a document, a record) of one of the MCP servers by its URI."
    return DynamicEntry.create(READ_RESOURCE, schema, read, description=description)
