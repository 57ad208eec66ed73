"""Hostile tokens and a hostile or absent JWKS: each a clear 401/403/400 or a startup error, never a 500 or a hang."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from joserfc.jwk import RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from _gateway import ACCEPT, INIT, serving
from _oauth_gateway import oauth_scene, whoami_registry
from _responses import serve_asgi
from toolmesh import ConfigurationError
from toolmesh.gateway import BearerToken, HttpSettings, Introspection, McpGateway, OAuthSettings
from toolmesh.gateway._auth.jwks import SigningKeys
from toolmesh.gateway._auth.refusals import InvalidToken


async def _post(http: httpx2.AsyncClient, url: str, token: str) -> httpx2.Response:
    return await http.post(url, json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {token}"})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(header: dict[str, Any], claims: dict[str, Any], secret: bytes | None = None) -> str:
    head = _b64(json.dumps(header).encode()) + "." + _b64(json.dumps(claims).encode())
    signature = _b64(hmac.new(secret, head.encode(), hashlib.sha256).digest()) if secret else ""
    return head + "." + signature


async def test_hostile_tokens_are_refused_with_a_clear_401(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path) as scene, httpx2.AsyncClient(timeout=60) as http:
        server, now = scene.server, int(time.time())
        good = {"aud": scene.resource, "scope": "mcp tools:admin"}
        stranger = RSAKey.generate_key(2048, parameters={"kid": "k1"})  # claims the issuer's kid
        public_pem = server.keys[-1].as_pem(private=False)
        claims = {**good, "iss": scene.issuer, "sub": "mallory", "exp": now + 300}
        cases = {
            "forged": server.mint(good, key=stranger),
            "expired": server.mint({**good, "exp": now - 3600}),
            "wrong audience": server.mint({**good, "aud": "http://127.0.0.1:1/mcp"}),
            "no audience": server.mint({**good, "aud": None}),
            "wrong issuer": server.mint({**good, "iss": "https://evil.example.com"}),
            "not yet valid": server.mint({**good, "nbf": now + 3600}),
            "issued in the future": server.mint({**good, "iat": now + 3600}),
            "alg none": _unsigned({"alg": "none", "typ": "JWT"}, claims),
            "HS256 keyed with the public key": _unsigned({"alg": "HS256", "kid": "k1"}, claims, public_pem),
            "unknown kid": server.mint(good, kid="k999"),
            "not a JWT": "opaque-token-without-introspection",
            "huge": "x" * 20000,
            "bad header": "eyJub3QganNvbg.e30.c2ln",
        }
        answers = {}
        for name, token in cases.items():
            with anyio.fail_after(60):
                answer = await http.post(
                    scene.url + "/mcp", json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {token}"}
                )
            answers[name] = (answer.status_code, answer.json()["error_description"], answer.headers["www-authenticate"])
            assert token not in answer.text and token not in answer.headers["www-authenticate"], name
    for name, (status, description, challenge) in answers.items():
        assert status == 401, (name, status, description)
        assert 'error="invalid_token"' in challenge and "resource_metadata=" in challenge, name
    assert "signature" in answers["forged"][1]
    assert "expired" in answers["expired"][1]
    assert "audience" in answers["wrong audience"][1]
    assert "another authorization server" in answers["wrong issuer"][1]
    assert "'none' are not accepted" in answers["alg none"][1]
    assert "'HS256' are not accepted" in answers["HS256 keyed with the public key"][1]
    assert "not valid yet" in answers["not yet valid"][1]
    assert "nor a bearer token the gateway knows" in answers["not a JWT"][1]  # a mistyped static token lands here


async def test_clock_skew_within_the_leeway_is_accepted(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path, leeway=60) as scene, httpx2.AsyncClient(timeout=60) as http:
        now, good = int(time.time()), {"aud": scene.resource, "scope": "mcp tools:admin"}
        statuses = []
        for skewed in ({"exp": now - 20}, {"nbf": now + 20}, {"iat": now + 20}, {"exp": now - 120}):
            token = scene.server.mint({**good, **skewed})
            answer = await http.post(
                scene.url + "/mcp", json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {token}"}
            )
            statuses.append(answer.status_code)
    assert statuses == [200, 200, 200, 401]


async def test_forged_kids_do_not_make_the_gateway_hammer_the_issuer(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path, refresh_interval=3600) as scene, httpx2.AsyncClient(timeout=60) as http:
        good = {"aud": scene.resource, "scope": "mcp tools:admin"}
        first = await http.post(
            scene.url + "/mcp", json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {scene.server.mint(good)}"}
        )
        before = scene.server.jwks_fetches
        for index in range(20):
            token = scene.server.mint(good, kid=f"forged-{index}")
            answer = await http.post(
                scene.url + "/mcp", json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {token}"}
            )
            assert answer.status_code == 401
    assert first.status_code == 200
    assert scene.server.jwks_fetches - before <= 1


async def test_static_tokens_still_work_beside_oauth(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path) as scene:
        settings = HttpSettings(
            port=0, tokens=(BearerToken("static-token-0123456789", name="ci"),), oauth=scene.settings
        )
        async with serving(McpGateway(whoami_registry()), settings) as url, httpx2.AsyncClient(timeout=60) as http:
            answer = await http.post(
                url + "/mcp", json=INIT, headers={**ACCEPT, "Authorization": "Bearer static-token-0123456789"}
            )
    assert answer.status_code == 200


async def _slow(request: Request) -> Response:
    await anyio.sleep(3600)
    return Response("{}")  # pragma: no cover - never reached: the gateway gives up first


async def _huge(request: Request) -> Response:
    return Response(b'{"keys": [' + b" " * (2 * 1024 * 1024) + b"]}", media_type="application/json")


async def _dripping(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    for _ in range(3600):
        await send({"type": "http.response.body", "body": b" ", "more_body": True})
        await anyio.sleep(1)


async def _not_keys(request: Request) -> Response:
    return Response(json.dumps({"keys": "none"}), media_type="application/json")


@pytest.mark.parametrize(
    ("app", "said"),
    [
        (None, "could not be reached"),
        (_slow, "took longer than"),
        (_dripping, "took longer than"),
        (_huge, "larger than"),
        (_not_keys, "no 'keys' array"),
    ],
)
async def test_a_gateway_whose_jwks_cannot_be_read_does_not_start(app: Any, said: str) -> None:
    async def start(jwks: str) -> str:
        settings = OAuthSettings(
            issuer="http://127.0.0.1:9/", resource="http://127.0.0.1:8765/mcp", jwks_uri=jwks, fetch_timeout=2
        )
        gateway = McpGateway(whoami_registry())
        with anyio.fail_after(60), pytest.raises(ConfigurationError) as refused:
            await gateway.serve_http(HttpSettings(port=0, oauth=settings))
        return str(refused.value)

    if app is None:
        message = await start("http://127.0.0.1:9/jwks.json")  # the discard port: nothing listens
    else:
        served = Starlette(routes=[Route("/jwks.json", app)]) if app is not _dripping else app
        async with serve_asgi(served) as url:
            message = await start(url + "/jwks.json")
    assert said in message and "cannot check access tokens" in message
    assert "jwksUri" in message and "http://127.0.0.1:9/.well-known/oauth-authorization-server" in message  # what to do


async def test_opaque_tokens_are_checked_by_introspection(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path) as first:
        client_id, secret = first.server.introspector
        endpoint = Introspection(url=first.issuer + "/introspect", client_id=client_id, client_secret=secret)
        settings = dataclasses.replace(first.settings, introspection=endpoint)
        now = int(time.time())
        active = {"active": True, "sub": "dora", "client_id": "c9", "scope": "mcp tools:admin", "exp": now + 300}
        first.server.opaque = {
            "opaque-good": {**active, "aud": first.resource},
            "opaque-no-aud": active,
            "opaque-elsewhere": {**active, "aud": "https://other.example.com/mcp"},
            "opaque-expired": {**active, "exp": now - 3600},
            "opaque-revoked": {"active": False},
        }
        async with (
            serving(McpGateway(whoami_registry()), HttpSettings(port=0, oauth=settings)) as url,
            httpx2.AsyncClient(timeout=60) as http,
        ):
            tokens = [*first.server.opaque, "opaque-unknown"]
            statuses = {token: (await _post(http, url + "/mcp", token)).status_code for token in tokens}
        endpoint_down = dataclasses.replace(endpoint, url="http://127.0.0.1:9/introspect")
        down = dataclasses.replace(settings, introspection=endpoint_down)
        async with (
            serving(McpGateway(whoami_registry()), HttpSettings(port=0, oauth=down)) as url,
            httpx2.AsyncClient(timeout=60) as http,
        ):
            unreachable = await _post(http, url + "/mcp", "opaque-good")
    assert statuses == {
        "opaque-good": 200,
        "opaque-no-aud": 200,  # the authorization server vouched for it without naming an audience
        "opaque-elsewhere": 401,
        "opaque-expired": 401,
        "opaque-revoked": 401,
        "opaque-unknown": 401,
    }
    assert unreachable.status_code == 401 and "could not be checked" in unreachable.json()["error_description"]


async def test_keys_already_fetched_keep_serving_when_the_jwks_goes_down() -> None:
    key = RSAKey.generate_key(2048, parameters={"kid": "k1"})

    async def jwks(request: Request) -> Response:
        return Response(json.dumps({"keys": [key.as_dict(private=False)]}), media_type="application/json")

    async with serve_asgi(Starlette(routes=[Route("/jwks.json", jwks)])) as url:
        keys = SigningKeys(url + "/jwks.json", timeout=2, refresh_interval=0)
        assert await keys.load() == 1
    with anyio.fail_after(30):  # the issuer is gone: an unknown kid is refused at once, a known one still verifies
        assert (await keys.key("k1")).kid == "k1"
        with pytest.raises(InvalidToken):
            await keys.key("k2")
    assert keys.fetches == 2
