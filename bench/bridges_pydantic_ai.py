"""A toolmesh row inside pydantic-ai against pydantic-ai's own tool of the same function.

Run:  .venv/bin/python bench/bridges_pydantic_ai.py [--repeats 7] [--calls 10000] [--runs 200] [--profile]

Every row calls ``async def add(x: int, y: int) -> int`` with the arguments
``{"x": 1, "y": 2}``, in the same process, rows interleaved per repeat:

  1. ToolManager.handle_call  pydantic-ai's per-call entry point (what an agent run calls for
     each tool call: resolve the tool, build the call's ``RunContext``, validate the arguments,
     ``call_tool``), on a ``ToolManager`` prepared for one run step with ``for_run_step``:
       native   ``FunctionToolset([add])``
       bridged  ``toolmesh.bridges.pydantic_ai.toolset(registry)`` (a snapshot per step, a turn
                of one call through ``run_tool_calls``)
       (ref)    bridged, with one toolmesh hook that has no opinion (``on_tool_call``: Proceed)
  2. Agent.run  a whole agent run driven by pydantic-ai's ``FunctionModel``: each of
     ``--rounds`` model responses asks for ``--parallel`` calls of the tool, then the model
     answers with text (bounded: rounds x parallel calls per run). The figure is the run's
     time divided by its tool calls, so it holds the framework's whole loop per call.
  3. (ref) what the bridge does per call, alone: ``run_tool_calls`` of one call, and
     ``snapshot.dispatch`` (toolmesh's own floor).

The figure is the best of ``repeats`` timed runs, in wall time and in this thread's CPU
time (the machine may be shared: CPU time does not count the moments the process did not
run). ``--profile`` prints where a bridged ``handle_call`` spends its time beyond the
native one (cProfile, by function). Nothing touches the network.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import os
import pstats
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pydantic_ai
from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tool_manager import ToolManager
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset
from pydantic_ai.usage import RunUsage, UsageLimits

from toolmesh import ToolCall, ToolRegistry, run_tool_calls, tool
from toolmesh.bridges.pydantic_ai import toolset
from toolmesh.hooks import Hook, HookStack, Proceed

ARGS = '{"x": 1, "y": 2}'
EXPECTED = 3


async def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


class NoOpinion(Hook):
    """A hook that is asked about every call and lets it run."""

    async def on_tool_call(self, call: Any, entry: Any, ctx: Any) -> Proceed:
        return Proceed()


Call = Callable[[], Awaitable[Any]]


@dataclass
class Case:
    key: str
    label: str
    call: Call
    check: Callable[[Any], bool]
    per_call: int = 1
    """Tool calls one ``call()`` makes (an agent run makes many)."""
    best: float = float("inf")
    best_cpu: float = float("inf")
    samples: list[float] = field(default_factory=list)


def _is_expected(value: Any) -> bool:
    return bool(value == EXPECTED)


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(tool(add))
    return registry


async def _manager(source: AbstractToolset[None]) -> ToolManager[None]:
    run_ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage())
    return await ToolManager[None](source).for_run_step(run_ctx)


async def handle_call_cases(registry: ToolRegistry) -> list[Case]:
    part = ToolCallPart("add", ARGS, tool_call_id="call_1")  # built once: reading the response is not timed
    native = (await _manager(FunctionToolset([add]))).handle_call
    bridged = (await _manager(toolset(registry))).handle_call
    hooked = (await _manager(toolset(registry, hooks=[NoOpinion()]))).handle_call

    async def call_native() -> Any:
        return await native(part)

    async def call_bridged() -> Any:
        return await bridged(part)

    async def call_hooked() -> Any:
        return await hooked(part)

    return [
        Case("native", "ToolManager.handle_call, pydantic-ai FunctionToolset", call_native, _is_expected),
        Case("bridged", "ToolManager.handle_call, toolmesh bridge", call_bridged, _is_expected),
        Case("hooked", "  (ref) toolmesh bridge + one no-opinion hook", call_hooked, _is_expected),
    ]


def _scripted(rounds: int, parallel: int) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = (len(messages) - 1) // 2  # the prompt, then one response and one tool-return request per round
        if done < rounds:
            calls = [ToolCallPart("add", ARGS, tool_call_id=f"r{done}c{n}") for n in range(parallel)]
            return ModelResponse(parts=calls)
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(respond)


def agent_cases(registry: ToolRegistry, rounds: int, parallel: int) -> list[Case]:
    limits = UsageLimits(request_limit=rounds + 2, tool_calls_limit=rounds * parallel)
    native_agent = Agent(_scripted(rounds, parallel), tools=[add])
    bridged_agent = Agent(_scripted(rounds, parallel), toolsets=[toolset(registry)])

    async def run_native() -> Any:
        return (await native_agent.run("add", usage_limits=limits)).output

    async def run_bridged() -> Any:
        return (await bridged_agent.run("add", usage_limits=limits)).output

    def finished(output: Any) -> bool:
        return output == "done"

    calls = rounds * parallel
    label = f"Agent.run, {rounds} rounds x {parallel} calls"
    return [
        Case("agent_native", f"{label}, pydantic-ai tool", run_native, finished, calls),
        Case("agent_bridged", f"{label}, toolmesh bridge", run_bridged, finished, calls),
    ]


def reference_cases(registry: ToolRegistry) -> list[Case]:
    snapshot = registry.snapshot()
    stack = HookStack()
    call = ToolCall.from_arguments("call_1", "add", ARGS)

    async def turn() -> Any:
        return (await run_tool_calls(snapshot, (call,), hooks=stack, max_concurrency=1))[0].output.structured

    async def dispatch() -> Any:
        return (await snapshot.dispatch("add", ARGS)).output.structured

    return [
        Case("turn", "  (ref) toolmesh run_tool_calls, one call", turn, _is_expected),
        Case("dispatch", "  (ref) toolmesh snapshot.dispatch", dispatch, _is_expected),
    ]


async def timed(call: Call, n: int) -> tuple[float, float]:
    cpu, start = time.thread_time(), time.perf_counter()
    for _ in range(n):
        await call()
    return time.perf_counter() - start, time.thread_time() - cpu


async def measure(cases: list[Case], repeats: int, calls: int, runs: int) -> None:
    for case in cases:
        value = await case.call()
        if not case.check(value):
            raise SystemExit(f"{case.label}: unexpected result {value!r}")
        await timed(case.call, max(1, min(calls, runs * case.per_call) // (10 * case.per_call)))
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            for case in cases:
                n = runs if case.per_call > 1 else calls
                wall, cpu = await timed(case.call, n)
                per = n * case.per_call
                case.samples.append(wall / per)
                case.best = min(case.best, wall / per)
                case.best_cpu = min(case.best_cpu, cpu / per)
            gc.collect()
    finally:
        gc.enable()


def report(cases: dict[str, Case], args: argparse.Namespace) -> None:
    print()
    print(f"toolmesh bridge into pydantic-ai: best of {args.repeats} runs, µs per tool call")
    print(f"python {sys.version.split()[0]}, pydantic-ai {pydantic_ai.__version__}")
    print()
    width = max(len(c.label) for c in cases.values()) + 2
    print(f"{'path':<{width}}{'µs/call':>9}  {'CPU µs':>8}")
    print("-" * (width + 19))
    for case in cases.values():
        print(f"{case.label:<{width}}{case.best * 1e6:9.2f}  {case.best_cpu * 1e6:8.2f}")
    print()
    print("bridged / native (target <= 1.00x)")
    for native, bridged, what in (
        ("native", "bridged", "ToolManager.handle_call"),
        ("agent_native", "agent_bridged", "Agent.run"),
    ):
        n, b = cases[native], cases[bridged]
        print(
            f"  {what:<24} {b.best / n.best:5.2f}x wall, {b.best_cpu / n.best_cpu:5.2f}x CPU "
            f"(+{(b.best_cpu - n.best_cpu) * 1e6:.2f} CPU µs a call)"
        )
    print("  load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


async def profile(registry: ToolRegistry, calls: int) -> None:
    """Where a bridged call's time goes, beside a native one: cProfile's own time by function."""
    part = ToolCallPart("add", ARGS, tool_call_id="call_1")
    for label, source in (("native", FunctionToolset([add])), ("bridged", toolset(registry))):
        handle_call = (await _manager(source)).handle_call
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            await handle_call(part)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
        print(f"\n== {label}: cProfile of {calls:,} ToolManager.handle_call (own time, profiler overhead included)")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:4000])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per row; the best counts")
    parser.add_argument("--calls", type=int, default=10_000, help="handle_call calls per timed run")
    parser.add_argument("--runs", type=int, default=200, help="agent runs per timed run")
    parser.add_argument("--rounds", type=int, default=5, help="model responses with tool calls per agent run")
    parser.add_argument("--parallel", type=int, default=8, help="tool calls per model response")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of each handle_call path")
    args = parser.parse_args(argv)
    if min(args.repeats, args.calls, args.runs, args.rounds, args.parallel) < 1:
        parser.error("every count must be positive")
    return args


async def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    registry = _registry()
    cases = [
        *await handle_call_cases(registry),
        *agent_cases(registry, args.rounds, args.parallel),
        *reference_cases(registry),
    ]
    started = time.perf_counter()
    await measure(cases, args.repeats, args.calls, args.runs)
    report({case.key: case for case in cases}, args)
    if args.profile:
        await profile(registry, min(args.calls, 20_000))
    print(f"\n(measured in {time.perf_counter() - started:.1f}s)")


if __name__ == "__main__":
    asyncio.run(main())
