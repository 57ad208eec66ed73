"""``GuardedSessionManager``: the SDK's session manager, telling a request that reaches it while it does not run
to retry.

A gateway that stops closes its sessions first (its session managers stop), then uvicorn
stops accepting requests: it looks for its exit flag every tenth of a second and lets the
requests it has read finish. A request reaching a manager in between (or before its
``run()``) would make the SDK raise ("use run()"), a 500. It is answered 503 with
``Retry-After`` instead, before any of it runs: the client retries, on another replica or
on this one once it is back.

What this leans on in the SDK's manager: its public ``asgi_app`` attribute is the entry
both ``handle_request`` and ``StreamableHTTPASGIApp`` call, wrapping the SDK's own handling
in its body-size limit; replacing it (and extending ``run``) puts the check in front.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import RequestBodyLimitMiddleware, StreamableHTTPSessionManager
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

__all__ = ["RETRY_AFTER", "GuardedSessionManager", "stopped"]

RETRY_AFTER = "1"
"""Seconds a client is told to wait (``Retry-After``) before retrying a request a stopped manager refused."""
_STOPPED = "this gateway replica is not running (starting or stopping): retry; nothing of the request ran"


def stopped() -> Response:
    """503 with a retry hint and a JSON-RPC error: the request was refused before anything of it ran."""
    error = mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=_STOPPED)
    body = mcp_types.JSONRPCError(jsonrpc="2.0", id=None, error=error).model_dump_json(by_alias=True, exclude_none=True)
    return Response(body, 503, headers={"Retry-After": RETRY_AFTER}, media_type="application/json")


class GuardedSessionManager(StreamableHTTPSessionManager):
    """The SDK's ``StreamableHTTPSessionManager``; a request reaching it while it does not run is answered 503."""

    def __init__(self, app: Server[Any], **options: Any) -> None:
        """Args:
        app: The MCP server it serves.
        **options: The SDK manager's own options.
        """
        super().__init__(app=app, **options)
        self.running = False
        """Between entering ``run()`` and leaving it."""
        self._sdk_app = self.asgi_app.app  # the SDK's own handling, inside its body-size limit
        self.asgi_app = RequestBodyLimitMiddleware(self._guarded, self.max_request_body_size)

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with super().run():
            self.running = True
            try:
                yield
            finally:
                self.running = False

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.running:
            await stopped()(scope, receive, send)
            return
        await self.route(scope, receive, send)

    async def route(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a request while the manager runs (the SDK's own handling; subclasses take some)."""
        await self._sdk_app(scope, receive, send)
