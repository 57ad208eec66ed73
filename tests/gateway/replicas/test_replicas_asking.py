"""Elicitation across replicas: the client's answer reaches another replica than the one running the call."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest

from _replicas import replicas
from _services import redis_server

ROUNDS = 6


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_elicitation_round_trip_crosses_replicas(mode: Any) -> None:
    """2025-11-25: the answer POST is routed to the replica that asked; 2026-07-28: the retry carrying the
    answer is handed to the replica holding the parked call."""
    asked = 0

    async def answer(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        nonlocal asked
        asked += 1
        return mcp_types.ElicitResult(action="accept", content={"name": f"Ada {asked}"})

    async with redis_server() as redis, replicas(2, state=redis.url) as mesh:
        with anyio.fail_after(180):
            async with mesh.client(mode, elicitation_callback=answer) as client:
                for n in range(1, ROUNDS + 1):
                    result = await client.call_tool("ask_name", {})
                    assert not result.is_error, result
                    assert result.content[0].text == f"hello Ada {n}"  # type: ignore[union-attr]
        posts = [(kind, replica) for kind, replica in mesh.posts if kind in ("call", "answer")]
    calls = [replica for kind, replica in posts if kind == "call"]
    answers = [replica for kind, replica in posts if kind == "answer"]
    assert len(calls) == len(answers) == ROUNDS
    crossed = sum(asker != reached for asker, reached in zip(calls, answers, strict=True))
    assert crossed >= ROUNDS - 1, posts  # round-robin: each answer goes to the replica that did not ask
