"""What the benchmark scripts share: loopback ports, server programs run as children, and timing calls one by
one or many at once."""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

ROOT = Path(__file__).resolve().parent.parent

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


@contextlib.asynccontextmanager
async def child(
    name: str, argv: Sequence[str], port: int, log: Path, env: Mapping[str, str] | None = None
) -> AsyncIterator[Process]:
    """Run a server program (from the repository's root, ``env`` added to this one's) until the block ends;
    yield once its ``port`` accepts connections.

    Its stderr is appended to ``log`` (a pipe nobody reads would stall a chatty child); the log's tail is
    printed when the program exits early or the block ends with an error. On the way out it is
    terminated, then killed if it is still there 15 s later.
    """
    with log.open("ab") as sink:
        process = await anyio.open_process(
            list(argv),
            env={**os.environ, "FIXTURE_LOG_LEVEL": "CRITICAL", **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=sink,
            cwd=str(ROOT),
        )
    try:
        with anyio.fail_after(90):
            while not port_open(port):
                if process.returncode is not None:
                    raise RuntimeError(f"{name} exited with {process.returncode} before listening:\n{tail(log)}")
                await anyio.sleep(0.05)
        yield process
    except BaseException:
        print(f"--- {name} (exit code {process.returncode}), end of its stderr:\n{tail(log)}", file=sys.stderr)
        raise
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.terminate()
            with anyio.move_on_after(15):
                await process.wait()
            if process.returncode is None:
                process.kill()
            await process.wait()
            await process.aclose()


def tail(log: Path, chars: int = 3000) -> str:
    """The end of a child's log."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return text[-chars:]


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
