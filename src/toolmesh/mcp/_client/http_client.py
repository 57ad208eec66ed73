"""The ``httpx2`` client of one Streamable HTTP server: its TLS context, timeouts and bounded answers.

The SDK's HTTP transport takes this client (``streamable_http_client(http_client=...)``).
Its response hook records an error status in the caller's own ``Exchange`` (per
request, never per session) and stops reading an answer past its bound: the server
spec's ``max_result_bytes``, or the tighter bound of a guarded request (a ``tools/list``
page: ``Exchange.guard``). The client keeps httpx's own transports, so the environment's
proxies apply (never to loopback servers), and all servers share one TLS context.
"""

from __future__ import annotations

import functools
import os
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import httpx2

from toolmesh._core.errors import ServerConnectionError
from toolmesh.mcp._spec.hosts import is_loopback

from .wire import _EXCHANGE, Exchange

if TYPE_CHECKING:
    from toolmesh.mcp._spec.server import McpServer

__all__ = ["AnswerTooLarge", "http_client"]

_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)
"""The SDK's own defaults: 30 s to connect and write, 300 s to read (SSE streams stay open)."""


class AnswerTooLarge(httpx2.StreamError):
    """An HTTP answer's body went over its bound (``max_result_bytes``, or a guarded request's own)."""


def http_client(spec: McpServer) -> httpx2.AsyncClient:
    """The HTTP client of the server ``spec``: its headers and auth, bounded answers, the shared TLS context.

    Raises:
        ServerConnectionError: naming ``SSL_CERT_FILE`` when it names no readable bundle.
    """
    return httpx2.AsyncClient(
        headers=dict(spec.headers or {}),
        auth=spec.auth,
        timeout=_HTTP_TIMEOUT,
        event_hooks={"response": [_on_response(spec.max_result_bytes)]},
        verify=_tls_context(spec.label),
        # the environment's proxies, never for a loopback server: a proxy's loopback is not ours
        trust_env=not is_loopback(spec.host or ""),
    )


class _LimitedBody(httpx2.AsyncByteStream):
    """A response body that stops (raises) once it has yielded more than ``limit`` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int, exchange: Exchange) -> None:
        self._inner = inner
        self._limit = limit
        self._exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        guard = self._exchange.guard
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._limit:
                self._exchange.too_large = self._limit
                if guard is not None and self._limit == guard.max_bytes:
                    raise AnswerTooLarge(guard.too_large())
                raise AnswerTooLarge(f"the answer is larger than max_result_bytes ({self._limit} bytes)")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _tls_context(label: str) -> ssl.SSLContext:
    """The verifying TLS context every HTTP server shares while the CA settings stay the same.

    Building one loads the CA bundle (about 40 ms of CPU); a context per connection paid
    that on every connect and reconnect. It follows ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``
    as they are at each connect, so a process that sets them after a first connect gets
    a context that trusts what they name.

    Raises:
        ServerConnectionError: naming ``SSL_CERT_FILE`` when it names no readable bundle.
    """
    cert_file = os.environ.get("SSL_CERT_FILE")
    try:
        return _tls_context_for(cert_file, os.environ.get("SSL_CERT_DIR"))
    except (OSError, ssl.SSLError) as exc:
        raise ServerConnectionError(
            label,
            f"SSL_CERT_FILE={cert_file!r} is not a readable bundle of CA certificates ({exc}); "
            "point it at a PEM file of certificates, or unset it to use the system's",
        ) from None


@functools.cache
def _tls_context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx2.create_ssl_context()


def _on_response(limit: int) -> Callable[[httpx2.Response], Awaitable[None]]:
    """The response hook of one server's HTTP client: note error statuses and bound answers, for the calling exchange.

    Wrapping the body here (before httpx reads it, for plain and streamed requests alike)
    rather than in a transport of our own keeps httpx's transports, and with them the
    environment's proxies (``HTTPS_PROXY``, ``NO_PROXY``).
    """

    async def on_response(response: httpx2.Response) -> None:
        exchange = _EXCHANGE.get()
        if exchange is None:
            return
        if response.status_code >= 400:
            exchange.http_status = response.status_code
        if response.request.method == "POST":
            assert isinstance(response.stream, httpx2.AsyncByteStream)
            guard = exchange.guard
            bound = limit if guard is None else min(limit, guard.max_bytes)
            response.stream = _LimitedBody(response.stream, bound, exchange)

    return on_response
