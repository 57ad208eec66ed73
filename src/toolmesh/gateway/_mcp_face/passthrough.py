"""Resources and prompts of the registry's upstream MCP servers, served through a profile.

Namespacing:

* prompts are named like the server's tools: by the name policy's template
  (``{server}__{prompt}`` by default) when the server is prefixed, else as the server
  names them, so two prefixed servers' ``summarize`` prompts stay apart; ``prompts/get``
  finds the server from the listing (an unprefixed clash: the first server wins);
* resource URIs are served unchanged: tool results carry upstream URIs
  (``resource_link`` blocks, embedded resources) and models copy URIs out of text, so
  rewriting them would break those references. ``resources/read`` goes to the server
  that listed the URI; a URI no listing showed (from a template, or a link) is asked
  of each server in connection order until one has it. When two servers list the
  same URI, the first in connection order serves it.

``completion/complete`` goes to the server of the prompt (found as ``prompts/get`` finds
it) or of the resource template (the first server listing that URI template).
Resource subscriptions are held here for the whole gateway (``hold``/``release``): the
first holder of a URI subscribes the server that has it (found as a read is), the last
one to leave unsubscribes it.

A profile serves the resources and prompts of the servers it shows: the default
profile every connected server that ``AllowServers``/``DenyServers`` rules allow,
another profile the servers with a row in it. A server
that fails its listing is left out of that listing (and logged), not the whole answer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, TypeVar

import mcp_types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from toolmesh._core.errors import ConfigurationError, ErrorKind, ToolExecutionError
from toolmesh._dispatch.registry import ToolRegistry

from .results import own_hop

__all__ = ["PAGE_SIZE", "Upstream", "page"]

logger = logging.getLogger("toolmesh.gateway")

PAGE_SIZE = 500
"""Items per page of the gateway's list answers."""
RESOURCE_NOT_FOUND = -32002
"""The MCP error code of an unknown resource."""

T = TypeVar("T")
Servers = Callable[[], list[str]]
"""The labels of the servers a profile serves, in connection order."""


def page(items: list[T], cursor: str | None) -> tuple[list[T], str | None]:
    """One page of ``items`` from ``cursor`` (an offset), and the next cursor (None on the last page).

    Raises:
        MCPError: ``INVALID_PARAMS`` for a cursor this gateway did not hand out.
    """
    start = 0
    if cursor is not None:
        if not cursor.isdigit() or int(cursor) > len(items):
            raise MCPError(mcp_types.INVALID_PARAMS, f"invalid cursor {cursor[:40]!r}: list again from the start")
        start = int(cursor)
    end = start + PAGE_SIZE
    return items[start:end], (str(end) if end < len(items) else None)


def _mcp_error(exc: ToolExecutionError, not_found: int) -> MCPError:
    """The error answer for a failed upstream request: its model text, never the operator detail."""
    code = not_found if exc.kind is ErrorKind.NOT_FOUND else mcp_types.INTERNAL_ERROR
    return MCPError(code, exc.model_feedback)


class Upstream:
    """The ``resources/*`` and ``prompts/*`` handlers of a gateway's faces, and the URI routing table."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._owners: dict[str, str] = {}
        """Resource URI -> label of the server whose listing showed it first."""
        self._prompts: dict[str, tuple[str, str]] = {}
        """Served prompt name -> (server label, the server's own prompt name), from the listings."""
        self._holders: dict[str, set[Hashable]] = {}
        """Subscribed resource URI -> who holds the subscription (a client connection, a listen stream)."""
        self._subscribed_at: dict[str, str] = {}
        """Subscribed resource URI -> label of the server subscribed to it."""

    async def hold(self, servers: Servers, holder: Hashable, uri: str) -> None:
        """Subscribe ``holder`` to ``uri``; the first holder subscribes the server that has it.

        Raises:
            MCPError: no server of the profile would subscribe (its model text).
        """
        if uri not in self._subscribed_at:
            self._subscribed_at[uri] = await self._routed(servers, uri, lambda label: self._subscribe(label, uri))
        self._holders.setdefault(uri, set()).add(holder)

    async def _subscribe(self, label: str, uri: str) -> str:
        await self._registry.subscribe_resource(label, uri)
        return label

    async def release(self, holder: Hashable, uri: str) -> None:
        """``holder`` no longer follows ``uri``; the last one to leave unsubscribes the server."""
        holders = self._holders.get(uri, set())
        holders.discard(holder)
        label = self._subscribed_at.get(uri)
        if holders or label is None:
            return
        del self._subscribed_at[uri]
        self._holders.pop(uri, None)
        try:
            await self._registry.subscribe_resource(label, uri, subscribe=False)
        except (ToolExecutionError, ConfigurationError) as exc:  # gone, or it forgot already
            logger.debug("MCP server %r: unsubscribing from %r failed: %s", label, uri, exc)

    def _declares(self, label: str, capability: str) -> bool | None:
        """Whether server ``label`` declared ``capability``; None when its capabilities are unknown.

        A client pinned to 2026-07-28 skips ``server/discover`` and learns no capability
        at all (not even ``tools``): such a server is asked, and its refusal is not news.
        """
        try:
            capabilities = self._registry.connection(label).capabilities
        except ConfigurationError:  # disconnected meanwhile
            return False
        if capabilities is None or not capabilities.model_dump(exclude_none=True):
            return None
        return getattr(capabilities, capability) is not None

    def _having(self, servers: Servers, capability: str) -> list[str]:
        return [label for label in servers() if self._declares(label, capability) is not False]

    async def _gather(self, labels: list[str], what: str, fetch: Callable[[str], Awaitable[list[T]]]) -> list[T]:
        found: list[T] = []
        for label in labels:
            try:
                found.extend(await fetch(label))
            except (ToolExecutionError, ConfigurationError) as exc:
                declared = isinstance(exc, ToolExecutionError) and self._declares(label, what.split("/")[0])
                logger.log(
                    logging.WARNING if declared else logging.DEBUG, "MCP server %r left out of %s: %s", label, what, exc
                )
        return found

    def _prompt_name(self, label: str, name: str) -> str:
        """A prompt's served name: as the server's tools are named (the policy's template when prefixed)."""
        if not self._registry.connection(label).spec.prefix:
            return name
        return self._registry.name_policy.template.format(server=label, tool=name)

    async def _prompt_listing(self, servers: Servers) -> list[mcp_types.Prompt]:
        """Every prompt of ``servers()`` under its served name (the first server wins a clash)."""
        prompts: list[mcp_types.Prompt] = []
        served: set[str] = set()
        for label in self._having(servers, "prompts"):
            for prompt in await self._gather([label], "prompts/list", self._registry.list_prompts):
                name = self._prompt_name(label, prompt.name)
                if name in served:
                    logger.warning("MCP server %r: prompt %r left out, the name is taken", label, name)
                    continue
                served.add(name)
                self._prompts[name] = (label, prompt.name)
                prompts.append(prompt if name == prompt.name else prompt.model_copy(update={"name": name}))
        return prompts

    def handlers(self, servers: Servers) -> dict[str, Any]:
        """The low-level server's ``on_*`` handlers for the resources and prompts of ``servers()``."""

        async def list_resources(
            ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
        ) -> mcp_types.ListResourcesResult:
            resources: list[mcp_types.Resource] = []
            for label in self._having(servers, "resources"):
                listed = await self._gather([label], "resources/list", self._registry.list_resources)
                for resource in listed:
                    self._owners.setdefault(str(resource.uri), label)
                resources.extend(listed)
            items, cursor = page(resources, params.cursor if params else None)
            return mcp_types.ListResourcesResult(resources=items, next_cursor=cursor)

        async def list_templates(
            ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
        ) -> mcp_types.ListResourceTemplatesResult:
            labels = self._having(servers, "resources")
            templates = await self._gather(labels, "resources/templates/list", self._registry.list_resource_templates)
            items, cursor = page(templates, params.cursor if params else None)
            return mcp_types.ListResourceTemplatesResult(resource_templates=items, next_cursor=cursor)

        async def read_resource(
            ctx: ServerRequestContext[Any, Any], params: mcp_types.ReadResourceRequestParams
        ) -> mcp_types.ReadResourceResult:
            uri = str(params.uri)
            read = await self._routed(servers, uri, lambda label: self._registry.read_resource_result(label, uri))
            return own_hop(read)

        async def list_prompts(
            ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
        ) -> mcp_types.ListPromptsResult:
            items, cursor = page(await self._prompt_listing(servers), params.cursor if params else None)
            return mcp_types.ListPromptsResult(prompts=items, next_cursor=cursor)

        async def get_prompt(
            ctx: ServerRequestContext[Any, Any], params: mcp_types.GetPromptRequestParams
        ) -> mcp_types.GetPromptResult:
            label, name = await self._prompt_owner(servers, params.name)
            try:
                return own_hop(await self._registry.get_prompt(label, name, params.arguments))
            except ToolExecutionError as exc:
                raise _mcp_error(exc, mcp_types.INVALID_PARAMS) from None

        async def complete(
            ctx: ServerRequestContext[Any, Any], params: mcp_types.CompleteRequestParams
        ) -> mcp_types.CompleteResult:
            ref = params.ref
            if isinstance(ref, mcp_types.PromptReference):
                label, name = await self._prompt_owner(servers, ref.name)
                ref = ref.model_copy(update={"name": name})
            else:
                label = await self._template_owner(servers, ref.uri)
            if self._declares(label, "completions") is False:
                return mcp_types.CompleteResult(completion=mcp_types.Completion(values=[]))
            argument = {"name": params.argument.name, "value": params.argument.value}
            context = params.context.arguments if params.context is not None else None
            try:
                return own_hop(await self._registry.complete(label, ref, argument, context))
            except ToolExecutionError as exc:
                raise _mcp_error(exc, mcp_types.INVALID_PARAMS) from None

        return {
            "on_completion": complete,
            "on_list_resources": list_resources,
            "on_list_resource_templates": list_templates,
            "on_read_resource": read_resource,
            "on_list_prompts": list_prompts,
            "on_get_prompt": get_prompt,
        }

    async def _prompt_owner(self, servers: Servers, served: str) -> tuple[str, str]:
        """The server of the prompt served as ``served``, and the server's own name for it.

        Raises:
            MCPError: ``INVALID_PARAMS`` for a prompt no server of the profile lists.
        """
        labels = self._having(servers, "prompts")
        found = self._prompts.get(served)
        if found is None or found[0] not in labels:
            await self._prompt_listing(servers)  # a prompt added since the client listed
            found = self._prompts.get(served)
        if found is None or found[0] not in labels:
            raise MCPError(mcp_types.INVALID_PARAMS, f"unknown prompt {served!r}")
        return found

    async def _template_owner(self, servers: Servers, uri_template: str) -> str:
        """The first server (in connection order) of the profile listing the resource template.

        Raises:
            MCPError: ``INVALID_PARAMS`` for a template no server of the profile lists.
        """
        for label in self._having(servers, "resources"):
            templates = await self._gather([label], "resources/templates/list", self._registry.list_resource_templates)
            if any(template.uri_template == uri_template for template in templates):
                return label
        raise MCPError(mcp_types.INVALID_PARAMS, f"unknown resource template {uri_template!r}")

    async def _routed(self, servers: Servers, uri: str, ask: Callable[[str], Awaitable[T]]) -> T:
        """``ask(label)`` of the server owning ``uri``, else of each server in turn until one answers.

        Raises:
            MCPError: the first server's failure (its model text) when none answers.
        """
        labels = self._having(servers, "resources")
        owner = self._owners.get(uri)
        order = [owner, *(label for label in labels if label != owner)] if owner in labels else labels
        first: ToolExecutionError | None = None
        for label in order:
            assert label is not None
            try:
                return await ask(label)
            except ToolExecutionError as exc:
                first = first or exc
        if first is not None:
            raise _mcp_error(first, RESOURCE_NOT_FOUND)
        raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
