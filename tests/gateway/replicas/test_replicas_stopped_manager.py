"""A request reaching a replica's session manager before it runs or after it stopped is told to retry.

A stopping replica closes its sessions first, then uvicorn stops accepting requests (it looks for
its exit flag every tenth of a second, and lets requests already read finish): a request arriving
in between reaches a session manager that no longer runs. It is answered 503 with ``Retry-After``,
and nothing of it runs, whatever its protocol version.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.types import Message

from _gateway import INIT
from _services import redis_server
from toolmesh import ToolRegistry
from toolmesh.gateway import McpGateway, RedisState
from toolmesh.gateway._sessions.deployment import SharedSessions
from toolmesh.gateway._sessions.manager import SharedSessionManager

_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


async def _post(manager: SharedSessionManager, body: dict[str, Any], **headers: str) -> tuple[int, dict[str, str]]:
    """POST ``body`` to the manager as uvicorn would; the status and headers of its answer."""
    raw = json.dumps(body).encode()
    given = {"content-type": "application/json", "accept": "application/json, text/event-stream", **headers}
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in {**given, "content-length": str(len(raw))}.items()],
    }
    sent: list[Message] = []
    delivered = False

    async def receive() -> Message:
        nonlocal delivered
        if delivered:
            await anyio.sleep_forever()
        delivered = True
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    with anyio.fail_after(30):
        await manager.handle_request(scope, receive, send)
    start = next(message for message in sent if message["type"] == "http.response.start")
    return start["status"], {k.decode().lower(): v.decode() for k, v in start.get("headers", [])}


async def test_a_request_before_run_or_after_it_ended_is_told_to_retry_with_503() -> None:
    async with redis_server() as redis, RedisState(redis.url, prefix="t:") as state:
        gateway = McpGateway(ToolRegistry(), state=state)
        manager = SharedSessions(state, state.client, "r1").manager(
            "default", gateway.server(), security_settings=None, max_request_body_size=1 << 20
        )
        before, _ = await _post(manager, INIT)
        async with manager.run():
            running, headers = await _post(manager, INIT)
            session = headers["mcp-session-id"]
        answers = [
            await _post(manager, INIT),
            await _post(manager, _LIST, **{"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}),
            await _post(manager, _LIST, **{"mcp-protocol-version": "2026-07-28"}),
        ]
    assert before == 503 and running == 200
    assert [status for status, _ in answers] == [503, 503, 503]
    assert all(headers.get("retry-after") == "1" for _, headers in answers)
