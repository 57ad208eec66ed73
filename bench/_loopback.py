"""What the benchmark scripts share: loopback ports, and timing calls one by one or many at once."""

from __future__ import annotations

import socket
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

Call = Callable[[], Awaitable[Any]]
IN_FLIGHT = 32
"""Calls in flight at once in the concurrent mode."""


def free_port(taken: set[int] | None = None) -> int:
    """A free TCP port on 127.0.0.1 (not one already in ``taken``, which records it)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if taken is None:
            return port
        if port not in taken:
            taken.add(port)
            return port


def port_open(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def sequential(call: Call, calls: int) -> tuple[list[float], float]:
    """``calls`` awaits of ``call()`` one after the other: each one's latency, and the wall time of all."""
    latencies: list[float] = []
    clock = time.perf_counter
    start = clock()
    for _ in range(calls):
        t0 = clock()
        await call()
        latencies.append(clock() - t0)
    return latencies, clock() - start


async def concurrent(call: Call, calls: int) -> tuple[list[float], float]:
    """About ``calls`` awaits of ``call()``, ``IN_FLIGHT`` at a time (at least one per task)."""
    latencies: list[float] = []
    clock = time.perf_counter
    per_task = max(1, calls // IN_FLIGHT)

    async def worker() -> None:
        for _ in range(per_task):
            t0 = clock()
            await call()
            latencies.append(clock() - t0)

    start = clock()
    async with anyio.create_task_group() as group:
        for _ in range(IN_FLIGHT):
            group.start_soon(worker)
    return latencies, clock() - start


@dataclass
class Latencies:
    """Call latencies summed over rounds, with the figures the reports print."""

    latencies: list[float] = field(default_factory=list)
    wall: float = 0.0

    @property
    def mean_us(self) -> float:
        return statistics.fmean(self.latencies) * 1e6

    @property
    def p50_us(self) -> float:
        return statistics.median(self.latencies) * 1e6

    @property
    def p99_us(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e6

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.wall
