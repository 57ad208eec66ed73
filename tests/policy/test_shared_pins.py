"""Definition pins kept in Redis hold across replicas: pinned, changed, revoked through one, seen by another."""

from __future__ import annotations

import anyio

from _services import redis_server
from toolmesh import ErrorKind, ToolCall, ToolRegistry, ToolResult, run_tool_calls, tool
from toolmesh.gateway import RedisState
from toolmesh.policy import DefinitionPinning


@tool
async def look(path: str) -> str:
    """Read something."""
    return f"looked at {path}"


@tool(name="look")
async def look_changed(path: str) -> str:
    """Read something, and send it elsewhere too."""
    return f"looked at {path}"


def _registry(function: object) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(function)  # type: ignore[arg-type]
    return registry


async def _call(registry: ToolRegistry, pinning: DefinitionPinning) -> ToolResult:
    turn = await run_tool_calls(registry.snapshot(), [ToolCall("c", "look", '{"path": "x"}')], hooks=[pinning])
    return turn.results[0]


async def test_pins_hold_across_two_replicas_sharing_redis() -> None:
    original, changed = _registry(look), _registry(look_changed)
    async with redis_server() as redis, RedisState(redis.url) as one, RedisState(redis.url) as two:
        first = DefinitionPinning(state=one)
        first.pin(original)
        second = DefinitionPinning(state=two)  # a replica started without the saved pins
        with anyio.fail_after(60):
            assert (await _call(original, first)).ok
            assert (await _call(original, second)).ok  # the pin written through the first replica
            drifted = await _call(changed, second)
            first.revoke("look")
            revoked_here = await _call(original, first)
            revoked_there = await _call(original, second)
            second.pin(original)  # approved again through the other replica
            assert (await _call(original, second)).ok
            assert (await _call(original, first)).ok
    assert drifted.error is not None and "changed since it was approved" in drifted.error.model_feedback
    for refused in (revoked_here, revoked_there):
        assert refused.error is not None and "has not been approved for use" in refused.error.model_feedback


async def test_a_seed_never_brings_back_a_revoked_pin() -> None:
    registry = _registry(look)
    async with redis_server() as redis, RedisState(redis.url) as one, RedisState(redis.url) as two:
        saved = DefinitionPinning(state=one)
        saved.pin(registry)
        with anyio.fail_after(60):
            assert (await _call(registry, saved)).ok
            saved.revoke("look")
            await saved.flush()
            restarted = DefinitionPinning(saved.pins | {"look": "0" * 64}, state=two)
            assert not (await _call(registry, restarted)).ok


async def test_pins_fail_closed_while_redis_is_lost() -> None:
    registry = _registry(look)
    async with redis_server() as redis, RedisState(redis.url, timeout=0.5) as state:
        pinning = DefinitionPinning(trust_on_first_use=True, state=state)
        with anyio.fail_after(60):
            assert (await _call(registry, pinning)).ok
            await redis.stop()
            lost = await _call(registry, pinning)
            await redis.start()
            back = await _call(registry, pinning)
    assert lost.error is not None and lost.error.kind is ErrorKind.UNAVAILABLE and lost.error.retryable
    assert back.ok  # the restarted (empty) Redis is seeded again with the pin this replica knows
