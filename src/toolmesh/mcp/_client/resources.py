"""Resources and prompts of one connected MCP server: list, read, get, subscribe.

Each operation runs on the connection's live session (reconnecting it when lost, as a
tool call does), under the spec's ``call_timeout``, and fails as a ``ToolExecutionError``
mapped the way a failed tool call is (``not_found``, ``unavailable``, ``timeout``, ...).
Answers pass through as the SDK's wire types, with the spec's secrets starred out.
Listings read every page, up to ``MAX_PAGES``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import mcp_types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from toolmesh._core.errors import ErrorKind, ToolExecutionError

from .resource_watch import subscribe
from .wire import exchange

if TYPE_CHECKING:
    from mcp import Client

    from .connection import McpConnection

__all__ = [
    "MAX_PAGES",
    "complete",
    "get_prompt",
    "list_prompts",
    "list_resource_templates",
    "list_resources",
    "read_resource",
    "subscribe_resource",
]

MAX_PAGES = 100
"""Pages one listing may take; a server paging on past it is an error, not a silent cut."""

T = TypeVar("T", bound=BaseModel)


async def _request(
    connection: McpConnection, operation: str, subject: str, call: Callable[[Client], Awaitable[T]]
) -> T:
    session = await connection._live()
    client = session.client
    assert client is not None
    with exchange() as sent:
        try:
            with anyio.fail_after(connection.spec.call_timeout):
                answer = await call(client)
        except Exception as exc:
            raise connection._call_error(exc, session, sent, subject, operation) from exc
    return connection._secrets.redact_model(answer)


async def _all_pages(
    connection: McpConnection, operation: str, page: Callable[[Client, str | None], Awaitable[Any]], field: str
) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):

        async def one(client: Client, cursor: str | None = cursor) -> Any:
            return await page(client, cursor)

        result = await _request(connection, operation, connection.label, one)
        items.extend(getattr(result, field))
        cursor = result.next_cursor
        if not cursor:
            return items
    raise ToolExecutionError(
        f"MCP server {connection.label!r}: {operation} went on past {MAX_PAGES} pages",
        kind=ErrorKind.UPSTREAM_ERROR,
    )


async def list_resources(connection: McpConnection) -> list[mcp_types.Resource]:
    """Every resource the server lists (``resources/list``, all pages)."""
    return await _all_pages(
        connection,
        "resources/list",
        lambda client, cursor: client.list_resources(cursor=cursor, cache_mode="refresh"),
        "resources",
    )


async def list_resource_templates(connection: McpConnection) -> list[mcp_types.ResourceTemplate]:
    """Every resource template the server lists (``resources/templates/list``, all pages)."""
    return await _all_pages(
        connection,
        "resources/templates/list",
        lambda client, cursor: client.list_resource_templates(cursor=cursor, cache_mode="refresh"),
        "resource_templates",
    )


async def list_prompts(connection: McpConnection) -> list[mcp_types.Prompt]:
    """Every prompt the server lists (``prompts/list``, all pages)."""
    return await _all_pages(
        connection,
        "prompts/list",
        lambda client, cursor: client.list_prompts(cursor=cursor, cache_mode="refresh"),
        "prompts",
    )


async def read_resource(connection: McpConnection, uri: str) -> mcp_types.ReadResourceResult:
    """The server's ``resources/read`` answer for ``uri``, as it came."""
    return await _request(
        connection, "resources/read", uri, lambda client: client.read_resource(uri, cache_mode="refresh")
    )


async def get_prompt(
    connection: McpConnection, name: str, arguments: dict[str, str] | None
) -> mcp_types.GetPromptResult:
    """The server's ``prompts/get`` answer for its prompt ``name``."""
    return await _request(connection, "prompts/get", name, lambda client: client.get_prompt(name, arguments))


async def complete(
    connection: McpConnection,
    ref: mcp_types.PromptReference | mcp_types.ResourceTemplateReference,
    argument: dict[str, str],
    context_arguments: dict[str, str] | None = None,
) -> mcp_types.CompleteResult:
    """The server's ``completion/complete`` answer for one argument of its prompt or resource template."""
    subject = ref.name if isinstance(ref, mcp_types.PromptReference) else ref.uri
    return await _request(
        connection,
        "completion/complete",
        subject,
        lambda client: client.complete(ref, argument, context_arguments),
    )


async def subscribe_resource(connection: McpConnection, uri: str, *, on: bool = True) -> None:
    """Follow (``on``) or stop following the server's updates about ``uri``, kept across reconnects.

    2025-11-25 sessions: ``resources/subscribe`` / ``resources/unsubscribe``;
    2026-07-28 sessions: the connection's ``subscriptions/listen`` stream (``_resource_watch``).
    """
    watch = connection.resources
    session = await connection._live()
    client = session.client
    assert client is not None
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if on:
            await watch.add_modern(uri)
        else:
            watch.remove_modern(uri)
        return
    operation = "resources/subscribe" if on else "resources/unsubscribe"
    await _request(connection, operation, uri, lambda client: _subscribed(client, uri, on))
    if on:
        watch.uris.add(uri)
    else:
        watch.uris.discard(uri)


async def _subscribed(client: Client, uri: str, on: bool) -> mcp_types.EmptyResult:
    await subscribe(client, uri, on=on)
    return mcp_types.EmptyResult()
