"""ResponsesEndpoint: ``POST /v1/responses`` over a catalog, for any Chat Completions upstream.

One endpoint object owns the upstream client (``openai.AsyncOpenAI``), the pool of
connections to request-declared MCP servers and the approval secret. It is an ASGI app
for one route, alive while ``async with endpoint.running():`` runs; ``mount(app,
endpoint)`` adds it to the gateway's Starlette app (route and lifespan).

A request is checked (400 in the Responses API error shape, naming the field), its
declared servers connected and listed, its input translated, and its turn played:
answered as one JSON ``response``, or with ``"stream": true`` as server-sent events. An
upstream failure before anything was streamed is a 502 (the upstream's own 4xx status
is passed through); once streaming, a ``response.failed`` event. A client that goes
away cancels the request's task, which closes the upstream call and cancels the tool
calls in flight.

A body over ``max_body_bytes`` is a 413 (before any byte is read when its length is
declared) and closes the connection, so the rest is never read; a body nested deeper
than ``max_json_depth`` is a 400 before it is parsed.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import openai
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from openai import AsyncOpenAI
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from toolmesh._core.names import NamePolicy
from toolmesh._dispatch.execution import DispatchSettings
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._hooks.actions import Hook
from toolmesh._hooks.stack import HookStack
from toolmesh._rows.rows import Entry
from toolmesh._search.matches import AsyncRanker, Ranker
from toolmesh._state.backend import StateBackend
from toolmesh.gateway._shared.catalog_view import row_rules
from toolmesh.gateway._shared.http import ClosesUnreadBody, Guard, identity_of
from toolmesh.gateway._shared.parts import ProfileSource

from .approvals import Approvals, use_approved
from .events import Events, sse
from .input import translate
from .model import UpstreamReplyError, bounded_client, upstream_failure
from .pool import ServerPool
from .request import RequestError, ResponsesRequest, parse_request
from .servers import READ_RESOURCE, discover, resource_reader
from .settings import ResponsesSettings
from .turn import Turn
from .urls import UrlPolicy

__all__ = ["ResponsesEndpoint", "mount", "route"]

logger = logging.getLogger("toolmesh.gateway")


class ResponsesEndpoint:
    """The ``/v1/responses`` route: a request's declared MCP servers and the catalog's rows, run server-side."""

    def __init__(
        self,
        settings: ResponsesSettings,
        *,
        catalog: Callable[[], ToolSnapshot] | None = None,
        hooks: HookStack | tuple[Hook, ...] = (),
        names: NamePolicy | None = None,
        dispatch: DispatchSettings | None = None,
        client: AsyncOpenAI | None = None,
        state: StateBackend | None = None,
        ranker: Ranker | AsyncRanker | None = None,
    ) -> None:
        """Args:
        settings: The upstream, the URL policy, the limits and the approval secret.
        catalog: The gateway-owned rows every request is offered (a profile's snapshot), if any.
        hooks: Hooks every gateway-owned call goes through (the gateway's policy).
        names: The policy naming declared servers' tools (its template and alias; the
            OpenAI name rule always applies, since the upstream speaks Chat Completions).
        dispatch: Dispatch defaults (tracing, error details); the catalog's when it has one.
        client: The upstream client (your own ``AsyncOpenAI``: other headers, a proxy, a
            test transport); by default one is made from ``settings.upstream`` and
            ``settings.api_key``, and closed with the endpoint.
        state: Where used approval ids are remembered (a shared backend makes an
            approval single-use across replicas); in this process when None.
        ranker: A host ranker fused into the search of declared servers with ``defer_loading``
            (the catalog's, by ``for_gateway``); lexical only when None.
        """
        self.settings = settings
        self._catalog = catalog
        self._hooks = hooks if isinstance(hooks, HookStack) else HookStack(hooks)
        self._rules = row_rules(self._hooks)
        base = names or NamePolicy()
        self._names = NamePolicy(provider="openai", template=base.template, alias=base.alias)
        self._dispatch = dispatch or DispatchSettings()
        self._policy = UrlPolicy(settings.allowed_hosts)
        self._approvals = Approvals(settings.secret, state=state)
        self._ranker = ranker
        self._pool = ServerPool(idle_seconds=settings.pool_idle_seconds, size=settings.pool_size)
        self._given_client = client
        self._client: AsyncOpenAI | None = None
        self._running = False
        self._asgi = ClosesUnreadBody(self._respond)

    @classmethod
    def for_gateway(cls, gateway: ProfileSource, settings: ResponsesSettings) -> ResponsesEndpoint:
        """The endpoint offering ``gateway``'s profile ``settings.profile`` under its hooks and name policy.

        Raises:
            ConfigurationError: for an unknown profile.
        """
        served = gateway.served_profile(settings.profile)
        return cls(
            settings,
            catalog=served.snapshot,
            hooks=served.hooks,
            names=served.names,
            dispatch=served.dispatch,
            state=served.state,
            ranker=served.ranker,
        )

    def route(self, app: Starlette) -> Starlette:
        """Serve this endpoint at its path on ``app`` (see the module's ``route``)."""
        return route(app, self)

    def mount(self, app: Starlette) -> Starlette:
        """Serve this endpoint on ``app`` and keep it open for the app's lifetime (see the module's ``mount``)."""
        return mount(app, self)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[ResponsesEndpoint]:
        """Keep the upstream client and the server pool open for the block."""
        async with AsyncExitStack() as stack:
            if self._given_client is not None:
                self._client = self._given_client
            else:
                self._client = await stack.enter_async_context(
                    AsyncOpenAI(
                        base_url=self.settings.upstream,
                        api_key=self.settings.api_key or "none",
                        max_retries=0,
                        http_client=bounded_client(self.settings.max_reply_bytes),
                    )
                )
            await stack.enter_async_context(self._pool)
            self._running = True
            try:
                yield self
            finally:
                self._running = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._asgi(scope, receive, send)

    async def _respond(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if request.method != "POST":
            await _error(RequestError("use POST", status=405))(scope, receive, send)
            return
        response = await self.handle(request)
        await response(scope, receive, send)

    async def handle(self, request: Request) -> Response:
        """Answer one HTTP request (JSON or an SSE stream)."""
        if not self._running or self._client is None:
            return _error(RequestError("the responses endpoint is not running", status=503))
        try:
            body = await _body(request, self.settings.max_body_bytes)
            parsed = parse_request(body, self.settings.max_json_depth)
        except RequestError as exc:
            return _error(exc)
        stack = AsyncExitStack()
        if parsed.stream:
            send, receive = anyio.create_memory_object_stream[dict[str, Any]](64)
            try:
                turn = await self._prepare(parsed, stack, Events(send.send), request)
            except BaseException as exc:
                send.close()
                receive.close()
                await stack.aclose()
                if isinstance(exc, RequestError):
                    return _error(exc)
                raise
            return StreamingResponse(self._stream(turn, stack, send, receive), media_type="text/event-stream")
        try:
            async with stack:
                turn = await self._prepare(parsed, stack, Events(), request)
                return JSONResponse(await turn.run())
        except RequestError as exc:
            return _error(exc)
        except (openai.APIError, UpstreamReplyError) as exc:
            return _error(upstream_failure(exc, self.settings.upstream))
        except Exception:
            logger.exception("the Responses endpoint failed a request")
            return _error(RequestError("the gateway failed this response (see its log)", status=500))

    async def _prepare(self, request: ResponsesRequest, stack: AsyncExitStack, events: Events, http: Request) -> Turn:
        rows: dict[str, Entry] = {}
        if self._catalog is not None and self.settings.offer_catalog:
            rows = {row.name: row for row in self._catalog()}
        taken = {name: f"the gateway's tool {name!r}" for name in rows}
        if self.settings.read_resource:
            taken.setdefault(READ_RESOURCE, f"the gateway's tool {READ_RESOURCE!r}")
        for index, tool in enumerate(request.function_tools):
            if tool.name in taken:
                raise RequestError(
                    f"`tools[{index}].name`: {tool.name!r} is already {taken[tool.name]}; rename your function",
                    f"tools[{index}].name",
                )
            taken[tool.name] = f"function tools[{index}]"
        declared = await discover(
            request, self.settings, self._policy, self._pool, self._names, taken, stack, self._rules
        )
        for server in declared:
            rows.update((row.name, row) for row in server.rows)
        reader = resource_reader(declared) if self.settings.read_resource else None
        if reader is not None:
            rows[reader.name] = reader
        translated = translate(request.instructions, request.input, self._names.model_name, self._approvals)
        await use_approved(((a.request["id"], a.approve) for a in translated.answered), self._approvals)
        assert self._client is not None
        return Turn(
            request,
            self.settings,
            self._client,
            rows,
            self._dispatch,
            self._hooks,
            declared,
            translated,
            self._approvals,
            events,
            identity_of(http),
            self._ranker,
        )

    async def _stream(
        self,
        turn: Turn,
        stack: AsyncExitStack,
        send: MemoryObjectSendStream[dict[str, Any]],
        receive: MemoryObjectReceiveStream[dict[str, Any]],
    ) -> AsyncIterator[bytes]:
        """Play ``turn`` in a task, yielding its events; leaving early cancels it (upstream and tools)."""
        events = turn.events

        async def play() -> None:
            async with send:
                try:
                    final = await turn.run()
                    await events.response(final["status"], final)
                except (openai.APIError, UpstreamReplyError) as exc:
                    error = {"code": "server_error", "message": upstream_failure(exc, self.settings.upstream).message}
                    await events.response("failed", turn.response("failed", error=error))
                except Exception:
                    logger.exception("the Responses endpoint failed a streamed response")
                    error = {"code": "server_error", "message": "the gateway failed this response (see its log)"}
                    await events.response("failed", turn.response("failed", error=error))

        try:
            async with anyio.create_task_group() as group:
                group.start_soon(play)
                try:
                    async with receive:
                        async for event in receive:
                            yield sse(event)
                finally:
                    group.cancel_scope.cancel()
        finally:
            await stack.aclose()


async def _body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) as soon as it is known to be over ``limit`` bytes: by its declared
    length before reading, else once the bytes read pass it."""
    too_large = RequestError(f"the request body is over {limit:,} bytes (responses.maxBodyBytes)", status=413)
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and (len(declared) > 18 or int(declared) > limit):
        raise too_large
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise too_large
    except ClientDisconnect:
        raise RequestError("the client went away before sending the whole body") from None
    return bytes(body)


def _error(exc: RequestError) -> Response:
    return JSONResponse(exc.body(), status_code=exc.status)


def route(app: Starlette, endpoint: ResponsesEndpoint) -> Starlette:
    """Serve ``endpoint`` at its path on ``app`` (the caller keeps ``endpoint.running()`` open).

    On the gateway's own app (``McpGateway.http_app``) the endpoint sits behind the same
    Host/Origin checks and bearer tokens as the MCP profiles: a token must open the
    endpoint's profile (``ResponsesSettings.profile``).
    """
    guard = app.router.default
    path = endpoint.settings.path
    if isinstance(guard, Guard):
        guard.endpoints.add(path)

        async def routed(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and scope["path"].rstrip("/") == path:
                if await guard.admit(scope, receive, send, endpoint.settings.profile):
                    await endpoint(scope, receive, send)
                return
            await guard(scope, receive, send)

        app.router.default = routed
    else:
        app.router.routes.insert(0, Route(path, endpoint, methods=["POST"]))
    return app


def mount(app: Starlette, endpoint: ResponsesEndpoint) -> Starlette:
    """``route`` the endpoint on ``app`` and keep it open for the app's lifetime (its lifespan)."""
    route(app, endpoint)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        async with endpoint.running(), inner(application) as state:
            yield state

    app.router.lifespan_context = lifespan
    return app
