"""MCP rows deferred by their server's spec or by the policy's size threshold, found and called in one turn."""

from __future__ import annotations

import anyio
from _catalog import add

from _mcp import demo_in_process
from toolmesh import DeferPolicy, ToolCall, ToolRegistry, run_tool_calls


async def test_a_server_spec_defers_its_rows_and_a_found_one_runs() -> None:
    with anyio.fail_after(30):
        async with ToolRegistry() as registry:
            registry.register(add)
            await registry.connect(demo_in_process("demo", defer_loading=True))
            snapshot = registry.snapshot()
            assert "add" in snapshot.declared and "demo__echo" in snapshot.deferred
            assert all(name.startswith("demo__") for name in snapshot.deferred)
            found = await run_tool_calls(snapshot, [ToolCall.from_arguments("s", "search_tools", {"query": "echo"})])
            assert found[0].ok and "demo__echo" in {f.name for f in snapshot.found}
            (echoed,) = await run_tool_calls(snapshot, [ToolCall.from_arguments("c", "demo__echo", {"text": "hi"})])
            assert echoed.ok and "hi" in echoed.output.as_text()


async def test_the_policy_defers_mcp_rows_once_the_catalog_is_large() -> None:
    with anyio.fail_after(30):
        async with ToolRegistry(defer=DeferPolicy(defer_mcp_over=5, always_declare=["demo__echo"])) as registry:
            registry.register(add)
            assert registry.deferred_names() == frozenset()
            await registry.connect(demo_in_process("demo"))
            deferred = registry.deferred_names()
            assert "add" not in deferred and "demo__echo" not in deferred
            assert "demo__search" in deferred and len(deferred) == len(registry) - 2
            # a refresh that changes nothing indexes nothing again
            registry.search("echo")
            index = registry._index
            assert index is not None
            await registry.refresh("demo")
            assert index.sync(registry._rows) == 0
