"""Both protocol versions on three `toolmesh serve --state redis://...` replicas behind HAProxy, round-robin."""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import pytest

from _replicas import replicas
from _services import redis_server

CALLS = 200


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_hundreds_of_calls_each_request_on_another_replica_without_a_session_error(mode: Any) -> None:
    async with redis_server() as redis, replicas(3, state=redis.url) as mesh:
        with anyio.fail_after(240):
            async with mesh.client(mode) as client:
                ran_on = set()
                for n in range(CALLS):
                    result = await client.call_tool("add", {"a": n, "b": 1})
                    assert not result.is_error, result
                    assert result.content[0].text == str(n + 1)  # type: ignore[union-attr]
                    ran_on.add((await client.call_tool("whoami", {})).content[0].text)  # type: ignore[union-attr]
    assert ran_on == {"replica1", "replica2", "replica3"}
    assert all(status < 400 for status in mesh.statuses), mesh.statuses  # no 404 "Session not found", no error
    posts = mesh.served
    assert len(posts) >= 2 * CALLS
    assert sum(first == second for first, second in itertools.pairwise(posts)) <= 2, posts  # round-robin
