"""Per-call cost of a toolmesh row bridged into LangChain, against LangChain's own tool of the same function.

Run:  .venv/bin/python bench/bridges_langchain.py [--repeats 7] [--calls 2000]
      (or TOOLMESH_BENCH_REPEATS / TOOLMESH_BENCH_CALLS in the environment)

Every row runs ``async def add(x: int, y: int) -> int`` for the tool call
``{"name": "add", "args": {"x": 1, "y": 2}, "id": "call_1", "type": "tool_call"}``, and
answers with a ``ToolMessage`` whose content is ``"3"``:

  1. langchain tool      ``await add_tool.ainvoke(call)``, ``add_tool = langchain_core.tools.tool(add)``:
                         LangChain's own ``StructuredTool`` (its pydantic args model validates).
  2. bridged tool        ``await bridged.ainvoke(call)``, ``[bridged] = toolmesh.bridges.langchain.tools(registry)``:
                         the same ``BaseTool.ainvoke`` path, then toolmesh's turn of one call
                         (``run_tool_calls``: the snapshot's row validates and runs), the content
                         and a ``ResultArtifact``.
     (ref) bridged + hook  the bridged tool with one no-op ``on_tool_call`` hook (arguments are then
                         checked ahead of the hook, as ``run_tool_calls`` does).
  3. ToolNode (graph)    LangGraph's tool-execution path: a compiled ``StateGraph`` whose only node is
                         ``ToolNode([tool])``, invoked with one ``AIMessage`` carrying the call, for
                         LangChain's tool and for the bridged one (``--graph-calls`` per run: a graph
                         step costs far more than a tool).

Rows are interleaved per repeat, in one process and one event loop; the figure is the
best of ``repeats`` runs, in wall time and in this thread's CPU time (on a loaded
machine the wall time also counts the moments the process did not run). Nothing
touches the network; no tracer is installed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as langchain_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from toolmesh import ToolRegistry, tool
from toolmesh.bridges.langchain import tools
from toolmesh.hooks import Hook, Proceed

CALL = {"name": "add", "args": {"x": 1, "y": 2}, "id": "call_1", "type": "tool_call"}


async def add(x: int, y: int) -> int:
    """Add two integers.

    Args:
        x: The first addend.
        y: The second addend.
    """
    return x + y


class Nothing(Hook):
    """A hook with no opinion: what one hook costs a call."""

    async def on_tool_call(self, call: Any, entry: Any, ctx: Any) -> Proceed:
        return Proceed()


@dataclass
class Case:
    key: str
    label: str
    call: Callable[[], Awaitable[Any]]
    calls: int
    best: float = float("inf")
    best_cpu: float = float("inf")


def _message_ok(value: Any) -> bool:
    return isinstance(value, ToolMessage) and value.content == "3" and value.status == "success"


def _graph_ok(value: Any) -> bool:
    return _message_ok(value["messages"][-1])


def one_node_graph(tool_: BaseTool) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([tool_]))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder.compile()


def cases(calls: int, graph_calls: int) -> tuple[list[Case], dict[str, Callable[[Any], bool]]]:
    native = langchain_tool(add)
    registry = ToolRegistry()
    registry.register(tool(add))
    [bridged] = tools(registry)
    [hooked] = tools(registry, hooks=[Nothing()])
    native_graph, bridged_graph = one_node_graph(native), one_node_graph(bridged)
    state = {"messages": [AIMessage("", tool_calls=[CALL])]}
    made = [
        Case("native", "langchain tool .ainvoke(call)", lambda: native.ainvoke(CALL), calls),
        Case("bridged", "bridged tool .ainvoke(call)", lambda: bridged.ainvoke(CALL), calls),
        Case("hooked", "  (ref) bridged + one no-op hook", lambda: hooked.ainvoke(CALL), calls),
        Case("native_graph", "ToolNode graph, langchain tool", lambda: native_graph.ainvoke(state), graph_calls),
        Case("bridged_graph", "ToolNode graph, bridged tool", lambda: bridged_graph.ainvoke(state), graph_calls),
    ]
    checks = {case.key: _graph_ok if case.key.endswith("_graph") else _message_ok for case in made}
    return made, checks


async def timed_loop(call: Callable[[], Awaitable[Any]], n: int) -> tuple[float, float]:
    cpu, start = time.thread_time(), time.perf_counter()
    for _ in range(n):
        await call()
    return time.perf_counter() - start, time.thread_time() - cpu


async def measure(rows: list[Case], checks: dict[str, Callable[[Any], bool]], repeats: int) -> None:
    for case in rows:  # correctness first, then warm-up
        value = await case.call()
        if not checks[case.key](value):
            raise SystemExit(f"{case.label}: unexpected result {value!r}")
        await timed_loop(case.call, min(case.calls, 200))
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeats):
            for case in rows:
                seconds, cpu = await timed_loop(case.call, case.calls)
                case.best = min(case.best, seconds / case.calls)
                case.best_cpu = min(case.best_cpu, cpu / case.calls)
            gc.collect()
    finally:
        gc.enable()


def report(rows: dict[str, Case], repeats: int) -> None:
    import langchain_core
    import langgraph.version

    print()
    print(f"toolmesh LangChain bridge benchmark: best of {repeats} runs, µs per call")
    print(
        f"python {sys.version.split()[0]}, langchain-core {langchain_core.__version__}, "
        f"langgraph {langgraph.version.__version__}"
    )
    print()
    width = max(len(c.label) for c in rows.values()) + 2
    print(f"{'path':<{width}}{'calls':>7}  {'µs/call':>9}  {'CPU µs':>9}")
    print("-" * (width + 31))
    for case in rows.values():
        print(f"{case.label:<{width}}{case.calls:>7}  {case.best * 1e6:9.2f}  {case.best_cpu * 1e6:9.2f}")
    print()
    for bridged, native, what in (("bridged", "native", "tool"), ("bridged_graph", "native_graph", "ToolNode graph")):
        wall = rows[bridged].best / rows[native].best
        cpu = rows[bridged].best_cpu / rows[native].best_cpu
        verdict = "PASS" if cpu <= 1.0 else "MISS"
        print(f"  [{verdict}] bridged / langchain ({what}) <= 1.0x: CPU time {cpu:.2f}x, wall time {wall:.2f}x")
    print("  load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=_env_int("TOOLMESH_BENCH_REPEATS", 7), help="timed runs per row")
    parser.add_argument(
        "--calls", type=int, default=_env_int("TOOLMESH_BENCH_CALLS", 2_000), help="tool calls per timed run"
    )
    parser.add_argument("--graph-calls", type=int, default=200, help="graph invocations per timed run")
    args = parser.parse_args(argv)
    if min(args.repeats, args.calls, args.graph_calls) < 1:
        parser.error("--repeats, --calls and --graph-calls must be positive")
    return args


async def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    rows, checks = cases(args.calls, args.graph_calls)
    await measure(rows, checks, args.repeats)
    report({case.key: case for case in rows}, args.repeats)


if __name__ == "__main__":
    asyncio.run(main())
