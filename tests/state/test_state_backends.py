"""Both state backends keep one contract: buckets, slots, claims, counters, values and messages, each with a TTL.

Every test runs against the in-process backend and a real ``redis-server``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import anyio
import pytest

from _services import redis_server
from toolmesh.gateway import RESYNC, MemoryState, RedisState, StateBackend


@pytest.fixture(params=["memory", "redis"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[StateBackend]:
    if request.param == "memory":
        async with MemoryState("test:") as memory:
            yield memory
        return
    async with redis_server() as redis, RedisState(redis.url, prefix="test:") as state:
        yield state


async def test_a_bucket_gives_its_capacity_then_says_how_long_to_wait(backend: StateBackend) -> None:
    waits = [await backend.take_token("b", capacity=3, per=60.0) for _ in range(4)]
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert 0.0 < waits[3] <= 20.0  # one token every 20 s
    assert await backend.take_token("other", capacity=3, per=60.0) == 0.0


async def test_slots_are_held_up_to_the_limit_and_given_back(backend: StateBackend) -> None:
    assert await backend.acquire_slot("s", "a", limit=2, lease=60)
    assert await backend.acquire_slot("s", "b", limit=2, lease=60)
    assert not await backend.acquire_slot("s", "c", limit=2, lease=60)
    await backend.release_slot("s", "a")
    assert await backend.acquire_slot("s", "c", limit=2, lease=60)
    await backend.renew_slot("s", "b", lease=60)
    assert not await backend.acquire_slot("s", "d", limit=2, lease=60)


async def test_a_slot_whose_lease_ends_is_free_again(backend: StateBackend) -> None:
    assert await backend.acquire_slot("s", "a", limit=1, lease=1.0)
    assert not await backend.acquire_slot("s", "b", limit=1, lease=60)
    await anyio.sleep(1.2)  # the lease is time itself: past its end, whatever the machine's load
    assert await backend.acquire_slot("s", "b", limit=1, lease=60)


async def test_a_claim_is_won_once(backend: StateBackend) -> None:
    assert await backend.claim("c", ttl=60)
    assert not await backend.claim("c", ttl=60)
    assert await backend.claim("d", ttl=60)


async def test_a_swap_returns_what_was_there_so_one_of_many_swappers_of_a_value_sees_it_new(
    backend: StateBackend,
) -> None:
    assert await backend.swap("w", b"s1", ttl=60) is None
    swapped = [await backend.swap("w", b"s2", ttl=60) for _ in range(3)]
    assert swapped == [b"s1", b"s2", b"s2"]
    assert await backend.swap("w", b"s1", ttl=60) == b"s2"  # a value coming back is new again
    assert await backend.get("w") == b"s1"


async def test_values_counters_and_their_ttls(backend: StateBackend) -> None:
    assert await backend.get("v") is None
    await backend.set("v", b"x", ttl=60)
    assert await backend.get("v", refresh_ttl=60) == b"x"
    await backend.delete("v")
    assert await backend.get("v") is None
    assert await backend.increment("n", ttl=60) == 1
    assert await backend.increment("n", ttl=60, amount=4) == 5
    await backend.set("short", b"x", ttl=0.05)
    await anyio.sleep(0.2)
    assert await backend.get("short") is None


async def test_a_message_reaches_every_subscriber_of_its_channel(backend: StateBackend) -> None:
    async with backend.subscribe("ch") as first, backend.subscribe("ch") as second, backend.subscribe("x") as other:
        await backend.publish("ch", b"hello")
        await backend.publish("x", b"elsewhere")
        with anyio.fail_after(10):
            assert await anext(first) == b"hello"
            assert await anext(second) == b"hello"
            assert await anext(other) == b"elsewhere"


async def test_redis_keys_carry_the_prefix_and_a_ttl() -> None:
    async with redis_server() as redis, RedisState(redis.url, prefix="deploy:") as state:
        operations: list[Callable[[], object]] = [
            lambda: state.take_token("b", capacity=2, per=10),
            lambda: state.acquire_slot("s", "h", limit=1, lease=10),
            lambda: state.claim("c", ttl=10),
            lambda: state.increment("n", ttl=10),
            lambda: state.set("v", b"x", ttl=10),
            lambda: state.swap("w", b"x", ttl=10),
        ]
        for operation in operations:
            await operation()  # type: ignore[misc]
        keys = sorted(key.decode() for key in await state.client.keys("*"))
        assert keys == ["deploy:b", "deploy:c", "deploy:n", "deploy:s", "deploy:v", "deploy:w"]
        for key in keys:
            assert 0 < await state.client.pttl(key) <= 11_000, key


async def test_two_clients_of_one_redis_share_one_bucket() -> None:
    async with redis_server() as redis, RedisState(redis.url) as one, RedisState(redis.url) as two:
        taken = [await (one if i % 2 else two).take_token("b", capacity=5, per=60) for i in range(8)]
        assert taken.count(0.0) == 5


async def test_a_subscription_comes_back_with_resync_after_redis_restarts() -> None:
    async with (
        redis_server() as redis,
        RedisState(redis.url, timeout=0.5) as state,
        state.subscribe("ch") as messages,
    ):
        await redis.stop()
        await redis.start()
        with anyio.fail_after(30):
            assert await anext(messages) is RESYNC
            await state.publish("ch", b"after")
            assert await anext(messages) == b"after"
