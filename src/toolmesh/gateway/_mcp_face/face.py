"""The MCP face of one profile: the SDK's low-level ``Server`` whose handlers are the catalog.

``tools/list`` pages the profile's rows (``CatalogView``) as MCP tools; ``tools/call``
runs one ``ToolCall`` through ``run_tool_calls`` with the gateway's hooks (policy
included) against the profile's snapshot, so a row outside the profile is unknown.
The call's ``ToolContext`` reaches back to the client that made it: progress goes to
that request (``notifications/progress`` under the client's token), so do the call's
log messages (``notifications/message``); elicitation and sampling become requests to
that client (2025-11-25) or input rounds of the call (2026-07-28, ``_rounds``); and
cancelling the request cancels the dispatch (and with it the upstream call). A request's W3C trace context (``_meta``'s
``traceparent``) is the parent of the dispatch's span.

A 2025-11-25 client's ``logging/setLevel`` filters the log messages it is sent (its
level is not passed upstream: upstream sessions are shared). Resource subscriptions
(``resources/subscribe`` of a 2025-11-25 client, the URIs of a 2026-07-28 client's
``subscriptions/listen`` stream) are held upstream through ``Upstream.hold`` while they
last; each update goes to the subscribed clients.

Tool-list changes reach every client: handshake-era (2025-11-25) connections are
kept (``LegacySessions``) and each is sent ``notifications/tools/list_changed``
(a session several replicas hold a copy of is told by the one that claims the change);
2026-07-28 clients hear it on ``subscriptions/listen`` streams, through the face's
subscription bus. A change of a server's rows (connected, refreshed, left) also
announces the resource and prompt lists as changed.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import anyio
import mcp_types
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolmesh._context.asking import no_callback
from toolmesh._context.context import ElicitationRequest, LogMessage, SamplingRequest, ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._hooks.stack import HookStack
from toolmesh.gateway._shared.catalog_view import CatalogView
from toolmesh.gateway._shared.http import identity_of
from toolmesh.mcp._client.session import CLIENT_INFO

from .calls import run_call
from .legacy_sessions import LegacySessions
from .passthrough import Upstream, page
from .rounds import InputRounds
from .search_mode import schema_of, search_mode_call, search_tools

__all__ = ["ProfileFace", "TellingClaim"]

TellingClaim = Callable[[str, str], Awaitable[bool]]
"""``claim(profile, session_id)``: whether this replica is the one to tell that session of a change."""

logger = logging.getLogger("toolmesh.gateway")

_NOTIFY_TIMEOUT = 10.0
"""Seconds one client may take to accept a list-changed notification before it is skipped."""


class _GatewayServer(Server[Any]):
    """The SDK's low-level server, advertising ``listChanged`` to handshake-era clients too."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(
            tools_changed=True, resources_changed=True, prompts_changed=True
        )
        return super().create_initialization_options(options, experimental_capabilities, extensions)


class ProfileFace:
    """One profile served as an MCP server: its ``server`` and its list-changed fan-out."""

    def __init__(
        self,
        profile: str,
        view: CatalogView,
        hooks: HookStack,
        upstream: Upstream,
        rounds: InputRounds,
        *,
        name: str,
        instructions: str | None,
        search: bool = False,
    ) -> None:
        self.profile = profile
        self.search = search
        """Served in search mode: ``search_tools`` and ``call_tool`` instead of the rows."""
        self.view = view
        self.hooks = hooks
        """The hooks its calls go through (the gateway's, after its observers bound to this profile)."""
        self._rounds = rounds
        self._sessions = LegacySessions(self._release_all)
        self.bus = InMemorySubscriptionBus()
        """Where 2026-07-28 ``subscriptions/listen`` streams hear of changes."""
        self.listen = ListenHandler(self.bus)
        self._upstream = upstream
        with warnings.catch_warnings():  # logging is deprecated in 2026-07-28 (SEP-2577), still served
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server: Server[Any] = _GatewayServer(
                name,
                version=CLIENT_INFO.version,  # toolmesh's own version, as it tells servers when it is their client
                instructions=instructions,
                get_tool_input_schema=self._input_schema,
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                on_subscriptions_listen=self._listen,
                on_subscribe_resource=self._subscribe,
                on_unsubscribe_resource=self._unsubscribe,
                on_set_logging_level=self._set_log_level,
                **upstream.handlers(view.servers),
            )
        self.server.middleware.append(self._remember)

    def __repr__(self) -> str:
        return f"ProfileFace({self.profile!r}, legacy_sessions={len(self._sessions)})"

    async def _remember(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._sessions.remember(ctx.session)
        return await call_next(ctx)

    async def notify_changed(self, servers: bool, claim: TellingClaim | None = None) -> None:
        """Tell every connected client of this profile that its tool list changed (a slow one delays no other).

        With ``servers`` (a server connected, left or was refreshed), its resource and
        prompt lists may have changed too, and clients are told so as well. With ``claim``,
        a 2025-11-25 session (one with an ``Mcp-Session-Id``, which other replicas may hold
        copies of) is told only when ``claim(profile, session id)`` says this replica tells it.
        """

        async def tell(session: ServerSession, session_id: str | None) -> None:
            with anyio.move_on_after(_NOTIFY_TIMEOUT):
                try:
                    if claim is not None and session_id is not None and not await claim(self.profile, session_id):
                        return  # another replica holding a copy of the session tells it
                    await session.send_tool_list_changed()
                    if servers:
                        await session.send_resource_list_changed()
                        await session.send_prompt_list_changed()
                except Exception as exc:  # a client gone away: it no longer needs telling
                    logger.debug("profile %r: a client could not be told of a list change: %r", self.profile, exc)

        async with anyio.create_task_group() as group:
            for session, session_id in self._sessions.all():
                group.start_soon(tell, session, session_id)
        await self.bus.publish(ToolsListChanged())
        if servers:
            await self.bus.publish(ResourcesListChanged())
            await self.bus.publish(PromptsListChanged())

    async def _set_log_level(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.SetLevelRequestParams
    ) -> mcp_types.EmptyResult:
        """``logging/setLevel``: this client's level; upstream servers' levels are the operator's (shared)."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._sessions.set_log_level(ctx.session, params.level)
        return mcp_types.EmptyResult()

    # -- resource subscriptions ---------------------------------------------------

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.SubscribeRequestParams
    ) -> mcp_types.EmptyResult:
        """``resources/subscribe`` of a 2025-11-25 client: held until it unsubscribes or disconnects."""
        key = self._sessions.remember(ctx.session)
        if key is None:
            raise MCPError(mcp_types.INVALID_REQUEST, "resources/subscribe needs a connection to send updates on")
        await self._upstream.hold(self.view.servers, (self.profile, key), str(params.uri))
        self._sessions.subscribe(key, str(params.uri))
        return mcp_types.EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.UnsubscribeRequestParams
    ) -> mcp_types.EmptyResult:
        key = self._sessions.remember(ctx.session)
        if key is not None:
            self._sessions.subscribe(key, str(params.uri), on=False)
            await self._upstream.release((self.profile, key), str(params.uri))
        return mcp_types.EmptyResult()

    async def _release_all(self, key: int, uris: set[str]) -> None:
        """A 2025-11-25 client closed: let go of what it subscribed to."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(_NOTIFY_TIMEOUT):
            for uri in uris:
                await self._upstream.release((self.profile, key), uri)

    async def _listen(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.SubscriptionsListenRequestParams
    ) -> mcp_types.SubscriptionsListenResult:
        """A 2026-07-28 ``subscriptions/listen`` stream; its resource URIs are followed upstream while it lasts."""
        uris = list(params.notifications.resource_subscriptions or ())
        holder = object()  # this stream
        held: list[str] = []
        try:
            for uri in uris:
                try:
                    await self._upstream.hold(self.view.servers, holder, uri)
                    held.append(uri)
                except MCPError as exc:  # honored anyway (the spec): an unknown URI simply never fires
                    logger.debug("profile %r: no server follows %r: %s", self.profile, uri, exc)
            return await self.listen(ctx, params)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_NOTIFY_TIMEOUT):
                for uri in held:
                    await self._upstream.release(holder, uri)

    async def notify_updated(self, label: str, uri: str) -> None:
        """Tell this profile's clients subscribed to ``uri`` (a resource of server ``label``) that it changed."""
        if label not in self.view.servers():
            return
        for session in self._sessions.subscribed_to(uri):
            with anyio.move_on_after(_NOTIFY_TIMEOUT):
                try:
                    await session.send_resource_updated(uri)
                except Exception as exc:  # a client gone away: it no longer needs telling
                    logger.debug("profile %r: a client could not be told %r changed: %r", self.profile, uri, exc)
        await self.bus.publish(ResourceUpdated(uri))

    # -- tools -------------------------------------------------------------------

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        """A row's input schema, for the SDK's ``Mcp-Param-*`` header checks (else it lists every page per call)."""
        if self.search:
            return schema_of(name)
        row = self.view.snapshot().get(name)
        return row.definition.parameters if row is not None else None

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return self.tools_page(params.cursor if params is not None else None)

    def tools_page(self, cursor: str | None) -> mcp_types.ListToolsResult:
        """One page of ``tools/list`` from ``cursor`` (``MCPError`` for a cursor this gateway did not hand out)."""
        tools, next_cursor = page(search_tools() if self.search else self.view.tools(), cursor)
        return mcp_types.ListToolsResult(tools=tools, next_cursor=next_cursor)

    def runs_only_own(self, method: str) -> bool:
        """Whether the SDK would run only this face's handler and middleware for ``method`` (the lean path's test)."""
        own = {"tools/list": self._list_tools, "tools/call": self._call_tool}.get(method)
        entry, chain = self.server.get_request_handler(method), self.server.middleware
        plain = len(chain) == 2 and isinstance(chain[0], OpenTelemetryMiddleware) and chain[1] == self._remember
        return own is not None and entry is not None and entry.handler == own and plain and not self.server.cache_hints

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        if self.search:
            inner = await search_mode_call(self.view.snapshot(), params)
            if isinstance(inner, mcp_types.CallToolResult):
                return inner
            params = inner
        if params.request_state is not None or self._asks_in_rounds(ctx):
            return await self._rounds.call(params, lambda arm: self._dispatch(ctx, params, arm))
        return await self._dispatch(ctx, params, None)

    def _asks_in_rounds(self, ctx: ServerRequestContext[Any, Any]) -> bool:
        """Whether this call's questions go back as input rounds: a 2026-07-28 client that can answer some."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or self._rounds.group is None:
            return False
        capabilities = ctx.session.client_capabilities
        return capabilities is not None and (capabilities.elicitation is not None or capabilities.sampling is not None)

    async def _dispatch(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: mcp_types.CallToolRequestParams,
        arm: Callable[[ToolContext[Any]], None] | None,
    ) -> mcp_types.CallToolResult:
        def context(call: ToolCall) -> ToolContext[Any]:
            tool_ctx = self._context(call, ctx)
            if arm is not None:
                arm(tool_ctx)
            return tool_ctx

        return await run_call(self.view.snapshot(), self.hooks, params, ctx.meta, context)

    def _context(self, call: ToolCall, request: ServerRequestContext[Any, Any]) -> ToolContext[Any]:
        """The call's context: progress, elicitation and sampling reach the client that called."""
        meta = request.meta or {}
        progress = _progress_to(request.session) if meta.get("progress_token") is not None else None
        ctx: ToolContext[Any] = ToolContext(
            call_id=call.id,
            progress=progress,
            on_log=_log_to(request, self._sessions.wants_log),
            identity=identity_of(request.request),
        )
        if request.session.can_send_request:
            declared = request.session.client_capabilities
            ctx.elicitation = (
                _elicitation_to(request) if declared is not None and declared.elicitation is not None else _refused
            )
            ctx.sampling = _sampling_to(request) if declared is not None and declared.sampling is not None else _refused
        return ctx


async def _refused(asked: ElicitationRequest | SamplingRequest) -> Any:
    """A question for a client that did not declare it can answer it: refused, naming the client."""
    raise no_callback(asked, caller="the client connected to the gateway")


def _progress_to(session: ServerSession) -> Callable[[float, float | None, str | None], Awaitable[None]]:
    async def progress(value: float, total: float | None, message: str | None) -> None:
        await session.report_progress(value, total, message)

    return progress


def _log_to(
    request: ServerRequestContext[Any, Any], wants: Callable[[ServerSession, str], bool]
) -> Callable[[LogMessage], Awaitable[None]]:
    """The call's log messages (an upstream server's, during the call) go to the client, on the call's stream.

    A 2025-11-25 client gets those at or above the level it set (``logging/setLevel``;
    all before it sets one); a 2026-07-28 client those at or above the level its
    request opted in to (none without).
    """

    async def log(message: LogMessage) -> None:
        level = cast("mcp_types.LoggingLevel", message.level)
        session, related = request.session, request.request_id
        if not wants(session, level):
            return
        with warnings.catch_warnings():  # logging is deprecated in 2026-07-28 (SEP-2577), still served
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            sending = session.send_log_message(level, message.data, message.logger, related_request_id=related)
        try:
            await sending
        except Exception as exc:  # the client went away: its call's logs need no reader
            logger.debug("a log message of call %r could not be sent: %r", message.call_id, exc)

    return log


def _elicitation_to(
    request: ServerRequestContext[Any, Any],
) -> Callable[[ElicitationRequest], Awaitable[mcp_types.ElicitResult]]:
    metadata = ServerMessageMetadata(related_request_id=request.request_id)

    async def elicit(asked: ElicitationRequest) -> mcp_types.ElicitResult:
        return await request.session.send_request(
            mcp_types.ElicitRequest(params=asked.params), mcp_types.ElicitResult, metadata=metadata
        )

    return elicit


def _sampling_to(
    request: ServerRequestContext[Any, Any],
) -> Callable[[SamplingRequest], Awaitable[mcp_types.CreateMessageResult]]:
    metadata = ServerMessageMetadata(related_request_id=request.request_id)

    async def sample(asked: SamplingRequest) -> mcp_types.CreateMessageResult:
        return await request.session.send_request(
            mcp_types.CreateMessageRequest(params=asked.params), mcp_types.CreateMessageResult, metadata=metadata
        )

    return sample
