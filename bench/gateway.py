"""What `toolmesh serve` costs per call: the gateway against the server it fronts, and against FastMCP's proxy.

Run:  .venv/bin/python bench/gateway.py [--rounds 20] [--calls 20] [--concurrent-calls 64] [--max-seconds 240]
                                        [--tool-ms 0] [--mode auto|legacy|2026-07-28] [--skip ROW]

One fixture server (tests/fixtures/demo_server.py, the SDK's ``MCPServer``) runs as a child process
on a free loopback port over Streamable HTTP. In front of it, each as its own child process on its
own loopback port, also over Streamable HTTP:

  1. direct              nothing: the client talks to the fixture server itself (the floor).
  2. toolmesh serve      ``toolmesh serve --config toolmesh.json``: a config with the fixture server
                         (over HTTP, prefixes off) and no native tools; a ``tools/call`` goes through the
                         gateway's MCP face, the registry's dispatch and its supervised upstream session
                         (on the lean client path: one POST of toolmesh's own per upstream call).
     ..., SDK client     the same with the lean client path off (bench/_sdk_client_serve.py): every
                         upstream call through the SDK's client session, as before the lean client path.
  3. fastmcp proxy       ``fastmcp.server.create_proxy(URL)`` (FastMCP 4.2.3), FastMCP's recommended proxy:
                         a new upstream session for each request it forwards.
  4. fastmcp proxy,      ``create_proxy(fastmcp.Client(URL))`` with the client connected once: one shared
     session reused      upstream session (FastMCP's faster, opt-in configuration).
  5. shared state        ``toolmesh serve`` of two native tools (``echo``, ``slow``) under a rate limit
                         (one token per call): state in the process; in Redis (a redis-server child);
                         in Redis with ``--workers 2`` (bench/_state_rows.py). The last lines give the Redis
                         round trips' cost, Redis state's added latency (target: at most x1.10) and the
                         2 workers' calls per second against one (target: at least x1.60). With 2 workers
                         the front CPU column counts the first worker only.
  6. toolmesh serve,     row 2 with ``serve.auth.tokens``: every call sends a static bearer token.
     static token
  7. toolmesh serve,     row 2 with ``serve.auth.oauth`` (JWT access tokens of a loopback issuer, whose JWKS
     JWT + audit         ``python -m http.server`` serves) and ``serve.audit`` to a file: every call sends an
                         RS256 access token (see bench/_auth_rows.py). The last lines compare it with row 6
                         (target: p50 at most x1.05).

Every row is measured with the same client, the SDK's ``mcp.Client(url)`` (protocol 2026-07-28 by
default; ``--mode legacy`` for 2025-11-25 sessions), calling ``echo {"text": "hello"}``: a tool that
does no work, so the table shows what each hop costs (``--tool-ms N`` calls ``slow`` instead, which
waits N ms, like a tool waiting on an API). Two modes: sequential (one call at a time) and 32 calls in
flight (32 tasks sharing one session). After a warm-up, the run is many short rounds; in each, every
row takes its turn in both modes, the first row rotating, so every row sees the same machine load. Each
turn opens its own client (untimed, with 32 untimed calls to open its connections): a connection left
idle through the other rows' turns may be closed by the server just as it is reused, which the SDK's
client does not survive. Bounded by count (rounds x calls) and by time (``--max-seconds``: no new round
starts after it). FastMCP's proxy needs FastMCP's server side (the ``fastmcp-slim[server]`` extra);
without it those rows are skipped, saying so.

Columns: latency per call (mean, p50, p99), throughput (calls per second of the row's wall time), the
ratios against direct (latency: p50 / direct p50; throughput: direct / row, so for both 1.00 is no
overhead and the target is under 1.20), the CPU time per call of the processes the call went through
(from /proc: the front process, the fixture server; and this client process), and the calls that
failed (an error result or an MCP error: counted and timed, not raised). The last lines say whether
the gateway met its target and beat each FastMCP row, and the machine's load average.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from _auth_rows import AuthRows, client_for
from _loopback import IN_FLIGHT, ROOT, Call, Latencies, child, concurrent, free_port, sequential
from _state_rows import NATIVE, NATIVE_REDIS, NATIVE_WORKERS, ROWS, native_command, redis_command, redis_missing
from _state_rows import round_trips as redis_round_trips
from anyio.abc import Process
from mcp import Client
from mcp.shared.exceptions import MCPError

FIXTURE = ROOT / "tests" / "fixtures" / "demo_server.py"
PROXY = Path(__file__).resolve().parent / "_fastmcp_proxy.py"


@dataclass(frozen=True)
class Tool:
    """The fixture tool every row calls, its arguments and the text it answers."""

    name: str
    arguments: dict[str, Any]
    answer: str

    @classmethod
    def taking(cls, milliseconds: float) -> Tool:
        """`echo` (no work) for 0 ms, else `slow`, which waits that long (a tool waiting on I/O)."""
        if milliseconds <= 0:
            return cls("echo", {"text": "hello"}, "hello")
        return cls("slow", {"seconds": milliseconds / 1000}, "done")


TARGET = 1.20
DIRECT = "direct"
GATEWAY = "toolmesh serve"
GATEWAY_SDK = "toolmesh serve, SDK client"
GATEWAY_TOKEN = "toolmesh serve, static token"
GATEWAY_JWT = "toolmesh serve, JWT + audit"
AUTH_TARGET = 1.05
"""The JWT row's p50 latency over the static-token row's must stay under this."""
FASTMCP = "fastmcp proxy"
FASTMCP_REUSE = "fastmcp proxy, reused session"
_TICKS = os.sysconf("SC_CLK_TCK")

Runner = Callable[[Call, int], Awaitable[tuple[list[float], float]]]


@dataclass
class Figures(Latencies):
    """What one row measured in one mode, summed over every round."""

    client_cpu: float = 0.0
    front_cpu: float = 0.0
    upstream_cpu: float = 0.0
    failed: int = 0

    def per_call_us(self, seconds: float) -> float:
        return seconds / len(self.latencies) * 1e6


@dataclass
class Row:
    """One way to reach the fixture's tool: the URL the client calls, and the processes a call passes."""

    name: str
    url: str
    front: Process | None
    upstream: Process
    token: str | None = None
    """The bearer token every call sends (None: none)."""
    failed: int = 0
    failed_turns: int = 0
    last_failure: str = ""


def cpu_seconds(process: Process | None) -> float:
    """User + system CPU time of a child process so far (0 for none)."""
    if process is None:
        return 0.0
    fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def gateway_config(upstream: str, port: int, folder: Path, serve: dict[str, Any] | None = None) -> Path:
    """A toolmesh.json serving the fixture server alone, with its own names, over HTTP on `port` (and `serve` keys)."""
    config = {
        "mcpServers": {"demo": {"url": upstream, "prefix": False}},
        "serve": {"transport": "http", "host": "127.0.0.1", "port": port, **(serve or {})},
    }
    path = folder / f"toolmesh-{port}.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def fastmcp_server_missing() -> str | None:
    """Why FastMCP's proxy cannot run here (its server side is the `fastmcp-slim[server]` extra), or None."""
    try:
        importlib.import_module("fastmcp.server.server")
    except ImportError as exc:
        return f"FastMCP's server side is not installed ({exc}); pip install 'fastmcp-slim[server]==4.2.3'"
    return None


def gateway_command(
    upstream: str, port: int, folder: Path, serve: dict[str, Any] | None = None, command: list[str] | None = None
) -> list[str]:
    """`toolmesh serve --config toolmesh.json`, the config fronting `upstream` on `port` (`command`: not `toolmesh`)."""
    config = str(gateway_config(upstream, port, folder, serve))
    return [*(command or toolmesh_command()), "serve", "--config", config]


def toolmesh_command() -> list[str]:
    """The ``toolmesh`` command of this environment."""
    script = Path(sys.executable).parent / "toolmesh"
    return [str(script)] if script.exists() else [sys.executable, "-m", "toolmesh"]


def caller(client: Client, row: Row, tool: Tool) -> Call:
    """One call through `row`; a failed call (an error result or an MCP error) is counted on the row, not raised."""

    async def call() -> None:
        try:
            result = await client.call_tool(tool.name, tool.arguments)
        except MCPError as exc:
            failure = f"MCPError {exc.code}: {exc.message}"
        else:
            text = getattr(result.content[0], "text", None) if result.content else None
            if not result.is_error and text == tool.answer:
                return
            failure = f"unexpected result: {str(result.content)[:200]}"
        row.failed += 1
        row.last_failure = failure

    return call


found_redis: list[str] = []
"""The URL of the Redis the state rows use, once started."""


@contextlib.asynccontextmanager
async def rows(skip: set[str]) -> AsyncIterator[list[Row]]:
    """Start the fixture server and every front in front of it; yield the rows."""
    taken: set[int] = set()
    fixture_port = free_port(taken)
    async with contextlib.AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="toolmesh-bench-")))
        argv = [sys.executable, str(FIXTURE), "http", str(fixture_port)]
        fixture = await stack.enter_async_context(
            child("the fixture server", argv, fixture_port, folder / "fixture.log")
        )
        upstream = f"http://127.0.0.1:{fixture_port}/mcp"
        found = [Row(DIRECT, upstream, None, fixture)]
        fronts: dict[str, list[str]] = {}
        ports: dict[str, int] = {}
        tokens: dict[str, str] = {}
        if GATEWAY not in skip:
            ports[GATEWAY] = free_port(taken)
            fronts[GATEWAY] = gateway_command(upstream, ports[GATEWAY], folder)
        if GATEWAY_SDK not in skip:
            ports[GATEWAY_SDK] = free_port(taken)
            sdk_only = [sys.executable, str(Path(__file__).with_name("_sdk_client_serve.py"))]
            fronts[GATEWAY_SDK] = gateway_command(upstream, ports[GATEWAY_SDK], folder, command=sdk_only)
        if GATEWAY_TOKEN not in skip or GATEWAY_JWT not in skip:
            auth = AuthRows(folder, free_port(taken))
            await stack.enter_async_context(
                child("the JWKS server", auth.jwks_server(), auth.jwks_port, folder / "jwks.log")
            )
            if GATEWAY_TOKEN not in skip:
                ports[GATEWAY_TOKEN] = free_port(taken)
                fronts[GATEWAY_TOKEN] = gateway_command(upstream, ports[GATEWAY_TOKEN], folder, auth.static_serve())
                tokens[GATEWAY_TOKEN] = auth.static_token
            if GATEWAY_JWT not in skip:
                port = ports[GATEWAY_JWT] = free_port(taken)
                fronts[GATEWAY_JWT] = gateway_command(upstream, port, folder, auth.jwt_serve(port))
                tokens[GATEWAY_JWT] = auth.access_token(port)
        missing = fastmcp_server_missing()
        for name, strategy in ((FASTMCP, "fresh"), (FASTMCP_REUSE, "reuse")):
            if missing is not None:
                print(f"skipped {name}: {missing}")
            elif name not in skip:
                ports[name] = free_port(taken)
                fronts[name] = [sys.executable, str(PROXY), upstream, str(ports[name]), strategy]
        state_rows = [name for name in ROWS if name not in skip]
        missing_redis = redis_missing() if state_rows else None
        if missing_redis is not None:
            print(f"skipped the Redis rows: {missing_redis}")
        elif state_rows:
            redis_port = free_port(taken)
            redis = child("redis-server", redis_command(redis_port), redis_port, folder / "redis.log")
            await stack.enter_async_context(redis)
            redis_url = f"redis://127.0.0.1:{redis_port}/0"
            found_redis.append(redis_url)
            kinds = ((NATIVE, None, 1), (NATIVE_REDIS, redis_url, 1), (NATIVE_WORKERS, redis_url, 2))
            for name, state, workers in kinds:
                if name in state_rows:
                    ports[name] = free_port(taken)
                    fronts[name] = native_command(toolmesh_command(), ports[name], folder, state, workers)
        for index, (name, argv) in enumerate(fronts.items()):
            process = await stack.enter_async_context(child(name, argv, ports[name], folder / f"front{index}.log"))
            found.append(Row(name, f"http://127.0.0.1:{ports[name]}/mcp", process, fixture, tokens.get(name)))
        yield found


async def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    load_before = os.getloadavg()
    modes: dict[str, Runner] = {"sequential": sequential, f"{IN_FLIGHT} in flight": concurrent}
    counts = {"sequential": args.calls, f"{IN_FLIGHT} in flight": args.concurrent_calls}
    rounds_done = 0
    tool = Tool.taking(args.tool_ms)
    async with rows(set(args.skip)) as found:
        figures = {(mode, row.name): Figures() for mode in modes for row in found}
        for row in found:  # warm-up: connections, caches, each server's code paths
            async with client_for(row.url, args.mode, row.token) as client:
                await sequential(caller(client, row, tool), 20)
                await concurrent(caller(client, row, tool), IN_FLIGHT * 2)
        for round_ in range(args.rounds):
            if time.perf_counter() - started > args.max_seconds:
                break
            order = found[round_ % len(found) :] + found[: round_ % len(found)]
            for mode, runner in modes.items():
                for row in order:
                    # A client per turn: a connection idle through the other rows' turns may be closed by
                    # the server just as it is reused, and the SDK's client does not survive that.
                    try:
                        await turn(row, figures[(mode, row.name)], runner, counts[mode], tool, args.mode)
                    except Exception as exc:  # the front refused the connection: counted, the run goes on
                        row.failed_turns += 1
                        row.last_failure = f"a turn could not connect: {exc!r}"[:300]
            rounds_done += 1
        trips = await redis_round_trips(found_redis[0]) if found_redis else {}
    report(found, figures, modes, counts, rounds_done, args, tool, load_before, time.perf_counter() - started)
    state_verdicts(figures, modes, trips)


async def turn(row: Row, f: Figures, runner: Runner, calls: int, tool: Tool, mode: str) -> None:
    """One row's turn in one mode, on a client of its own: connect, open connections (untimed), measure."""
    async with client_for(row.url, mode, row.token) as client:
        call = caller(client, row, tool)
        await concurrent(call, IN_FLIGHT)  # untimed: open the connections this turn uses
        cpu = (time.process_time(), cpu_seconds(row.front), cpu_seconds(row.upstream))
        failed = row.failed
        latencies, wall = await runner(call, calls)
        f.failed += row.failed - failed
        f.latencies += latencies
        f.wall += wall
        f.client_cpu += time.process_time() - cpu[0]
        f.front_cpu += cpu_seconds(row.front) - cpu[1]
        f.upstream_cpu += cpu_seconds(row.upstream) - cpu[2]


def report(
    found: list[Row],
    figures: dict[tuple[str, str], Figures],
    modes: dict[str, Runner],
    counts: dict[str, int],
    rounds_done: int,
    args: argparse.Namespace,
    tool: Tool,
    load_before: tuple[float, float, float],
    elapsed: float,
) -> None:
    print(
        f"MCP tools/call {tool.name} {json.dumps(tool.arguments)} over loopback Streamable HTTP,"
        f" client mcp.Client(mode={args.mode!r})"
    )
    print(
        f"{rounds_done} rounds, rows rotating; per round and row: {counts['sequential']} sequential calls, then "
        f"{counts[f'{IN_FLIGHT} in flight']} calls {IN_FLIGHT} at a time\n"
    )
    header = (
        f"{'mode':<14} {'row':<30} {'mean µs':>8} {'p50 µs':>8} {'p99 µs':>8} {'calls/s':>8} {'p50 x':>6}"
        f" {'tput x':>6} {'front CPU':>9} {'fixture CPU':>11} {'client CPU':>10} {'failed':>6}"
    )
    for mode in modes:
        print(header)
        base = figures[(mode, DIRECT)]
        for row in found:
            f = figures[(mode, row.name)]
            if not f.latencies or not base.latencies:
                print(f"{mode:<14} {row.name:<30} no turn completed")
                continue
            print(
                f"{mode:<14} {row.name:<30} {f.mean_us:>8.0f} {f.p50_us:>8.0f} {f.p99_us:>8.0f} {f.throughput:>8.0f}"
                f" {f.p50_us / base.p50_us:>6.2f} {base.throughput / f.throughput:>6.2f}"
                f" {f.per_call_us(f.front_cpu):>9.0f} {f.per_call_us(f.upstream_cpu):>11.0f}"
                f" {f.per_call_us(f.client_cpu):>10.0f} {f.failed:>6}"
            )
        print()
    print("p50 x: the row's median latency / direct's; tput x: direct's calls per second / the row's (1.00: no cost)")
    print("CPU columns: µs of CPU per call in the front process (gateway or proxy), the fixture server, this client")
    print("failed: calls answered with an error (timed like the others); the last failure of each row follows")
    for row in found:
        if row.failed or row.failed_turns:
            print(f"  {row.name}: {row.failed} calls and {row.failed_turns} turns failed; last: {row.last_failure}")
    if GATEWAY in {row.name for row in found}:
        verdicts(figures, modes, {row.name for row in found})
    if {GATEWAY_TOKEN, GATEWAY_JWT} <= {row.name for row in found}:
        auth_verdicts(figures, modes)
    load_after = os.getloadavg()
    print(
        f"load average (1, 5, 15 min): before {', '.join(f'{x:.2f}' for x in load_before)};"
        f" after {', '.join(f'{x:.2f}' for x in load_after)}; {os.cpu_count()} CPUs"
    )
    print(f"total time: {elapsed:.1f}s")


def verdicts(figures: dict[tuple[str, str], Figures], modes: dict[str, Runner], names: set[str]) -> None:
    for mode in modes:
        gw, direct = figures[(mode, GATEWAY)], figures[(mode, DIRECT)]
        if not gw.latencies or not direct.latencies:
            print(f"target, {mode}: not measured (no turn completed)")
            continue
        latency, throughput = gw.p50_us / direct.p50_us, direct.throughput / gw.throughput
        ok = latency < TARGET and throughput < TARGET
        line = f"target, {mode}: gateway p50 x{latency:.2f}, throughput x{throughput:.2f} vs direct (< x{TARGET:.2f}):"
        line += " met" if ok else " missed"
        for peer in (FASTMCP, FASTMCP_REUSE):
            if peer in names and figures[(mode, peer)].latencies:
                p = figures[(mode, peer)]
                beats = gw.p50_us < p.p50_us and gw.throughput > p.throughput
                line += f"; {'beats' if beats else 'does not beat'} {peer}"
                line += f" (p50 x{gw.p50_us / p.p50_us:.2f}, calls/s x{gw.throughput / p.throughput:.2f})"
        print(line)


def state_verdicts(figures: dict[tuple[str, str], Figures], modes: dict[str, Runner], trips: dict[str, float]) -> None:
    """Shared state's cost (target: Redis adds at most 10% to a call) and 2 workers' gain (target: at least 1.6x)."""
    for name, microseconds in trips.items():
        print(f"redis round trip from one process, one at a time: {name} {microseconds:.0f} µs")
    for mode in modes:
        local, shared, workers = (figures.get((mode, name)) for name in (NATIVE, NATIVE_REDIS, NATIVE_WORKERS))
        if local is None or shared is None or not local.latencies or not shared.latencies:
            continue
        added = shared.mean_us - local.mean_us
        ratio = shared.p50_us / local.p50_us
        line = f"state, {mode}: redis state adds {added:.0f} µs per call (mean; p50 x{ratio:.2f})"
        line += f", {'met' if shared.p50_us <= local.p50_us * 1.10 else 'missed'} (target x1.10)"
        if workers is not None and workers.latencies:
            gain = workers.throughput / shared.throughput
            line += f"; 2 workers: calls/s x{gain:.2f} of one, {'met' if gain >= 1.6 else 'missed'} (target x1.60)"
        print(line)


def auth_verdicts(figures: dict[tuple[str, str], Figures], modes: dict[str, Runner]) -> None:
    """Whether checking JWT access tokens and writing the audit cost at most AUTH_TARGET over a static token."""
    for mode in modes:
        static, jwt = figures[(mode, GATEWAY_TOKEN)], figures[(mode, GATEWAY_JWT)]
        if not static.latencies or not jwt.latencies:
            print(f"auth target, {mode}: not measured (no turn completed)")
            continue
        latency, throughput = jwt.p50_us / static.p50_us, static.throughput / jwt.throughput
        verdict = "met" if latency <= AUTH_TARGET else "missed"
        print(
            f"auth target, {mode}: JWT + audit p50 x{latency:.3f}, throughput x{throughput:.3f} vs a static token"
            f" (<= x{AUTH_TARGET:.2f}): {verdict}; mean {jwt.mean_us:.0f} vs {static.mean_us:.0f} µs"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("TOOLMESH_BENCH_ROUNDS", 20)))
    parser.add_argument("--calls", type=int, default=int(os.environ.get("TOOLMESH_BENCH_CALLS", 20)))
    parser.add_argument("--concurrent-calls", type=int, default=IN_FLIGHT * 2)
    parser.add_argument("--max-seconds", type=float, default=240.0, help="start no round after this many seconds")
    parser.add_argument(
        "--tool-ms", type=float, default=0.0, help="0: call echo (no work); N: call slow, which waits N ms"
    )
    parser.add_argument("--mode", choices=["auto", "legacy", "2026-07-28"], default="auto", help="client protocol")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=[GATEWAY, GATEWAY_SDK, GATEWAY_TOKEN, GATEWAY_JWT, FASTMCP, FASTMCP_REUSE, *ROWS],
        help="leave a row out",
    )
    args = parser.parse_args()
    anyio.run(run, args)


if __name__ == "__main__":
    main()
