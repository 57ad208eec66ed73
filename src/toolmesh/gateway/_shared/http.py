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
   with OAuth settings, a token that is not a static one is an access token checked by
   ``gateway._auth`` (401 with a ``resource_metadata`` challenge, 403 ``insufficient_scope``,
   400 for a token in the query string), and ``/.well-known/oauth-protected-resource...``
   serves the protected resource metadata; the caller's ``Identity`` is left on the request
   (``identity_of``) and, as the SDK's principal, binds the session it opens;
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
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolmesh._context.identity import Identity
from toolmesh._core.errors import ConfigurationError
from toolmesh.gateway._auth.refusals import InsufficientScope, InvalidRequest, InvalidToken, MissingToken, Refusal
from toolmesh.gateway._auth.resource import METADATA_PATH, ResourceServer
from toolmesh.gateway._config.http_settings import BearerToken, HttpSettings, is_loopback

__all__ = [
    "IDENTITY_KEY",
    "BearerToken",
    "ClosesUnreadBody",
    "Endpoint",
    "Guard",
    "HostChecked",
    "HttpSettings",
    "Lifespan",
    "build_app",
    "identity_of",
    "is_loopback",
    "prime",
    "security_settings",
]

IDENTITY_KEY = "toolmesh.identity"
"""The ASGI scope key under which the guard leaves the caller's ``Identity``."""

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

Lifespan = Callable[[Starlette], AbstractAsyncContextManager[None]]
"""A Starlette lifespan."""


class Endpoint(Protocol):
    """What answers one profile's MCP requests behind the guard: the SDK's session manager, or a front of it."""

    async def handle_request(self, scope: Scope, receive: Receive, send: Send) -> None: ...


def security_settings(
    host: str, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = ()
) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding settings of a listener bound to ``host``: a ``Host`` header naming loopback,
    ``host`` or one of ``allowed_hosts`` (``name:*``: any port), and an ``Origin`` that is loopback or one of
    ``allowed_origins``, are accepted."""
    bound = f"[{host}]" if ":" in host else host
    names = dict.fromkeys((*_LOOPBACK_HOSTS, bound))
    hosts = [pattern for name in names for pattern in (name, f"{name}:*")]
    origins = [f"{scheme}://{name}:*" for name in _LOOPBACK_HOSTS for scheme in ("http", "https")]
    origins += [f"{scheme}://{name}" for name in _LOOPBACK_HOSTS for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *allowed_hosts],
        allowed_origins=[*origins, *allowed_origins],
    )


class HostChecked:
    """ASGI middleware: the gateway's DNS-rebinding check (``security_settings``) in front of another listener's app.

    A request whose ``Host`` is not the listener's is 421 and one with a foreign ``Origin`` 403 (the SDK's
    ``TransportSecurityMiddleware`` answers), before ``app`` sees it: a web page whose name an attacker
    made resolve to 127.0.0.1 cannot read a loopback listener (the Prometheus scrape endpoint).
    """

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings) -> None:
        self.app = app
        self._security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = await self._security.validate_request(Request(scope, receive), is_post=False)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


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

    def __init__(
        self, settings: HttpSettings, managers: Mapping[str, Endpoint], resource: ResourceServer | None = None
    ) -> None:
        self._settings = settings
        self._managers = managers
        self._security = TransportSecurityMiddleware(
            security_settings(settings.host, settings.allowed_hosts, settings.allowed_origins)
        )
        if resource is None and settings.oauth is not None:
            resource = ResourceServer(settings.oauth, settings.path)
        elif resource is not None and resource.settings != settings.oauth:
            raise ConfigurationError("the OAuth resource server given was made for other OAuth settings")
        self.resource = resource
        """The OAuth 2.1 resource server, when the settings accept access tokens (``resource``, when given:
        one made for ``settings.oauth`` and maybe primed already)."""
        self.endpoints: set[str] = set()
        """Paths besides the profiles' that the guard admits requests to (``/v1/responses``): each has its
        protected resource metadata too."""
        self._tokens = tuple(
            (token.token.encode("utf-8"), token, Identity(subject=token.name or f"token {index}", method="token"))
            for index, token in enumerate(settings.tokens)
        )

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

    def _token(self, given: str) -> tuple[BearerToken, Identity] | None:
        given_bytes = given.encode("utf-8")
        found = None
        for secret, token, identity in self._tokens:  # every token compared: timing says nothing of which matched
            if hmac.compare_digest(secret, given_bytes):
                found = token, identity
        return found

    async def admit(self, scope: Scope, receive: Receive, send: Send, profile: str) -> bool:
        """Whether the request passes the Host/Origin checks and the bearer tokens for ``profile``;
        when not, the refusal has been sent."""
        request = Request(scope, receive)
        refusal = await self._security.validate_request(request, is_post=False)
        if refusal is not None:
            await refusal(scope, receive, send)
            return False
        if not self._tokens and self.resource is None:
            return True
        try:
            identity = await self._identify(request, profile)
        except Refusal as refused:
            await self._refuse(refused, scope["path"], profile)(scope, receive, send)
            return False
        authenticated(scope, identity)
        return True

    async def _identify(self, request: Request, profile: str) -> Identity:
        """The caller of ``request``, as its bearer token says.

        Raises:
            Refusal: no token, a wrong one, one in the query string, or one that does not open ``profile``.
        """
        if b"access_token" in request.scope.get("query_string", b"") and "access_token" in request.query_params:
            raise InvalidRequest("send the access token in the Authorization header, never in the URL")
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        given = given.strip()
        if scheme.lower() != "bearer" or not given:
            raise MissingToken("a valid bearer token is required")
        found = self._token(given)
        if found is not None:
            token, identity = found
            if not token.opens(profile):
                raise _ProfileClosed(f"this token does not open profile {profile!r}")
            return identity
        if self.resource is None:
            raise InvalidToken("a valid bearer token is required")
        return await self.resource.identity(given, request.scope["path"], profile)

    def _refuse(self, refusal: Refusal, path: str, profile: str) -> Response:
        if self.resource is not None and not isinstance(refusal, _ProfileClosed):
            return self.resource.challenge(refusal, path, profile)
        challenge = {"WWW-Authenticate": 'Bearer realm="toolmesh"'} if refusal.status == 401 else None
        return _json_error(refusal.status, refusal.description, challenge)

    def _metadata(self, path: str) -> Response | None:
        """The protected resource metadata asked for at ``path``, or None when ``path`` asks for none."""
        if self.resource is None or not (path == METADATA_PATH or path.startswith(METADATA_PATH + "/")):
            return None
        endpoint = path[len(METADATA_PATH) :]
        if endpoint and self._profile(endpoint) is None and endpoint not in self.endpoints:
            return _json_error(404, "no protected resource there")
        return self.resource.metadata(endpoint)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        metadata = self._metadata(scope["path"])
        if metadata is not None:
            refusal = await self._security.validate_request(Request(scope, receive), is_post=False)
            await (refusal or metadata)(scope, receive, send)
            return
        profile = self._profile(scope["path"])
        manager = self._managers.get(profile) if profile is not None else None
        if manager is None:
            await _json_error(404, f"no MCP endpoint at {scope['path'][:100]!r}")(scope, receive, send)
            return
        if await self.admit(scope, receive, send, profile or "default"):
            await manager.handle_request(scope, receive, send)


class _ProfileClosed(InsufficientScope):
    """A static token limited to other profiles: 403."""


_PRINCIPALS: dict[Identity, tuple[AuthenticatedUser, AuthCredentials]] = {}
"""The SDK's principal of each recent identity (made once: a client sends the same token with every request)."""
_MAX_PRINCIPALS = 4096


def authenticated(scope: Scope, identity: Identity) -> None:
    """Leave ``identity`` on the request's scope: for the calls it makes (``identity_of``) and for the
    SDK's session manager, which binds a session to the principal that opened it (``scope["user"]``)."""
    scope[IDENTITY_KEY] = identity
    found = _PRINCIPALS.get(identity)
    if found is None:
        principal = AccessToken(
            token="",  # the SDK's principal never holds the token: it compares client, issuer and subject only
            client_id=identity.client_id or identity.subject,
            scopes=sorted(identity.scopes),
            subject=identity.subject,
            claims={"iss": identity.issuer} if identity.issuer is not None else None,
        )
        if len(_PRINCIPALS) >= _MAX_PRINCIPALS:
            _PRINCIPALS.clear()
        found = _PRINCIPALS[identity] = (AuthenticatedUser(principal), AuthCredentials(sorted(identity.scopes)))
    scope["user"], scope["auth"] = found


def identity_of(source: Any) -> Identity | None:
    """The caller's identity the guard left on a request (a Starlette ``Request``, or its ASGI scope)."""
    scope = source if isinstance(source, dict) else getattr(source, "scope", None)
    found = scope.get(IDENTITY_KEY) if isinstance(scope, dict) else None
    return found if isinstance(found, Identity) else None


def build_app(
    settings: HttpSettings,
    managers: Mapping[str, Endpoint],
    lifespan: Lifespan | None,
    resource: ResourceServer | None = None,
) -> Starlette:
    """The ASGI app serving each profile's session manager as ``settings`` says.

    ``lifespan`` runs the managers (and the gateway's fan-out) for the app's lifetime;
    None when the caller runs them itself (``serve_http``, which calls ``prime`` first).
    With OAuth settings, the lifespan first fetches the issuer's keys (``prime``), unless
    ``resource`` (the resource server of ``settings.oauth``) fetched them already.
    """
    guard = Guard(settings, managers, resource)
    if lifespan is not None and guard.resource is not None:
        lifespan = _primed(guard.resource, lifespan)
    app = Starlette(lifespan=lifespan, middleware=[Middleware(ClosesUnreadBody)])
    app.router.routes.clear()
    app.router.default = guard  # every path goes to the guard, which routes by profile
    app.state.guard = guard
    return app


async def prime(app: Starlette) -> None:
    """Fetch the issuer's signing keys of an app ``build_app`` made, when it takes OAuth access tokens.

    Raises:
        ConfigurationError: they cannot be fetched: the gateway could check no token, so it does not start.
    """
    guard = getattr(app.state, "guard", None)
    if isinstance(guard, Guard) and guard.resource is not None:
        await guard.resource.prime()


def _primed(resource: ResourceServer, lifespan: Lifespan) -> Lifespan:
    @asynccontextmanager
    async def primed(app: Starlette) -> AsyncIterator[None]:
        await resource.prime()
        async with lifespan(app):
            yield

    return primed
