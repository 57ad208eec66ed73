"""The SDK's session manager, with 2025-11-25 sessions that continue on any replica.

``SharedSessionManager`` is the SDK's ``StreamableHTTPSessionManager`` for everything but
the handshake era's sessions: 2026-07-28 requests (no session) go to it unchanged. A
2025-11-25 request is served here, from the SDK's own public pieces (its
``StreamableHTTPServerTransport``, ``JSONRPCDispatcher``, ``Connection`` and
``serve_connection``), with a session table of this replica's copies of the sessions
and their records in Redis (``SessionStore``):

* ``initialize`` opens a session as the SDK does; its record (negotiated version, the
  client's params, who owns it) is written to Redis *before* the ``initialize`` result
  is sent, so the client's next request may reach any replica.
* A request with an ``Mcp-Session-Id`` this replica has no copy of is served by a copy
  built from the record: a connection born ready with the recorded version and client
  params (no second handshake), the client's recorded log level applied. No record (the
  session expired, or never existed) is 404, as the SDK answers.
* Each request renews the record's TTL; ``DELETE`` turns it into a tombstone (every
  replica then answers 404 for it and drops its copy). A copy this replica holds ends
  after ``LOCAL_IDLE`` seconds without a request; the session lives on in Redis.
* Redis restarted empty: a replica holding a copy of a session writes its record again
  at the session's next request, so the session goes on.
* SSE events go to Redis (``SharedEventStore``), and every GET stream follows them, so a
  notification any replica sends on the session reaches the client's GET stream, and a
  stream cut mid-call is resumed on any replica (``Last-Event-ID``).
* A client's answer to a server-to-client request (elicitation, sampling) reaching
  another replica is routed to the one that asked (``answers``, ``relay``).
* A ``resources/unsubscribe`` or a ``DELETE`` reaching this replica is passed on to the
  others, whose copies of the session act on it (``relay``): the subscription ends on the
  replica that holds it.

When Redis cannot be reached, a 2025-11-25 request is answered with a JSON-RPC error
saying to retry (anything else of that era with 503); 2026-07-28 requests need none of
this and go on.

A request reaching the manager before its ``run()`` or after it ended (a stopping replica)
is answered 503 with ``Retry-After`` (``GuardedSessionManager``, whose ``route`` this
manager extends to take the handshake era's requests); so is one that reached it while
running and found it stopped by the time a copy of its session was to start.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from uuid import uuid4

import anyio
import mcp_types
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.runner import serve_connection
from mcp.server.streamable_http import LAST_EVENT_ID_HEADER, MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from redis.exceptions import RedisError
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from toolmesh._state.errors import StateUnavailableError
from toolmesh.gateway._shared.stopping import GuardedSessionManager, stopped

from .answers import TaggedWrites, UntaggedReads
from .events import SharedEventStore
from .relay import Relay
from .store import SESSION_TTL, SessionRecord, SessionStore

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

__all__ = ["LOCAL_IDLE", "SharedSessionManager"]

logger = logging.getLogger("toolmesh.gateway")

LOCAL_IDLE = float(SESSION_TTL)
"""Seconds this replica keeps its copy of a session without a request here (as long as the session lives
without any: a copy holds what this replica does for the session, such as a resource subscription)."""
_SCOPE_KEY = "toolmesh.shared_session"
_MAX_CLIENT_JSON = 64 * 1024
"""Characters of a client's capabilities and info a session record keeps (more: other replicas see none)."""
_REDIS_DOWN = "the gateway's shared session state (Redis) cannot be reached: retry shortly"


class _Stopped(Exception):
    """The manager is not running (before ``run()``, or after it ended): no session can be served here."""


@dataclass(eq=False)
class _Copy:
    """This replica's copy of one session."""

    session_id: str
    owner: str | None
    transport: StreamableHTTPServerTransport
    events: SharedEventStore
    record: SessionRecord | None = None
    """The session's record as this replica last wrote or read it (None until ``initialize`` is answered)."""
    applied_level: str | None = None
    """The log level this copy's connection was last given (the record's may have changed on another replica)."""


def _owner(scope: Scope) -> str | None:
    """A digest of the request's authenticated principal (None without one)."""
    user = scope.get("user")
    if not isinstance(user, AuthenticatedUser):
        return None
    identity = json.dumps(authorization_context(user), sort_keys=True)
    return hashlib.sha256(identity.encode()).hexdigest()


def _error(status: int, message: str, code: int = mcp_types.INVALID_REQUEST) -> Response:
    body = mcp_types.JSONRPCError(jsonrpc="2.0", id=None, error=mcp_types.ErrorData(code=code, message=message))
    return Response(body.model_dump_json(by_alias=True, exclude_none=True), status, media_type="application/json")


async def _unavailable(scope: Scope, receive: Receive, send: Send) -> None:
    """Redis cannot be reached: a request is answered with a JSON-RPC error saying to retry (clients show its
    message, where an HTTP error status loses it); anything else is 503."""
    if scope["method"] == "POST":
        body = b""
        while True:  # bounded: the body-size limit is in front
            message = await receive()
            body += message.get("body", b"")
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        try:
            request = mcp_types.jsonrpc_message_adapter.validate_json(body)
        except ValidationError:
            request = None
        if isinstance(request, mcp_types.JSONRPCRequest):
            error = mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=_REDIS_DOWN)
            answer = mcp_types.JSONRPCError(jsonrpc="2.0", id=request.id, error=error)
            response = Response(answer.model_dump_json(by_alias=True, exclude_none=True), media_type="application/json")
            await response(scope, receive, send)
            return
    await _error(503, _REDIS_DOWN, mcp_types.INTERNAL_ERROR)(scope, receive, send)


class SharedSessionManager(GuardedSessionManager):
    """``StreamableHTTPSessionManager`` whose 2025-11-25 sessions any replica serves (module docstring)."""

    def __init__(
        self,
        app: Server[Any],
        store: SessionStore,
        replica: str,
        *,
        security_settings: TransportSecuritySettings | None,
        max_request_body_size: int,
        local_idle: float = LOCAL_IDLE,
    ) -> None:
        super().__init__(app, security_settings=security_settings, max_request_body_size=max_request_body_size)
        self.store = store
        self.replica = replica
        self._local_idle = local_idle
        self._copies: dict[str, _Copy] = {}
        self._group: TaskGroup | None = None
        self._life: Any = None
        self._relay = Relay(store, replica, self._transport_of, self._drop_session)
        app.middleware.append(self._middleware)

    def __repr__(self) -> str:
        return f"SharedSessionManager(replica={self.replica!r}, copies={len(self._copies)})"

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with super().run(), self.app.lifespan(self.app) as life, anyio.create_task_group() as group:
            self._life, self._group = life, group
            group.start_soon(self._relay.run, name="toolmesh gateway: answers and news for this replica")
            try:
                yield
            finally:
                group.cancel_scope.cancel()
                self._group = None

    async def route(self, scope: Scope, receive: Receive, send: Send) -> None:
        version = Headers(scope=scope).get(MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await super().route(scope, receive, send)  # 2026-07-28: no session to share
            return
        try:
            await self._legacy(scope, receive, send)
        except _Stopped:  # the manager stopped while the request waited on Redis: nothing of it ran
            await stopped()(scope, receive, send)

    # -- 2025-11-25 requests ------------------------------------------------------------

    async def _legacy(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        session_id = headers.get(MCP_SESSION_ID_HEADER)
        owner = _owner(scope)
        if session_id is None:
            await self._open(owner, scope, receive, send)
            return
        try:
            record = await self.store.load(session_id)
        except RedisError as exc:
            logger.warning("session state unavailable: %s", type(exc).__name__)
            await _unavailable(scope, receive, send)
            return
        copy = self._copies.get(session_id)
        if record is None and copy is not None and copy.record is not None and not copy.transport.is_terminated:
            record = copy.record  # Redis lost it (restarted empty): this replica's copy brings it back
            with contextlib.suppress(RedisError):
                await self.store.save(session_id, record)
        if record is None or record.ended or record.owner != owner:
            if copy is not None and (record is None or record.ended):
                await self._drop(copy)
            await _error(404, "Session not found")(scope, receive, send)
            return
        if copy is None or copy.transport.is_terminated:
            copy = await self._start(session_id, owner, record)
        copy.record = record
        if scope["method"] == "GET" and LAST_EVENT_ID_HEADER not in headers:
            try:  # every GET stream follows the session's events in Redis, from now on
                start = await copy.events.start_of_now()
            except RedisError:
                await _unavailable(scope, receive, send)
                return
            scope = {**scope, "headers": [*scope["headers"], (LAST_EVENT_ID_HEADER.encode(), start.encode())]}
        await copy.transport.handle_request({**scope, _SCOPE_KEY: copy}, receive, send)
        if copy.transport.is_terminated:  # the client deleted the session
            with anyio.CancelScope(shield=True):
                with contextlib.suppress(RedisError):
                    await self.store.end(session_id, record)
                await self._relay.tell(session_id, ended=True)  # the other copies end, and what they hold
            await self._drop(copy)

    async def _open(self, owner: str | None, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session: an ``initialize`` opens one (its record is written before it is answered)."""
        copy = await self._start(uuid4().hex, owner, None)
        status: int | None = None

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await copy.transport.handle_request({**scope, _SCOPE_KEY: copy}, receive, watch)
        finally:
            if status is None or status >= 400 or copy.record is None:  # no session was opened
                await self._drop(copy)

    async def _start(self, session_id: str, owner: str | None, record: SessionRecord | None) -> _Copy:
        """A running copy of the session: a new one (``record`` None), or one continued from its record.

        Raises:
            _Stopped: the manager is not running (any more).
        """
        group = self._group
        if group is None:
            raise _Stopped
        events = SharedEventStore(self.store, session_id)
        transport = StreamableHTTPServerTransport(
            mcp_session_id=session_id,
            event_store=events,
            security_settings=self.security_settings,
            idle_timeout=self._local_idle,
        )
        copy = _Copy(session_id, owner, transport, events, record)
        self._copies[session_id] = copy

        async def serve(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            try:
                async with transport.connect() as (read, write):
                    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
                        UntaggedReads(read, self.replica, self._forward(session_id)),
                        TaggedWrites(write, self.replica),
                        inline_methods=frozenset({"initialize"}),
                    )
                    connection = _connection(dispatcher, session_id, record)
                    task_status.started()
                    with transport.idle_scope or anyio.CancelScope():
                        await serve_connection(self.app, dispatcher, connection=connection, lifespan_state=self._life)
            except Exception:
                logger.exception("a shared session crashed")
            finally:
                if self._copies.get(session_id) is copy:
                    del self._copies[session_id]
                if not transport.is_terminated:
                    with anyio.CancelScope(shield=True):
                        await transport.terminate()

        await group.start(serve, name="toolmesh gateway: a 2025-11-25 session")
        if transport.is_terminated:  # started in a group being cancelled: the manager is stopping
            raise _Stopped
        return copy

    def _transport_of(self, session_id: str) -> StreamableHTTPServerTransport | None:
        copy = self._copies.get(session_id)
        return copy.transport if copy is not None and not copy.transport.is_terminated else None

    async def _drop_session(self, session_id: str) -> None:
        copy = self._copies.get(session_id)
        if copy is not None:
            await self._drop(copy)

    async def _drop(self, copy: _Copy) -> None:
        if self._copies.get(copy.session_id) is copy:
            del self._copies[copy.session_id]
        if not copy.transport.is_terminated:
            with anyio.CancelScope(shield=True):
                await copy.transport.terminate()

    # -- the session's record, kept by the server's middleware --------------------------

    async def _middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        scope = getattr(ctx.request, "scope", None)
        copy = scope.get(_SCOPE_KEY) if isinstance(scope, dict) else None
        if not isinstance(copy, _Copy):
            return await call_next(ctx)
        wanted = copy.record.log_level if copy.record is not None else None
        if wanted is not None and wanted != copy.applied_level and ctx.request_id is not None:
            copy.applied_level = wanted  # the level the client set, on this replica or another
            if ctx.method != "logging/setLevel":
                with contextlib.suppress(MCPError, ValidationError):
                    await call_next(replace(ctx, method="logging/setLevel", params={"level": wanted}))
        result = await call_next(ctx)
        try:
            if ctx.method == "initialize" and isinstance(result, dict):
                version = result.get("protocolVersion")
                if isinstance(version, str):
                    copy.record = SessionRecord(version, _client(ctx.params), copy.owner)
                    await self.store.save(copy.session_id, copy.record)
            elif ctx.method == "resources/unsubscribe" and ctx.params is not None:
                await self._relay.tell(copy.session_id, unsubscribe=str(ctx.params.get("uri")))
            elif ctx.method == "logging/setLevel" and ctx.params is not None:
                record = await self.store.load(copy.session_id) or copy.record
                if record is not None and not record.ended:
                    copy.record = replace(record, log_level=str(ctx.params.get("level")))
                    copy.applied_level = copy.record.log_level
                    await self.store.save(copy.session_id, copy.record)
        except RedisError as exc:
            raise MCPError(mcp_types.INTERNAL_ERROR, _REDIS_DOWN) from exc
        return result

    # -- answers to server-to-client requests --------------------------------------------

    def _forward(self, session_id: str) -> Any:
        async def forward(replica: str, message: str) -> None:
            try:
                await self.store.forward_answer(replica, session_id, message)
            except (RedisError, StateUnavailableError) as exc:  # the asking replica's request times out
                logger.warning("an answer for replica %r could not be forwarded: %s", replica, type(exc).__name__)

        return forward


def _client(params: Any) -> dict[str, Any] | None:
    """What a record keeps of the client's ``initialize`` params: capabilities and client info, if small."""
    if not isinstance(params, dict):
        return None
    kept = {key: params[key] for key in ("protocolVersion", "capabilities", "clientInfo") if key in params}
    return kept if len(json.dumps(kept)) <= _MAX_CLIENT_JSON else None


def _connection(dispatcher: JSONRPCDispatcher[Any], session_id: str, record: SessionRecord | None) -> Connection:
    """A new session's connection (it waits for the handshake), or one continued from its record (born ready)."""
    if record is None:
        return Connection.for_loop(dispatcher, session_id=session_id)
    client = None
    if record.client is not None:
        with contextlib.suppress(ValidationError):
            client = mcp_types.InitializeRequestParams.model_validate(record.client, by_name=False)
    connection = Connection(
        dispatcher, protocol_version=record.protocol_version, session_id=session_id, client_params=client
    )
    connection.initialized.set()
    return connection
