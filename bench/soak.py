"""Soak: `toolmesh serve` under mixed load for a bounded time, its upstreams killed and restarted, memory sampled.

Run:  .venv/bin/python bench/soak.py [--seconds 60] [--kill-every 10] [--warmup 15] [--workers 4] [--logs DIR]
      (or `make soak`; it is part of neither `make test` nor `make bench`)

The gateway runs as a child process (`toolmesh serve --config toolmesh.json`, Streamable HTTP on a
free loopback port) in front of two copies of the demo fixture (tests/fixtures/demo_server.py):
``local``, a stdio server the gateway starts itself, and ``web``, a Streamable HTTP server this
script starts. ``--workers`` clients (the official ``mcp.Client``, half on protocol 2026-07-28 and
half on 2025-11-25, each with its own session) loop until the time is up, each step one of:
a call of ``echo`` or ``add`` (checked answers), a ``slow`` call (0.05-0.3 s, so that calls are in
flight when an upstream dies), ``tools/list``, or a burst of 16 concurrent calls on its session.

Every ``--kill-every`` seconds one upstream is killed with SIGKILL, in turn: the stdio one (the
gateway's child; the gateway starts a new one at the next call) or the HTTP one (restarted at once
on the same port). Each call is bounded (60 s: a call that hangs is lost) and sorted:

- ok: the expected answer;
- failed in flight on a killed upstream: it was waiting on that upstream when it was killed;
- failed during an outage: it started after its upstream was killed and before the first call
  that started after the kill succeeded on it (the outage; its length is printed too);
- lost: any other failure. The target is zero.

The gateway's resident memory (psutil when installed, else /proc/PID/status) is sampled every
second. Printed: calls made, calls lost (with the first few reasons), the excused failures, the
outages, RSS at the end of the warm-up and at the end, the RSS slope after the warm-up (least
squares, MB per minute; the target is flat: under 1 MB/min in magnitude) and RSS every 30 s.
Exit code 1 when a call was lost.

The gateway's memory grows for its first minute or two (client connections kept alive for 75 s,
the clients' connection pools filling, the allocator's arenas): a 60 s run shows calls lost, not
a memory verdict. For that, run ``--seconds 600 --warmup 120``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import re
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from _loopback import ROOT, child, free_port
from anyio.abc import Process
from mcp import Client

FIXTURE = ROOT / "tests" / "fixtures" / "demo_server.py"
CALL_BOUND = 60.0
"""Seconds a call may take before it counts as hung (lost)."""
FLAT = 1.0
"""The RSS slope (MB per minute, in magnitude) under which memory counts as flat."""
BURST = 16


@dataclass
class Upstream:
    """One upstream server as the load sees it: its calls in flight, and its outages."""

    label: str
    in_flight: dict[int, float] = field(default_factory=dict)
    """Call id -> when it started."""
    excused: set[int] = field(default_factory=set)
    """Calls that were in flight when it was killed."""
    killed_at: float | None = None
    """When the current outage began (None: up, as far as the load knows)."""
    kills: int = 0
    outages: list[float] = field(default_factory=list)
    """Seconds from each kill to the first success of a call started after it."""

    def kill(self) -> None:
        self.kills += 1
        self.excused.update(self.in_flight)
        self.killed_at = time.monotonic()


@dataclass
class Tally:
    made: int = 0
    ok: int = 0
    lists: int = 0
    in_flight_at_kill: int = 0
    during_outage: int = 0
    lost: list[str] = field(default_factory=list)
    excused_reasons: Counter[str] = field(default_factory=Counter)
    """Why the excused calls failed (numbers blanked), to see what a caller is told during an outage."""


def _rss_reader() -> Callable[[int], float]:
    """A function giving a process's resident set size in MB: psutil when installed, else /proc."""
    try:
        import psutil
    except ImportError:

        def from_proc(pid: int) -> float:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
            raise RuntimeError(f"no VmRSS for process {pid}")

        return from_proc

    return lambda pid: float(psutil.Process(pid).memory_info().rss) / (1024 * 1024)


def _children(pid: int) -> list[tuple[int, str]]:
    """The direct children of ``pid`` with their command lines (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()))
    return found


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _described(exc: BaseException) -> str:
    """The innermost exception of ``exc`` (a group: its first leaf), with where it was raised."""
    leaf = _leaf(exc)
    frames = traceback.extract_tb(leaf.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return f"{type(leaf).__name__}: {leaf}{where}"[:300]


def slope(samples: list[tuple[float, float]]) -> float:
    """The least-squares slope of (seconds, MB) samples, in MB per minute."""
    n = len(samples)
    if n < 2:
        return 0.0
    mean_t = sum(t for t, _ in samples) / n
    mean_m = sum(m for _, m in samples) / n
    spread = sum((t - mean_t) ** 2 for t, _ in samples)
    return 60 * sum((t - mean_t) * (m - mean_m) for t, m in samples) / spread if spread else 0.0


class Soak:
    """The load, the killer and the sampler, sharing what they saw."""

    def __init__(self, args: argparse.Namespace, gateway_url: str, gateway: Process) -> None:
        self.args = args
        self.url = gateway_url
        self.gateway = gateway
        self.upstreams = {label: Upstream(label) for label in ("local", "web")}
        self.tally = Tally()
        self.ids = itertools.count()
        self.rss: list[tuple[float, float]] = []
        self.started = time.monotonic()
        self.deadline = self.started + args.seconds

    async def call(self, client: Client, label: str, tool: str, arguments: dict[str, Any], expected: Any) -> None:
        upstream = self.upstreams[label]
        call_id = next(self.ids)
        started = time.monotonic()
        during_outage = upstream.killed_at is not None
        upstream.in_flight[call_id] = started
        failure: str | None = None
        try:
            with anyio.fail_after(CALL_BOUND):
                result = await client.call_tool(f"{label}__{tool}", arguments)
            got = result.structured_content if tool == "add" else getattr(result.content[0], "text", None)
            if result.is_error or got != expected:
                failure = f"{label}__{tool}: unexpected result {str(result.content)[:160]}"
        except TimeoutError:
            failure = f"{label}__{tool}: no answer in {CALL_BOUND:.0f} s"
        except Exception as exc:  # every failure is counted, none ends the soak
            failure = f"{label}__{tool}: {_described(exc)}"
        finally:
            del upstream.in_flight[call_id]
        self.tally.made += 1
        if failure is None:
            self.tally.ok += 1
            if upstream.killed_at is not None and started > upstream.killed_at:
                upstream.outages.append(time.monotonic() - upstream.killed_at)
                upstream.killed_at = None
        elif call_id in upstream.excused:
            self.tally.in_flight_at_kill += 1
            self.tally.excused_reasons[re.sub(r"\d+", "N", failure)[:150]] += 1
        elif during_outage:
            self.tally.during_outage += 1
            self.tally.excused_reasons[re.sub(r"\d+", "N", failure)[:150]] += 1
        else:
            self.tally.lost.append(f"{time.monotonic() - self.started:5.1f}s {failure}")

    def random_call(self, client: Client, chooser: random.Random) -> Awaitable[None]:
        label = chooser.choice(("local", "web"))
        match chooser.randrange(3):
            case 0:
                text = f"soak {chooser.randrange(10**6)}"
                return self.call(client, label, "echo", {"text": text}, text)
            case 1:
                a, b = chooser.randrange(1000), chooser.randrange(1000)
                return self.call(client, label, "add", {"a": a, "b": b}, {"sum": a + b})
            case _:
                return self.call(client, label, "slow", {"seconds": chooser.uniform(0.05, 0.3)}, "done")

    async def list_tools(self, client: Client) -> None:
        self.tally.made += 1
        self.tally.lists += 1
        try:
            with anyio.fail_after(CALL_BOUND):
                await client.list_tools()
        except Exception as exc:
            self.tally.lost.append(f"{time.monotonic() - self.started:5.1f}s tools/list: {_described(exc)}")
        else:
            self.tally.ok += 1

    async def worker(self, index: int) -> None:
        chooser = random.Random(index)
        mode = "auto" if index % 2 == 0 else "legacy"
        while time.monotonic() < self.deadline:
            try:
                async with Client(self.url, mode=mode) as client:
                    while time.monotonic() < self.deadline:
                        step = chooser.random()
                        if step < 0.15:
                            await self.list_tools(client)
                        elif step < 0.30:
                            async with anyio.create_task_group() as group:
                                for _ in range(BURST):
                                    group.start_soon(lambda: self.random_call(client, chooser))
                        else:
                            await self.random_call(client, chooser)
            except Exception as exc:  # the client's session itself failed: a lost session
                self.tally.lost.append(f"{time.monotonic() - self.started:5.1f}s session: {_described(exc)}")

    async def sampler(self) -> None:
        read = _rss_reader()
        while time.monotonic() < self.deadline:
            self.rss.append((time.monotonic() - self.started, read(self.gateway.pid)))
            await anyio.sleep(1.0)

    async def killer(self, restart_web: Callable[[], Awaitable[None]]) -> None:
        for turn in itertools.count():
            await anyio.sleep(self.args.kill_every)
            if time.monotonic() >= self.deadline - 2:
                return
            if turn % 2 == 0:
                stdio = [pid for pid, cmd in _children(self.gateway.pid) if "demo_server.py" in cmd]
                if not stdio:
                    continue  # not running just now: the gateway starts it at the next call
                self.upstreams["local"].kill()
                for pid in stdio:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
            else:
                self.upstreams["web"].kill()
                await restart_web()


def gateway_config(folder: Path, web_port: int, port: int) -> Path:
    demo = {"env": {"FIXTURE_LOG_LEVEL": "CRITICAL"}, "callTimeout": 30}
    config = {
        "mcpServers": {
            "local": {"command": sys.executable, "args": [str(FIXTURE), "stdio"], **demo},
            "web": {"url": f"http://127.0.0.1:{web_port}/mcp", "callTimeout": 30},
        },
        "serve": {"transport": "http", "host": "127.0.0.1", "port": port},
    }
    path = folder / "toolmesh.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


async def run(args: argparse.Namespace, folder: Path) -> int:
    taken: set[int] = set()
    web_port, port = free_port(taken), free_port(taken)
    web_argv = [sys.executable, str(FIXTURE), "http", str(web_port)]
    script = Path(sys.executable).parent / "toolmesh"
    toolmesh = [str(script)] if script.exists() else [sys.executable, "-m", "toolmesh"]
    gateway_argv = [*toolmesh, "serve", "--config", str(gateway_config(folder, web_port, port))]
    async with contextlib.AsyncExitStack() as stack:
        web = [await stack.enter_async_context(child("the web server", web_argv, web_port, folder / "web.log"))]
        state = {"TOOLMESH_STATE_DIR": str(folder / "state")}
        gateway = await stack.enter_async_context(
            child("toolmesh serve", gateway_argv, port, folder / "gateway.log", state)
        )
        soak = Soak(args, f"http://127.0.0.1:{port}/mcp", gateway)

        async def restart_web() -> None:
            web[0].kill()
            await web[0].wait()
            web[0] = await stack.enter_async_context(child("the web server", web_argv, web_port, folder / "web.log"))

        async with anyio.create_task_group() as group:
            group.start_soon(soak.sampler)
            group.start_soon(soak.killer, restart_web)
            async with anyio.create_task_group() as load:
                for index in range(args.workers):
                    load.start_soon(soak.worker, index)
            group.cancel_scope.cancel()
        gateway_alive = gateway.returncode is None
        return report(soak, args, gateway_alive, folder / "gateway.log")


def report(soak: Soak, args: argparse.Namespace, gateway_alive: bool, gateway_log: Path) -> int:
    tally, upstreams = soak.tally, soak.upstreams.values()
    kills = ", ".join(f"{u.label} {u.kills}" for u in upstreams)
    print(
        f"soak: {args.seconds:.0f} s, {args.workers} clients, "
        f"an upstream killed every {args.kill_every:.0f} s (kills: {kills})"
    )
    print(f"calls made: {tally.made} ({tally.ok} ok; {tally.lists} of them tools/list)")
    print(f"calls lost: {len(tally.lost)}")
    for line in tally.lost[:8]:
        print(f"  {line}")
    print(f"failed in flight on a killed upstream: {tally.in_flight_at_kill}")
    print(f"failed during an outage (started after a kill, before the upstream's next success): {tally.during_outage}")
    for reason, count in tally.excused_reasons.most_common(3):
        print(f"  {count:5d} x {reason}")
    for u in upstreams:
        lengths = ", ".join(f"{o:.1f}" for o in u.outages) or "none ended"
        print(f"outages of {u.label} (kill to first success, s): {lengths}")
    after = [(t, m) for t, m in soak.rss if t >= args.warmup]
    if after:
        trend = slope(after)
        peak = max(m for _, m in soak.rss)
        print(
            f"gateway RSS: {after[0][1]:.1f} MB after the {args.warmup:.0f} s warm-up, "
            f"{after[-1][1]:.1f} MB at the end "
            f"(peak {peak:.1f} MB); slope after warm-up {trend:+.2f} MB/min ({len(after)} samples)"
        )
    else:
        trend = 0.0
        print("gateway RSS: no sample after the warm-up (run longer than --warmup)")
    if soak.rss:
        marks: dict[int, float] = {}
        for t, m in soak.rss:
            marks.setdefault(int(t // 30), m)  # the first sample of each 30 s
        print("gateway RSS every 30 s (MB): " + ", ".join(f"{m:.1f}" for m in marks.values()))
    if not gateway_alive:
        print(f"the gateway exited during the soak; see the end of {gateway_log}")
    met_calls = not tally.lost and gateway_alive
    print(
        f"target: zero calls lost: {'met' if met_calls else 'NOT met'}; flat memory (|slope| < {FLAT} MB/min): "
        f"{'met' if abs(trend) < FLAT else 'NOT met'}"
    )
    return 0 if met_calls else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the load runs (default 60)")
    parser.add_argument("--kill-every", type=float, default=10.0, help="seconds between upstream kills (default 10)")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds left out of the RSS slope (default 15)")
    parser.add_argument("--workers", type=int, default=4, help="concurrent clients (default 4)")
    parser.add_argument("--logs", help="keep the gateway's and the HTTP upstream's stderr in this folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolmesh-soak-") as temp:
        folder = Path(args.logs or temp)
        folder.mkdir(parents=True, exist_ok=True)
        code = anyio.run(run, args, folder)
    sys.exit(code)


if __name__ == "__main__":
    main()
