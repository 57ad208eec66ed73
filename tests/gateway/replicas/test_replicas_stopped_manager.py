"""A request reaching a replica's session manager before it runs or after it stopped is told to retry.

A stopping replica closes its sessions first, then uvicorn stops accepting requests (it looks for
its exit flag every tenth of a second, and lets requests already read finish): a request arriving
in between reaches a session manager that no longer runs. It is answered 503 with ``Retry-After``,
and nothing of it runs, whatever its protocol version.
"""

from __future__ import annotations

from _gateway import INIT, asgi_post
from _services import redis_server
from toolmesh import ToolRegistry
from toolmesh.gateway import McpGateway, RedisState
from toolmesh.gateway._sessions.deployment import SharedSessions

_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


async def test_a_request_before_run_or_after_it_ended_is_told_to_retry_with_503() -> None:
    async with redis_server() as redis, RedisState(redis.url, prefix="t:") as state:
        gateway = McpGateway(ToolRegistry(), state=state)
        manager = SharedSessions(state, state.client, "r1").manager(
            "default", gateway.server(), security_settings=None, max_request_body_size=1 << 20
        )
        before, _ = await asgi_post(manager.handle_request, INIT)
        async with manager.run():
            running, headers = await asgi_post(manager.handle_request, INIT)
            session = headers["mcp-session-id"]
        answers = [
            await asgi_post(manager.handle_request, INIT),
            await asgi_post(
                manager.handle_request, _LIST, **{"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
            ),
            await asgi_post(manager.handle_request, _LIST, **{"mcp-protocol-version": "2026-07-28"}),
        ]
    assert before == 503 and running == 200
    assert [status for status, _ in answers] == [503, 503, 503]
    assert all(headers.get("retry-after") == "1" for _, headers in answers)
