"""LEAN CLIENT PATH: a 2026-07-28 ``tools/call`` over Streamable HTTP, sent as one POST of toolmesh's own.

This is the one module of toolmesh's MCP client that frames JSON-RPC itself: the client-side
twin, asked for by issue 26, of DESIGN.md's one labelled lean path (the gateway's,
``gateway._mcp_face.lean``). Through the
SDK's session a call crosses the dispatcher (a waiter and its memory stream), the transport's
writer (a task group per message, a task per POST) and its reader on the way back: about
600-800 µs of CPU per call here (docs/benchmarks.md), more than toolmesh's whole registry. And
the SDK's transport ends the whole session when one POST fails (the error ends its task group),
failing every call in flight on it. Here a call is its own POST, in the caller's own task, built
on the SDK's own pieces:

1. the request: ``CallToolRequest`` dumped and stamped by the session's own request stamp (the
   ``_meta`` envelope: protocol version, client info and capabilities, the log level; the
   ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` headers), the W3C
   trace context injected as the SDK injects it, the progress token the SDK would set (the
   request id), framed as a ``JSONRPCRequest`` and encoded by ``wire.encode`` (text that cannot
   be encoded fails the call before anything is sent);
2. the POST: the session's own ``httpx2`` client (its headers, auth, TLS, timeouts, and the
   response hook that notes an error status in the call's ``Exchange`` and bounds the answer by
   ``max_result_bytes``), following redirects by the SDK's rule (``stream_within_origin``);
3. the answer, read as the SDK's transport reads it: a JSON body, or an SSE stream (each event
   bounded as the session's are) on which progress reaches the call's progress callback and
   other notifications the session's message handler (log messages: the call that caused them).
   An error status, a ``202``, a redirect not followed or another content type becomes the same
   JSON-RPC error the SDK's transport makes of it; an answer with another id, or a server
   request on the call's stream (2026-07-28 servers ask through ``InputRequiredResult``), is an
   unreadable answer, as ``wire`` reports one;
4. the result: the SDK's check for the negotiated version (``methods.validate_server_result``),
   then the caller's result type.

A failure is the call's own: an ``MCPError`` as the SDK would raise for the same answer, or the
transport's exception; ``Exchange.own_post`` tells ``McpConnection`` that it says nothing of the
session (a connection dropped mid-answer, a bad answer, an error status). Only a POST that could
not connect at all (``ConnectError``, ``ConnectTimeout``: the server cannot be reached) ends the
session, as on the SDK path, so the connection goes ``down`` and reconnects with its back-off.
Nothing is sent twice: once the POST has started there is no fallback to the SDK.
A stream cut before its answer is not resumed: 2026-07-28 removed SSE resumability (SEP-2575).

Which calls: ``Session`` makes a ``LeanPost`` for a Streamable HTTP session that negotiated a
2026-07-28-era version; a call goes lean unless a tracer provider is installed (the SDK's client
span would be missing) or the SDK's request stamp is not where this module reads it (then every
call goes through the SDK). Input-required rounds and tasks are driven as before
(``input_rounds``, ``tasks``): each round is one lean POST, polling a task is the SDK's. Every
other request (discovery, listing, resources, ``subscriptions/listen``) stays on the SDK.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import httpx2
import mcp_types
from mcp.shared._httpx_utils import redirect_location, stream_within_origin
from mcp.shared._otel import inject_trace_context
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.exceptions import MCPError
from mcp_types import methods
from opentelemetry import trace
from pydantic import TypeAdapter, ValidationError

from toolmesh._core.slots import global_tracer_provider

from .wire import _EXCHANGE, INVALID_ANSWER, encode

if TYPE_CHECKING:
    from mcp import Client
    from mcp.shared.dispatcher import ProgressFnT

__all__ = ["LeanPost"]

logger = logging.getLogger("toolmesh.mcp")

_T = TypeVar("_T")
_METHOD: Final = "tools/call"
_HEADERS: Final = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
"""What the SDK's transport sends on every POST (``StreamableHTTPTransport._prepare_headers``)."""
_NO_TRACING = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
_UNSET = trace.NoOpTracerProvider()
_STAMP = "_stamp"
"""The SDK session's request stamp (``ClientSession._stamp``): the one SDK attribute read here."""


class LeanPost:
    """The lean client path of one Streamable HTTP session that negotiated 2026-07-28."""

    def __init__(
        self,
        client: Client,
        http: httpx2.AsyncClient,
        url: str,
        max_event_bytes: int,
        on_notification: Callable[[Any], Awaitable[None]],
    ) -> None:
        """Args:
        client: The session's entered SDK client (its stamp, its negotiated version).
        http: The session's HTTP client (the one the SDK's transport uses).
        url: The endpoint.
        max_event_bytes: The bound of one SSE event (the session's).
        on_notification: The session's message handler, for notifications on a call's stream.
        """
        self._client = client
        self._http = http
        self._url = url
        self._max_event = max_event_bytes
        self._on_notification = on_notification
        self._ids = itertools.count(1)

    def usable(self) -> bool:
        """Whether a call may go lean now: no tracer provider installed, and the SDK's stamp is found."""
        if not isinstance(global_tracer_provider() or _UNSET, _NO_TRACING):
            return False
        return callable(getattr(self._client.session, _STAMP, None))

    async def send(
        self, params: mcp_types.CallToolRequestParams, result_type: TypeAdapter[_T], progress: ProgressFnT | None
    ) -> _T:
        """``tools/call`` with ``params``: the server's result, validated as ``result_type``.

        Raises:
            MCPError: the server answered with an error, or its answer stands for one (as in the SDK).
            UnsendableMessage: the request holds text that cannot be encoded; nothing was sent.
            pydantic.ValidationError: the result does not conform to the protocol or ``result_type``.
            httpx2.HTTPError: the POST failed (it fails this call only).
        """
        request_id = next(self._ids)
        data = mcp_types.CallToolRequest(params=params).model_dump(by_alias=True, mode="json", exclude_none=True)
        options: dict[str, Any] = {}
        getattr(self._client.session, _STAMP)(data, options)
        sent: dict[str, Any] = data.get("params") or {}
        meta = dict(sent.get("_meta") or {})
        if progress is not None:
            meta["progressToken"] = request_id  # as the SDK's dispatcher does: the request id is the token
        inject_trace_context(meta)
        if meta:
            sent["_meta"] = meta
        body = encode(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method=_METHOD, params=sent))
        headers = {**_HEADERS, **options.get("headers", {})}
        try:
            raw = await self._post(body, headers, request_id, progress)
            methods.validate_server_result(_METHOD, self._client.protocol_version, raw)
            return result_type.validate_python(raw, by_name=False)
        except Exception as exc:
            current = _EXCHANGE.get()
            if current is not None and not isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout):
                current.own_post = True  # this POST's failure says nothing of the session
            raise

    async def _post(
        self, body: bytes, headers: dict[str, str], request_id: int, progress: ProgressFnT | None
    ) -> dict[str, Any]:
        """The ``result`` of the answer to one POST (``StreamableHTTPTransport._handle_post_request``'s reading)."""
        async with stream_within_origin(self._http, "POST", self._url, content=body, headers=headers) as response:
            if response.status_code == 202:
                raise MCPError(mcp_types.INVALID_REQUEST, "server answered a request with 202 Accepted")
            location = redirect_location(response)
            if location is not None:
                raise MCPError(mcp_types.INVALID_REQUEST, _redirect_text(response, location))
            if response.status_code >= 400:
                raise await _status_error(response)
            content_type = response.headers.get("content-type", "").lower()
            if content_type.startswith("application/json"):
                return await _json_result(response, request_id)
            if content_type.startswith("text/event-stream"):
                return await self._events(response, request_id, progress)
            raise MCPError(mcp_types.INVALID_REQUEST, f"Unexpected content type: {content_type}")

    async def _events(self, response: httpx2.Response, request_id: int, progress: ProgressFnT | None) -> dict[str, Any]:
        """The result carried by an SSE answer; its notifications delivered on the way."""
        try:
            async for event in httpx2.EventSource(response, max_event_size=self._max_event):
                if event.event != "message" or not event.data:
                    continue  # a priming event, or one the SDK ignores too
                try:
                    message = mcp_types.jsonrpc_message_adapter.validate_json(event.data, by_name=False)
                except ValidationError as exc:
                    raise MCPError(mcp_types.PARSE_ERROR, f"Failed to parse SSE message: {exc}") from exc
                match message:
                    case mcp_types.JSONRPCResponse():  # the SDK takes any id on the call's own stream
                        return message.result
                    case mcp_types.JSONRPCError():
                        raise MCPError.from_jsonrpc_error(message)
                    case mcp_types.JSONRPCNotification():
                        await self._notified(message, request_id, progress)
                    case _:
                        raise MCPError(
                            mcp_types.PARSE_ERROR,
                            f"{INVALID_ANSWER}it sent a {message.method} request on the call's stream (a "
                            "2026-07-28 server asks with an InputRequiredResult)",
                        )
        except httpx2.SSEError as exc:
            raise MCPError(mcp_types.CONNECTION_CLOSED, f"SSE stream failed: {exc}") from exc
        except (httpx2.HTTPError, httpx2.StreamError) as exc:  # the stream broke (or went over its bound)
            raise MCPError(mcp_types.CONNECTION_CLOSED, "SSE stream ended without a response") from exc
        raise MCPError(mcp_types.CONNECTION_CLOSED, "SSE stream ended without a response")

    async def _notified(
        self, message: mcp_types.JSONRPCNotification, request_id: int, progress: ProgressFnT | None
    ) -> None:
        """A notification on the call's stream: progress to the call, every other one to the session."""
        params = message.params or {}
        if message.method == "notifications/progress" and progress is not None:
            match params:
                case {"progressToken": str() | int() as token, "progress": int() | float() as value} if (
                    not isinstance(token, bool)
                    and not isinstance(value, bool)
                    and coerce_request_id(token) == request_id
                ):
                    total, text = params.get("total"), params.get("message")
                    try:
                        await progress(
                            float(value),
                            float(total) if isinstance(total, int | float) else None,
                            text if isinstance(text, str) else None,
                        )
                    except Exception:  # the SDK's rule: a progress callback never breaks the call
                        logger.exception("progress callback raised")
                case _:
                    pass
        try:
            notification = methods.parse_server_notification(message.method, self._client.protocol_version, params)
        except (KeyError, ValidationError):
            logger.debug("MCP: dropped a notification %r on a call's stream", message.method)
            return
        if not isinstance(notification, mcp_types.CancelledNotification):
            await self._on_notification(notification)


async def _status_error(response: httpx2.Response) -> MCPError:
    """The error an HTTP error answer stands for: its JSON-RPC error, else the SDK's stand-in."""
    if response.headers.get("content-type", "").lower().startswith("application/json"):
        try:
            parsed = mcp_types.jsonrpc_message_adapter.validate_json(await response.aread(), by_name=False)
            if isinstance(parsed, mcp_types.JSONRPCError):
                return MCPError.from_jsonrpc_error(parsed)
        except (httpx2.StreamError, ValidationError):
            pass
    if response.status_code == 404:  # no session on 2026-07-28: the endpoint does not know the method
        return MCPError(mcp_types.METHOD_NOT_FOUND, "Not Found")
    return MCPError(mcp_types.INTERNAL_ERROR, "Server returned an error response")


async def _json_result(response: httpx2.Response, request_id: int) -> dict[str, Any]:
    """The result of a JSON answer; an answer to another id, or no answer at all, is unreadable."""
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(await response.aread(), by_name=False)
    except (httpx2.StreamError, ValidationError) as exc:
        raise MCPError(mcp_types.PARSE_ERROR, f"Failed to parse JSON response: {exc}") from exc
    if not isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError):
        raise MCPError(mcp_types.PARSE_ERROR, f"{INVALID_ANSWER}it is not a JSON-RPC response")
    if isinstance(message, mcp_types.JSONRPCError) and message.id is None:
        raise MCPError.from_jsonrpc_error(message)  # refused before its id was read: still this request's answer
    if message.id is None or coerce_request_id(message.id) != request_id:
        raise MCPError(
            mcp_types.PARSE_ERROR, f"{INVALID_ANSWER}it answered with id {message.id!r}, not the id of the request"
        )
    if isinstance(message, mcp_types.JSONRPCError):
        raise MCPError.from_jsonrpc_error(message)
    return message.result


def _redirect_text(response: httpx2.Response, location: httpx2.URL) -> str:
    """The SDK transport's words for a redirect it does not follow (``errors`` reads their start)."""
    if response.request.url.scheme == "https" and location.scheme == "http":
        return f"Redirect to {location} not followed: it would downgrade this HTTPS endpoint to plain HTTP"
    return f"Redirect to {location} not followed; use that URL as the endpoint if it is the intended server"
