"""A real OAuth 2.1 authorization server on loopback HTTPS, for the gateway's resource-server tests.

Built on the MCP SDK's server-side authorization pieces (``create_auth_routes``: metadata,
dynamic registration, authorize, token, revocation) with a provider that issues RS256 JWT
access tokens (joserfc) for the resource the client names (RFC 8707), and publishes its keys
at ``/jwks.json``. Authorization is headless: the ``login`` user is signed in and approves at
once, and is granted the scopes asked for that the user may have. ``mint`` makes any token
directly, for the hostile cases. TLS is ``trustme``'s: ``trust`` is the client side's context.
"""

from __future__ import annotations

import base64
import secrets
import ssl
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import anyio
import httpx2
import trustme
from joserfc import jwt
from joserfc.jwk import RSAKey
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.server.auth.provider import AccessToken, AuthorizationCode, AuthorizationParams, RefreshToken
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from _responses import serve_asgi

__all__ = ["AuthServer", "Tls", "oauth_client", "running_auth_server", "tls"]

REDIRECT_URI = "http://127.0.0.1:1/callback"


@dataclass
class Tls:
    """A test CA and a loopback server certificate signed by it."""

    certfile: str
    keyfile: str
    cafile: str
    """The CA's certificate (PEM), for a ``caFile`` key."""
    trust: ssl.SSLContext
    """An SSL context trusting the CA (for clients, and for the gateway's JWKS fetches)."""


def tls(folder: Path) -> Tls:
    """A fresh CA and a certificate for 127.0.0.1 and localhost, written under ``folder``."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    certfile, keyfile, cafile = folder / "cert.pem", folder / "key.pem", folder / "ca.pem"
    cert.private_key_pem.write_to_path(str(keyfile))
    cert.cert_chain_pems[0].write_to_path(str(certfile))
    ca.cert_pem.write_to_path(str(cafile))
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    return Tls(str(certfile), str(keyfile), str(cafile), trust)


@dataclass
class AuthServer:
    """The provider behind the SDK's authorization routes, issuing JWT access tokens."""

    users: dict[str, set[str]]
    """User -> the scopes they may be granted."""
    login: str = ""
    """Who signs in at the next authorization."""
    issuer: str = ""
    ttl: int = 3600
    keys: list[RSAKey] = field(default_factory=lambda: [RSAKey.generate_key(2048, parameters={"kid": "k1"})])
    """Published keys; the last one signs."""
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    issued: list[dict[str, Any]] = field(default_factory=list)
    """The claims of every access token issued by the token endpoint."""
    jwks_fetches: int = 0
    opaque: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Opaque access tokens -> their introspection answer (RFC 7662), for ``/introspect``."""
    introspector: tuple[str, str] = ("gateway", "gateway-secret-0123456789")
    """The client id and secret ``/introspect`` takes (HTTP Basic)."""
    introspection_down: bool = False
    """``/introspect`` answers 503 (the authorization server is failing) while set."""
    introspection_held: anyio.Event | None = None
    """When given, ``/introspect`` waits for it before answering (and sets ``introspection_waiting``)."""
    introspection_waiting: anyio.Event | None = None
    hits: Counter[str] = field(default_factory=Counter)
    """Requests received, by path (``/introspect``, ``/.well-known/oauth-authorization-server``, ...)."""

    def mint(self, claims: dict[str, Any] | None = None, *, key: RSAKey | None = None, **header: Any) -> str:
        """A JWT signed by ``key`` (the signing key) with default claims overridden by ``claims`` (None drops one)."""
        now = int(time.time())
        signer = key or self.keys[-1]
        base: dict[str, Any] = {"iss": self.issuer, "sub": "alice", "client_id": "c1", "iat": now, "exp": now + 300}
        merged = {k: v for k, v in {**base, **(claims or {})}.items() if v is not None}
        return jwt.encode({"alg": "RS256", "kid": signer.kid, **header}, merged, signer)

    def rotate(self, *, drop_old: bool = False) -> RSAKey:
        """Publish a new signing key (and stop publishing the old ones)."""
        key = RSAKey.generate_key(2048, parameters={"kid": f"k{len(self.keys) + 1}"})
        self.keys = [key] if drop_old else [*self.keys, key]
        return key

    # -- the SDK's OAuthAuthorizationServerProvider ---------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        allowed = self.users[self.login]
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=[s for s in (params.scopes or sorted(allowed)) if s in allowed],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=self.login,
        )
        query = {"code": code, **({"state": params.state} if params.state else {})}
        return f"{params.redirect_uri}?{urlencode(query)}"

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(code.code, None)
        claims = {
            "sub": code.subject,
            "client_id": code.client_id,
            "scope": " ".join(code.scopes),
            "aud": code.resource,
            "exp": int(time.time()) + self.ttl,
        }
        self.issued.append(claims)
        return OAuthToken(access_token=self.mint(claims), expires_in=self.ttl, scope=" ".join(code.scopes))

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return None

    async def exchange_refresh_token(self, *args: Any) -> OAuthToken:
        raise NotImplementedError

    async def load_access_token(self, token: str) -> AccessToken | None:
        return None

    async def revoke_token(self, token: Any) -> None:
        return None

    # -- the app ---------------------------------------------------------------

    def app(self) -> ASGIApp:
        async def jwks(request: Request) -> Response:
            self.jwks_fetches += 1
            return JSONResponse({"keys": [key.as_dict(private=False) for key in self.keys]})

        async def introspect(request: Request) -> Response:
            if self.introspection_held is not None:
                if self.introspection_waiting is not None:
                    self.introspection_waiting.set()
                await self.introspection_held.wait()
            if self.introspection_down:
                return JSONResponse({"error": "temporarily_unavailable"}, status_code=503)
            expected = "Basic " + base64.b64encode(":".join(self.introspector).encode()).decode()
            if request.headers.get("authorization") != expected:
                return JSONResponse({"error": "invalid_client"}, status_code=401)
            token = str((await request.form()).get("token", ""))
            return JSONResponse(self.opaque.get(token, {"active": False}))

        options = ClientRegistrationOptions(enabled=True, valid_scopes=sorted(set().union(*self.users.values())))
        routes = create_auth_routes(self, AnyHttpUrl(self.issuer), client_registration_options=options)

        async def openid(request: Request) -> Response:  # OpenID Connect discovery: the SDK's RFC 8414 metadata
            return JSONResponse({"issuer": self.issuer, "jwks_uri": self.issuer + "/jwks.json"})  # names no JWKS

        extra = [
            Route("/jwks.json", jwks),
            Route("/introspect", introspect, methods=["POST"]),
            Route("/.well-known/openid-configuration", openid),
        ]
        app = Starlette(routes=[*routes, *extra])

        async def counted(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                self.hits[scope["path"]] += 1
            await app(scope, receive, send)

        return counted


class _Later:
    """An ASGI app made once its URL is known (the issuer is in the app's metadata)."""

    def __init__(self) -> None:
        self.app: Any = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        await self.app(scope, receive, send)


@asynccontextmanager
async def running_auth_server(server: AuthServer, certs: Tls) -> AsyncIterator[str]:
    """Serve ``server`` over HTTPS on a free loopback port for the block; yields its issuer URL."""
    later = _Later()
    async with serve_asgi(later, ssl_certfile=certs.certfile, ssl_keyfile=certs.keyfile) as url:
        server.issuer = url
        later.app = server.app()
        yield url


def oauth_client(server_url: str, trust: ssl.SSLContext, scope: str | None = None) -> OAuthClientProvider:
    """The SDK's OAuth client provider for ``server_url``, with a headless user agent (no browser)."""
    codes: list[AuthorizationCodeResult] = []

    async def open_browser(authorization_url: str) -> None:
        async with httpx2.AsyncClient(verify=trust) as http:
            response = await http.get(authorization_url, follow_redirects=False)
        query = parse_qs(urlparse(response.headers["location"]).query)
        codes.append(AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0]))

    async def redirected() -> AuthorizationCodeResult:
        return codes.pop()

    metadata = OAuthClientMetadata(
        client_name="toolmesh test client",
        redirect_uris=[AnyHttpUrl(REDIRECT_URI)],
        grant_types=["authorization_code"],
        response_types=["code"],
        scope=scope,
    )
    return OAuthClientProvider(server_url, metadata, _Storage(), open_browser, redirected)


class _Storage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info
