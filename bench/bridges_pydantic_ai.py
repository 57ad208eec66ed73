"""A toolmesh row inside pydantic-ai against pydantic-ai's own tool of the same function.

Run:  .venv/bin/python bench/bridges_pydantic_ai.py [--repeats 7] [--calls 10000] [--pairs 300] [--profile]

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
     time divided by its tool calls, so it holds the framework's whole loop per call. Both
     agents are given their tool as one toolset (``FunctionToolset([add])`` or the bridge);
     their runs alternate one by one, ``--pairs`` of each, and the medians are compared
     (a run is long enough for a shared machine's drift to show; alternating spreads it).
  3. (ref) the layers under ``handle_call``, alone: each side's argument validation plus
     ``call_tool``, and the bridge's parts: the call's ``ToolContext``, ``snapshot.dispatch``
     of the arguments pydantic-ai parsed (with no hook, the turn of one call is exactly
     that), and with a hook the canonical ``ToolCall`` and ``run_tool_calls`` of one call.
     The report adds them up: where the bridged call's extra time goes.

The ``handle_call`` and reference figures are the best of ``repeats`` timed loops, in
wall time and in this thread's CPU time (the machine may be shared: CPU time does not
count the moments the process did not run). ``--profile`` also prints a cProfile of each
``handle_call`` path (own time by function). Nothing touches the network.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import os
import pstats
import statistics
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

from toolmesh import ToolCall, ToolContext, ToolRegistry, run_tool_calls, tool
from toolmesh.bridges.pydantic_ai import tool_context, toolset
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
    best: float = float("inf")
    best_cpu: float = float("inf")


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


@dataclass
class Paired:
    """Two agents' runs, alternated run by run (the order flipped every pair), per-run times kept."""

    label: str
    calls: int
    """Tool calls in one run."""
    wall: dict[str, list[float]] = field(default_factory=lambda: {"native": [], "bridged": []})
    cpu: dict[str, list[float]] = field(default_factory=lambda: {"native": [], "bridged": []})


async def measure_agents(registry: ToolRegistry, rounds: int, parallel: int, pairs: int) -> Paired:
    """Whole agent runs, native and bridged alternated, so drift on a shared machine hits both alike."""
    limits = UsageLimits(request_limit=rounds + 2, tool_calls_limit=rounds * parallel)
    # both agents hold one toolset beside their own (empty) one: the same shape, only the toolset differs
    agents = {
        "native": Agent(_scripted(rounds, parallel), toolsets=[FunctionToolset([add])]),
        "bridged": Agent(_scripted(rounds, parallel), toolsets=[toolset(registry)]),
    }
    paired = Paired(f"Agent.run, {rounds} rounds x {parallel} calls", rounds * parallel)
    for agent in agents.values():
        for _ in range(5):
            if (await agent.run("add", usage_limits=limits)).output != "done":
                raise SystemExit("an agent run did not finish as scripted")
    gc.collect()
    gc.disable()
    try:
        for index in range(pairs):
            order = ("native", "bridged") if index % 2 else ("bridged", "native")
            for key in order:
                cpu, start = time.thread_time(), time.perf_counter()
                await agents[key].run("add", usage_limits=limits)
                paired.wall[key].append(time.perf_counter() - start)
                paired.cpu[key].append(time.thread_time() - cpu)
            if index % 20 == 19:
                gc.collect()
    finally:
        gc.enable()
    return paired


async def reference_cases(registry: ToolRegistry) -> list[Case]:
    """The layers under ``handle_call``, alone: what each side's ``call_tool`` costs, and the bridge's parts."""
    snapshot = registry.snapshot()
    run_ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage(), tool_call_id="call_1", tool_name="add")
    native_set, bridged_set = FunctionToolset([add]), toolset(registry)
    hooked_set = toolset(registry, hooks=[NoOpinion()])
    native_tool = (await native_set.get_tools(run_ctx))["add"]
    bridged_tool = (await bridged_set.get_tools(run_ctx))["add"]
    hooked_tool = (await hooked_set.get_tools(run_ctx))["add"]
    validate_native, validate_bridged = (
        native_tool.args_validator.validate_json,
        bridged_tool.args_validator.validate_json,
    )
    stack = HookStack([NoOpinion()])
    call = ToolCall.from_arguments("call_1", "add", ARGS)
    arguments = {"x": 1, "y": 2}

    async def native_call_tool() -> Any:
        return await native_set.call_tool("add", validate_native(ARGS), run_ctx, native_tool)

    async def bridged_call_tool() -> Any:
        return await bridged_set.call_tool("add", validate_bridged(ARGS), run_ctx, bridged_tool)

    async def hooked_call_tool() -> Any:
        return await hooked_set.call_tool("add", validate_bridged(ARGS), run_ctx, hooked_tool)

    async def context() -> Any:
        return EXPECTED if tool_context(run_ctx).call_id == "call_1" else None

    async def dispatch() -> Any:
        return (await snapshot.dispatch("add", arguments, ToolContext("call_1"))).output.structured

    async def make_call() -> Any:
        return EXPECTED if ToolCall.from_arguments("call_1", "add", arguments).valid else None

    async def turn() -> Any:
        return (await run_tool_calls(snapshot, (call,), hooks=stack, max_concurrency=1))[0].output.structured

    return [
        Case(
            "native_call_tool",
            "  (ref) pydantic-ai: validate + FunctionToolset.call_tool",
            native_call_tool,
            _is_expected,
        ),
        Case("bridged_call_tool", "  (ref) bridge: validate + call_tool", bridged_call_tool, _is_expected),
        Case("context", "  (ref)   the call's ToolContext (tool_context)", context, _is_expected),
        Case("dispatch", "  (ref)   toolmesh snapshot.dispatch of the arguments' dict", dispatch, _is_expected),
        Case(
            "hooked_call_tool",
            "  (ref) bridge + one no-opinion hook: validate + call_tool",
            hooked_call_tool,
            _is_expected,
        ),
        Case("make_call", "  (ref)   ToolCall.from_arguments(dict)", make_call, _is_expected),
        Case("turn", "  (ref)   toolmesh run_tool_calls, one call, one hook", turn, _is_expected),
    ]


async def timed(call: Call, n: int) -> tuple[float, float]:
    cpu, start = time.thread_time(), time.perf_counter()
    for _ in range(n):
        await call()
    return time.perf_counter() - start, time.thread_time() - cpu


async def measure(cases: list[Case], repeats: int, calls: int) -> None:
    for case in cases:
        value = await case.call()
        if not case.check(value):
            raise SystemExit(f"{case.label}: unexpected result {value!r}")
        await timed(case.call, max(1, calls // 10))
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):  # interleave rows so drift hits them all alike
            for case in cases:
                wall, cpu = await timed(case.call, calls)
                case.best = min(case.best, wall / calls)
                case.best_cpu = min(case.best_cpu, cpu / calls)
            gc.collect()
    finally:
        gc.enable()


def report(cases: dict[str, Case], paired: Paired, args: argparse.Namespace) -> None:
    print()
    print(f"toolmesh bridge into pydantic-ai, µs per tool call (python {sys.version.split()[0]}, ", end="")
    print(f"pydantic-ai {pydantic_ai.__version__})")
    print()
    width = max(len(c.label) for c in cases.values()) + 2
    print(f"best of {args.repeats} x {args.calls:,} calls")
    print(f"{'path':<{width}}{'µs/call':>9}  {'CPU µs':>8}")
    print("-" * (width + 19))
    for case in cases.values():
        print(f"{case.label:<{width}}{case.best * 1e6:9.2f}  {case.best_cpu * 1e6:8.2f}")
    print()
    print(f"{paired.label}: {args.pairs} runs of each, alternated; per tool call")
    print(f"{'agent':<{width}}{'median µs':>9}  {'CPU µs':>8}  {'best CPU':>8}")
    for key, name in (("native", "pydantic-ai FunctionToolset"), ("bridged", "toolmesh bridge")):
        wall, cpu = statistics.median(paired.wall[key]), statistics.median(paired.cpu[key])
        best = min(paired.cpu[key])
        print(f"{name:<{width}}{wall / paired.calls * 1e6:9.2f}  {cpu / paired.calls * 1e6:8.2f}  ", end="")
        print(f"{best / paired.calls * 1e6:8.2f}")
    print()
    print("bridged / native (target <= 1.00x)")
    n, b = cases["native"], cases["bridged"]
    print(
        f"  ToolManager.handle_call  {b.best / n.best:5.2f}x wall, {b.best_cpu / n.best_cpu:5.2f}x CPU "
        f"(+{(b.best_cpu - n.best_cpu) * 1e6:.2f} CPU µs a call)"
    )
    median_cpu = {key: statistics.median(values) for key, values in paired.cpu.items()}
    median_wall = {key: statistics.median(values) for key, values in paired.wall.items()}
    print(
        f"  Agent.run (medians)      {median_wall['bridged'] / median_wall['native']:5.2f}x wall, "
        f"{median_cpu['bridged'] / median_cpu['native']:5.2f}x CPU "
        f"(+{(median_cpu['bridged'] - median_cpu['native']) / paired.calls * 1e6:.2f} CPU µs a call)"
    )
    print("  load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    cpu = {key: case.best_cpu * 1e6 for key, case in cases.items()}
    extra = cpu["bridged_call_tool"] - cpu["native_call_tool"]
    rest = cpu["bridged_call_tool"] - cpu["dispatch"] - cpu["context"]
    print()
    print(f"where a bridged call's extra {extra:+.2f} CPU µs go (call_tool against call_tool, no hooks)")
    print(f"  dispatch of the arguments (validate, call, ToolResult)  {cpu['dispatch']:6.2f}")
    print(f"  the call's ToolContext                                  {cpu['context']:6.2f}")
    print(f"  the rest (the approval check, the answer as content)    {rest:6.2f}")
    print(f"  less pydantic-ai's own validate + call_tool            -{cpu['native_call_tool']:6.2f}")
    hooked = cpu["hooked_call_tool"] - cpu["bridged_call_tool"]
    print(
        f"with one hook, a turn of one call adds {hooked:.2f}: the canonical ToolCall {cpu['make_call']:.2f}, ", end=""
    )
    print(f"the turn and the hook around dispatch {cpu['turn'] - cpu['dispatch']:.2f}")


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
    parser.add_argument("--pairs", type=int, default=300, help="agent runs of each kind, alternated")
    parser.add_argument("--rounds", type=int, default=5, help="model responses with tool calls per agent run")
    parser.add_argument("--parallel", type=int, default=8, help="tool calls per model response")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of each handle_call path")
    args = parser.parse_args(argv)
    if min(args.repeats, args.calls, args.pairs, args.rounds, args.parallel) < 1:
        parser.error("every count must be positive")
    return args


async def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    registry = _registry()
    cases = [
        *await handle_call_cases(registry),
        *await reference_cases(registry),
    ]
    started = time.perf_counter()
    await measure(cases, args.repeats, args.calls)
    paired = await measure_agents(registry, args.rounds, args.parallel, args.pairs)
    report({case.key: case for case in cases}, paired, args)
    if args.profile:
        await profile(registry, min(args.calls, 20_000))
    print(f"\n(measured in {time.perf_counter() - started:.1f}s)")


if __name__ == "__main__":
    asyncio.run(main())
