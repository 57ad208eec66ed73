"""A refused request body is not read: the MCP face answers and closes the connection.

Each test uploads over a raw socket to a real uvicorn server on 127.0.0.1, sending up to
64 MiB, and sees when the server stops reading.
"""

from __future__ import annotations

import anyio
import pytest

from _gateway import client, look_and_wipe, serving, upload
from toolmesh.gateway import BearerToken, HttpSettings, McpGateway

GIB = 1024**3
LIMIT = 1024 * 1024


@pytest.mark.parametrize("declared", [GIB, None], ids=["declared-length", "chunked"])
async def test_a_body_over_the_limit_is_a_413_and_the_rest_is_never_read(declared: int | None) -> None:
    gateway = McpGateway(look_and_wipe())
    async with serving(gateway, HttpSettings(port=0, max_body_bytes=LIMIT)) as url:
        sent = await upload(url + "/mcp", declared=declared)
        assert sent.status == 413, sent.answer[:200]
        assert sent.closed, f"the server read all {sent.sent:,} bytes sent"
        assert "connection: close" in sent.head
        async with client(url + "/mcp") as session:  # the gateway still serves
            with anyio.fail_after(60):
                assert [tool.name for tool in (await session.list_tools()).tools] == ["look", "wipe"]


async def test_a_refusal_before_the_body_closes_the_connection_too() -> None:
    gateway = McpGateway(look_and_wipe())
    settings = HttpSettings(port=0, tokens=(BearerToken("t" * 32),))
    async with serving(gateway, settings) as url:
        unauthorized = await upload(url + "/mcp", declared=GIB)
        missing = await upload(url + "/nowhere", declared=GIB, headers={"Authorization": "Bearer " + "t" * 32})
    assert (unauthorized.status, missing.status) == (401, 404)
    assert unauthorized.closed and missing.closed
