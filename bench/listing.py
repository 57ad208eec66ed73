"""A hostile server's listing and its list_changed flood: peak memory, event-loop stall and call latency in the host.

Run:  .venv/bin/python bench/listing.py [--tools 40000] [--calls 300] [--skip listing|http|flood]

The raw test server (tests/hostile/servers/raw_server.py) lists its own tools and
``--tools`` generated ones (about 180 bytes each, so 40,000 make one page of about 7 MB,
under the default 8 MiB bound of a page), over stdio and over loopback Streamable HTTP.

1. **Listing.** Each case connects in a fresh child process (peak RSS, ``ru_maxrss``, is
   per process) and prints the outcome, the wall time, the peak RSS and the longest stall
   of the event loop seen by a 5 ms ticker, and how many ``tools/list`` requests the
   server was sent. Cases: one page with the default limits (refused by ``max_tools``
   before a model of any tool is built), ``keep_first`` with ``max_tools=50`` (the page cut
   before it is read into models), ``max_page_bytes=1 MB`` (refused as it arrives, never
   parsed), and the same tools in pages of 500 (listing stops at the page past
   ``max_tools``). The last case raises ``max_tools`` above the catalog: what reading it
   all costs, the figure the others are to be read against.
2. **Flood** (stdio). ``--calls`` sequential calls of ``echo`` on a server of 500 tools,
   quiet and then announcing ``notifications/tools/list_changed`` every millisecond:
   median, 95th percentile and largest latency, and the listings the server was sent.

Bounded: every case has a deadline; the whole run takes about a minute on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _loopback import free_port, port_open

from toolmesh import ToolRegistry
from toolmesh.mcp import McpServer

RAW = Path(__file__).resolve().parent.parent / "tests" / "hostile" / "servers" / "raw_server.py"
CASES: dict[str, tuple[int, dict[str, Any]]] = {
    "one page, defaults": (0, {}),
    "one page, keep_first max_tools=50": (0, {"max_tools": 50, "on_too_many_tools": "keep_first"}),
    "one page, max_page_bytes=1 MB": (0, {"max_page_bytes": 1_000_000}),
    "pages of 500, defaults": (500, {"max_pages": 1000}),
    "one page, all read (max_tools raised)": (0, {"max_tools": 1_000_000}),
}


def load() -> str:
    return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _ticking(stalls: list[float], done: anyio.Event) -> None:
    last = time.perf_counter()
    while not done.is_set():
        await anyio.sleep(0.005)
        now = time.perf_counter()
        stalls.append(now - last - 0.005)
        last = now


async def _raw_http(env: dict[str, str]) -> tuple[Any, str]:
    port = free_port()
    process = await anyio.open_process(
        [sys.executable, str(RAW), "http", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    with anyio.fail_after(30):
        while not port_open(port):  # noqa: ASYNC110 - the server is another process
            await anyio.sleep(0.05)
    return process, f"http://127.0.0.1:{port}/mcp"


async def one_case(transport: str, tools: int, name: str) -> dict[str, Any]:
    """Connect once as the case says (in this process, which runs nothing else) and measure it."""
    page_size, options = CASES[name]
    with tempfile.TemporaryDirectory() as folder:
        requests = Path(folder) / "requests"
        env = {**os.environ, "HOSTILE_TOOLS": str(tools), "HOSTILE_PAGE_SIZE": str(page_size)}
        env["HOSTILE_REQUESTS"] = str(requests)
        process = None
        if transport == "stdio":
            spec = McpServer.stdio("raw", sys.executable, [str(RAW), "stdio"], env=env, timeout=300, **options)
        else:
            process, url = await _raw_http(env)
            spec = McpServer.http("raw", url, timeout=300, **options)
        stalls: list[float] = []
        before = _rss_mb()
        try:
            async with ToolRegistry() as registry, anyio.create_task_group() as group:
                done = anyio.Event()
                group.start_soon(_ticking, stalls, done)
                start = time.perf_counter()
                try:
                    await registry.connect(spec)
                    outcome = f"connected, {len(registry.entries())} rows"
                except Exception as exc:
                    text = str(exc)
                    outcome = "refused: " + text[text.index(": ") + 2 :][:70]
                elapsed = time.perf_counter() - start
                done.set()
        finally:
            if process is not None:
                process.terminate()
                await process.wait()
        asked = requests.read_text().splitlines().count("tools/list") if requests.exists() else 0
    return {
        "outcome": outcome,
        "seconds": elapsed,
        "rss_before": before,
        "rss_peak": _rss_mb(),
        "stall_ms": max(stalls, default=0.0) * 1000,
        "listings": asked,
    }


def listing(tools: int, transports: list[str]) -> None:
    print(f"1. listing {tools} generated tools ({load()})")
    print(f"   {'case':<40} {'wall':>7} {'peak RSS':>16} {'max stall':>10} {'lists':>5}  outcome")
    for transport in transports:
        for name in CASES:
            command = [sys.executable, __file__, "--case", name, "--transport", transport, "--tools", str(tools)]
            done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
            if done.returncode != 0:
                print(f"   {transport} {name}: failed\n{done.stderr[-2000:]}")
                continue
            row = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"   {transport + ' ' + name:<40} {row['seconds']:6.2f}s "
                f"{row['rss_before']:5.0f} -> {row['rss_peak']:5.0f} MB {row['stall_ms']:8.0f} ms "
                f"{row['listings']:>5}  {row['outcome']}"
            )


async def flood(calls: int) -> None:
    print(f"2. {calls} calls of echo on a stdio server of 500 tools ({load()})")
    for every in (None, 0.001):
        with tempfile.TemporaryDirectory() as folder:
            requests = Path(folder) / "requests"
            env = {**os.environ, "HOSTILE_TOOLS": "500", "HOSTILE_REQUESTS": str(requests)}
            if every is not None:
                env["HOSTILE_FLOOD"] = str(every)
            latencies: list[float] = []
            async with ToolRegistry() as registry:
                await registry.connect(McpServer.stdio("raw", sys.executable, [str(RAW), "stdio"], env=env))
                with anyio.fail_after(300):
                    for i in range(calls):
                        start = time.perf_counter()
                        result = await registry.dispatch("raw__echo", {"text": str(i)})
                        latencies.append(time.perf_counter() - start)
                        assert result.ok, result.error
            asked = requests.read_text().splitlines().count("tools/list")
        latencies.sort()
        p95 = latencies[int(len(latencies) * 0.95) - 1]
        label = "quiet" if every is None else f"list_changed every {every * 1000:g} ms"
        print(
            f"   {label:<28} median {statistics.median(latencies) * 1000:6.2f} ms  p95 {p95 * 1000:6.2f} ms  "
            f"max {latencies[-1] * 1000:7.2f} ms  listings {asked} in {sum(latencies):.1f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=40_000)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--skip", choices=["listing", "http", "flood"], action="append", default=[])
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--transport", default="stdio", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case is not None:
        print(json.dumps(anyio.run(one_case, args.transport, args.tools, args.case)))
        return
    if "listing" not in args.skip:
        listing(args.tools, ["stdio"] + ([] if "http" in args.skip else ["http"]))
    if "flood" not in args.skip:
        anyio.run(flood, args.calls)


if __name__ == "__main__":
    main()
