"""Per-call cost of dispatching one native tool, against the validate+call floor and two peers.

Run:  .venv/bin/python bench/native_dispatch.py [--repeats 10] [--calls 20000] [--no-otel]
      (or TOOLMESH_BENCH_REPEATS / TOOLMESH_BENCH_CALLS in the environment)

Every row runs the same function, ``async def add(x: int, y: int) -> int``, with the
same JSON arguments ``{"x": 1, "y": 2}`` where the path takes JSON text:

  1. direct         ``await add(x=1, y=2)``: no validation at all.
  2. floor          a pydantic model of the signature (``extra="forbid"``, like toolmesh's),
                    ``__pydantic_validator__.validate_json(text)``, then ``await add(**fields)``:
                    the least a validated call can cost with a model.
     fields floor   for reference, the validation toolmesh itself runs: the same model's
                    ``model-fields`` core schema alone (same checks and errors, no model
                    instance), then ``await add(**fields)``. ``dispatch`` minus this row is
                    toolmesh's own cost per call (the line "toolmesh's own cost").
  3. dispatch       ``await registry.dispatch("add", text)`` -> a ``ToolResult`` (toolmesh).
  4. dispatch_native ``await registry.dispatch_native(add, x=1, y=2)`` -> 3 (toolmesh).
  5. pydantic-ai    ``await ToolManager.handle_call(part)`` with one ``ToolCallPart("add", text)``
                    built up front, on a ``ToolManager(FunctionToolset([add]))`` prepared with
                    ``for_run_step`` for a ``RunContext`` (no root capability, i.e. no hooks, its
                    cheapest configuration). This is the entry point an agent run calls per tool
                    call: it resolves the tool, builds the per-call ``RunContext`` (a
                    ``dataclasses.replace``), validates the JSON with the tool's
                    ``args_validator.validate_json`` and calls ``FunctionToolset.call_tool``.
     pydantic-ai (toolset) for reference, the lowest layer that still validates the way a
                    run does: ``tool.args_validator.validate_json(text)`` then
                    ``FunctionToolset.call_tool(name, args, run_ctx, tool)`` with a
                    ``ToolsetTool`` from ``get_tools`` (no tool manager, no per-call context).
  6. openai-agents  ``await function_tool(add).on_invoke_tool(ctx, text)`` with a
                    ``ToolContext`` built once and reused (the SDK's fastest entry point; its
                    runner builds a fresh ``ToolContext`` per call, shown as a reference row).

Each row runs in a tight loop inside one coroutine on one asyncio event loop; the figure
is the best of ``repeats`` runs of ``calls`` calls, rows interleaved per repeat, in wall
time and in this thread's CPU time (on a loaded machine the wall time also counts the
moments the process did not run; the CPU time does not). The
main figures run with no OpenTelemetry tracer provider installed (the API's no-op
default); ``--otel`` (default on) adds toolmesh's dispatch with a real SDK
``TracerProvider`` that has no exporter, for reference. Nothing touches the network.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # never export anything anywhere

import pydantic
import pydantic_core
from opentelemetry import trace

from toolmesh import ToolRegistry, tool

ARGS_JSON = '{"x": 1, "y": 2}'
EXPECTED = 3


async def add(x: int, y: int) -> int:
    """Add two integers.

    Args:
        x: The first addend.
        y: The second addend.
    """
    return x + y


Call = Callable[[], Awaitable[Any]]
Check = Callable[[Any], bool]


@dataclass
class Case:
    key: str
    label: str
    call: Call
    check: Check
    note: str = ""
    best: float = float("inf")
    best_cpu: float = float("inf")
    runs: list[float] = field(default_factory=list)


@dataclass
class Skipped:
    label: str
    why: str


def _int_result(value: Any) -> bool:
    return bool(value == EXPECTED)


# -- the rows -------------------------------------------------------------------------


def direct_case() -> Case:
    fn = add

    async def call() -> Any:
        return await fn(x=1, y=2)

    return Case("direct", "direct await add(x=1, y=2)", call, _int_result)


def _arguments_model() -> type[pydantic.BaseModel]:
    """A pydantic model of ``add``'s signature, closed like toolmesh's."""
    closed = pydantic.ConfigDict(extra="forbid")
    return pydantic.create_model("add_arguments", __config__=closed, x=(int, ...), y=(int, ...))


def floor_case() -> Case:
    validate_json = _arguments_model().__pydantic_validator__.validate_json
    fn, text = add, ARGS_JSON

    async def call() -> Any:
        return await fn(**validate_json(text).__dict__)

    return Case("floor", "pydantic validate_json + call (floor)", call, _int_result)


def fields_floor_case() -> Case:
    """The floor with the validation toolmesh uses: the model's fields alone, no model instance."""
    schema: Any = _arguments_model().__pydantic_core_schema__
    validate_json = pydantic_core.SchemaValidator(schema["schema"], schema.get("config")).validate_json
    fn, text = add, ARGS_JSON

    async def call() -> Any:
        return await fn(**validate_json(text)[0])

    return Case("floor_fields", "  (ref) pydantic fields-only validate_json + call", call, _int_result)


def toolmesh_cases(registry: ToolRegistry, native: Any, *, key: str = "dispatch", label: str = "") -> list[Case]:
    dispatch, dispatch_native, text = registry.dispatch, registry.dispatch_native, ARGS_JSON

    async def call_dispatch() -> Any:
        return await dispatch("add", text)

    async def call_native() -> Any:
        return await dispatch_native(native, x=1, y=2)

    def dispatched_ok(result: Any) -> bool:
        return bool(result.ok) and result.output.structured == EXPECTED

    if key != "dispatch":
        return [Case(key, label, call_dispatch, dispatched_ok)]
    return [
        Case("dispatch", 'toolmesh registry.dispatch("add", json)', call_dispatch, dispatched_ok),
        Case("dispatch_native", "toolmesh registry.dispatch_native(add, x=1, y=2)", call_native, _int_result),
    ]


async def pydantic_ai_cases() -> list[Case]:
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ToolCallPart
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tool_manager import ToolManager
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.usage import RunUsage

    toolset: FunctionToolset[None] = FunctionToolset([add])
    run_ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage())
    manager = await ToolManager[None](toolset).for_run_step(run_ctx)
    handle_call, text = manager.handle_call, ARGS_JSON
    part = ToolCallPart("add", text, tool_call_id="call_1")  # built once: parsing the response is not timed

    async def call_manager() -> Any:
        return await handle_call(part)

    tools = await toolset.get_tools(run_ctx)
    tool_ = tools["add"]
    validate_json, call_tool = tool_.args_validator.validate_json, toolset.call_tool

    async def call_toolset() -> Any:
        return await call_tool("add", validate_json(text), run_ctx, tool_)

    return [
        Case("pydantic_ai", "pydantic-ai ToolManager.handle_call", call_manager, _int_result),
        Case(
            "pydantic_ai_toolset",
            "  (ref) pydantic-ai args_validator + FunctionToolset.call_tool",
            call_toolset,
            _int_result,
        ),
    ]


def openai_agents_cases() -> list[Case]:
    from agents import function_tool
    from agents.tool_context import ToolContext as AgentsToolContext

    fn_tool = function_tool(add)
    invoke, text = fn_tool.on_invoke_tool, ARGS_JSON
    ctx = AgentsToolContext(context=None, tool_name="add", tool_call_id="call_1", tool_arguments=text)

    async def call_reused() -> Any:
        return await invoke(ctx, text)

    async def call_fresh() -> Any:
        fresh = AgentsToolContext(context=None, tool_name="add", tool_call_id="call_1", tool_arguments=text)
        return await invoke(fresh, text)

    return [
        Case("openai_agents", "openai-agents FunctionTool.on_invoke_tool", call_reused, _int_result),
        Case(
            "openai_agents_fresh",
            "  (ref) openai-agents on_invoke_tool, new ToolContext per call",
            call_fresh,
            _int_result,
        ),
    ]


def otel_case() -> tuple[Case, Any] | Skipped:
    try:
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError as exc:
        return Skipped("toolmesh dispatch, SDK TracerProvider", f"opentelemetry-sdk not importable: {exc}")
    provider = TracerProvider()  # no span processor, no exporter: spans are recorded, then dropped
    registry = ToolRegistry(tracer_provider=provider)
    registry.register(tool(add))
    [case] = toolmesh_cases(
        registry, add, key="dispatch_otel", label="  (ref) toolmesh dispatch, SDK TracerProvider (no exporter)"
    )
    return case, provider


# -- timing -----------------------------------------------------------------------------


async def timed_loop(call: Call, n: int) -> tuple[float, float]:
    """Wall and CPU seconds for ``n`` sequential awaits of ``call()`` (loop overhead included, equal for all rows).

    CPU time is this thread's (``time.thread_time``): on a shared machine the wall time
    also counts the moments the process was not running at all.
    """
    cpu, start = time.thread_time(), time.perf_counter()
    for _ in range(n):
        await call()
    return time.perf_counter() - start, time.thread_time() - cpu


async def measure(cases: list[Case], repeats: int, calls: int) -> None:
    for case in cases:  # correctness first, then warm-up
        value = await case.call()
        if not case.check(value):
            raise SystemExit(f"{case.label}: unexpected result {value!r}")
        await timed_loop(case.call, min(calls, 2_000))
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):  # interleave rows so drift hits them all alike
            for case in cases:
                seconds, cpu = await timed_loop(case.call, calls)
                case.runs.append(seconds)
                case.best = min(case.best, seconds / calls)
                case.best_cpu = min(case.best_cpu, cpu / calls)
            gc.collect()
    finally:
        if gc_was_enabled:
            gc.enable()


# -- report -----------------------------------------------------------------------------


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:8.2f}"


def _ratio(a: float, b: float | None) -> str:
    return f"{a / b:6.2f}x" if b else "     -"


def report(cases: dict[str, Case], skipped: list[Skipped], repeats: int, calls: int, tracing: str) -> None:
    floor, floor_cpu = cases["floor"].best, cases["floor"].best_cpu
    dispatch, dispatch_cpu = cases["dispatch"].best, cases["dispatch"].best_cpu
    print()
    print(f"toolmesh native dispatch benchmark: best of {repeats} x {calls:,} calls, µs per call")
    print(f"python {sys.version.split()[0]}, pydantic {pydantic.VERSION}; {tracing}")
    print()
    width = max(len(c.label) for c in cases.values()) + 2
    print(f"{'path':<{width}}{'µs/call':>8}  {'vs floor':>8}  {'vs dispatch':>11}  {'CPU µs':>8}  {'vs floor':>8}")
    print("-" * (width + 51))
    for case in cases.values():
        print(
            f"{case.label:<{width}}{_us(case.best)}  {_ratio(case.best, floor):>8}  {_ratio(case.best, dispatch):>11}"
            f"  {_us(case.best_cpu)}  {_ratio(case.best_cpu, floor_cpu):>8}"
        )
    for skip in skipped:
        print(f"{skip.label:<{width}}{'n/a':>8}  (skipped: {skip.why})")
    print()
    print("targets")

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "MISS"

    native, native_cpu = cases["dispatch_native"].best, cases["dispatch_native"].best_cpu
    print(
        f"  [{verdict(dispatch <= 2.5 * floor)}] dispatch <= 2.5x floor: {dispatch / floor:.2f}x "
        f"(CPU time: {dispatch_cpu / floor_cpu:.2f}x)"
    )
    print(
        f"  [{verdict(native <= 2 * floor)}] dispatch_native <= 2x floor: {native / floor:.2f}x "
        f"(CPU time: {native_cpu / floor_cpu:.2f}x)"
    )
    fields_floor_cpu = cases["floor_fields"].best_cpu
    print(
        f"  toolmesh's own cost: dispatch {(dispatch_cpu - fields_floor_cpu) * 1e6:.2f} µs, dispatch_native "
        f"{(native_cpu - fields_floor_cpu) * 1e6:.2f} µs CPU a call beyond its validation and the call "
        f"(dispatch {dispatch_cpu / fields_floor_cpu:.2f}x the fields-only floor)"
    )
    print("  load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for key, name in (("pydantic_ai", "pydantic-ai ToolManager"), ("openai_agents", "openai-agents on_invoke_tool")):
        if key in cases:
            peer = cases[key].best
            print(
                f"  [{verdict(dispatch < peer)}] dispatch faster than {name}: "
                f"{dispatch * 1e6:.2f} vs {peer * 1e6:.2f} µs ({peer / dispatch:.2f}x)"
            )
        else:
            print(f"  [n/a ] dispatch faster than {name}: peer not importable")


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--repeats",
        type=int,
        default=_env_int("TOOLMESH_BENCH_REPEATS", 10),
        help="timed runs per row; the best counts (env TOOLMESH_BENCH_REPEATS, default 10)",
    )
    parser.add_argument(
        "--calls",
        type=int,
        default=_env_int("TOOLMESH_BENCH_CALLS", 20_000),
        help="calls per timed run (env TOOLMESH_BENCH_CALLS, default 20000)",
    )
    parser.add_argument(
        "--otel",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time dispatch with an SDK TracerProvider (no exporter), for reference",
    )
    parser.add_argument("--no-peers", action="store_true", help="skip pydantic-ai and openai-agents")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.calls < 1:
        parser.error("--repeats and --calls must be positive")
    return args


async def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    provider = trace.get_tracer_provider()
    if not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        raise SystemExit(
            f"a global OpenTelemetry tracer provider is installed ({type(provider).__name__}); "
            "the main figures need the no-op default (unset OTEL_* auto-instrumentation)"
        )
    tracing = "no global OpenTelemetry tracer provider (no-op default)"

    registry = ToolRegistry()
    native = tool(add)
    registry.register(native)

    cases: list[Case] = [direct_case(), floor_case(), fields_floor_case(), *toolmesh_cases(registry, add)]
    skipped: list[Skipped] = []
    if not args.no_peers:
        try:
            cases += await pydantic_ai_cases()
        except ImportError as exc:
            skipped.append(Skipped("pydantic-ai ToolManager.handle_call", f"cannot import pydantic-ai: {exc}"))
        try:
            cases += openai_agents_cases()
        except ImportError as exc:
            skipped.append(Skipped("openai-agents on_invoke_tool", f"cannot import openai-agents: {exc}"))
    otel_provider = None
    if args.otel:
        made = otel_case()
        if isinstance(made, Skipped):
            skipped.append(made)
        else:
            case, otel_provider = made
            cases.append(case)

    started = time.perf_counter()
    await measure(cases, args.repeats, args.calls)
    if otel_provider is not None:
        otel_provider.shutdown()
    report({c.key: c for c in cases}, skipped, args.repeats, args.calls, tracing)
    print(f"\n(measured in {time.perf_counter() - started:.1f}s)")


if __name__ == "__main__":
    asyncio.run(main())
