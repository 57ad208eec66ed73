"""Leaving serve_http ends every client session, even with notification streams open, and frees the port."""

from __future__ import annotations

import socket

import anyio

from _gateway import INIT, asgi_post, client
from toolmesh import ToolRegistry
from toolmesh.gateway import HttpSettings, McpGateway

LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


async def _ping(arguments: dict[str, object]) -> str:
    return "pong"


async def test_cancelling_serve_http_closes_open_sessions_and_streams() -> None:
    registry = ToolRegistry()
    registry.register_dynamic("ping", {"type": "object", "properties": {}}, _ping)
    gateway = McpGateway(registry)
    urls: list[str] = []
    ready, stopped, listening, ended = anyio.Event(), anyio.Event(), anyio.Event(), anyio.Event()

    async def serve(scope: anyio.CancelScope) -> None:
        with scope:
            await gateway.serve_http(HttpSettings(port=0), on_ready=lambda url: (urls.append(url), ready.set()))
        stopped.set()

    async def listen_until_closed(url: str) -> None:
        async with client(url + "/mcp", "2026-07-28") as modern, modern.listen(tools_list_changed=True) as events:
            listening.set()
            async for _event in events:  # ends when the gateway closes the stream on its way out
                pass
            ended.set()  # a graceful end: an abrupt drop would have raised instead

    serving = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        group.start_soon(serve, serving)
        with anyio.fail_after(60):
            await ready.wait()
        url = urls[0]
        async with client(url + "/mcp", "legacy") as legacy:
            with anyio.fail_after(60):
                assert (await legacy.call_tool("ping", {})).content[0].text == "pong"  # type: ignore[union-attr]
                group.start_soon(listen_until_closed, url)
                await listening.wait()
            with anyio.fail_after(30):  # the legacy GET stream and the listen stream are open: they end too
                serving.cancel()
                await stopped.wait()
                await ended.wait()
            group.cancel_scope.cancel()
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as probe:  # no socket listens on the port any more (closed connections may linger)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))
        probe.listen(1)


async def test_a_request_reaching_the_app_before_or_after_its_lifespan_is_told_to_retry_with_503() -> None:
    """A stopping gateway's session managers end before uvicorn stops passing requests on: such a request is
    answered 503 with Retry-After (nothing of it runs), on either protocol version, stateful or stateless."""
    registry = ToolRegistry()
    registry.register_dynamic("ping", {"type": "object", "properties": {}}, _ping)
    answers = []
    for stateless in (False, True):
        app = McpGateway(registry).http_app(HttpSettings(port=0, stateless=stateless))
        answers.append(await asgi_post(app, INIT))
        async with app.router.lifespan_context(app):
            running, _ = await asgi_post(app, INIT)
        answers.append(await asgi_post(app, INIT))
        answers.append(await asgi_post(app, LIST, **{"mcp-protocol-version": "2026-07-28"}))
        assert running == 200
    assert [status for status, _ in answers] == [503] * 6
    assert all(headers.get("retry-after") == "1" for _, headers in answers)
