"""Where toolmesh's MCP client spends its CPU per call, against the raw SDK client: a cProfile of each, by part.

Run:  .venv/bin/python bench/profile_client.py [--calls 2000] [--top 20]

The fixture server (tests/fixtures/demo_server.py) runs as a child process over Streamable HTTP on
loopback. In this process, after a warm-up, ``--calls`` sequential calls of ``echo {"text": "hello"}``
are made twice under cProfile (on CPU time): through the raw ``mcp.Client(url)`` (its default mode,
2026-07-28 here) and through ``ToolRegistry.dispatch`` on a registry connected to the same server.
Each is reported as bench/profile_gateway.py reports the gateway: unprofiled CPU per call (this
process's CPU time over the same number of calls), then each part's share of the profiled own time,
applied to the unprofiled figure, and the top functions.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from _loopback import child, free_port, sequential
from mcp import Client
from profile_gateway import report

from gateway import FIXTURE
from toolmesh import ToolRegistry
from toolmesh.mcp import McpServer

ARGS = {"text": "hello"}


async def measure(call: Callable[[], Awaitable[Any]], calls: int) -> tuple[float, pstats.Stats]:
    """Unprofiled CPU µs per call, then a profile of as many calls."""
    await sequential(call, 200)
    before = time.process_time()
    await sequential(call, calls)
    cpu_us = (time.process_time() - before) / calls * 1e6
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    await sequential(call, calls)
    profiler.disable()
    return cpu_us, pstats.Stats(profiler)


async def run(args: argparse.Namespace) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    results: dict[str, tuple[float, pstats.Stats]] = {}
    with tempfile.TemporaryDirectory(prefix="toolmesh-profile-") as tmp:
        argv = [sys.executable, str(FIXTURE), "http", str(port)]
        async with child("the fixture server", argv, port, Path(tmp) / "fixture.log"):
            async with Client(url) as client:

                async def raw() -> Any:
                    return await client.call_tool("echo", ARGS)

                results["raw mcp.Client"] = await measure(raw, args.calls)
            async with ToolRegistry() as registry:
                await registry.connect(McpServer.http("demo", url, include=["echo"]))
                text = json.dumps(ARGS)

                async def dispatch() -> Any:
                    result = await registry.dispatch("demo__echo", text)
                    if not result.ok:
                        raise RuntimeError(f"the call failed: {result.error!r}")
                    return result

                results["toolmesh dispatch"] = await measure(dispatch, args.calls)
    base = results["raw mcp.Client"][0]
    print(f"tools/call echo over loopback Streamable HTTP, {args.calls} sequential calls per row\n")
    for name, (cpu_us, _) in results.items():
        print(f"{name:<20} client CPU {cpu_us:>6.0f} µs/call  ({cpu_us / base:.2f}x raw)")
    for name, (cpu_us, stats) in results.items():
        print(f"\n=== {name}")
        report(stats, cpu_us, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    anyio.run(run, args)


if __name__ == "__main__":
    main()
