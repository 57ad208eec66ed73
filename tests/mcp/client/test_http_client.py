"""The HTTP client of an MCP server: the environment's proxies, loopback never proxied, TLS trust, redirects, errors.

Every server here listens on 127.0.0.1. The proxy is the fixture server itself, reached in
the absolute form a client uses for a proxy (``POST http://mcp.test/mcp``): it notes the
target and serves it, so the test sees that the call went through the proxy without any
address but loopback.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
import trustme
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.routing import Route

from _responses import calc_server, serve_asgi
from _servers import free_port
from toolmesh import ServerConnectionError, ToolRegistry
from toolmesh.mcp import McpServer


class AbsoluteFormProxy:
    """An ASGI wrapper that serves requests addressed to a proxy (absolute-form targets) as its own, noting them."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.proxied: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            if path.startswith("http://"):
                self.proxied.append(path)
                path = urlsplit(path).path
            # the SDK server's Host check knows 127.0.0.1 only
            own_host = f"127.0.0.1:{scope['server'][1]}".encode()
            headers = [(k, own_host if k == b"host" else v) for k, v in scope["headers"]]
            scope = {**scope, "path": path, "raw_path": path.encode(), "headers": headers}
        await self.app(scope, receive, send)


@pytest.fixture
def no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    return monkeypatch


async def test_a_server_is_reached_through_the_environment_s_proxy(no_proxy_settings: pytest.MonkeyPatch) -> None:
    proxy = AbsoluteFormProxy(calc_server().streamable_http_app())
    async with serve_asgi(proxy) as proxy_url:
        no_proxy_settings.setenv("HTTP_PROXY", proxy_url)
        async with ToolRegistry() as registry:
            with anyio.fail_after(60):
                await registry.connect(McpServer.http("calc", "http://mcp.test/mcp", allow_insecure_http=True))
                result = await registry.dispatch("calc__add", {"a": 2, "b": 3})
        assert result.ok and result.presentation.as_text() == "5", result.presentation.as_text()
        assert proxy.proxied and all(target == "http://mcp.test/mcp" for target in proxy.proxied)


async def test_a_loopback_server_is_never_proxied(no_proxy_settings: pytest.MonkeyPatch) -> None:
    no_proxy_settings.setenv("HTTP_PROXY", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    async with serve_asgi(calc_server().streamable_http_app()) as url:
        for host in ("127.0.0.1", "localhost"):
            async with ToolRegistry() as registry:
                with anyio.fail_after(60):
                    await registry.connect(McpServer.http("calc", url.replace("127.0.0.1", host) + "/mcp"))
                    assert (await registry.dispatch("calc__add", {"a": 1, "b": 1})).ok
    other = AbsoluteFormProxy(calc_server().streamable_http_app())
    async with serve_asgi(other, host="127.0.0.2") as url, ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(McpServer.http("calc", url + "/mcp"))  # all of 127.0.0.0/8 is loopback
            assert (await registry.dispatch("calc__add", {"a": 1, "b": 1})).ok
    assert other.proxied == []


@asynccontextmanager
async def https_server(certificate: trustme.LeafCert) -> AsyncIterator[str]:
    """The calc fixture over HTTPS on 127.0.0.1 with ``certificate``; yields its MCP URL."""
    with certificate.private_key_and_cert_chain_pem.tempfile() as chain:
        async with serve_asgi(calc_server().streamable_http_app(), ssl_keyfile=chain, ssl_certfile=chain) as url:
            yield url + "/mcp"


@pytest.fixture
def private_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[trustme.CA, Path]:
    """A CA of the test's own and a bundle file of it; SSL_CERT_FILE / SSL_CERT_DIR unset."""
    ca = trustme.CA()
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    return ca, bundle


async def test_an_untrusted_certificate_says_so_and_ssl_cert_file_set_afterwards_is_honoured(
    private_ca: tuple[trustme.CA, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ca, bundle = private_ca
    async with https_server(ca.issue_cert("127.0.0.1")) as url, ToolRegistry() as registry:
        with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(McpServer.http("tls", url))
        text = str(caught.value)
        assert "CERTIFICATE_VERIFY_FAILED" in text and "TLS certificate is not trusted" in text
        assert "SSL_CERT_FILE" in text and registry.names() == []
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle))  # in the same process, after a failed connect
        with anyio.fail_after(60):
            await registry.connect(McpServer.http("tls", url))
            result = await registry.dispatch("tls__add", {"a": 20, "b": 22})
        assert result.ok and result.presentation.as_text() == "42"


async def test_a_certificate_for_another_name_and_an_unreadable_bundle_say_what_is_wrong(
    private_ca: tuple[trustme.CA, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ca, bundle = private_ca
    async with https_server(ca.issue_cert("other.test")) as url, ToolRegistry() as registry:
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
        with anyio.fail_after(60), pytest.raises(ServerConnectionError, match="certificate is for another name"):
            await registry.connect(McpServer.http("tls", url))
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
        with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(McpServer.http("tls", url))
        assert f"SSL_CERT_FILE={str(tmp_path / 'missing.pem')!r} is not a readable bundle" in str(caught.value)
        assert registry.names() == []


async def test_a_host_name_the_server_refuses_is_named_as_such() -> None:
    """The SDK server's DNS-rebinding protection knows 127.0.0.1 and localhost: 127.0.0.2 gets a 421."""
    async with serve_asgi(calc_server().streamable_http_app(), host="127.0.0.2") as url, ToolRegistry() as registry:
        with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(McpServer.http("calc", url + "/mcp"))
        assert "HTTP 421" in str(caught.value) and "refused the host name in the URL" in str(caught.value)


async def test_a_redirect_elsewhere_is_refused_without_naming_its_target() -> None:
    async with serve_asgi(calc_server().streamable_http_app()) as real:
        target = real + "/mcp?token=secret"

        async def moved(request: Request) -> RedirectResponse:
            return RedirectResponse(target, status_code=307)

        redirector = Starlette(routes=[Route("/mcp", moved, methods=["GET", "POST", "DELETE"])])
        async with serve_asgi(redirector) as bounce, ToolRegistry() as registry:
            with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
                await registry.connect(McpServer.http("moved", bounce + "/mcp"))
    message = str(caught.value)
    assert "the server answered with a redirect, which toolmesh refused to follow" in message
    assert "if the server moved, give its new URL" in message
    assert real not in message and "secret" not in message
    assert "the server itself reported" not in message
