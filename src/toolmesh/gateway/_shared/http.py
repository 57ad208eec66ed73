"""The gateway's HTTP app: Streamable HTTP per profile, behind Host/Origin checks and bearer tokens.

Requests go through, in order:

1. routing: ``{path}`` is the default profile; profile ``p`` is at ``/p{path}`` (which
   ends like the default's, as clients such as the MCP Inspector CLI require: it
   rewrites a URL not ending in ``/mcp``) and at ``{path}/p``; any other path is 404;
2. DNS-rebinding protection (the SDK's ``TransportSecuritySettings``): a ``Host`` that
   is neither loopback, the bound host nor listed in ``allowed_hosts`` is 421; an
   ``Origin`` that is neither loopback nor listed in ``allowed_origins`` is 403;
3. bearer tokens, when any are configured: none or a wrong one is 401, a token limited
   to other profiles is 403 (tokens are compared in constant time and never logged);
4. the profile's endpoint: the lean path for the ``tools/call`` and ``tools/list`` it
   answers (``_mcp_face.lean``), else the profile's ``StreamableHTTPSessionManager``
   (the SDK's), which bounds the request body (413) and serves both protocol versions.

Any answer given before the request's body was read to its end (a 413, a 401, a 404)
says ``Connection: close`` (``ClosesUnreadBody``), so the server closes the connection
after it instead of reading and discarding the rest of the body to reach the next request.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolmesh.gateway._config.http_settings import BearerToken, HttpSettings, is_loopback

__all__ = [
    "BearerToken",
    "ClosesUnreadBody",
    "Endpoint",
    "Guard",
    "HttpSettings",
    "Lifespan",
    "build_app",
    "is_loopback",
]

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

Lifespan = Callable[[Starlette], AbstractAsyncContextManager[None]]
"""A Starlette lifespan."""


class Endpoint(Protocol):
    """What answers one profile's MCP requests behind the guard: the SDK's session manager, or a front of it."""

    async def handle_request(self, scope: Scope, receive: Receive, send: Send) -> None: ...


def security_settings(settings: HttpSettings) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding settings for these HTTP settings."""
    bound = f"[{settings.host}]" if ":" in settings.host else settings.host
    names = dict.fromkeys((*_LOOPBACK_HOSTS, bound))
    hosts = [pattern for name in names for pattern in (name, f"{name}:*")]
    origins = [f"{scheme}://{name}:*" for name in _LOOPBACK_HOSTS for scheme in ("http", "https")]
    origins += [f"{scheme}://{name}" for name in _LOOPBACK_HOSTS for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *settings.allowed_hosts],
        allowed_origins=[*origins, *settings.allowed_origins],
    )


def _json_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    return Response(json.dumps(body), status_code=status, media_type="application/json", headers=headers)


class ClosesUnreadBody:
    """ASGI middleware: a response that starts before the request body was read to its end closes the connection.

    Otherwise a keep-alive server (uvicorn) reads the unread rest of the body, however
    large, to reach the next request on the connection: a refused 1 GiB upload would be
    read to its end. With ``Connection: close`` the server closes the connection once the
    response is sent, and reads no more.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        unread = headers.get("content-length", "0").strip() != "0" or "transfer-encoding" in headers

        async def receiving() -> Message:
            nonlocal unread
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                unread = False
            return message

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and unread:
                given = message.get("headers", [])
                if not any(name.lower() == b"connection" for name, _ in given):
                    message = {**message, "headers": [*given, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, receiving, sending)


class Guard:
    """Routing, Host/Origin checks and bearer tokens in front of the profiles' session managers."""

    def __init__(self, settings: HttpSettings, managers: Mapping[str, Endpoint]) -> None:
        self._settings = settings
        self._managers = managers
        self._security = TransportSecurityMiddleware(security_settings(settings))
        self._tokens = tuple((token.token.encode("utf-8"), token) for token in settings.tokens)

    def _profile(self, path: str) -> str | None:
        base = self._settings.path.rstrip("/")
        path = path.rstrip("/") or "/"
        if path == (base or "/"):
            return "default"
        if path.startswith(base + "/"):
            return path[len(base) + 1 :]
        if base and path.endswith(base):
            segment = path[1 : -len(base)]
            return segment if segment and "/" not in segment else None
        return None

    def _token(self, request: Request) -> BearerToken | None:
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            return None
        given_bytes = given.strip().encode("utf-8")
        found = None
        for secret, token in self._tokens:  # every token compared, so timing says nothing of which matched
            if hmac.compare_digest(secret, given_bytes):
                found = token
        return found

    async def admit(self, scope: Scope, receive: Receive, send: Send, profile: str) -> bool:
        """Whether the request passes the Host/Origin checks and the bearer tokens for ``profile``;
        when not, the refusal has been sent."""
        request = Request(scope, receive)
        refusal = await self._security.validate_request(request, is_post=False)
        if refusal is not None:
            await refusal(scope, receive, send)
            return False
        if self._tokens:
            token = self._token(request)
            if token is None:
                challenge = {"WWW-Authenticate": 'Bearer realm="toolmesh"'}
                await _json_error(401, "a valid bearer token is required", challenge)(scope, receive, send)
                return False
            if not token.opens(profile):
                await _json_error(403, f"this token does not open profile {profile!r}")(scope, receive, send)
                return False
        return True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        profile = self._profile(scope["path"])
        manager = self._managers.get(profile) if profile is not None else None
        if manager is None:
            await _json_error(404, f"no MCP endpoint at {scope['path'][:100]!r}")(scope, receive, send)
            return
        if await self.admit(scope, receive, send, profile or "default"):
            await manager.handle_request(scope, receive, send)


def build_app(settings: HttpSettings, managers: Mapping[str, Endpoint], lifespan: Lifespan | None) -> Starlette:
    """The ASGI app serving each profile's session manager as ``settings`` says.

    ``lifespan`` runs the managers (and the gateway's fan-out) for the app's lifetime;
    None when the caller runs them itself (``serve_http``).
    """
    app = Starlette(lifespan=lifespan, middleware=[Middleware(ClosesUnreadBody)])
    app.router.routes.clear()
    app.router.default = Guard(settings, managers)  # every path goes to the guard, which routes by profile
    return app
