"""The shared-state rows of bench/gateway.py: native tools under a rate and a concurrency limit, kept in
this process, in Redis, and in Redis with 2 workers; and the cost of each Redis round trip on its own.

Every row here serves the same two native tools (``echo``, ``slow``: the fixture's names and answers),
so no upstream server caps what the workers can do, and the same policy: a rate limit too large to
refuse anything, i.e. one token taken per call (one Redis round trip with Redis state, none without).
A concurrency limit would add two more per call (a slot held and given back): their cost alone is
printed with the round trips.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from toolmesh.gateway import RedisState

NATIVE = "native, rate limit in process"
NATIVE_REDIS = "native, rate limit in redis"
NATIVE_WORKERS = "native, redis, 2 workers"
ROWS = (NATIVE, NATIVE_REDIS, NATIVE_WORKERS)

_TOOLS = '''
import anyio

from toolmesh import tool


@tool
async def echo(text: str) -> str:
    """Answer the text."""
    return text


@tool
async def slow(seconds: float) -> str:
    """Wait, then answer done."""
    await anyio.sleep(seconds)
    return "done"


tools = [echo, slow]
'''
_POLICY = {"rateLimits": [{"calls": 1_000_000_000, "per": 1}]}


def redis_missing() -> str | None:
    """Why the Redis rows cannot run here, or None."""
    return None if shutil.which("redis-server") else "redis-server is not installed (make install)"


def redis_command(port: int) -> list[str]:
    """A throwaway redis-server on 127.0.0.1:``port`` (no persistence)."""
    return ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]


def native_command(toolmesh: list[str], port: int, folder: Path, state: str | None, workers: int) -> list[str]:
    """``toolmesh serve`` of the native tools under the limits, on ``port``."""
    (folder / "bench_tools.py").write_text(_TOOLS, encoding="utf-8")
    config = {
        "native": ["bench_tools.py:tools"],
        "policy": _POLICY,
        "serve": {"transport": "http", "host": "127.0.0.1", "port": port, "workers": workers},
    }
    path = folder / f"toolmesh-native-{port}.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return [*toolmesh, "serve", "--config", str(path), *(["--state", state] if state else [])]


async def round_trips(url: str, count: int = 2000) -> dict[str, float]:
    """µs per operation against the Redis at ``url``, from this process, one at a time."""
    found: dict[str, float] = {}
    async with RedisState(url, prefix="bench:") as state:
        await state.ping()
        for name, operation in (
            ("PING", lambda i: state.ping()),
            ("take_token (rate limit)", lambda i: state.take_token("r", capacity=1_000_000_000, per=1)),
            ("acquire_slot (concurrency)", lambda i: state.acquire_slot("s", str(i), limit=10**9, lease=60)),
            ("release_slot (concurrency)", lambda i: state.release_slot("s", str(i))),
        ):
            started = time.perf_counter()
            for index in range(count):
                await operation(index)
            found[name] = (time.perf_counter() - started) / count * 1e6
    return found
