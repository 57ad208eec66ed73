"""The running parts of the HTTP gateway, and serving them with uvicorn until cancelled.

``Lifecycle`` runs each profile's SDK session manager and the gateway's fan-out.
Closing it ends the clients' sessions first: 2026-07-28 ``subscriptions/listen``
streams are closed gracefully (each ends with its result frame), then the managers
stop, which ends every 2025-11-25 session (its notification stream included). So
when ``serve_http`` is cancelled, uvicorn finds the connections already ending and
stops at once instead of waiting out its graceful-shutdown timeout.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import uvicorn
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette

from toolmesh.gateway._config.http_settings import HttpSettings
from toolmesh.gateway._shared.http import security_settings
from toolmesh.gateway._shared.stopping import GuardedSessionManager

from .face import ProfileFace

if TYPE_CHECKING:
    from toolmesh.gateway._sessions.deployment import SharedSessions

__all__ = ["Lifecycle", "serve"]

_GRACEFUL_SHUTDOWN = 5
"""Seconds connections still open when serving stops get to end, before they are cut."""
_KEEP_ALIVE = 75
"""Seconds an idle client connection stays open (nginx's default). Longer than clients keep one
for reuse (httpx and the MCP SDK: 5 s; aiohttp 15 s): with uvicorn's own 5 s, a client could
send its next request on a connection the gateway was closing, and lose its session."""


class Lifecycle:
    """Each profile's session manager and the gateway's fan-out, run together and closed clients first."""

    def __init__(
        self,
        managers: Mapping[str, StreamableHTTPSessionManager],
        faces: Mapping[str, ProfileFace],
        running: Callable[[], AbstractAsyncContextManager[None]],
    ) -> None:
        self._managers = managers
        self._faces = faces
        self._running = running
        self._sessions = anyio.CancelScope()

    async def _hold_sessions(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        with self._sessions:
            async with AsyncExitStack() as stack:
                for manager in self._managers.values():
                    await stack.enter_async_context(manager.run())
                task_status.started()
                await anyio.sleep_forever()

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Run everything for the block; leaving it closes every client session."""
        async with anyio.create_task_group() as group:
            await group.start(self._hold_sessions)
            try:
                async with self._running():
                    yield
            finally:
                self.close()

    def close(self) -> None:
        """End every client session: listen streams gracefully, then the managers' sessions."""
        for face in self._faces.values():
            face.listen.close()
        self._sessions.cancel()

    def lifespan(self, app: Starlette) -> AbstractAsyncContextManager[None]:
        """``run`` as a Starlette lifespan."""
        return self.run()


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handlers: the caller decides when serving stops (by cancelling)."""

    def capture_signals(self) -> Any:
        return nullcontext()


def _listen(host: str, port: int, reuse_port: bool) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets whose proto says TCP,
    # and with Nagle on, a response written in pieces (SSE) waits out the client's delayed ACK (~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:  # several worker processes on one port: the kernel spreads connections across them
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


async def serve(
    app: Starlette,
    lifecycle: Lifecycle | None,
    host: str,
    port: int,
    on_ready: Callable[[str], None] | None,
    *,
    reuse_port: bool = False,
) -> None:
    """Serve ``app`` on ``host:port`` until cancelled; ``on_ready(base_url)`` once it listens and runs.

    ``lifecycle`` (the gateway's running parts) runs meanwhile; None for an app that has
    none (the Prometheus scrape endpoint on its own listener).
    """
    sock = _listen(host, port, reuse_port)
    try:
        bound = sock.getsockname()[1]
        base_url = f"http://[{host}]:{bound}" if sock.family == socket.AF_INET6 else f"http://{host}:{bound}"
        config = uvicorn.Config(
            app,
            log_level="warning",
            lifespan="off",
            timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN,
            timeout_keep_alive=_KEEP_ALIVE,
            access_log=False,
        )
        server = _QuietServer(config)
        async with lifecycle.run() if lifecycle is not None else nullcontext(), anyio.create_task_group() as group:

            async def stop_when_cancelled() -> None:
                try:
                    await anyio.sleep_forever()
                finally:
                    if lifecycle is not None:
                        lifecycle.close()
                    server.should_exit = True

            group.start_soon(stop_when_cancelled)
            if on_ready is not None:
                on_ready(base_url)
            with anyio.CancelScope(shield=True):  # uvicorn shuts down by itself once should_exit is set
                await server.serve(sockets=[sock])
            group.cancel_scope.cancel()
    finally:
        sock.close()


def session_managers(
    settings: HttpSettings, faces: Mapping[str, ProfileFace], shared: SharedSessions | None = None
) -> dict[str, StreamableHTTPSessionManager]:
    """One SDK session manager per profile: Streamable HTTP, both protocol versions, the body limit.

    With ``shared`` (and not stateless), 2025-11-25 sessions are kept in Redis, so any replica serves them.
    """
    security = security_settings(settings.host, settings.allowed_hosts, settings.allowed_origins)
    if shared is not None and not settings.stateless:
        return {
            profile: shared.manager(
                profile, face.server, security_settings=security, max_request_body_size=settings.max_body_bytes
            )
            for profile, face in faces.items()
        }
    return {
        profile: GuardedSessionManager(
            face.server,
            stateless=settings.stateless,
            security_settings=security,
            max_request_body_size=settings.max_body_bytes,
        )
        for profile, face in faces.items()
    }
