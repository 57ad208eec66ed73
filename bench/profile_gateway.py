"""Where `toolmesh serve` spends its CPU per call: a cProfile of the gateway over a bounded run, by part.

Run:  .venv/bin/python bench/profile_gateway.py [--calls 2000] [--rounds 10] [--variant lean|sdk ...]
                                                [--mode auto|legacy|2026-07-28] [--in-flight] [--no-profile]
                                                [--top 25] [--save PREFIX]

The fixture server (tests/fixtures/demo_server.py) runs as a child process over Streamable HTTP on
loopback; ``toolmesh serve`` fronts it (the same config as bench/gateway.py) in a child process per
variant, run by this script with ``--serve`` so that cProfile can be switched on and off in it by
signal (SIGUSR1 starts the profiler, on CPU time; SIGUSR2 stops it and writes the stats). Variants,
to compare within one run: ``speed`` is the gateway as served with the ``speed`` extra (uvloop,
httptools) installed; ``lean`` the same without them (asyncio's loop, uvicorn's h11); ``sdk`` also
without the lean path (every request through the SDK's server, as before it). This process is the
client (``mcp.Client(url, mode=...)``, calling ``echo {"text": "hello"}``):

1. warm-up: 200 calls per variant (connections, caches, every code path once);
2. an unprofiled pass of ``--calls`` calls per variant, in ``--rounds`` turns with the variants
   rotating: the gateway's CPU per call, read from /proc (the real figure), and the p50 latency;
3. a profiled pass of as many calls per variant: where that CPU goes.

The breakdown adds up each function's own time (not its callees') by the part of the stack it belongs
to: the HTTP server (uvicorn, Starlette), HTTP/1.1 parsing (h11: uvicorn's and the upstream
client's), the SDK's server side (transport, runner, session), JSON-RPC validation and serialization
(pydantic, the SDK's wire types), JSON text, toolmesh's own dispatch, the upstream client (the SDK's
client, httpx2/httpcore), the event loop and anyio, I/O syscalls. The share of each is applied to
the unprofiled CPU per call (cProfile slows every Python call by about the same factor, so shares
hold; absolute profiled times do not). Then the ``--top`` functions by own time. (Inclusive times
are left out: a coroutine's are split over its resumptions and the tasks it spawns, and do not add
up.)
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import os
import pstats
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
from _loopback import IN_FLIGHT, Call, child, concurrent, free_port, sequential
from mcp import Client

from gateway import FIXTURE, cpu_seconds, gateway_config

ARGS = {"text": "hello"}

# (category, test on the function's file path or built-in name), first match wins
PARTS: list[tuple[str, Callable[[str, str], bool]]] = [
    (
        "HTTP server: uvicorn, Starlette (httptools)",
        lambda f, n: any(p in f for p in ("/uvicorn/", "/starlette/")) or "httptools" in n,
    ),
    ("HTTP/1.1 parsing: h11 (uvicorn's and httpcore's)", lambda f, n: "/h11/" in f),
    ("gateway guard (toolmesh.gateway._shared)", lambda f, n: "/toolmesh/gateway/_shared/" in f),
    ("gateway lean path (toolmesh.gateway._mcp_face.lean)", lambda f, n: "/toolmesh/gateway/_mcp_face/lean" in f),
    ("gateway MCP face (toolmesh.gateway._mcp_face)", lambda f, n: "/toolmesh/gateway/" in f),
    ("SDK server: transport, runner, session", lambda f, n: "/mcp/server/" in f),
    ("SDK client (upstream): session, transport", lambda f, n: "/mcp/client/" in f),
    ("SDK shared: dispatcher, peer, context", lambda f, n: "/mcp/shared/" in f or "/mcp/__init__" in f),
    (
        "wire types: pydantic validation and serialization",
        lambda f, n: (
            any(p in f for p in ("/pydantic/", "/mcp_types/", "/pydantic_core/"))
            or any(p in n for p in ("pydantic_core", "SchemaValidator", "SchemaSerializer", "model_dump", "validate_"))
        ),
    ),
    (
        "JSON text (json, orjson)",
        lambda f, n: "/json/" in f or any(p in n for p in ("_json.", "orjson", "json.decoder", "'dumps'", "'loads'")),
    ),
    ("upstream HTTP client: httpx2, httpcore", lambda f, n: any(p in f for p in ("/httpx2/", "/httpcore", "/httpx/"))),
    ("toolmesh client (toolmesh.mcp)", lambda f, n: "/toolmesh/mcp/" in f),
    ("toolmesh dispatch, hooks, rows, results", lambda f, n: "/toolmesh/" in f),
    ("OpenTelemetry", lambda f, n: "/opentelemetry/" in f),
    (
        "event loop, anyio, tasks",
        lambda f, n: (
            any(p in f for p in ("/asyncio/", "/anyio/", "/sniffio/", "/contextlib.py", "/selectors.py"))
            or any(p in n for p in ("select.epoll", "run_once", "Task", "Future", "contextvars", "Context.run"))
        ),
    ),
    (
        "socket I/O syscalls",
        lambda f, n: "/socket.py" in f or "/ssl.py" in f or any(p in n for p in ("socket", "'recv'", "'send'")),
    ),
]
OTHER = "other (stdlib, logging, typing, uuid, ...)"


def serve_profiled(out: str, variant: str, argv: list[str]) -> None:
    """Run ``toolmesh`` with ``argv`` in this process; SIGUSR1 starts cProfile, SIGUSR2 stops it and writes ``out``.

    ``variant``: ``sdk`` serves every request through the SDK's server (``McpGateway.serve_http(lean=False)``);
    ``lean`` as served, but without the speed extra; ``speed`` as served, uvloop and httptools included.
    """
    profiler = cProfile.Profile(time.process_time)  # CPU, not wall: waiting and preemption are not the gateway's cost

    def start(signum: int, frame: Any) -> None:
        profiler.enable()

    def stop(signum: int, frame: Any) -> None:
        profiler.disable()
        profiler.dump_stats(out + ".part")
        os.replace(out + ".part", out)

    if variant != "speed":  # as if the speed extra were not installed: asyncio's loop, uvicorn's h11
        sys.modules["uvloop"] = None  # type: ignore[assignment]
        sys.modules["httptools"] = None  # type: ignore[assignment]
    if variant == "sdk":
        from toolmesh.gateway import McpGateway

        serve_http = McpGateway.serve_http
        McpGateway.serve_http = functools.partialmethod(serve_http, lean=False)  # type: ignore[method-assign,assignment]
    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from toolmesh._cli.main import main

    sys.argv = ["toolmesh", *argv]
    main()


@contextlib.asynccontextmanager
async def gateways(folder: Path, variants: list[str]) -> AsyncIterator[dict[str, tuple[str, Any, str]]]:
    """The fixture server and a profilable ``toolmesh serve`` per variant in front of it: each one's URL, process
    and profile file."""
    taken: set[int] = set()
    fixture_port = free_port(taken)
    argv = [sys.executable, str(FIXTURE), "http", str(fixture_port)]
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(child("the fixture server", argv, fixture_port, folder / "fixture.log"))
        found: dict[str, tuple[str, Any, str]] = {}
        for index, variant in enumerate(variants):
            port = free_port(taken)
            sub = folder / str(index)
            sub.mkdir()
            config = gateway_config(f"http://127.0.0.1:{fixture_port}/mcp", port, sub)
            out = str(sub / "gateway.prof")
            command = [sys.executable, __file__, "--serve", out, variant, "--", "serve", "--config", str(config)]
            process = await stack.enter_async_context(child(f"toolmesh serve ({variant})", command, port, sub / "log"))
            found[variant] = (f"http://127.0.0.1:{port}/mcp", process, out)
        yield found


async def run(args: argparse.Namespace) -> None:
    variants = args.variant or ["speed"]
    runner = concurrent if args.in_flight else sequential
    with tempfile.TemporaryDirectory(prefix="toolmesh-profile-") as tmp:
        async with gateways(Path(tmp), variants) as found, contextlib.AsyncExitStack() as stack:
            calls: dict[str, Call] = {}
            for variant, (url, _, _) in found.items():
                client = await stack.enter_async_context(Client(url, mode=args.mode))
                calls[variant] = caller(client)
                await sequential(calls[variant], 100)  # warm-up: connections, caches, every code path
                await concurrent(calls[variant], 100)
            cpu = dict.fromkeys(variants, 0.0)
            latencies: dict[str, list[float]] = {variant: [] for variant in variants}
            per_round = max(1, args.calls // args.rounds)
            for round_ in range(args.rounds):  # the variants take turns, so each sees the same machine load
                for variant in variants[round_ % len(variants) :] + variants[: round_ % len(variants)]:
                    before = cpu_seconds(found[variant][1])
                    taken, _ = await runner(calls[variant], per_round)
                    cpu[variant] += cpu_seconds(found[variant][1]) - before
                    latencies[variant] += taken
            profiles = {}
            if not args.no_profile:
                for variant, (_, process, out) in found.items():
                    process.send_signal(signal.SIGUSR1)
                    await anyio.sleep(0.2)  # the signal is handled between two bytecodes of the gateway's loop
                    await runner(calls[variant], args.calls)
                    process.send_signal(signal.SIGUSR2)
                    with anyio.fail_after(30):
                        while not await anyio.Path(out).exists():  # noqa: ASYNC110 - another process writes it
                            await anyio.sleep(0.05)
                    profiles[variant] = pstats.Stats(out)
                    if args.save:
                        profiles[variant].dump_stats(f"{args.save}.{variant}")
    how = f"{IN_FLIGHT} in flight" if args.in_flight else "sequential"
    print(f"toolmesh serve, tools/call echo, client mcp.Client(mode={args.mode!r}), calls {how}")
    print(f"{args.rounds} rounds of {per_round} calls per variant, variants rotating\n")
    print(f"{'variant':<10} {'gateway CPU µs/call':>20} {'p50 µs':>8}")
    for variant in variants:
        count = len(latencies[variant])
        print(f"{variant:<10} {cpu[variant] / count * 1e6:>20.0f} {statistics.median(latencies[variant]) * 1e6:>8.0f}")
    for variant, stats in profiles.items():
        print(f"\n=== profile: {variant} ({args.calls} calls {how})")
        report(stats, cpu[variant] / len(latencies[variant]) * 1e6, args)


def caller(client: Client) -> Call:
    async def call() -> None:
        result = await client.call_tool("echo", ARGS)
        if result.is_error:
            raise RuntimeError(f"the call failed: {result.content}")

    return call


def report(stats: pstats.Stats, cpu_us: float, args: argparse.Namespace) -> None:
    entries: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(tt for (_, _, tt, _, _) in entries.values())
    parts: dict[str, float] = {}
    for (filename, _, name), (_, _, tt, _, _) in entries.items():
        part = next((label for label, test in PARTS if test(filename, name)), OTHER)
        parts[part] = parts.get(part, 0.0) + tt
    print(f"CPU per call, unprofiled: {cpu_us:.0f} µs")
    print(f"profiled CPU per call: {total / args.calls * 1e6:.0f} µs (cProfile's overhead included)\n")
    print(f"{'part (own time of its functions)':<56} {'share':>6} {'µs/call':>8}")
    for part, seconds in sorted(parts.items(), key=lambda item: -item[1]):
        share = seconds / total
        print(f"{part:<56} {share:>6.1%} {share * cpu_us:>8.0f}")
    print(f"\ntop {args.top} functions by own time (profiled µs per call):")
    ranked = sorted(entries.items(), key=lambda item: -item[1][2])[: args.top]
    for (filename, line, name), (_, calls, tt, _, _) in ranked:
        where = filename.split("site-packages/")[-1].split("/src/")[-1]
        print(f"  {tt / args.calls * 1e6:>7.1f}  {calls / args.calls:>6.1f}x  {where}:{line} {name}")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        serve_profiled(sys.argv[2], sys.argv[3], sys.argv[5:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls measured, and calls profiled, per variant")
    parser.add_argument("--rounds", type=int, default=10, help="the measured calls in this many turns per variant")
    parser.add_argument(
        "--variant",
        action="append",
        choices=["sdk", "lean", "speed"],
        help="sdk: every request through the SDK's server; lean: the lean path; speed: the lean path on uvloop and"
        " httptools (the speed extra; the default); repeat to compare. sdk and lean block the speed extra",
    )
    parser.add_argument("--no-profile", action="store_true", help="measure CPU per call only")
    parser.add_argument("--mode", choices=["auto", "legacy", "2026-07-28"], default="auto", help="client protocol")
    parser.add_argument("--in-flight", action="store_true", help=f"{IN_FLIGHT} calls at a time, not one by one")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--save", help="also write each raw profile to SAVE.<variant> (for snakeviz, pstats)")
    args = parser.parse_args()
    started = time.perf_counter()
    anyio.run(run, args)
    print(f"total time: {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
