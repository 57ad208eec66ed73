"""A 200 MB answer from a hostile MCP server: time, peak RSS and event-loop stall in the host.

Run:  .venv/bin/python bench/hostile_result.py [--mb 200]

The raw test server (tests/hostile/servers/raw_server.py) answers its ``huge`` tool with
one JSON-RPC message of ``--mb`` megabytes, over stdio and over loopback Streamable HTTP.
toolmesh's default ``max_result_bytes`` (8 MiB) refuses it as ``upstream_error`` while it
arrives. Printed per transport: the call's wall time and kind, the host's peak RSS before
and after (``ru_maxrss``), the longest event-loop stall seen by a 5 ms ticker, and whether
the next call on the same session answers. (The SDK's own stdio reader takes ~11 s for
20 MB and never finishes 200 MB.)
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
from _loopback import free_port

from toolmesh import ToolRegistry
from toolmesh.mcp import McpServer

RAW = Path(__file__).resolve().parent.parent / "tests" / "hostile" / "servers" / "raw_server.py"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _measure(label: str, spec: McpServer) -> None:
    stall = 0.0
    async with ToolRegistry() as registry:
        await registry.connect(spec)
        await registry.dispatch(f"{spec.label}__echo", {"text": "warm"})
        before = _rss_mb()
        done = anyio.Event()

        async def ticker() -> None:
            nonlocal stall
            last = time.perf_counter()
            while not done.is_set():
                await anyio.sleep(0.005)
                now = time.perf_counter()
                stall = max(stall, now - last - 0.005)
                last = now

        async with anyio.create_task_group() as group:
            group.start_soon(ticker)
            start = time.perf_counter()
            result = await registry.dispatch(f"{spec.label}__huge", {})
            elapsed = time.perf_counter() - start
            start = time.perf_counter()
            following = await registry.dispatch(f"{spec.label}__echo", {"text": "next"})
            next_elapsed = time.perf_counter() - start
            done.set()
        after = _rss_mb()
    kind = result.error.kind if result.error else "ok"
    print(
        f"{label:6} {elapsed:6.2f} s  kind={kind}  peak RSS {before:6.1f} -> {after:6.1f} MB  "
        f"max loop stall {stall * 1000:6.1f} ms  next call ok={following.ok} in {next_elapsed:.2f} s"
    )


async def main(mb: int) -> None:
    env = {**os.environ, "HOSTILE_HUGE_BYTES": str(mb * 1024 * 1024)}
    print(f"one {mb} MB answer, max_result_bytes = 8 MiB (default)")
    await _measure("stdio", McpServer.stdio("raw", sys.executable, [str(RAW), "stdio"], env=env, call_timeout=600))
    port = free_port()
    proc = await anyio.open_process([sys.executable, str(RAW), "http", str(port)], env=env, stdin=subprocess.DEVNULL)
    try:
        with anyio.fail_after(30):
            while True:
                with socket.socket() as sock:
                    if sock.connect_ex(("127.0.0.1", port)) == 0:
                        break
                await anyio.sleep(0.1)
        await _measure("http", McpServer.http("rawweb", f"http://127.0.0.1:{port}/mcp", call_timeout=600))
    finally:
        proc.terminate()
        await proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    anyio.run(main, parser.parse_args().mb)
