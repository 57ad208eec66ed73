"""The URL policy for request-declared servers: loopback by default, an allowlist, pinned addresses, no redirects."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse
from starlette.routing import Route

from _responses import Reply, calc_server, mcp_tool, scene, serve_asgi, strict_response
from toolmesh.gateway._responses.request import RequestError
from toolmesh.gateway._responses.urls import CheckedUrl, PinnedAddress, PinnedHostError, UrlPolicy


async def _refusal(policy: UrlPolicy, url: str) -> str:
    with pytest.raises(RequestError) as caught:
        await policy.check(url, "tools[0].server_url")
    assert caught.value.param == "tools[0].server_url" and caught.value.status == 400
    return caught.value.message


@pytest.fixture
def resolves(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Host names this test's resolver answers (the system resolver is never asked)."""
    table: dict[str, str] = {}

    async def getaddrinfo(host: str, port: int, **kwargs: Any) -> list[Any]:
        if host not in table:
            raise socket.gaierror(f"unknown host {host}")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (table[host], port))]

    monkeypatch.setattr(anyio, "getaddrinfo", getaddrinfo)
    return table


async def test_loopback_hosts_are_allowed_over_plain_http() -> None:
    policy = UrlPolicy()
    for url in ("http://127.0.0.1:8000/mcp", "http://localhost:8000/mcp", "http://[::1]:8000/mcp"):
        checked = await policy.check(url, "tools[0].server_url")
        assert ipaddress_is_loopback(checked.address)


def ipaddress_is_loopback(address: str) -> bool:
    import ipaddress

    return ipaddress.ip_address(address).is_loopback


async def test_other_hosts_need_the_allowlist_https_and_no_userinfo(resolves: dict[str, str]) -> None:
    resolves["mcp.example.com"] = "93.184.216.34"
    assert "allowlist" in await _refusal(UrlPolicy(), "https://mcp.example.com/mcp")
    assert "allowlist" in await _refusal(UrlPolicy(), "https://93.184.216.34/mcp")
    allowed = UrlPolicy(("mcp.example.com",))
    assert "https" in await _refusal(allowed, "http://mcp.example.com/mcp")
    assert "credentials" in await _refusal(allowed, "https://user:secret@mcp.example.com/mcp")
    assert "http(s)" in await _refusal(allowed, "ftp://mcp.example.com/mcp")
    checked = await allowed.check("https://mcp.example.com/mcp", "tools[0].server_url")
    assert (checked.host, checked.address) == ("mcp.example.com", "93.184.216.34")
    wildcard = await UrlPolicy(("*.example.com",)).check("https://mcp.example.com/x", "tools[0].server_url")
    assert wildcard.address == "93.184.216.34"


async def test_private_link_local_and_metadata_addresses_need_their_network_allowlisted(
    resolves: dict[str, str],
) -> None:
    resolves["inside.example.com"] = "10.1.2.3"
    resolves["meta.example.com"] = "169.254.169.254"
    policy = UrlPolicy(("inside.example.com", "meta.example.com"))
    assert "private" in await _refusal(policy, "https://inside.example.com/mcp")
    assert "metadata" in await _refusal(policy, "https://meta.example.com/mcp")
    assert "allowlist" in await _refusal(policy, "https://169.254.169.254/mcp")
    opened = UrlPolicy(("inside.example.com", "10.0.0.0/8"))
    assert (await opened.check("https://inside.example.com/mcp", "x")).address == "10.1.2.3"
    assert "cannot resolve" in await _refusal(UrlPolicy(("*.example.com",)), "https://nowhere.example.com/mcp")


async def test_the_connection_goes_to_the_checked_address_with_the_original_host_header() -> None:
    async def echo(request: Request) -> JSONResponse:
        return JSONResponse(
            {"host": request.headers["host"], "client": request.client.host if request.client else None}
        )

    app = Starlette(routes=[Route("/mcp", echo)])
    async with serve_asgi(app) as base:
        port = base.rsplit(":", 1)[1]
        checked = CheckedUrl(f"http://pinned.invalid:{port}/mcp", "pinned.invalid", "127.0.0.1")
        async with httpx2.AsyncClient(auth=PinnedAddress(checked)) as http:
            answer = (await http.get(checked.url)).json()
    assert answer == {"host": f"pinned.invalid:{port}", "client": "127.0.0.1"}


async def test_redirects_are_not_followed() -> None:
    calls: list[str] = []
    target = calc_server(calls=calls).streamable_http_app()
    async with serve_asgi(target) as real:

        async def moved(request: Request) -> RedirectResponse:
            return RedirectResponse(real + "/mcp", status_code=307)

        redirector = Starlette(routes=[Route("/mcp", moved, methods=["GET", "POST", "DELETE"])])
        async with serve_asgi(redirector) as bounce, scene([Reply(text="ok")]) as (client, _, _):
            response = await client.responses.create(model="m", input="hi", tools=[mcp_tool("r", bounce + "/mcp")])
    strict_response(response)
    listed = response.output[0]
    assert listed.type == "mcp_list_tools" and listed.error and listed.tools == []
    assert "toolmesh refused to follow" in listed.error and "the server itself reported" not in listed.error
    assert real not in listed.error and "127.0.0.1" not in listed.error.replace(bounce, "")


async def test_a_declared_server_is_reached_at_the_address_the_check_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    real = anyio.getaddrinfo

    async def getaddrinfo(host: Any, port: Any, **kwargs: Any) -> Any:
        if host == "localhost":  # here localhost is 127.0.0.2, where the server listens (127.0.0.1:PORT is closed)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port))]
        return await real(host, port, **kwargs)

    monkeypatch.setattr(anyio, "getaddrinfo", getaddrinfo)
    replies = [Reply(tool_calls=[("calc__add", '{"a": 1, "b": 2}')]), Reply(text="3")]
    async with serve_asgi(calc_server().streamable_http_app(), host="127.0.0.2") as pinned:
        port = pinned.rsplit(":", 1)[1]
        async with scene(replies) as (client, _, _):
            tool = mcp_tool("calc", f"http://localhost:{port}/mcp")
            response = await client.responses.create(model="m", input="1+2", tools=[tool])
    strict_response(response)
    assert response.output[0].error is None and response.output[1].output == "3"


@pytest.mark.parametrize("spelling", ["localhost.", "LOCALHOST", "LocalHost.", "%6Cocalhost"])
async def test_every_spelling_of_a_host_is_dialled_at_the_checked_address_only(
    monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    """The resolver answers only the canonical name with the server's address; every other name it is asked
    (a re-resolution of the URL's own spelling at connect time) gets an address where nothing listens."""
    asked: list[str] = []

    async def getaddrinfo(host: Any, port: Any, **kwargs: Any) -> Any:
        asked.append(str(host))
        address = "127.0.0.2" if host == "localhost" else "127.0.0.3"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(anyio, "getaddrinfo", getaddrinfo)
    replies = [Reply(tool_calls=[("calc__add", '{"a": 1, "b": 2}')]), Reply(text="3")]
    async with serve_asgi(calc_server().streamable_http_app(), host="127.0.0.2") as pinned:
        port = pinned.rsplit(":", 1)[1]
        async with scene(replies) as (client, _, _):
            tool = mcp_tool("calc", f"http://{spelling}:{port}/mcp")
            response = await client.responses.create(model="m", input="1+2", tools=[tool])
    strict_response(response)
    assert response.output[0].error is None and response.output[1].output == "3"
    assert set(asked) == {"localhost"}, f"names resolved besides the checked one: {asked}"


async def test_a_pinned_session_refuses_any_other_host_and_keeps_the_checked_host_header() -> None:
    dialled: list[httpx2.Request] = []

    def record(request: httpx2.Request) -> httpx2.Response:
        dialled.append(request)
        return httpx2.Response(200, json={})

    checked = CheckedUrl("https://xn--bcher-kva.example/mcp", "xn--bcher-kva.example", "192.0.2.7")
    async with httpx2.AsyncClient(auth=PinnedAddress(checked), transport=httpx2.MockTransport(record)) as http:
        for spelling in ("bücher.example", "XN--BCHER-KVA.EXAMPLE.", "xn--bcher-kva.example"):
            await http.get(f"https://{spelling}/mcp")
        with pytest.raises(PinnedHostError):
            await http.get("https://other.example/mcp")
    assert [request.url.host for request in dialled] == ["192.0.2.7"] * 3
    assert {request.headers["Host"] for request in dialled} == {"xn--bcher-kva.example"}
    assert {request.extensions["sni_hostname"] for request in dialled} == {"xn--bcher-kva.example"}


async def test_the_check_resolves_the_canonical_spelling(resolves: dict[str, str]) -> None:
    resolves["xn--bcher-kva.example"] = "93.184.216.34"
    policy = UrlPolicy(("xn--bcher-kva.example",))
    for spelling in ("bücher.example", "BÜCHER.example.", "xn--bcher-kva.EXAMPLE"):
        checked = await policy.check(f"https://{spelling}/mcp", "tools[0].server_url")
        assert (checked.host, checked.address) == ("xn--bcher-kva.example", "93.184.216.34")


async def test_a_host_with_an_empty_label_is_refused() -> None:
    for url in ("http://localhost../mcp", "http://local..host/mcp", "http://.localhost/mcp"):
        assert "empty label" in await _refusal(UrlPolicy(), url)
