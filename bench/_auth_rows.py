"""The authenticated rows of bench/gateway.py: `toolmesh serve` with a static token, and with JWT access tokens
(checked against a JWKS on loopback) and the audit on.

The JWKS is a file served by `python -m http.server` (a child process, like the fronts); the bench mints
one RS256 access token for the gateway's resource with joserfc, as an authorization server would, and
every call of the row sends it. The gateway checks the first request's token fully (signature, issuer,
audience, expiry, scopes) and remembers it by its hash until it expires (``cacheSeconds``), as it does
for any client, which sends the same token with every request.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from joserfc import jwt
from joserfc.jwk import RSAKey
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

__all__ = ["TOKEN_ENV", "AuthRows", "client_for"]

TOKEN_ENV = "TOOLMESH_BENCH_TOKEN"
"""The static token's variable: set in this process, inherited by the gateway child."""


class AuthRows:
    """The JWKS, the token and the serve settings of the two authenticated rows."""

    def __init__(self, folder: Path, jwks_port: int) -> None:
        self.folder = folder
        self.jwks_port = jwks_port
        self.issuer = f"http://127.0.0.1:{jwks_port}"
        self.key = RSAKey.generate_key(2048, parameters={"kid": "bench-1"})
        (folder / "jwks.json").write_text(json.dumps({"keys": [self.key.as_dict(private=False)]}), encoding="utf-8")
        self.static_token = secrets.token_urlsafe(32)
        os.environ[TOKEN_ENV] = self.static_token

    def jwks_server(self) -> list[str]:
        """The argv serving ``jwks.json`` on the JWKS port."""
        return [sys.executable, "-m", "http.server", str(self.jwks_port), "--bind", "127.0.0.1", "-d", str(self.folder)]

    def static_serve(self) -> dict[str, Any]:
        """``serve`` keys of the static-token row."""
        return {"auth": {"tokens": [{"env": TOKEN_ENV, "name": "bench"}]}}

    def jwt_serve(self, port: int) -> dict[str, Any]:
        """``serve`` keys of the JWT row: OAuth access tokens of the loopback issuer, and the audit to a file."""
        oauth = {
            "issuer": self.issuer,
            "resource": f"http://127.0.0.1:{port}/mcp",
            "jwksUri": self.issuer + "/jwks.json",
            "scopes": ["mcp"],
            "claims": ["email"],
        }
        return {"auth": {"oauth": oauth}, "audit": {"file": str(self.folder / f"audit-{port}.jsonl")}}

    def access_token(self, port: int) -> str:
        """A token for the gateway on ``port``, valid for the run."""
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": "bench-user",
            "client_id": "bench",
            "aud": f"http://127.0.0.1:{port}/mcp",
            "scope": "mcp",
            "email": "bench@example.com",
            "iat": now,
            "exp": now + 6 * 3600,
        }
        return jwt.encode({"alg": "RS256", "kid": self.key.kid, "typ": "at+jwt"}, claims, self.key)


def client_for(url: str, mode: str, token: str | None) -> Client:
    """The SDK's client for ``url``, sending ``token`` as a bearer token when given."""
    if token is None:
        return Client(url, mode=mode)  # type: ignore[arg-type]
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})  # what Client(url) makes, plus it
    return Client(streamable_http_client(url, http_client=http), mode=mode)  # type: ignore[arg-type]
