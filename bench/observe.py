"""Per-call cost of observing calls: audit on vs off, metrics on vs off (and off with no meter provider).

Run:  .venv/bin/python bench/observe.py [--repeats 7] [--calls 5000]

Two levels, each with the same rows:

* **turn**: ``run_tool_calls(registry, [call], hooks=...)`` of one native tool
  (``add(x, y)``), the path every gateway call takes, on one asyncio loop;
* **gateway**: one ``tools/call`` of that tool through ``McpGateway`` served in memory to
  the official ``mcp.Client`` (the SDK's JSON-RPC, the gateway's face, the turn): what a
  client's call costs the gateway, minus the network.

Rows: no observer (the baseline); ``CallMetrics()`` with no meter provider installed (the
"off" check: one slot read per event); ``CallMetrics`` on an SDK ``MeterProvider`` read by a
Prometheus reader (on); ``AuditLog`` to a logger not enabled for INFO (off by level);
``AuditLog`` writing JSON lines to a file (on, with and without the arguments); audit and
metrics both on. Figures are the best of ``repeats`` runs of ``calls`` calls, rows interleaved
per repeat, in µs of this thread's CPU time per call (a busy machine's waits are not counted),
with the difference to the baseline. Nothing touches the network.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp

from toolmesh import ToolCall, ToolRegistry, run_tool_calls
from toolmesh.gateway import McpGateway
from toolmesh.hooks import AuditLog, CallMetrics, CallObserver, PrometheusMetrics, audit_file_handler

CALL = ToolCall.from_arguments("c1", "add", {"x": 1, "y": 2})


async def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


@dataclass
class Row:
    label: str
    observers: list[CallObserver]
    best: dict[str, float] = field(default_factory=dict)


def rows(folder: Path, prometheus: PrometheusMetrics) -> list[Row]:
    quiet = logging.getLogger("bench.audit.quiet")
    quiet.setLevel(logging.WARNING)
    quiet.propagate = False
    written = logging.getLogger("bench.audit.file")
    written.setLevel(logging.INFO)
    written.propagate = False
    written.addHandler(audit_file_handler(folder / "audit.jsonl"))
    on = prometheus.meter_provider
    return [
        Row("no observer (baseline)", []),
        Row("CallMetrics, no meter provider (off)", [CallMetrics()]),
        Row("CallMetrics, SDK provider + Prometheus reader", [CallMetrics(meter_provider=on)]),
        Row("AuditLog, logger below INFO (off)", [AuditLog(quiet)]),
        Row("AuditLog to a file", [AuditLog(written)]),
        Row("AuditLog to a file, with arguments", [AuditLog(written, include_arguments=True)]),
        Row("AuditLog + CallMetrics, both on", [AuditLog(written), CallMetrics(meter_provider=on)]),
    ]


async def timed(call: Callable[[], Awaitable[Any]], calls: int) -> float:
    gc.collect()
    start = time.thread_time()
    for _ in range(calls):
        await call()
    return (time.thread_time() - start) / calls * 1e6


async def run(repeats: int, calls: int) -> None:
    with tempfile.TemporaryDirectory() as folder, PrometheusMetrics() as prometheus:
        table = rows(Path(folder), prometheus)
        async with ToolRegistry() as registry:
            registry.register(add)
            turn_calls: dict[str, Callable[[], Awaitable[Any]]] = {}
            for row in table:
                hooks = list(row.observers)

                async def one_turn(hooks: list[CallObserver] = hooks) -> Any:
                    return await run_tool_calls(registry, [CALL], hooks=hooks)

                turn_calls[row.label] = one_turn
            sessions = {}
            async with _clients(registry, table, sessions):
                for _ in range(repeats):
                    for row in table:
                        figure = await timed(turn_calls[row.label], calls)
                        row.best["turn"] = min(row.best.get("turn", float("inf")), figure)
                    for row in table:
                        session = sessions[row.label]

                        async def one_call(session: mcp.Client = session) -> Any:
                            return await session.call_tool("add", {"x": 1, "y": 2})

                        figure = await timed(one_call, max(1, calls // 10))
                        row.best["gateway"] = min(row.best.get("gateway", float("inf")), figure)
    report(table, repeats, calls)


class _clients:
    """One in-memory ``mcp.Client`` per row, to a gateway with that row's observers."""

    def __init__(self, registry: ToolRegistry, table: list[Row], into: dict[str, mcp.Client]) -> None:
        self._registry, self._table, self._into = registry, table, into
        self._stack: Any = None

    async def __aenter__(self) -> None:
        from contextlib import AsyncExitStack

        self._stack = AsyncExitStack()
        for row in self._table:
            gateway = McpGateway(self._registry, observers=row.observers)
            client = mcp.Client(gateway.server(), mode="legacy")
            self._into[row.label] = await self._stack.enter_async_context(client)

    async def __aexit__(self, *exc: Any) -> None:
        await self._stack.aclose()


def report(table: list[Row], repeats: int, calls: int) -> None:
    base = table[0].best
    print(f"best of {repeats} runs; turn: {calls} calls per run, gateway: {max(1, calls // 10)} calls per run")
    print(f"{'row':<48} {'turn µs':>9} {'Δ µs':>7} {'gateway µs':>11} {'Δ µs':>7} {'Δ %':>6}")
    for row in table:
        turn, gateway = row.best["turn"], row.best["gateway"]
        print(
            f"{row.label:<48} {turn:9.2f} {turn - base['turn']:+7.2f} {gateway:11.1f} "
            f"{gateway - base['gateway']:+7.1f} {(gateway / base['gateway'] - 1) * 100:+6.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    asyncio.run(run(args.repeats, args.calls))


if __name__ == "__main__":
    sys.exit(main())
