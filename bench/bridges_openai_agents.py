"""A toolmesh row bridged into the OpenAI Agents SDK against the SDK's own function tool of the same function.

Run:  .venv/bin/python bench/bridges_openai_agents.py [--repeats 10] [--calls 20000] [--rounds 4] [--per-turn 25]

Both tools wrap ``async def add(x: int, y: int) -> int`` and are called with the JSON
arguments ``{"x": 1, "y": 2}``:

- native   ``agents.function_tool(add)``: the SDK's own tool (strict schema, its pydantic
           validation, the SDK's default failure handling).
- bridged  ``toolmesh.bridges.openai_agents.tools(registry)``: the same function as a
           toolmesh row, each call run through toolmesh's dispatch on the bridge's snapshot.

Two levels, in the same run, rows interleaved per repeat:

1. ``on_invoke_tool``: the entry point the SDK's runner awaits for every function call,
   with a fresh ``agents.ToolContext`` per call as the runner builds one. This is the only
   part of a call that differs between the two tools. Best of ``repeats`` runs of
   ``calls`` calls, wall and thread CPU time.
2. ``Runner.run``: the SDK's own agent loop and tool execution. A replayed model (a
   ``Model`` that hands back responses built up front, so the model costs nothing and
   is the same for both) asks for ``per-turn`` calls of ``add`` in each of ``rounds``
   turns, then answers. The figure is the run's time divided by its tool calls (so it
   includes the SDK's own per-call and per-turn work), best of ``repeats`` runs.

Rows marked ``(ref)``: the bridged tool with one no-op toolmesh hook (a hook makes each
call a full ``run_tool_calls`` turn of one call, with its arguments made canonical for
the hooks), and toolmesh's ``snapshot.dispatch`` alone (what the bridge adds is the
difference). No tracing: the SDK's is disabled, and no OpenTelemetry provider is set.
Nothing touches the network.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # never export anything anywhere

from agents import Agent, FunctionTool, ModelResponse, RunConfig, Runner, Usage, function_tool
from agents.models.interface import Model
from agents.testing import assistant_message, function_call
from agents.tool_context import ToolContext as AgentsToolContext
from agents.version import __version__ as agents_version

from toolmesh import ToolCall, ToolContext, ToolRegistry, tool
from toolmesh.bridges import openai_agents as bridge
from toolmesh.hooks import Hook, Proceed, ToolCallAction

ARGS_JSON = '{"x": 1, "y": 2}'


async def add(x: int, y: int) -> int:
    """Add two integers.

    Args:
        x: The first addend.
        y: The second addend.
    """
    return x + y


class NoOp(Hook):
    """A hook with no opinion: what one toolmesh hook costs a bridged call."""

    async def on_tool_call(self, call: ToolCall, entry: Any, ctx: ToolContext[Any]) -> ToolCallAction:
        return Proceed()


@dataclass
class Row:
    key: str
    label: str
    call: Callable[[], Awaitable[Any]]
    per_run: int
    """Tool calls one ``call()`` makes."""
    best: float = float("inf")
    best_cpu: float = float("inf")
    runs: list[float] = field(default_factory=list)
    """CPU seconds per tool call of each timed run."""


def invoke_row(key: str, label: str, fn_tool: FunctionTool, calls: int) -> Row:
    invoke, text = fn_tool.on_invoke_tool, ARGS_JSON

    async def loop() -> Any:
        for n in range(calls):
            ctx = AgentsToolContext(None, tool_name=fn_tool.name, tool_call_id=f"call_{n}", tool_arguments=text)
            value = await invoke(ctx, text)
        return value

    return Row(key, label, loop, calls)


def dispatch_row(registry: ToolRegistry, calls: int) -> Row:
    """What a bridged call cannot do without: the SDK's context (built by its runner) and toolmesh's dispatch."""
    dispatch, text = registry.snapshot().dispatch, ARGS_JSON

    async def loop() -> Any:
        for n in range(calls):
            AgentsToolContext(None, tool_name="add", tool_call_id=f"call_{n}", tool_arguments=text)
            value = await dispatch("add", text, ToolContext(f"call_{n}", None))
        return value.presentation.as_text()

    return Row("dispatch", "  (ref) a fresh agents.ToolContext + toolmesh dispatch", loop, calls)


class Replay(Model):
    """A model whose responses are built before the run: it costs the same for every agent."""

    def __init__(self, rounds: int, per_turn: int) -> None:
        self.responses = [
            ModelResponse(
                output=[function_call("add", ARGS_JSON, call_id=f"call_{r}_{k}") for k in range(per_turn)],
                usage=Usage(),
                response_id=None,
            )
            for r in range(rounds)
        ]
        self.responses.append(ModelResponse(output=[assistant_message("3")], usage=Usage(), response_id=None))

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return self.responses.pop(0)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def runner_row(key: str, label: str, fn_tool: FunctionTool, rounds: int, per_turn: int) -> Row:
    config = RunConfig(tracing_disabled=True)

    async def run() -> Any:
        agent = Agent(name="bench", model=Replay(rounds, per_turn), tools=[fn_tool])
        result = await Runner.run(agent, "add", run_config=config, max_turns=rounds + 2)
        outputs = [item.output for item in result.new_items if getattr(item, "type", "") == "tool_call_output_item"]
        return outputs[-1] if len(outputs) == rounds * per_turn else outputs

    return Row(key, label, run, rounds * per_turn)


async def measure(rows: list[Row], repeats: int) -> None:
    for row in rows:  # correctness first, and a warm-up
        value = await row.call()
        if str(value) != "3":
            raise SystemExit(f"{row.label}: unexpected result {value!r}")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):  # interleaved, so drift hits every row alike
            for row in rows:
                cpu, start = time.thread_time(), time.perf_counter()
                await row.call()
                wall, cpu = time.perf_counter() - start, time.thread_time() - cpu
                row.best = min(row.best, wall / row.per_run)
                row.best_cpu = min(row.best_cpu, cpu / row.per_run)
                row.runs.append(cpu / row.per_run)
            gc.collect()
    finally:
        gc.enable()


def table(title: str, rows: list[Row], native: Row) -> None:
    print(title)
    width = max(len(row.label) for row in rows) + 2
    print(f"{'path':<{width}}{'µs/call':>9}  {'vs native':>9}  {'CPU µs':>9}  {'vs native':>9}")
    print("-" * (width + 42))
    for row in rows:
        print(
            f"{row.label:<{width}}{row.best * 1e6:9.2f}  {row.best / native.best:8.2f}x"
            f"  {row.best_cpu * 1e6:9.2f}  {row.best_cpu / native.best_cpu:8.2f}x"
        )
    print()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=10, help="timed runs per row; the best counts (default 10)")
    parser.add_argument("--calls", type=int, default=20_000, help="on_invoke_tool calls per timed run (default 20000)")
    parser.add_argument("--rounds", type=int, default=4, help="model turns per agent run (default 4)")
    parser.add_argument("--per-turn", type=int, default=25, help="calls of add per model turn (default 25)")
    args = parser.parse_args(argv)
    if min(args.repeats, args.calls, args.rounds, args.per_turn) < 1:
        parser.error("every count must be positive")
    return args


async def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    registry = ToolRegistry()
    registry.register(tool(add))
    native = function_tool(add)
    [bridged] = bridge.tools(registry)
    [hooked] = bridge.tools(registry, hooks=[NoOp()])

    invoke = [
        invoke_row("native", "openai-agents function_tool(add).on_invoke_tool", native, args.calls),
        invoke_row("bridged", "toolmesh bridge tools(registry) .on_invoke_tool", bridged, args.calls),
        invoke_row("hooked", "  (ref) bridged, one no-op toolmesh hook", hooked, args.calls),
        dispatch_row(registry, args.calls),
    ]
    run = [
        runner_row("native", "openai-agents function_tool(add)", native, args.rounds, args.per_turn),
        runner_row("bridged", "toolmesh bridge tools(registry)", bridged, args.rounds, args.per_turn),
        runner_row("hooked", "  (ref) bridged, one no-op toolmesh hook", hooked, args.rounds, args.per_turn),
    ]
    started = time.perf_counter()
    await measure(invoke, args.repeats)
    await measure(run, args.repeats)

    print()
    print(f"OpenAI Agents SDK bridge benchmark: best of {args.repeats} runs, µs per tool call")
    print(f"python {sys.version.split()[0]}, openai-agents {agents_version}")
    print()
    table(f"1. on_invoke_tool, a fresh agents.ToolContext per call ({args.calls:,} calls a run)", invoke, invoke[0])
    table(
        f"2. Runner.run: {args.rounds} model turns x {args.per_turn} calls of add, replayed model "
        f"(run time / {args.rounds * args.per_turn} calls)",
        run,
        run[0],
    )
    print("targets (bridged <= 1.0x native, in CPU time)")
    for level, rows in (("on_invoke_tool", invoke), ("Runner.run", run)):
        ratio, wall_ratio = rows[1].best_cpu / rows[0].best_cpu, rows[1].best / rows[0].best
        spread = statistics.median(rows[0].runs) / rows[0].best_cpu - 1
        verdict = "PASS" if ratio <= 1.0 else ("NOISE" if ratio - 1 <= spread else "MISS")
        print(
            f"  [{verdict}] {level}: {ratio:.3f}x (wall: {wall_ratio:.3f}x; native's median run is "
            f"{spread:.1%} above its best)"
        )
    own = invoke[1].best_cpu - invoke[3].best_cpu
    print(f"  the bridge's own cost beyond the SDK's context and toolmesh's dispatch: {own * 1e6:.2f} µs CPU a call")
    print(f"  one toolmesh hook adds {(invoke[2].best_cpu - invoke[1].best_cpu) * 1e6:.2f} µs CPU a call (a full turn)")
    print("  load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"\n(measured in {time.perf_counter() - started:.1f}s)")


if __name__ == "__main__":
    asyncio.run(main())
