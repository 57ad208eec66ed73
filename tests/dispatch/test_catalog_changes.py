"""Catalog events: `on_change` and `changes()` report what each mutation did to the rows."""

from __future__ import annotations

import contextlib

import anyio
import pytest

from _mcp import demo_in_process, wait_until
from toolmesh import CatalogChange, ToolRegistry, tool


@tool
def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


@tool
def mul(x: int, y: int) -> int:
    """Multiply two integers."""
    return x * y


async def _ok(arguments: dict[str, object]) -> str:
    return "ok"


def _dynamic(registry: ToolRegistry, name: str, description: str = "A dynamic tool.") -> None:
    registry.register_dynamic(name, {"type": "object"}, _ok, description=description, replace=name in registry)


async def test_native_registrations_report_added_changed_removed() -> None:
    registry = ToolRegistry()
    seen: list[CatalogChange] = []
    stop = registry.on_change(seen.append)
    registry.register(add)
    _dynamic(registry, "lookup")
    _dynamic(registry, "lookup", "Now it looks things up differently.")
    _dynamic(registry, "lookup", "Now it looks things up differently.")  # the same again: nothing to report
    registry.unregister("add")
    stop()
    registry.register(mul)
    assert seen == [
        CatalogChange(None, added=("add",)),
        CatalogChange(None, added=("lookup",)),
        CatalogChange(None, changed=("lookup",)),
        CatalogChange(None, removed=("add",)),
    ]


async def test_connect_refresh_and_disconnect_report_with_the_server_label() -> None:
    seen: list[CatalogChange] = []
    async with ToolRegistry() as registry:
        registry.register(add)
        registry.on_change(seen.append)
        await registry.connect(demo_in_process("demo", include=["echo", "grow", "fresh*"]))
        assert seen == [CatalogChange("demo", added=("demo__echo", "demo__grow"))]
        assert (await registry.dispatch("demo__grow", {"name": "fresh"})).ok
        await wait_until(lambda: len(seen) == 2, 60)
        assert seen[1] == CatalogChange("demo", added=("demo__fresh",))
        await registry.disconnect("demo")
        assert seen[2] == CatalogChange("demo", removed=("demo__echo", "demo__grow", "demo__fresh"))
        assert registry.names() == ["add"]


async def test_a_refresh_reports_a_name_another_row_owns_as_refused() -> None:
    async with ToolRegistry() as registry:
        _dynamic(registry, "fresh")
        await registry.connect(demo_in_process("demo", prefix=False, include=["grow", "fresh*"]))
        async with contextlib.aclosing(registry.changes()) as changes:
            assert (await registry.dispatch("grow", {"name": "fresh"})).ok
            with anyio.fail_after(60):
                change = await anext(changes)
        assert change == CatalogChange("demo", refused=("fresh",))
        assert registry["fresh"].kind == "dynamic"


async def test_changes_yields_in_order_and_a_slow_consumer_gets_one_resync() -> None:
    registry = ToolRegistry()
    async with contextlib.aclosing(registry.changes(max_queued=2)) as changes:
        registry.register(add)
        with anyio.fail_after(10):
            assert await anext(changes) == CatalogChange(None, added=("add",))
        for name in ("a", "b", "c", "d"):  # nobody reads: the queue (2) overflows at "c"
            _dynamic(registry, name)
        with anyio.fail_after(10):
            assert await anext(changes) == CatalogChange(None, resync=True)
            assert await anext(changes) == CatalogChange(None, added=("d",))
    registry.register(mul)  # the closed iterator no longer listens
    assert registry._listeners == []
    with pytest.raises(ValueError, match="max_queued must be at least 1, got 0"):
        registry.changes(max_queued=0)
