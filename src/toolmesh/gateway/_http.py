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
4. the profile's ``StreamableHTTPSessionManager`` (the SDK's), which bounds the
   request body (413) and serves both protocol versions.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .._errors import ConfigurationError

if TYPE_CHECKING:
    from ._face import ProfileFace

__all__ = ["BearerToken", "Guard", "HttpSettings", "Lifespan", "build_app", "is_loopback", "session_managers"]

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

Lifespan = Callable[[Starlette], AbstractAsyncContextManager[None]]
"""A Starlette lifespan."""


@dataclass(frozen=True)
class BearerToken:
    """A secret a client sends as ``Authorization: Bearer <token>``, maybe limited to some profiles."""

    token: str = field(repr=False)
    """The secret itself: never shown in a repr, a log or a span."""
    profiles: frozenset[str] | None = None
    """The profiles it opens (None: every profile)."""

    def __post_init__(self) -> None:
        if not isinstance(self.token, str) or not self.token.strip():
            raise ConfigurationError("a BearerToken needs a non-empty token string")
        if self.profiles is not None and not isinstance(self.profiles, frozenset):
            object.__setattr__(self, "profiles", frozenset(self.profiles))

    def opens(self, profile: str) -> bool:
        """Whether this token may reach ``profile``."""
        return self.profiles is None or profile in self.profiles


@dataclass(frozen=True)
class HttpSettings:
    """Where and how the gateway serves Streamable HTTP."""

    host: str = "127.0.0.1"
    """The interface to bind: loopback unless you mean to expose the gateway."""
    port: int = 8765
    """The TCP port (0: any free port; ``serve_http``'s ``on_ready`` says which)."""
    path: str = "/mcp"
    """The default profile's path; profile ``p`` is served at ``/p{path}`` and at ``{path}/p``."""
    tokens: tuple[BearerToken, ...] = ()
    """Accepted bearer tokens; empty means no authentication, allowed on a loopback host only."""
    allowed_hosts: tuple[str, ...] = ()
    """``Host`` header values accepted besides loopback and the bound host (``name:*`` for any port)."""
    allowed_origins: tuple[str, ...] = ()
    """``Origin`` header values accepted besides loopback ones (``scheme://name:*`` for any port)."""
    max_body_bytes: int = 4 * 1024 * 1024
    """Largest request body accepted (larger: 413)."""
    stateless: bool = False
    """Keep no per-client state between requests (handshake-era clients then get no
    server-to-client requests or notifications; 2026-07-28 clients lose nothing but
    ``subscriptions/listen`` streams being tied to one replica)."""

    def __post_init__(self) -> None:
        if not self.path.startswith("/") or (self.path.endswith("/") and self.path != "/"):
            raise ConfigurationError(f"HttpSettings.path must start with '/' and not end with one, got {self.path!r}")
        if self.max_body_bytes <= 0:
            raise ConfigurationError(f"HttpSettings.max_body_bytes must be positive, got {self.max_body_bytes!r}")
        if not 0 <= self.port <= 65535:
            raise ConfigurationError(f"HttpSettings.port must be 0..65535, got {self.port!r}")
        if not self.tokens and not is_loopback(self.host):
            raise ConfigurationError(
                f"HttpSettings: serving on {self.host!r} without tokens would let anyone on the network call "
                "every tool; give tokens=(BearerToken(...),) or bind a loopback host such as '127.0.0.1'"
            )

    def __repr__(self) -> str:
        return (
            f"HttpSettings(host={self.host!r}, port={self.port!r}, path={self.path!r}, tokens={len(self.tokens)}, "
            f"allowed_hosts={self.allowed_hosts!r}, allowed_origins={self.allowed_origins!r}, "
            f"max_body_bytes={self.max_body_bytes!r}, stateless={self.stateless!r})"
        )


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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


class Guard:
    """Routing, Host/Origin checks and bearer tokens in front of the profiles' session managers."""

    def __init__(self, settings: HttpSettings, managers: Mapping[str, StreamableHTTPSessionManager]) -> None:
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


def build_app(
    settings: HttpSettings, managers: Mapping[str, StreamableHTTPSessionManager], lifespan: Lifespan | None
) -> Starlette:
    """The ASGI app serving each profile's session manager as ``settings`` says.

    ``lifespan`` runs the managers (and the gateway's fan-out) for the app's lifetime;
    None when the caller runs them itself (``serve_http``).
    """
    app = Starlette(lifespan=lifespan)
    app.router.routes.clear()
    app.router.default = Guard(settings, managers)  # every path goes to the guard, which routes by profile
    return app


def session_managers(
    settings: HttpSettings, faces: Mapping[str, ProfileFace]
) -> dict[str, StreamableHTTPSessionManager]:
    """One SDK session manager per profile: Streamable HTTP, both protocol versions, the body limit."""
    security = security_settings(settings)
    return {
        profile: StreamableHTTPSessionManager(
            app=face.server,
            stateless=settings.stateless,
            security_settings=security,
            max_request_body_size=settings.max_body_bytes,
        )
        for profile, face in faces.items()
    }
