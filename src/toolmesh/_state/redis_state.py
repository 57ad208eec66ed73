"""``RedisState``: the shared state in Redis, through the official client (``redis.asyncio``).

Atomic steps are Redis's own commands (``SET NX``, ``INCRBY``) or one Lua script each
(a token bucket, a slot lease), run with the server's clock so the processes' clocks
never matter. Every key gets a TTL. Each operation is bounded by the client's socket
timeouts (``timeout``, to connect and to answer; one retry at once, then it fails); a lost
server raises ``StateUnavailableError`` and the client's pool connects again on the next
operation. ``redis.asyncio`` runs on asyncio
(which ``toolmesh serve`` uses) only.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from .backend import RESYNC, Resync, StateBackend
from .errors import StateUnavailableError, redact_url

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

__all__ = ["RedisState"]

logger = logging.getLogger("toolmesh.state")
_T = TypeVar("_T")

_TAKE_TOKEN = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
local capacity, rate = tonumber(ARGV[1]), tonumber(ARGV[2])
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1]) or capacity
local at = tonumber(held[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return tostring(wait)
"""

_ACQUIRE_SLOT = """
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[2]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
  return 1
end
return 0
"""

_RENEW_SLOT = """
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1]) == 1 then
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
end
return 0
"""

_INCREMENT = """
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return value
"""

_RECONNECT_MIN, _RECONNECT_MAX = 0.05, 2.0
"""Seconds between a lost subscription's attempts to come back: doubling from the first to the second."""


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


class RedisState(StateBackend):
    """Shared state in one Redis database: every replica given the same URL and prefix shares it.

    Example:
        >>> state = RedisState("redis://127.0.0.1:6379/0", prefix="toolmesh:prod:")
        >>> state.key("approvals:x")
        'toolmesh:prod:approvals:x'
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "toolmesh:",
        timeout: float = 2.0,
        client: Redis | None = None,
    ) -> None:
        """Args:
        url: ``redis://[[user]:password@]host[:port][/db]``, ``rediss://...`` (TLS) or ``unix:///path``.
        prefix: What every key and channel starts with: one per deployment.
        timeout: Seconds one operation (connecting included) may take before it fails.
        client: A client you configured yourself (its URL is still the one shown).
        """
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        self.prefix = prefix
        self._url = redact_url(url)
        self._timeout = timeout
        # one retry at once on a stale pooled connection (the server was restarted); then fail closed
        self.client: Redis = client or Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 1),
            health_check_interval=30,
        )
        """The ``redis.asyncio`` client (for code that needs Redis's own data types; use ``key()`` for names)."""
        from redis.exceptions import ConnectionError, TimeoutError

        self._failures = (ConnectionError, TimeoutError, OSError)
        self._take_token = self.client.register_script(_TAKE_TOKEN)
        self._acquire_slot = self.client.register_script(_ACQUIRE_SLOT)
        self._renew_slot = self.client.register_script(_RENEW_SLOT)
        self._increment = self.client.register_script(_INCREMENT)

    @property
    def shared(self) -> bool:
        return True

    @property
    def url(self) -> str:
        return self._url

    def __repr__(self) -> str:
        return f"RedisState({self._url!r}, prefix={self.prefix!r})"

    async def _do(self, operation: Awaitable[_T]) -> _T:
        """Await one client operation: the one place its failures become ``StateUnavailableError``."""
        try:
            return await operation
        except self._failures as exc:
            raise StateUnavailableError(self._url, str(exc) or type(exc).__name__) from exc

    async def _run(self, script: Any, name: str, *args: Any) -> Any:
        return await self._do(script(keys=[self.key(name)], args=list(args)))

    async def take_token(self, name: str, *, capacity: int, per: float) -> float:
        wait = await self._run(self._take_token, name, capacity, capacity / per, _ms(per + 1.0))
        return float(wait)

    async def acquire_slot(self, name: str, holder: str, *, limit: int, lease: float) -> bool:
        return bool(await self._run(self._acquire_slot, name, limit, holder, _ms(lease)))

    async def renew_slot(self, name: str, holder: str, *, lease: float) -> None:
        await self._run(self._renew_slot, name, holder, _ms(lease))

    async def release_slot(self, name: str, holder: str) -> None:
        await self._do(self.client.zrem(self.key(name), holder))

    async def increment(self, name: str, *, ttl: float, amount: int = 1) -> int:
        return int(await self._run(self._increment, name, amount, _ms(ttl)))

    async def claim(self, name: str, *, ttl: float, value: bytes = b"1") -> bool:
        return bool(await self._do(self.client.set(self.key(name), value, px=_ms(ttl), nx=True)))

    async def swap(self, name: str, value: bytes, *, ttl: float) -> bytes | None:
        before = await self._do(self.client.set(self.key(name), value, px=_ms(ttl), get=True))
        return before if isinstance(before, bytes) else None

    async def get(self, name: str, *, refresh_ttl: float | None = None) -> bytes | None:
        if refresh_ttl is None:
            value = await self._do(self.client.get(self.key(name)))
        else:
            value = await self._do(self.client.getex(self.key(name), px=_ms(refresh_ttl)))
        return value if isinstance(value, bytes) else None

    async def set(self, name: str, value: bytes, *, ttl: float) -> None:
        await self._do(self.client.set(self.key(name), value, px=_ms(ttl)))

    async def delete(self, name: str) -> None:
        await self._do(self.client.delete(self.key(name)))

    async def publish(self, channel: str, message: bytes) -> None:
        await self._do(self.client.publish(self.key(channel), message))

    @asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[AsyncIterator[bytes | Resync]]:
        subscription = _Subscription(self.client.pubsub(ignore_subscribe_messages=True))
        try:
            await self._do(subscription.pubsub.subscribe(self.key(channel)))
            subscription.watch()
            yield subscription.messages(self._url, channel, self._timeout)
        finally:
            with anyio.CancelScope(shield=True):
                await subscription.pubsub.aclose()

    async def ping(self) -> float:
        from redis.exceptions import RedisError

        started = time.perf_counter()
        try:
            await self._do(self.client.ping())
        except (RedisError, TypeError) as exc:  # a db Redis lacks, a URL option it does not know: the URL is wrong
            raise StateUnavailableError(self._url, str(exc) or type(exc).__name__) from exc
        return time.perf_counter() - started

    async def aclose(self) -> None:
        await self.client.aclose()


class _Subscription:
    """One channel's ``PubSub``: the client reconnects it (and subscribes again) by itself; this says when."""

    def __init__(self, pubsub: PubSub) -> None:
        self.pubsub = pubsub
        self._connects = 0

    def watch(self) -> None:
        connection = self.pubsub.connection
        if connection is not None:
            connection.register_connect_callback(self._connected)  # kept as a weak method: self lives on

    def _connected(self, connection: object) -> None:
        self._connects += 1

    async def messages(self, url: str, channel: str, poll: float) -> AsyncIterator[bytes | Resync]:
        from redis.exceptions import ConnectionError, TimeoutError

        seen, delay, lost = self._connects, _RECONNECT_MIN, False
        while True:
            try:
                message = await self.pubsub.get_message(timeout=poll)
            except (ConnectionError, TimeoutError, OSError) as exc:
                if not lost:
                    logger.warning("shared state %s: subscription to %r lost (%s); reconnecting", url, channel, exc)
                lost = True
                await anyio.sleep(delay)
                delay = min(delay * 2, _RECONNECT_MAX)
                continue
            if self._connects != seen:  # connected again (and subscribed again): what was sent meanwhile is lost
                seen, delay = self._connects, _RECONNECT_MIN
                if lost:
                    logger.warning("shared state %s: subscription to %r back", url, channel)
                lost = False
                yield RESYNC
            if message is not None and message.get("type") == "message":
                data = message.get("data")
                if isinstance(data, bytes):
                    yield data
