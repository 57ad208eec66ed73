"""The gateway as an OAuth 2.1 resource server, with the official MCP client's OAuth provider and a real
authorization server on loopback HTTPS: 401 -> metadata -> registration -> token -> list and call."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from _authserver import oauth_client
from _gateway import ACCEPT, INIT
from _oauth_gateway import OAuthScene, oauth_scene, whoami_registry
from _responses import Reply, ScriptedUpstream, calc_server, serve_asgi
from toolmesh import ConfigurationError, McpServer, ToolRegistry
from toolmesh.gateway import HttpSettings, McpGateway, OAuthSettings, ResponsesEndpoint, ResponsesSettings
from toolmesh.gateway._auth.resource import ResourceServer
from toolmesh.hooks import AuditLog, audit_file_handler


def _client(scene: OAuthScene, path: str, provider: OAuthClientProvider | None = None) -> mcp.Client:
    url = scene.url + path
    auth = provider or oauth_client(url, scene.certs.trust)
    http = httpx2.AsyncClient(auth=auth, verify=scene.certs.trust, timeout=60)
    return mcp.Client(streamable_http_client(url, http_client=http))


async def test_the_sdk_client_completes_the_whole_flow_and_calls_as_its_user(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path) as scene, _client(scene, "/mcp") as client:
        with anyio.fail_after(60):
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            answer = (await client.call_tool("whoami", {})).content[0]
    assert names == ["whoami", "wipe"]
    assert answer.text == "alice mcp tools:admin"  # type: ignore[union-attr]  # the scopes the challenge asked for
    (issued,) = scene.server.issued
    assert issued["aud"] == scene.resource  # RFC 8707: the token is bound to this gateway
    assert len(scene.server.clients) == 1  # it registered itself (dynamic client registration)


async def test_a_user_with_fewer_scopes_opens_only_the_profile_they_hold(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path) as scene:
        scene.server.login = "bob"
        async with _client(scene, "/reader/mcp") as reader:
            with anyio.fail_after(60):
                names = [tool.name for tool in (await reader.list_tools()).tools]
                answer = (await reader.call_tool("whoami", {})).content[0]
        token = scene.server.mint({"sub": "bob", "scope": "mcp tools:read", "aud": scene.resource})
        async with httpx2.AsyncClient(timeout=60) as http:
            default = await http.post(
                scene.url + "/mcp", json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {token}"}
            )
    assert names == ["whoami"]
    assert answer.text == "bob mcp tools:read"  # type: ignore[union-attr]
    assert default.status_code == 403
    challenge = default.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="mcp tools:admin"' in challenge
    assert "tools:admin" in default.json()["error_description"]


async def test_metadata_and_challenges_point_clients_at_the_authorization_server(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path) as scene, httpx2.AsyncClient(timeout=60) as http:
        bare = await http.post(scene.url + "/reader/mcp", json=INIT, headers=ACCEPT)
        root = (await http.get(scene.url + "/.well-known/oauth-protected-resource")).json()
        reader = (await http.get(scene.url + "/.well-known/oauth-protected-resource/reader/mcp")).json()
        nothing = await http.get(scene.url + "/.well-known/oauth-protected-resource/nowhere/at/all")
    assert bare.status_code == 401
    challenge = bare.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{scene.url}/.well-known/oauth-protected-resource/reader/mcp"' in challenge
    assert 'scope="mcp tools:read"' in challenge
    assert root["resource"] == scene.resource and reader["resource"] == scene.url + "/reader/mcp"
    assert [s.rstrip("/") for s in root["authorization_servers"]] == [scene.issuer]
    assert set(root["scopes_supported"]) == {"mcp", "tools:admin", "tools:read"}
    assert nothing.status_code == 404


@pytest.mark.parametrize(
    "issuer", ["https://as.example.com", "https://as.example.com/", "https://as.example.com/realm"]
)
def test_the_metadata_names_the_issuer_exactly_as_configured(issuer: str) -> None:
    """Clients compare it with the issuer of the server's own metadata as strings (RFC 8414 3.3): no slash added."""
    settings = OAuthSettings(issuer=issuer, resource="https://tools.example.com/mcp", jwks_uri=issuer + "/jwks")
    document = json.loads(bytes(ResourceServer(settings, "/mcp").metadata("").body))
    assert document["authorization_servers"] == [issuer]
    assert document["resource"] == "https://tools.example.com/mcp"


async def test_keys_rotated_while_serving_are_fetched_once_for_the_new_kid(tmp_path: Path) -> None:
    async with (
        oauth_scene(tmp_path, refresh_interval=0.0, cache_seconds=0) as scene,
        httpx2.AsyncClient(timeout=60) as http,
    ):
        claims = {"aud": scene.resource, "scope": "mcp tools:admin"}

        async def status(token: str) -> int:
            headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
            return (await http.post(scene.url + "/mcp", json=INIT, headers=headers)).status_code

        assert await status(scene.server.mint(claims)) == 200
        before = scene.server.jwks_fetches
        scene.server.rotate()
        assert await status(scene.server.mint(claims)) == 200  # signed with k2, unknown until fetched again
        assert await status(scene.server.mint(claims)) == 200
        assert scene.server.jwks_fetches == before + 1
        old = scene.server.keys[0]
        scene.server.rotate(drop_old=True)
        assert await status(scene.server.mint(claims)) == 200  # k3: fetched again; k1 is no longer published
        assert await status(scene.server.mint(claims, key=old)) == 401  # the issuer no longer publishes k1


@pytest.mark.parametrize("where", ["/mcp", "/reader/mcp"])
async def test_a_token_in_the_query_string_is_refused(tmp_path: Path, where: str) -> None:
    async with oauth_scene(tmp_path) as scene, httpx2.AsyncClient(timeout=60) as http:
        token = scene.server.mint({"aud": scene.resource, "scope": "mcp tools:admin tools:read"})
        answer = await http.post(scene.url + where, params={"access_token": token}, json=INIT, headers=ACCEPT)
    assert answer.status_code == 400
    assert 'error="invalid_request"' in answer.headers["www-authenticate"]
    assert token not in answer.text


async def test_the_responses_endpoint_takes_the_same_access_tokens(tmp_path: Path) -> None:
    upstream = ScriptedUpstream([Reply(tool_calls=[("whoami", "{}")]), Reply(text="done")])
    async with oauth_scene(tmp_path) as scene, serve_asgi(upstream.app) as model:
        gateway = McpGateway(whoami_registry())
        endpoint = ResponsesEndpoint.for_gateway(gateway, ResponsesSettings(upstream=model + "/v1", offer_catalog=True))
        app = gateway.http_app(HttpSettings(oauth=scene.settings), responses=endpoint)
        token = scene.server.mint({"sub": "carol", "aud": scene.resource, "scope": "mcp tools:admin"})
        request = {"model": "m", "input": "who am I?"}
        async with serve_asgi(app) as base, httpx2.AsyncClient(timeout=60) as http:
            refused = await http.post(base + "/v1/responses", json=request)
            metadata = (await http.get(base + "/.well-known/oauth-protected-resource/v1/responses")).json()
            answered = await http.post(
                base + "/v1/responses", json=request, headers={"Authorization": f"Bearer {token}"}
            )
    assert refused.status_code == 401 and "oauth-protected-resource/v1/responses" in refused.headers["www-authenticate"]
    assert metadata["resource"].endswith("/v1/responses")
    calls = [item for item in answered.json()["output"] if item["type"] == "mcp_call"]
    assert [call["output"] for call in calls] == ["carol mcp tools:admin"]


async def test_a_clients_token_never_reaches_an_upstream_server(tmp_path: Path) -> None:
    seen: list[str] = []
    inner = calc_server().streamable_http_app()

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.extend(value.decode() for name, value in scope["headers"] if name in (b"authorization", b"cookie"))
            seen.append(repr(scope.get("query_string", b"")))
        await inner(scope, receive, send)

    async with serve_asgi(recording) as calc_url, ToolRegistry() as registry:
        await registry.connect(McpServer.http("calc", calc_url + "/mcp"))
        async with oauth_scene(tmp_path, registry) as scene, _client(scene, "/mcp") as client:
            with anyio.fail_after(60):
                answer = (await client.call_tool("calc__add", {"a": 1, "b": 2})).content[0]
        assert len(scene.server.issued) == 1  # the client did authenticate with an access token
    assert answer.text == "3"  # type: ignore[union-attr]
    assert seen and not any("Bearer" in value for value in seen)  # the gateway called with its own (no) credentials


@pytest.mark.parametrize("cache_seconds", [60, 0])
async def test_a_valid_token_is_remembered_for_cache_seconds_at_most(tmp_path: Path, cache_seconds: int) -> None:
    async with (
        oauth_scene(tmp_path, refresh_interval=0.0, cache_seconds=cache_seconds) as scene,
        httpx2.AsyncClient(timeout=60) as http,
    ):
        claims = {"aud": scene.resource, "scope": "mcp tools:admin"}

        async def status(token: str) -> int:
            headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
            return (await http.post(scene.url + "/mcp", json=INIT, headers=headers)).status_code

        token = scene.server.mint(claims)
        assert await status(token) == 200
        scene.server.rotate(drop_old=True)
        assert await status(scene.server.mint(claims)) == 200  # the new kid: the set is fetched again, k1 gone
        again = await status(token)
    assert again == (200 if cache_seconds else 401)  # remembered as valid, or checked again against the keys


async def test_a_client_whose_user_cannot_get_the_scope_fails_cleanly(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path) as scene:
        scene.server.login = "bob"  # bob may never hold tools:admin, which the default profile needs
        with anyio.fail_after(120), pytest.raises(Exception) as failed:
            async with _client(scene, "/mcp") as client:
                await client.list_tools()
    assert all("tools:admin" not in claims["scope"] for claims in scene.server.issued)  # the AS never granted it
    assert scene.server.issued  # bob did sign in: the gateway refused his token, the client gave up
    assert "Bearer" not in repr(failed.value)  # no token in what the client was told


async def test_the_audit_names_the_oauth_caller_and_never_holds_the_token(tmp_path: Path) -> None:
    logger = logging.getLogger(f"toolmesh.audit.test-oauth-{id(tmp_path)}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = audit_file_handler(tmp_path / "audit.jsonl")
    logger.addHandler(handler)
    try:
        async with oauth_scene(tmp_path, observers=[AuditLog(logger)]) as scene:
            provider = oauth_client(scene.resource, scene.certs.trust)
            async with _client(scene, "/mcp", provider) as client:
                with anyio.fail_after(60):
                    await client.call_tool("wipe", {"path": "/tmp/x"})
            tokens = await provider.context.storage.get_tokens()
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = (tmp_path / "audit.jsonl").read_text(encoding="utf-8")
    [record] = [json.loads(line) for line in text.splitlines()]
    assert (record["subject"], record["tool"], record["disposition"]) == ("alice", "wipe", "succeeded")
    assert record["client_id"] in scene.server.clients and record["issuer"] == scene.issuer
    assert tokens is not None
    token = tokens.access_token
    assert token not in text and token.split(".")[2] not in text  # neither the token nor its signature


async def test_without_jwks_uri_the_keys_are_found_in_the_issuers_metadata(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path, jwks_uri=None) as scene, _client(scene, "/mcp") as client:
        with anyio.fail_after(60):
            answer = (await client.call_tool("whoami", {})).content[0]
    assert answer.text == "alice mcp tools:admin"  # type: ignore[union-attr]
    assert scene.server.jwks_fetches >= 1  # RFC 8414 metadata names no jwks_uri here; OpenID discovery does


async def test_an_issuer_whose_metadata_names_no_keys_does_not_start_a_gateway() -> None:
    async def elsewhere(request: Any) -> Any:
        return JSONResponse({"issuer": "https://someone-else.example.com", "jwks_uri": "https://x.example.com/j"})

    app = Starlette(routes=[Route("/.well-known/openid-configuration", elsewhere)])
    async with serve_asgi(app) as issuer:
        settings = OAuthSettings(issuer=issuer, resource="http://127.0.0.1:8765/mcp", fetch_timeout=5)
        with anyio.fail_after(60), pytest.raises(ConfigurationError) as refused:
            await McpGateway(whoami_registry()).serve_http(HttpSettings(port=0, oauth=settings))
    assert "no jwks_uri found" in str(refused.value) and "another issuer's" in str(refused.value)
