"""A connection's secrets: its spec's, and the credentials its ``auth`` sends.

``Secrets.of(spec)`` knows what the spec configures (header and ``env`` values, URL
tokens, flagged ``args``). An ``auth=`` object (``httpx2.BasicAuth``, the SDK's OAuth
provider) puts its credentials on each request itself, where toolmesh cannot read them
in advance, and an OAuth token changes as it is refreshed. So the sessions of a
connection with an ``auth`` get its spec with that ``auth`` behind a ``CredentialsWatch``,
which notes the ``Authorization`` and ``Proxy-Authorization`` values of every request it
signs; each new one joins the connection's secrets (the last
``MAX_SENT_CREDENTIALS`` of them: a refreshed token replaces an expired one).

While one of its sessions is up (``held()``), the connection's secrets are the telemetry
guard's too (``TELEMETRY_GUARD``): no log record or MCP SDK span shows them.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import AsyncGenerator, Callable, Generator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import httpx2

from toolmesh.mcp._spec.secrets import Secrets

from .telemetry import TELEMETRY_GUARD

if TYPE_CHECKING:
    from toolmesh.mcp._spec.server import McpServer

__all__ = ["MAX_SENT_CREDENTIALS", "ConnectionSecrets", "CredentialsWatch"]

MAX_SENT_CREDENTIALS = 4
"""How many distinct credentials sent by an ``auth`` a connection keeps secret (the latest)."""
_CREDENTIAL_HEADERS = ("authorization", "proxy-authorization")


class ConnectionSecrets:
    """The secrets of one connection, and the spec its sessions use (its ``auth`` watched)."""

    def __init__(self, spec: McpServer) -> None:
        self._configured = spec
        self._sent: deque[str] = deque(maxlen=MAX_SENT_CREDENTIALS)
        self.secrets = Secrets.of(spec)
        """What is starred out of this connection's answers, errors, logs and spans."""
        self.spec = (
            spec if spec.auth is None else dataclasses.replace(spec, auth=CredentialsWatch(spec.auth, self.sent))
        )
        """The spec the sessions connect with: ``spec``, its ``auth`` (if any) behind a ``CredentialsWatch``."""

    def __bool__(self) -> bool:
        """Whether there is (or may come) anything to star out."""
        return bool(self.secrets) or self._configured.auth is not None

    def redact(self, text: str) -> str:
        """``text`` with the current secrets starred out."""
        return self.secrets.redact(text)

    def sent(self, value: str) -> None:
        """``auth`` signed a request with the header value ``value``: keep it secret from now on."""
        if value in self._sent or value in self._configured.headers.values():
            return
        self._sent.append(value)
        self.secrets = Secrets.of(self._configured, self._sent)
        TELEMETRY_GUARD.update(self, self.secrets)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Keep these secrets out of every log record and SDK span meanwhile (a session's life)."""
        if not self:
            yield
            return
        TELEMETRY_GUARD.hold(self, self.secrets)
        try:
            yield
        finally:
            TELEMETRY_GUARD.release(self)


class CredentialsWatch(httpx2.Auth):
    """An ``httpx2.Auth`` that signs requests with ``inner`` and reports the credentials it put on them."""

    def __init__(self, inner: httpx2.Auth, sent: Callable[[str], None]) -> None:
        """Args:
        inner: The spec's own ``auth``: it does all the work.
        sent: Called with each ``Authorization`` / ``Proxy-Authorization`` value a request goes out with.
        """
        self.inner = inner
        self._sent = sent
        self.requires_request_body = inner.requires_request_body
        self.requires_response_body = inner.requires_response_body

    def __repr__(self) -> str:
        return f"CredentialsWatch({type(self.inner).__name__})"

    def _note(self, request: httpx2.Request) -> None:
        for name in _CREDENTIAL_HEADERS:
            value = request.headers.get(name)
            if value:
                self._sent(value)

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self.inner.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                self._note(outgoing)
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def sync_auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        flow = self.inner.sync_auth_flow(request)
        try:
            outgoing = next(flow)
            while True:
                self._note(outgoing)
                response = yield outgoing
                outgoing = flow.send(response)
        except StopIteration:
            return
        finally:
            flow.close()
