"""The gateway's HTTP app: profiles by path, bearer tokens, Host/Origin checks, the body limit."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.abc
import httpx2
import pytest

from _gateway import ACCEPT, INIT, client, look_and_wipe, only_look, serving
from toolmesh import ConfigurationError, ToolRegistry
from toolmesh.gateway import BearerToken, HttpSettings, McpGateway

MODES = ["legacy", "2026-07-28"]


async def _post(url: str, headers: dict[str, str] | None = None, body: Any = None, content: bytes | None = None) -> int:
    async with httpx2.AsyncClient(timeout=60) as http:
        if content is not None:
            response = await http.post(url, headers={**ACCEPT, **(headers or {})}, content=content)
        else:
            response = await http.post(url, headers={**ACCEPT, **(headers or {})}, json=body or INIT)
        return response.status_code


@pytest.mark.parametrize("mode", MODES)
async def test_each_profile_is_served_at_its_own_path(mode: Any) -> None:
    gateway = McpGateway(look_and_wipe(), profiles={"readonly": only_look})
    async with serving(gateway) as url:
        async with client(url + "/mcp", mode) as everything, client(url + "/mcp/readonly", mode) as readonly:
            with anyio.fail_after(60):
                all_names = [t.name for t in (await everything.list_tools()).tools]
                read_names = [t.name for t in (await readonly.list_tools()).tools]
                refused = await readonly.call_tool("wipe", {"path": "/"})
        assert await _post(url + "/mcp/nope") == 404
    assert all_names == ["look", "wipe"]
    assert read_names == ["look"]
    assert refused.is_error  # a row outside the profile cannot be called through it


@pytest.mark.parametrize("mode", MODES)
async def test_bearer_tokens_refuse_without_or_wrong_and_accept_the_right_one(mode: Any) -> None:
    settings = HttpSettings(
        port=0, tokens=(BearerToken("s3cret-all"), BearerToken("s3cret-ro", frozenset({"readonly"})))
    )
    gateway = McpGateway(look_and_wipe(), profiles={"readonly": only_look})
    async with serving(gateway, settings) as url:
        assert await _post(url + "/mcp") == 401
        assert await _post(url + "/mcp", {"Authorization": "Bearer wrong"}) == 401
        assert await _post(url + "/mcp", {"Authorization": "Basic s3cret-all"}) == 401
        assert await _post(url + "/mcp", {"Authorization": "Bearer s3cret-ro"}) == 403  # limited to readonly
        async with (
            client(url + "/mcp", mode, token="s3cret-all") as full,
            client(url + "/mcp/readonly", mode, token="s3cret-ro") as limited,
        ):
            with anyio.fail_after(60):
                assert len((await full.list_tools()).tools) == 2
                assert (await limited.call_tool("look", {"path": "x"})).content[0].text == "looked at x"  # type: ignore[union-attr]


async def test_a_token_is_never_shown_in_a_repr() -> None:
    settings = HttpSettings(tokens=(BearerToken("hunter2"),))
    assert "hunter2" not in repr(settings) and "hunter2" not in repr(settings.tokens[0])


async def test_without_tokens_only_a_loopback_host_may_be_bound() -> None:
    with pytest.raises(ConfigurationError, match="without tokens"):
        HttpSettings(host="0.0.0.0")
    assert HttpSettings(host="0.0.0.0", tokens=(BearerToken("t"),)).host == "0.0.0.0"
    assert HttpSettings(host="::1").host == "::1"


async def test_a_foreign_host_or_origin_is_refused_against_dns_rebinding() -> None:
    gateway = McpGateway(look_and_wipe())
    settings = HttpSettings(port=0, allowed_origins=("https://app.example",))
    async with serving(gateway, settings) as url:
        assert await _post(url + "/mcp", {"Host": "evil.example"}) == 421
        assert await _post(url + "/mcp", {"Host": "evil.example:80"}) == 421
        assert await _post(url + "/mcp", {"Origin": "http://evil.example"}) == 403
        assert await _post(url + "/mcp", {"Origin": "http://localhost:3000"}) == 200
        assert await _post(url + "/mcp", {"Origin": "https://app.example"}) == 200
        assert await _post(url + "/mcp") == 200


async def test_an_oversized_body_is_refused() -> None:
    gateway = McpGateway(look_and_wipe())
    async with serving(gateway, HttpSettings(port=0, max_body_bytes=4096)) as url:
        padding = {**INIT, "params": {**INIT["params"], "_meta": {"pad": "x" * 5000}}}  # type: ignore[dict-item]
        assert await _post(url + "/mcp", body=padding) == 413
        assert await _post(url + "/mcp") == 200


async def _answer(stream: anyio.abc.ByteStream) -> bytes:
    """One HTTP/1.1 answer read off ``stream``: its head and its Content-Length body."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive()
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += await stream.receive()
    return head


async def test_an_idle_connection_stays_open_longer_than_clients_keep_one() -> None:
    """A client keeps an idle connection for reuse a few seconds (httpx: 5 s). A server closing
    it after as long (uvicorn's default, 5 s) races with the client's next request on it, which
    then fails: the MCP SDK's client loses its session. The gateway keeps idle connections longer."""
    gateway = McpGateway(look_and_wipe())
    async with serving(gateway) as url:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        request = f"GET /nope HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
        with anyio.fail_after(60):
            async with await anyio.connect_tcp(host, int(port)) as stream:
                await stream.send(request)
                first = await _answer(stream)
                await anyio.sleep(6.5)  # the behaviour under test is the idle time itself
                await stream.send(request)
                second = await _answer(stream)
    assert first.startswith(b"HTTP/1.1 404") and second.startswith(b"HTTP/1.1 404")


def test_profile_names_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="always exists"):
        McpGateway(ToolRegistry(), profiles={"default": only_look})
    with pytest.raises(ConfigurationError, match="URL path segment"):
        McpGateway(ToolRegistry(), profiles={"a/b": only_look})
    with pytest.raises(ConfigurationError, match="no profile 'x'"):
        McpGateway(ToolRegistry()).server("x")
