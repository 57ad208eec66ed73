"""What a large catalog costs: discovery, declarations, refresh and memory at 1,000-10,000 tools.

Run:  .venv/bin/python bench/scale.py [--rounds 5] [--tools 1000,5000] [--rows 10000]
      [--skip declarations]   (or TOOLMESH_BENCH_ROUNDS in the environment)

Two bench servers (``bench/scale_server.py``, the SDK's low-level ``Server``) run as child
processes on free loopback ports over Streamable HTTP, listing 1,000 and 5,000 realistic
tools (190-character descriptions, 640-byte schemas; ``bench/_realistic.py``) in pages of
500. Each section prints its figures, their ratio to the floor, and the load average:

1. **Discovery.** Connect + every page of ``tools/list``: ``registry.connect(McpServer.http(...))``
   against the raw ``mcp.Client`` entered and paged by hand (the floor), in the same rounds,
   the first one alternating. Median wall time and CPU time of this process per connect, the
   marginal CPU per 1,000 tools (from the two sizes) and the number of full (generation 2)
   garbage collections a connect ran; once with the collector on, as in a host, and once
   paused, which shows the work itself: a full collection walks every object of the process
   (about 0.1 s at 5,000 listed tools), and whether a connect runs one more than the floor
   depends on how many objects the process held before. Then the two things behind the
   differences: the CPU of one verifying TLS context (the raw client builds one per
   connect, toolmesh one per process), and the objects the collector tracks per kept tool
   (what moves a connect towards the next full collection).
2. **Declarations.** ``tools(snapshot)`` for ``--rows`` rows per provider format against a
   hand-written comprehension: ``bench/provider_export.py``'s own measurement.
3. **Refresh** of the 5,000-tool server (one ``on_change`` listener subscribed), once with
   the garbage collector on, as in a host, and once paused (its collections, a third to
   a half of a listing's CPU at this size, land on whichever run crosses a threshold, so
   the paused figures show the work itself); then the reconcile alone, the same refresh
   against the listing served from memory: ``registry.refresh(label)`` when nothing changed, and after
   the server changed 10% of its tools, against the raw cursor loop on an open
   ``mcp.Client`` (the listing floor) and toolmesh's own listing
   (``connection.list_tools()``): medians of the rounds, wall time and this process's CPU
   time (the server's work is in the wall time only). The listener's events are checked:
   none when nothing changed, exactly the changed rows otherwise.
4. **Memory.** Resident set size added per 1,000 tools, from fresh child processes that
   keep the small and the large server's tools: the raw client's listed tools in a list
   against a registry's rows.

Bounded: a few rounds of each; the whole run takes about a minute on a quiet machine.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from _loopback import free_port, port_open
from mcp import Client

from toolmesh import CatalogChange, ToolRegistry
from toolmesh.mcp import McpServer

BENCH = Path(__file__).resolve().parent
SERVER = BENCH / "scale_server.py"
PAGE_SIZE = 500


def load() -> str:
    return "load average " + " ".join(Path("/proc/loadavg").read_text().split()[:3])


@contextlib.asynccontextmanager
async def scale_servers(sizes: list[int]) -> AsyncIterator[dict[int, str]]:
    """One bench server per size (started together), yielding their URLs; each is stopped by its handle."""
    started: dict[int, tuple[Any, int]] = {}
    try:
        for size in sizes:
            port = free_port()
            env = {**os.environ, "BENCH_TOOLS": str(size), "BENCH_PAGE_SIZE": str(PAGE_SIZE)}
            process = await anyio.open_process(
                [sys.executable, str(SERVER), "http", str(port)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            started[size] = (process, port)
        with anyio.fail_after(90):
            for size, (process, port) in started.items():
                while not port_open(port):
                    if process.returncode is not None:
                        raise RuntimeError(f"the {size}-tool bench server exited with {process.returncode}")
                    await anyio.sleep(0.05)
        yield {size: f"http://127.0.0.1:{port}/mcp" for size, (_, port) in started.items()}
    finally:
        with anyio.CancelScope(shield=True):
            for process, _ in started.values():
                if process.returncode is None:
                    process.terminate()
                with anyio.move_on_after(5) as scope:
                    await process.wait()
                if scope.cancelled_caught:
                    process.kill()
                    await process.wait()


async def raw_listing(client: Client) -> list[mcp_types.Tool]:
    """The floor: every page of ``tools/list`` by hand, the first page fetched from the server."""
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="refresh" if cursor is None else "use")
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def spec(url: str) -> McpServer:
    return McpServer.http("scale", url, max_tools=20_000)


async def timed(run: Callable[[], Awaitable[Any]], *, gc_paused: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds of one ``await run()``, its value dropped inside the timing.

    Every run starts from a collected heap, and freeing what it returned is part of it:
    a refresh frees the listing it reconciled, so the listing it is compared with must
    too.
    """
    gc.collect()
    if gc_paused:
        gc.disable()
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        await run()
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        gc.enable()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:9.1f}"


# -- 1. discovery ---------------------------------------------------------------------


def full_collections() -> int:
    return int(gc.get_stats()[2]["collections"])


async def discovery(urls: dict[int, str], rounds: int) -> None:
    print(f"\n1. connect + discovery over loopback HTTP ({rounds} rounds, pages of {PAGE_SIZE}; {load()})")
    figures: dict[tuple[int, str, bool], list[tuple[float, float, int]]] = {}

    for round_ in range(rounds + 1):  # round 0 warms up both paths
        for size, url in urls.items():
            order = ["raw", "toolmesh"] if round_ % 2 else ["toolmesh", "raw"]
            for paused in (False, True):
                for who in order:
                    gc.collect()  # each connect starts from a collected heap (what it leaves to collect is its own)
                    async with contextlib.AsyncExitStack() as stack:
                        if who == "raw":
                            if paused:
                                gc.disable()
                            full, cpu, wall = full_collections(), time.process_time(), time.perf_counter()
                            client = await stack.enter_async_context(Client(url))
                            tools = await raw_listing(client)
                        else:
                            registry = await stack.enter_async_context(ToolRegistry())
                            if paused:
                                gc.disable()
                            full, cpu, wall = full_collections(), time.process_time(), time.perf_counter()
                            await registry.connect(spec(url))
                            tools = registry.entries()
                        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                        full = full_collections() - full
                        gc.enable()
                        count = len(tools)
                    if count != size + 1:
                        raise SystemExit(f"{who} found {count} tools, expected {size + 1}")
                    if round_:
                        figures.setdefault((size, who, paused), []).append((wall, cpu, full))

    def median(size: int, who: str, paused: bool, which: int) -> float:
        return statistics.median(figure[which] for figure in figures[(size, who, paused)])

    for paused in (False, True):
        print(f"garbage collector {'paused' if paused else 'on (as in a host)'}:")
        print(
            f"{'tools':>6}  {'row':<22}{'wall ms':>9}{'cpu ms':>9}{'wall ratio':>12}{'cpu ratio':>11}"
            f"{'full collections':>18}"
        )
        for size in urls:
            base_wall, base_cpu = median(size, "raw", paused, 0), median(size, "raw", paused, 1)
            for who, label in (("raw", "raw mcp.Client loop"), ("toolmesh", "toolmesh connect")):
                wall, cpu = median(size, who, paused, 0), median(size, who, paused, 1)
                full = median(size, who, paused, 2)
                print(
                    f"{size:>6}  {label:<22}{ms(wall)}{ms(cpu)}{wall / base_wall:>11.2f}x{cpu / base_cpu:>10.2f}x"
                    f"{full:>18g}"
                )
        small, large = sorted(urls)[0], sorted(urls)[-1]
        if small != large:
            per = (large - small) / 1000
            raw_m, mesh_m = (
                (median(large, who, paused, 1) - median(small, who, paused, 1)) / per for who in ("raw", "toolmesh")
            )
            print(f"marginal CPU per 1,000 tools: raw {ms(raw_m)} ms, toolmesh {ms(mesh_m)} ms: {mesh_m / raw_m:.2f}x")
    print(
        f"a verifying TLS context costs {ms(tls_context_cpu()).strip()} ms of CPU: the raw client builds one per "
        "connect, toolmesh one per CA setting, shared (made in the warm-up round)"
    )
    size = max(urls)
    raw_kept = await kept_objects(urls[size], "raw") / size
    mesh_kept = await kept_objects(urls[size], "toolmesh") / size
    print(
        f"objects the collector tracks, kept per listed tool ({size:,} tools): raw {raw_kept:.1f}, "
        f"toolmesh {mesh_kept:.1f} ({mesh_kept / raw_kept:.2f}x)"
    )


def tls_context_cpu(samples: int = 5) -> float:
    """CPU seconds to build one verifying TLS context (it loads the CA bundle), median of ``samples``."""
    import httpx2

    spent = []
    for _ in range(samples):
        cpu = time.process_time()
        httpx2.create_ssl_context()
        spent.append(time.process_time() - cpu)
    return statistics.median(spent)


async def kept_objects(url: str, who: str) -> int:
    """How many more objects the collector tracks while one connect's tools are kept (raw list or registry)."""
    gc.collect()
    before = len(gc.get_objects())
    async with contextlib.AsyncExitStack() as stack:
        if who == "raw":
            client = await stack.enter_async_context(Client(url))
            kept: Any = await raw_listing(client)
        else:
            registry = await stack.enter_async_context(ToolRegistry())
            await registry.connect(spec(url))
            kept = registry.entries()
        gc.collect()
        grown = len(gc.get_objects()) - before
        del kept
    return grown


# -- 3. refresh -------------------------------------------------------------------------


async def refresh(url: str, size: int, rounds: int) -> None:
    print(f"\n3. refresh of {size:,} tools (one on_change listener; {rounds} rounds; {load()})")
    events: list[CatalogChange] = []
    figures: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    async with Client(url) as client, ToolRegistry() as registry:
        await registry.connect(spec(url))
        registry.on_change(events.append)
        connection = registry.connection("scale")
        registry_listing = connection.list_tools
        expected_changes = len(range(1, size + 1, 10))
        for round_ in range(rounds + 1):
            for paused in (False, True):
                for key, run in (
                    ("raw listing (floor)", lambda: raw_listing(client)),
                    ("toolmesh listing", connection.list_tools),
                    ("refresh, nothing changed", lambda: registry.refresh("scale")),
                ):
                    events.clear()
                    wall, cpu = await timed(run, gc_paused=paused)
                    if events:
                        raise SystemExit(f"{key}: expected no catalog change, got {events[0]}")
                    if round_:
                        figures.setdefault((key, paused), []).append((wall, cpu))
                await client.call_tool("change", {"percent": 10})
                events.clear()
                wall, cpu = await timed(lambda: registry.refresh("scale"), gc_paused=paused)
                changed = [name for change in events for name in change.changed]
                if len(changed) != expected_changes or any(change.added or change.removed for change in events):
                    raise SystemExit(f"10% changed: expected {expected_changes} changed rows, got {events}")
                if round_:
                    figures.setdefault(("refresh, 10% changed", paused), []).append((wall, cpu))
        # The reconcile alone: the same refresh against the listing served from memory (parsed afresh each time).
        listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in await registry_listing()]

        async def from_memory() -> list[mcp_types.Tool]:
            return [mcp_types.Tool.model_validate(tool) for tool in listed]

        connection.list_tools = from_memory  # type: ignore[method-assign]
        parsed = statistics.median([(await timed(from_memory, gc_paused=True))[1] for _ in range(rounds)])
        refreshed = [(await timed(lambda: registry.refresh("scale"), gc_paused=True))[1] for _ in range(rounds)]
        reconcile = statistics.median(refreshed) - parsed

    def median(key: str, paused: bool, which: int) -> float:
        return statistics.median(figure[which] for figure in figures[(key, paused)])

    for paused in (False, True):
        print(f"garbage collector {'paused' if paused else 'on (as in a host)'}:")
        ratios = f"{'vs floor':>10}{'vs listing':>12}"
        print(f"{'row':<28}{'wall ms':>9}{ratios}{'cpu ms':>9}{ratios}")
        for key, mode in figures:
            if mode is not paused:
                continue
            line = f"{key:<28}"
            for which in (0, 1):
                value = median(key, paused, which)
                floor, own = median("raw listing (floor)", paused, which), median("toolmesh listing", paused, which)
                line += f"{ms(value)}{value / floor:>9.2f}x{value / own:>11.2f}x"
            print(line)
    own = median("toolmesh listing", True, 1)
    print(
        f"the reconcile alone (nothing changed, gc paused): {ms(reconcile).strip()} ms CPU, "
        f"{reconcile / own:.1%} of toolmesh's listing: a refresh costs {1 + reconcile / own:.2f}x the listing"
    )


# -- 4. memory --------------------------------------------------------------------------


async def memory(urls: dict[int, str]) -> None:
    """Marginal resident memory per 1,000 tools, each figure from a fresh child process."""
    small, large = sorted(urls)[0], sorted(urls)[-1]
    print(f"\n4. resident memory per 1,000 tools ({small:,} against {large:,} kept, fresh processes; {load()})")
    if small == large:
        print("needs two sizes (--tools)")
        return
    kept: dict[tuple[str, int], int] = {}
    for who in ("raw", "toolmesh"):
        for size in (small, large):
            done = await anyio.run_process([sys.executable, __file__, "--rss-child", who, urls[size]], check=True)
            kept[(who, size)] = int(done.stdout.decode().split()[-1])
    per = (large - small) / 1000
    raw = (kept[("raw", large)] - kept[("raw", small)]) / per
    mesh = (kept[("toolmesh", large)] - kept[("toolmesh", small)]) / per
    print(f"raw mcp.Client, the listed tools kept {raw:8.0f} KB per 1,000 tools")
    print(f"toolmesh registry, its rows           {mesh:8.0f} KB per 1,000 tools   {mesh / raw:.2f}x")


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def rss_child(who: str, url: str) -> None:
    """Keep one server's tools (the raw list, or a registry's rows) and print the resident set in KB."""
    async with Client(url) as client, ToolRegistry() as registry:
        if who == "raw":
            kept = await raw_listing(client)
        else:
            await registry.connect(spec(url))
            kept = registry.entries()
        gc.collect()
        print(len(kept), rss_kb())


async def run(args: argparse.Namespace) -> None:
    sizes = sorted({int(size) for size in args.tools.split(",")})
    started = time.perf_counter()
    print(f"toolmesh at catalog scale; python {sys.version.split()[0]}; {load()}")
    async with scale_servers(sizes) as urls:
        if "discovery" not in args.skip:
            await discovery(urls, args.rounds)
        if "declarations" not in args.skip:
            print(f"\n2. declarations of {args.rows:,} rows per provider (best of {args.rounds}; {load()})")
            import provider_export

            provider_export.run(args.rows, args.rounds)
        large = sizes[-1]
        if "refresh" not in args.skip:
            await refresh(urls[large], large, args.rounds)
        if "memory" not in args.skip:
            await memory(urls)
    print(f"\ntotal time {time.perf_counter() - started:.1f}s; {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("TOOLMESH_BENCH_ROUNDS", 5)))
    parser.add_argument("--tools", default="1000,5000", help="server sizes, comma-separated")
    parser.add_argument("--rows", type=int, default=10_000, help="rows for the declaration figures")
    parser.add_argument("--rss-child", nargs=2, metavar=("WHO", "URL"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--skip", default="", help="sections to leave out, comma-separated: discovery,declarations,refresh,memory"
    )
    args = parser.parse_args()
    if args.rss_child:
        anyio.run(rss_child, *args.rss_child)
    else:
        anyio.run(run, args)


if __name__ == "__main__":
    main()
