"""What authentication costs the gateway per request: the guard's admission of one request, in-process.

Run:  .venv/bin/python bench/auth.py [--requests 5000] [--repeats 5]

The gateway's guard (Host/Origin checks, then the bearer token) admits one ``POST /mcp`` ASGI request,
called directly (no network, no MCP), for: no authentication, a static token, an RS256 JWT access
token checked in full every time (``cacheSeconds: 0``: signature, issuer, audience, expiry, scopes),
and the same token remembered after its first check (the default: a client sends the same token with
every request). The issuer's JWKS is served on loopback by uvicorn and fetched once when the guard is
primed. µs per request, best of ``--repeats`` runs, rows interleaved.
"""

from __future__ import annotations

import argparse
import json
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import uvicorn
from joserfc import jwt
from joserfc.jwk import RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolmesh.gateway import BearerToken, HttpSettings, OAuthSettings
from toolmesh.gateway._shared.http import Guard

STATIC = "static-token-0123456789abcdef-0123"
RESOURCE = "http://127.0.0.1:8765/mcp"


def request(token: str | None) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/json")]
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    return {"type": "http", "method": "POST", "path": "/mcp", "query_string": b"", "headers": headers}


async def receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def send(message: dict[str, Any]) -> None:
    return None


async def per_request_us(guard: Guard, token: str | None, requests: int) -> float:
    scopes = [request(token) for _ in range(requests)]
    started = time.perf_counter()
    for scope in scopes:
        if not await guard.admit(scope, receive, send, "default"):
            raise RuntimeError("the guard refused the bench's request")
    return (time.perf_counter() - started) / requests * 1e6


async def run(args: argparse.Namespace) -> None:
    key = RSAKey.generate_key(2048, parameters={"kid": "bench-1"})

    async def jwks(_: Request) -> Response:
        return Response(json.dumps({"keys": [key.as_dict(private=False)]}), media_type="application/json")

    listening = socket.create_server(("127.0.0.1", 0))
    issuer = f"http://127.0.0.1:{listening.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/jwks.json", jwks)]), log_level="warning"))
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [listening])

        def oauth(cache_seconds: float) -> HttpSettings:
            settings = OAuthSettings(
                issuer=issuer,
                resource=RESOURCE,
                jwks_uri=issuer + "/jwks.json",
                scopes=("mcp",),
                cache_seconds=cache_seconds,
            )
            return HttpSettings(oauth=settings)

        now = int(time.time())
        claims = {"iss": issuer, "sub": "bench", "aud": RESOURCE, "scope": "mcp", "iat": now, "exp": now + 3600}
        token = jwt.encode({"alg": "RS256", "kid": "bench-1"}, claims, key)
        rows: dict[str, tuple[Guard, str | None]] = {
            "no authentication": (Guard(HttpSettings(), {}), None),
            "static token": (Guard(HttpSettings(tokens=(BearerToken(STATIC, name="bench"),)), {}), STATIC),
            "JWT, checked every request": (Guard(oauth(0), {}), token),
            "JWT, remembered (default)": (Guard(oauth(60), {}), token),
        }
        for guard, _ in rows.values():
            if guard.resource is not None:
                await guard.resource.prime()
        best = {name: float("inf") for name in rows}
        measure: Callable[[Guard, str | None, int], Awaitable[float]] = per_request_us
        for guard, given in rows.values():  # warm-up
            await measure(guard, given, 200)
        for _ in range(args.repeats):
            for name, (guard, given) in rows.items():
                best[name] = min(best[name], await measure(guard, given, args.requests))
        server.should_exit = True
    base = best["static token"]
    print(f"guard.admit of one POST /mcp, µs per request, best of {args.repeats} x {args.requests} requests")
    for name, value in best.items():
        print(f"  {name:<28} {value:>8.1f} µs   {value - base:>+7.1f} µs vs a static token")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    anyio.run(run, parser.parse_args())


if __name__ == "__main__":
    main()
