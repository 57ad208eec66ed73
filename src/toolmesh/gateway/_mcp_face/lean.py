"""LEAN PATH: ``tools/call`` and ``tools/list`` of 2026-07-28 clients, answered without the SDK's per-request machinery.

This is the one module where toolmesh answers MCP requests itself (DESIGN.md allows exactly
this one, labelled path); every other method, protocol era and unusual request goes to the
SDK. The SDK's 2026-07-28 entry costs about a fifth of a gateway call's CPU
(docs/benchmarks.md, "Where the gateway's CPU goes"): a ``Request`` and security
middleware again, the body limit as another middleware, a task group with two tasks and a
memory stream per request (the SSE deferral), a ``Connection``, a ``ServerSession``, a
``ServerRequestContext``, the middleware chain, and the result dumped, re-validated and
dumped again. Here a request the SDK would answer with one plain JSON body is answered
with one plain JSON body, built on the SDK's own pieces:

1. at the head: ``POST``; ``MCP-Protocol-Version`` a 2026-07-28-era version; a JSON
   ``Content-Type``, and an ``Accept`` taking JSON and SSE (the SDK's own checks);
   ``Mcp-Method``, when given, ``tools/call`` or ``tools/list``; a declared length within
   ``max_body_bytes``;
2. the body read within ``max_body_bytes``, its nesting measured before parsing
   (``_core.json_limits``);
3. the SDK's validation: ``JSONRPCRequest``, the duplicated-header check, the inbound
   ladder (``classify_inbound_request``), the method's params surface
   (``validate_client_request``) and model, the ``Mcp-Param-*`` header check;
4. the face's own work: ``ProfileFace.tools_page``, or ``run_call`` (the same hooks, policy
   and result conversion as the SDK path);
5. the SDK's outbound sieve (``serialize_server_result``), ``resultType`` and the
   ``serverInfo`` stamp, as ``ServerRunner`` does;
6. the answer: ``application/json``, with the status the SDK maps a JSON-RPC error to; or,
   for a call still running after ``PING_SECONDS``, an SSE stream kept alive by pings
   that ends with the reply, as the SDK answers such a call.

It steps aside (the SDK's session manager gets the request, the body replayed as it was
read) for anything it does not answer exactly as the SDK would: another method or era, a
rejected header or envelope, invalid params, a body over the bound or nested too deep,
a call that may stream (a progress token, a log-level opt-in) or ask the client (a client
that declares elicitation or sampling, a ``requestState``), a profile in search mode, a
live tracer provider (the SDK's server span), or a server whose handlers, middleware or
cache hints are not the face's own. It sits behind the same ``Guard`` (routing, Host and
Origin, tokens) as the SDK path. ``tests/gateway/mcp_face/test_gateway_lean.py`` fails if
its answer to a request differs from the SDK path's.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

import anyio
import mcp_types
from mcp.server.runner import modern_error_data
from mcp.server.streamable_http import check_accept_headers
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp_types import methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry import trace
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from toolmesh._context.context import ToolContext
from toolmesh._context.identity import Identity
from toolmesh._core.calls import ToolCall
from toolmesh._core.json_limits import DEFAULT_MAX_DEPTH, nesting_exceeds
from toolmesh._core.slots import global_tracer_provider
from toolmesh.gateway._shared.http import Endpoint, identity_of

from .calls import run_call
from .face import ProfileFace

__all__ = ["LeanPath", "lean_paths"]

METHODS: Final = frozenset({"tools/call", "tools/list"})
"""The methods the lean path answers."""
_STREAMING_META: Final = ("progressToken", mcp_types.LOG_LEVEL_META_KEY)
"""``_meta`` keys that may make the SDK answer with a stream (progress, log messages)."""
_ASKING: Final = ("elicitation", "sampling")
"""Client capabilities under which a call may come back as input rounds."""
_NO_TRACING = (trace.ProxyTracerProvider, trace.NoOpTracerProvider)
_UNSET = trace.NoOpTracerProvider()
_JSON_HEADERS: Final = [(b"content-type", b"application/json")]
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"x-accel-buffering", b"no"),
]
"""The SDK's SSE answer headers (``mcp.server._streamable_http_modern``)."""
PING_SECONDS = 15.0
"""Seconds a call may run before its answer turns into an SSE stream kept alive by pings (the SDK's interval)."""
_PARAMS: Final[dict[str, type[mcp_types.RequestParams]]] = {
    "tools/call": mcp_types.CallToolRequestParams,
    "tools/list": mcp_types.PaginatedRequestParams,
}


class _ClientGone(Exception):
    """The client closed the request while its call ran: the call was cancelled, nothing is sent."""


class _StepAside(Exception):
    """The request is not the lean path's: the SDK's session manager answers it."""


class LeanPath:
    """A profile's endpoint: ``tools/call`` and ``tools/list`` answered lean, every other request by the SDK."""

    def __init__(self, face: ProfileFace, sdk: Endpoint, max_body_bytes: int) -> None:
        """Args:
        face: The profile whose catalog answers.
        sdk: What answers every other request (the profile's session manager).
        max_body_bytes: The request body bound (the SDK's, for the same requests).
        """
        self._face = face
        self._sdk = sdk
        self._max_body = max_body_bytes

    async def handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer the request lean when it qualifies; else hand it, its body replayed, to the SDK."""
        read: deque[Message] = deque()
        try:
            await self._answer(scope, receive, send, read)
        except _StepAside:

            async def replay() -> Message:
                return read.popleft() if read else await receive()

            await self._sdk.handle_request(scope, replay, send)

    async def _answer(self, scope: Scope, receive: Receive, send: Send, read: deque[Message]) -> None:
        lines = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in scope["headers"]]
        headers: dict[str, str] = {}
        for name, value in lines:  # the first of repeated headers, as Starlette's ``Headers`` reads them
            headers.setdefault(name, value)
        if (
            scope["method"] != "POST"
            or headers.get("mcp-protocol-version") not in MODERN_PROTOCOL_VERSIONS
            or not headers.get("content-type", "").lower().startswith("application/json")
            or not all(check_accept_headers(Request(scope)))  # the SDK answers 406 unless both are accepted
            or headers.get("mcp-method", "tools/call") not in METHODS
            or not isinstance(global_tracer_provider() or _UNSET, _NO_TRACING)
        ):
            raise _StepAside
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self._max_body):
            raise _StepAside
        body = await self._body(receive, read)
        if nesting_exceeds(body, DEFAULT_MAX_DEPTH):
            raise _StepAside
        try:
            decoded = json.loads(body)
            message = mcp_types.JSONRPCRequest.model_validate(decoded)
        except (ValueError, RecursionError):  # ValidationError is a ValueError
            raise _StepAside from None
        method, params = message.method, message.params
        if (
            method not in METHODS
            or find_duplicated_routing_header(lines) is not None
            or not self._face.runs_only_own(method)
            or any(key in (params or {}).get("_meta", {}) for key in _STREAMING_META)
        ):
            raise _StepAside
        verdict = classify_inbound_request(decoded, headers=headers)
        if not isinstance(verdict, InboundModernRoute):
            raise _StepAside
        try:
            methods.validate_client_request(method, verdict.protocol_version, params)
            typed = _PARAMS[method].model_validate(params or {}, by_name=False)
        except (KeyError, ValidationError):
            raise _StepAside from None
        if isinstance(typed, mcp_types.CallToolRequestParams) and self._not_plain(typed, verdict, headers):
            raise _StepAside
        answer = _Answer(send)
        try:
            result = await self._result(typed, verdict, identity_of(scope), receive, answer)
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.id, "result": result}
            status = 200
        except _ClientGone:
            return
        except Exception as exc:  # what the SDK's entry does with a handler's exception
            error = modern_error_data(exc)
            reply = {"jsonrpc": "2.0", "id": message.id, "error": error.model_dump(mode="json", exclude_none=True)}
            status = ERROR_CODE_HTTP_STATUS.get(error.code, 200)
        await answer.reply(reply, status)

    async def _body(self, receive: Receive, read: deque[Message]) -> bytes:
        """The request body, read within the bound; every message read is kept in ``read`` for a replay."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            read.append(message)
            if message["type"] != "http.request":
                raise _StepAside
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._max_body:
                raise _StepAside
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _result(
        self,
        params: mcp_types.RequestParams,
        verdict: InboundModernRoute,
        identity: Identity | None,
        receive: Receive,
        answer: _Answer,
    ) -> dict[str, Any]:
        """The wire result for ``params``, shaped as the SDK's ``ServerRunner`` shapes it."""
        face = self._face
        result: mcp_types.Result
        if isinstance(params, mcp_types.CallToolRequestParams):
            method, result = "tools/call", await self._call(params, identity, receive, answer)
        else:
            assert isinstance(params, mcp_types.PaginatedRequestParams)
            method, result = "tools/list", face.tools_page(params.cursor)
        dumped = methods.serialize_server_result(
            method, verdict.protocol_version, result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        if dumped.get("resultType") is None:
            dumped["resultType"] = "complete"
        meta = dumped.get("_meta")
        if meta is None or (isinstance(meta, dict) and meta.get(mcp_types.SERVER_INFO_META_KEY) is None):
            dumped["_meta"] = {**(meta or {}), mcp_types.SERVER_INFO_META_KEY: face.server.server_info_stamp}
        return dumped

    def _not_plain(
        self, call: mcp_types.CallToolRequestParams, verdict: InboundModernRoute, headers: Mapping[str, str]
    ) -> bool:
        """Whether the call is not the lean path's: search mode, input rounds, or ``Mcp-Param-*`` headers
        the SDK would refuse (it then answers the refusal)."""
        capabilities = verdict.client_capabilities
        asks = isinstance(capabilities, Mapping) and any(capabilities.get(key) is not None for key in _ASKING)
        if self._face.search or asks or call.request_state is not None:
            return True
        arguments = call.arguments or {}
        if not arguments and not any(name.startswith("mcp-param-") for name in headers):
            return False
        schema = self._face.server.get_tool_input_schema
        found = schema(call.name) if schema is not None else None
        return found is not None and validate_mcp_param_headers(found, arguments, headers) is not None

    async def _call(
        self, call: mcp_types.CallToolRequestParams, identity: Identity | None, receive: Receive, answer: _Answer
    ) -> mcp_types.CallToolResult:
        """Run the call; the client going away cancels it (2026-07-28's cancellation: closing the request); a call
        still running after ``PING_SECONDS`` is answered on an SSE stream kept alive by pings, as the SDK does."""
        face, gone = self._face, False

        def context(tool_call: ToolCall) -> ToolContext[Any]:
            return ToolContext(call_id=tool_call.id, identity=identity)  # the caller the guard authenticated

        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal gone
                while True:
                    with anyio.move_on_after(PING_SECONDS) as waiting:
                        message = await receive()
                    if waiting.cancelled_caught:
                        await answer.ping()
                    elif message["type"] == "http.disconnect":
                        gone = True
                        group.cancel_scope.cancel()
                        return

            group.start_soon(watch)
            result = await run_call(face.view.snapshot(), face.hooks, call, call.meta, context)
            group.cancel_scope.cancel()
        if gone:
            raise _ClientGone
        return result


class _Answer:
    """One request's answer: a JSON body, or (once a ping was due) an SSE stream that ends with the reply."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._streaming = False

    async def ping(self) -> None:
        """Keep the answer alive: commit to SSE at the first ping, then send a comment line."""
        with anyio.CancelScope(shield=True):  # never half a message: the reply follows on the same stream
            if not self._streaming:
                self._streaming = True
                await self._send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            await self._send({"type": "http.response.body", "body": b": ping\r\n\r\n", "more_body": True})

    async def reply(self, reply: dict[str, Any], status: int) -> None:
        """Send the JSON-RPC reply: the SSE stream's last event, or a JSON body with ``status``."""
        text = json.dumps(reply, separators=(",", ":"))
        if self._streaming:
            event = f"event: message\r\ndata: {text}\r\n\r\n".encode()
            await self._send({"type": "http.response.body", "body": event, "more_body": False})
            return
        body = text.encode()
        headers = [(b"content-length", str(len(body)).encode()), *_JSON_HEADERS]
        await self._send({"type": "http.response.start", "status": status, "headers": headers})
        await self._send({"type": "http.response.body", "body": body})


def lean_paths(
    faces: Mapping[str, ProfileFace], sdk: Mapping[str, Endpoint], max_body_bytes: int
) -> dict[str, Endpoint]:
    """Each profile's lean path, in front of its SDK endpoint."""
    return {profile: LeanPath(faces[profile], endpoint, max_body_bytes) for profile, endpoint in sdk.items()}
