"""A `registry.changes()` iterator releases its listener however it ends, even never iterated."""

from __future__ import annotations

import contextlib
import gc

import anyio

from toolmesh import CatalogChange, ToolRegistry, tool


@tool
def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


async def test_an_iterator_closed_before_its_first_step_stops_listening() -> None:
    registry = ToolRegistry()
    changes = registry.changes()
    assert len(registry._listeners) == 1
    await changes.aclose()
    assert registry._listeners == []
    registry.register(add)  # nobody is told
    assert await anext(changes, None) is None  # a closed iterator is exhausted


async def test_an_iterator_dropped_without_iteration_stops_listening() -> None:
    registry = ToolRegistry()
    registry.changes()  # created and dropped at once
    gc.collect()
    assert registry._listeners == []


async def test_an_iterator_dropped_after_iteration_stops_listening() -> None:
    registry = ToolRegistry()
    changes = registry.changes()
    registry.register(add)
    with anyio.fail_after(10):
        assert await anext(changes) == CatalogChange(None, added=("add",))
    del changes
    gc.collect()
    assert registry._listeners == []


async def test_closing_from_another_task_ends_a_waiting_consumer() -> None:
    registry = ToolRegistry()
    changes = registry.changes()
    seen: list[object] = []

    async def consume() -> None:
        seen.append(await anext(changes, "ended"))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(consume)
            await anyio.wait_all_tasks_blocked()
            await changes.aclose()
    assert seen == ["ended"]
    assert registry._listeners == []


async def test_aclosing_still_works_and_a_thrown_exception_closes() -> None:
    registry = ToolRegistry()
    async with contextlib.aclosing(registry.changes()) as changes:
        registry.register(add)
        with anyio.fail_after(10):
            assert (await anext(changes)).added == ("add",)
    assert registry._listeners == []
    other = registry.changes()
    with contextlib.suppress(KeyError):
        await other.athrow(KeyError("stop"))
    assert registry._listeners == []
