"""A gateway taking access tokens of a real loopback authorization server, for the OAuth tests."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from _authserver import AuthServer, Tls, running_auth_server, tls
from _gateway import ACCEPT, INIT, serving
from toolmesh import ToolContext, ToolRegistry, tool
from toolmesh.gateway import AccessRule, HttpSettings, McpGateway, OAuthSettings

__all__ = ["ACCEPT", "INIT", "USERS", "OAuthScene", "free_port", "oauth_scene", "post_init", "whoami_registry"]

USERS = {"alice": {"mcp", "tools:admin", "tools:read"}, "bob": {"mcp", "tools:read"}}
"""The authorization server's users and the scopes each may be granted."""


@tool
async def whoami(ctx: ToolContext[Any]) -> str:
    """Say who called, with which scopes."""
    who = ctx.identity
    return "nobody" if who is None else f"{who.subject} {' '.join(sorted(who.scopes))}"


@tool
async def wipe(path: str) -> str:
    """Delete something."""
    return f"wiped {path}"


def whoami_registry() -> ToolRegistry:
    """``whoami`` (in every profile) and ``wipe`` (not in ``reader``)."""
    registry = ToolRegistry()
    registry.register(whoami)
    registry.register(wipe)
    return registry


@dataclass
class OAuthScene:
    server: AuthServer
    certs: Tls
    issuer: str
    url: str
    """The gateway's base URL (``http://127.0.0.1:PORT``)."""
    settings: OAuthSettings

    @property
    def resource(self) -> str:
        return self.url + "/mcp"


async def post_init(http: httpx2.AsyncClient, url: str, token: str) -> httpx2.Response:
    """An ``initialize`` request to ``url`` carrying ``token`` as its bearer token."""
    return await http.post(url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {token}"})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def oauth_scene(
    folder: Path, registry: ToolRegistry | None = None, observers: Sequence[Any] = (), **options: Any
) -> AsyncIterator[OAuthScene]:
    """An authorization server (alice may administer, bob only read) and a gateway taking its tokens:
    every request needs ``mcp``; the default profile ``tools:admin``, ``reader`` (``whoami`` only) ``tools:read``."""
    certs = tls(folder)
    server = AuthServer(users={name: set(scopes) for name, scopes in USERS.items()}, login="alice")
    async with running_auth_server(server, certs) as issuer:
        port = free_port()
        fields: dict[str, Any] = {
            "issuer": issuer,
            "resource": f"http://127.0.0.1:{port}/mcp",
            "jwks_uri": issuer + "/jwks.json",
            "scopes": ("mcp",),
            "profiles": {"default": AccessRule(scopes=("tools:admin",)), "reader": AccessRule(scopes=("tools:read",))},
            "claims": ("client_id",),
            "verify": certs.trust,
        }
        settings = OAuthSettings(**{**fields, **options})
        gateway = McpGateway(
            registry or whoami_registry(), profiles={"reader": lambda row: row.name == "whoami"}, observers=observers
        )
        async with serving(gateway, HttpSettings(port=port, oauth=settings)) as url:
            yield OAuthScene(server, certs, issuer, url, settings)
