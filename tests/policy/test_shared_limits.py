"""Rate and concurrency limits held in Redis hold across gateways: two gateways, each with its own
client of one real ``redis-server``, as two replicas would be; and they fail closed when Redis is lost."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import mcp
from mcp_types import CallToolResult

from _gateway import client, look_and_wipe, serving
from _services import RedisServer, redis_server
from toolmesh import ErrorKind, ToolRegistry, tool
from toolmesh.gateway import McpGateway, RedisState
from toolmesh.hooks import Hook
from toolmesh.policy import ConcurrencyLimit, RateLimit


def _text(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


@asynccontextmanager
async def _replicas(
    redis: RedisServer, hooks: list[list[Hook]], registry: ToolRegistry | None = None
) -> AsyncIterator[list[mcp.Client]]:
    """One gateway per hook list, each with its own Redis client, and an MCP client of each."""
    async with AsyncExitStack() as stack:
        clients = []
        for own in hooks:
            state = await stack.enter_async_context(RedisState(redis.url, prefix="t:", timeout=0.5))
            gateway = McpGateway(registry or look_and_wipe(), hooks=own, state=state)
            clients.append(await stack.enter_async_context(mcp.Client(gateway.server(), mode="legacy")))
        yield clients


async def test_a_rate_limit_holds_across_two_gateways() -> None:
    async with redis_server() as redis, _replicas(redis, [[RateLimit(5, per=60)], [RateLimit(5, per=60)]]) as (a, b):
        with anyio.fail_after(60):
            results = [await (a if i % 2 else b).call_tool("look", {"path": str(i)}) for i in range(9)]
    assert [r.is_error for r in results].count(False) == 5
    refused = [_text(r) for r in results if r.is_error]
    assert all("rate limited to 5 calls per 60 seconds" in text for text in refused), refused


class _Counting(RedisState):
    """A Redis client that says when its second attempt at a slot was refused (its caller is waiting)."""

    def __init__(self, url: str) -> None:
        super().__init__(url, prefix="t:")
        self.waiting = anyio.Event()
        self._refused = 0

    async def acquire_slot(self, name: str, holder: str, *, limit: int, lease: float) -> bool:
        got = await super().acquire_slot(name, holder, limit=limit, lease=lease)
        self._refused += not got
        if self._refused >= 2:
            self.waiting.set()
        return got


async def test_a_concurrency_limit_holds_across_two_gateways() -> None:
    running, most = 0, 0
    release = anyio.Event()
    started = anyio.Event()

    @tool
    async def slow() -> str:
        """Hold a slot until released."""
        nonlocal running, most
        running += 1
        most = max(most, running)
        started.set()
        await release.wait()
        running -= 1
        return "done"

    registry = ToolRegistry()
    registry.register(slow)
    async with redis_server() as redis, _Counting(redis.url) as one, _Counting(redis.url) as two:
        a = McpGateway(registry, hooks=[ConcurrencyLimit(1)], state=one)
        b = McpGateway(registry, hooks=[ConcurrencyLimit(1)], state=two)
        results: list[str] = []
        with anyio.fail_after(60):
            async with (
                mcp.Client(a.server(), mode="legacy") as first,
                mcp.Client(b.server(), mode="legacy") as second,
                anyio.create_task_group() as group,
            ):

                async def call(client: mcp.Client, name: str) -> None:
                    await client.call_tool("slow", {})
                    results.append(name)

                group.start_soon(call, first, "a")
                await started.wait()
                group.start_soon(call, second, "b")
                await two.waiting.wait()  # b's gateway asked for the slot and was refused: a holds it
                assert results == [] and running == 1
                release.set()
    assert most == 1 and results == ["a", "b"]


async def test_limits_fail_closed_while_redis_is_lost_and_work_again_once_it_is_back() -> None:
    hooks: list[list[Hook]] = [[RateLimit(100, per=1), ConcurrencyLimit(4)]]
    async with redis_server() as redis, _replicas(redis, hooks) as (a,):
        with anyio.fail_after(60):
            assert not (await a.call_tool("look", {"path": "before"})).is_error
            await redis.stop()
            lost = await a.call_tool("look", {"path": "lost"})
            await redis.start()
            back = await a.call_tool("look", {"path": "back"})
    assert lost.is_error and "cannot be checked just now. Try again in a moment." in _text(lost)
    assert "redis" not in _text(lost).lower()  # the model is told to retry, not where the state lives
    assert not back.is_error and _text(back) == "looked at back"


async def test_a_concurrency_slot_that_cannot_be_had_fails_the_call_as_retryable_unavailable() -> None:
    async with redis_server() as redis, RedisState(redis.url, timeout=0.5) as state:
        registry = look_and_wipe()
        snapshot = registry.snapshot()
        await redis.stop()
        from toolmesh import ToolCall, run_tool_calls

        with anyio.fail_after(60):
            turn = await run_tool_calls(
                snapshot, [ToolCall("c1", "look", '{"path": "x"}')], hooks=[ConcurrencyLimit(1, state=state)]
            )
    [result] = turn.results
    assert result.error is not None and result.error.kind is ErrorKind.UNAVAILABLE and result.error.retryable
    assert "The concurrency limit of 'look'" in result.error.message


async def test_while_redis_is_lost_only_what_needs_it_fails_and_the_gateway_recovers_by_itself() -> None:
    async with redis_server() as redis, RedisState(redis.url, prefix="t:", timeout=0.5) as state:
        gateway = McpGateway(look_and_wipe(), hooks=[RateLimit(100, per=1, tools=["wipe"])], state=state)
        async with serving(gateway) as url, client(url + "/mcp", "2026-07-28") as session:
            with anyio.fail_after(60):
                await redis.stop()
                listed = [tool.name for tool in (await session.list_tools()).tools]
                free = await session.call_tool("look", {"path": "a"})
                limited = await session.call_tool("wipe", {"path": "a"})
                await redis.start()
                back = await session.call_tool("wipe", {"path": "a"})
    assert listed == ["look", "wipe"] and _text(free) == "looked at a"
    assert limited.is_error and "cannot be checked just now" in _text(limited)
    assert not back.is_error
