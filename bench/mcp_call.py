"""Per-call cost of calling one MCP tool through toolmesh, against the raw SDK and two peers.

Run:  .venv/bin/python bench/mcp_call.py [--rounds 30] [--calls 20] [--concurrent-calls 64]

One fixture server (tests/fixtures/demo_server.py, the SDK's ``MCPServer``) runs as a child
process on a free loopback port over Streamable HTTP. Every row calls its ``echo`` tool
with ``{"text": "hello"}`` over the same server:

  1. raw mcp.Client   ``await client.call_tool("echo", {"text": "hello"})`` on one
                      ``mcp.Client(url)`` entered once (the floor: no registry at all).
  2. toolmesh         ``await registry.dispatch("demo__echo", '{"text": "hello"}')`` on a
                      ``ToolRegistry`` that connected the server once: name lookup, argument
                      parsing, the call on the registry's supervised session (over 2026-07-28,
                      the lean client path: one POST of toolmesh's own), the conversion to a
                      ``ToolResult``.
     toolmesh, SDK    the same with ``McpConnection.lean = False``: the call through the SDK's
     client           client session, as before the lean client path.
  3. pydantic-ai      ``await MCPToolset(url).direct_call_tool("echo", {...})`` (its MCP
                      toolset on FastMCP's client), entered once. Skipped when not installed.
  4. fastmcp          ``await fastmcp.Client(url).call_tool("echo", {...})``, entered once.
                      Skipped when not installed.

Two modes: sequential (one call at a time) and 32 calls in flight (32 tasks sharing the
one session, each making calls back to back). After a warm-up, the run is many short
rounds; in each, every row takes its turn in both modes, the first row rotating, so
every row sees the same machine load (the server shares the machine, and so may other
work). Latency is per call, throughput is calls per second of the row's wall time, and
the ratio is against row 1: sequential by median latency, in flight by throughput (1.00
means no overhead; toolmesh's target is within 1.05). The client CPU column (this
process's CPU time per call) isolates what each client library itself costs. Bounded:
the whole run takes well under a minute with the defaults.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from _loopback import IN_FLIGHT, Call, Latencies, concurrent, free_port, port_open, sequential
from mcp import Client

from toolmesh import ToolRegistry
from toolmesh.mcp import McpServer

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "fixtures" / "demo_server.py"
ARGS = {"text": "hello"}
ARGS_JSON = json.dumps(ARGS)


@dataclass
class Figures(Latencies):
    """What one row measured in one mode, summed over every round."""

    cpu: float = 0.0

    def add(self, latencies: list[float], wall: float, cpu: float) -> None:
        self.latencies += latencies
        self.wall += wall
        self.cpu += cpu

    @property
    def cpu_us(self) -> float:
        return self.cpu / len(self.latencies) * 1e6


@contextlib.asynccontextmanager
async def demo_server() -> AsyncIterator[str]:
    port = free_port()
    env = {**os.environ, "FIXTURE_LOG_LEVEL": "CRITICAL"}
    process = await anyio.open_process(
        [sys.executable, str(SERVER), "http", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with anyio.fail_after(20):
            while not port_open(port):
                if process.returncode is not None:
                    raise RuntimeError(f"the demo server exited with {process.returncode}")
                await anyio.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with anyio.CancelScope(shield=True):
            process.terminate()
            with anyio.move_on_after(5) as scope:
                await process.wait()
            if scope.cancelled_caught:
                process.kill()
                await process.wait()


async def open_rows(stack: contextlib.AsyncExitStack, url: str) -> tuple[dict[str, Call], dict[str, str]]:
    """Enter every client once; return each row's call and the rows skipped (with the reason)."""
    rows: dict[str, Call] = {}
    skipped: dict[str, str] = {}

    client = await stack.enter_async_context(Client(url))

    async def raw() -> Any:
        return await client.call_tool("echo", ARGS)

    rows["raw mcp.Client"] = raw

    registry = await stack.enter_async_context(ToolRegistry())
    await registry.connect(McpServer.http("demo", url, include=["echo"]))

    async def dispatch() -> Any:
        result = await registry.dispatch("demo__echo", ARGS_JSON)
        if not result.ok:
            raise RuntimeError(f"toolmesh call failed: {result.error!r}")
        return result

    rows["toolmesh dispatch"] = dispatch

    sdk_registry = await stack.enter_async_context(ToolRegistry())
    connection = await sdk_registry.connect(McpServer.http("demo", url, include=["echo"]))
    connection.lean = False  # every call through the SDK's client session, as before the lean client path

    async def dispatch_sdk() -> Any:
        result = await sdk_registry.dispatch("demo__echo", ARGS_JSON)
        if not result.ok:
            raise RuntimeError(f"toolmesh call failed: {result.error!r}")
        return result

    rows["toolmesh, SDK client"] = dispatch_sdk

    try:
        from pydantic_ai.mcp import MCPToolset
    except ImportError as exc:
        skipped["pydantic-ai MCPToolset"] = f"not installed ({exc})"
    else:
        toolset = await stack.enter_async_context(MCPToolset(url))

        async def pydantic_ai() -> Any:
            return await toolset.direct_call_tool("echo", ARGS)

        rows["pydantic-ai MCPToolset"] = pydantic_ai

    try:
        import fastmcp
    except ImportError as exc:
        skipped["fastmcp Client"] = f"not installed ({exc})"
    else:
        fast = await stack.enter_async_context(fastmcp.Client(url))

        async def fastmcp_call() -> Any:
            return await fast.call_tool("echo", ARGS)

        rows["fastmcp Client"] = fastmcp_call

    return rows, skipped


async def run(rounds: int, calls: int, concurrent_calls: int) -> None:
    started = time.perf_counter()
    async with demo_server() as url, contextlib.AsyncExitStack() as stack:
        rows, skipped = await open_rows(stack, url)
        modes: dict[str, Callable[[Call, int], Awaitable[tuple[list[float], float]]]] = {
            "sequential": sequential,
            f"{IN_FLIGHT} in flight": concurrent,
        }
        counts = {"sequential": calls, f"{IN_FLIGHT} in flight": concurrent_calls}
        figures = {(mode, name): Figures() for mode in modes for name in rows}
        for call in rows.values():  # warm-up: connections, caches, the server's code paths
            await sequential(call, 50)
            await concurrent(call, IN_FLIGHT * 4)
        names = list(rows)
        for round_ in range(rounds):
            # Short turns, rotating which row goes first: every row sees the same machine load.
            order = names[round_ % len(names) :] + names[: round_ % len(names)]
            for mode, runner in modes.items():
                for name in order:
                    cpu = time.process_time()
                    latencies, wall = await runner(rows[name], counts[mode])
                    figures[(mode, name)].add(latencies, wall, time.process_time() - cpu)

    print(f"MCP tools/call over loopback Streamable HTTP (server: {SERVER.name}, tool: echo)")
    print(
        f"{rounds} rounds, rows rotating; per round and row: {calls} sequential calls, then {concurrent_calls} "
        f"calls {IN_FLIGHT} at a time\n"
    )
    header = (
        f"{'mode':<14} {'row':<24} {'mean µs':>9} {'p50 µs':>9} {'p99 µs':>9} {'calls/s':>9} {'ratio':>6}"
        f" {'client CPU µs':>14} {'CPU ratio':>9}"
    )
    for mode in modes:
        print(header)
        base = figures[(mode, "raw mcp.Client")]
        for name in rows:
            f = figures[(mode, name)]
            ratio = f.p50_us / base.p50_us if mode == "sequential" else base.throughput / f.throughput
            print(
                f"{mode:<14} {name:<24} {f.mean_us:>9.0f} {f.p50_us:>9.0f} {f.p99_us:>9.0f} "
                f"{f.throughput:>9.0f} {ratio:>6.3f} {f.cpu_us:>14.0f} {f.cpu / base.cpu:>9.3f}"
            )
        print()
    print("ratio: sequential, median latency / raw mcp.Client's; in flight, raw throughput / the row's throughput")
    print("client CPU: CPU time of this process (not the server's) per call; ratio against raw")
    for name, reason in skipped.items():
        print(f"skipped {name}: {reason}")
    print(f"total time: {time.perf_counter() - started:.1f}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("TOOLMESH_BENCH_ROUNDS", 30)))
    parser.add_argument("--calls", type=int, default=int(os.environ.get("TOOLMESH_BENCH_CALLS", 20)))
    parser.add_argument("--concurrent-calls", type=int, default=IN_FLIGHT * 2)
    args = parser.parse_args()
    anyio.run(run, args.rounds, args.calls, args.concurrent_calls)


if __name__ == "__main__":
    main()
