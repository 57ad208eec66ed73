"""The leaner dispatch (issue 13): a plain async tool runs without a context copy, and loses nothing."""

from __future__ import annotations

import dataclasses

import anyio
import pytest

from toolmesh import Disposition, ErrorKind, Json, ToolContext, ToolExecutionError, ToolRegistry, ToolResult, tool
from toolmesh._core.slots import slot_constructor


@tool
async def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


@tool
async def refuse(reason: str) -> str:
    """Fail on purpose, or by accident."""
    if reason == "deliberate":
        raise ToolExecutionError("no such account", kind=ErrorKind.NOT_FOUND)
    raise ValueError("secret detail")


@tool
async def hang() -> str:
    """Never finish."""
    await anyio.sleep_forever()
    return "never"


def registry() -> ToolRegistry:
    registry = ToolRegistry()
    for fn in (add, refuse, hang):
        registry.register(fn)
    return registry


async def test_a_plain_tools_result_carries_everything() -> None:
    result = await registry().dispatch("add", '{"x": 1, "y": 2}', ctx=ToolContext(call_id="c9"))
    assert (result.call_id, result.name, result.kind, result.disposition) == ("c9", "add", "native", "succeeded")
    assert result.output.blocks == [Json(3)] and result.presentation == result.output
    assert result.error is None and dict(result.metadata) == {} and result.duration > 0
    generated = await registry().dispatch("add", {"x": 1, "y": 2})
    assert generated.call_id.startswith("call_") and generated.output.structured == 3


async def test_a_plain_tools_failures_are_results_as_before() -> None:
    reg = registry()
    deliberate = await reg.dispatch("refuse", {"reason": "deliberate"}, ctx=ToolContext(call_id="c1"))
    unexpected = await reg.dispatch("refuse", {"reason": "oops"})
    invalid = await reg.dispatch("add", '{"x": "one"}')
    assert deliberate.disposition is Disposition.FAILED and deliberate.call_id == "c1"
    assert deliberate.error is not None and deliberate.error.kind is ErrorKind.NOT_FOUND
    assert deliberate.presentation.as_text() == "no such account"
    assert unexpected.error is not None and unexpected.error.kind is ErrorKind.INTERNAL
    assert isinstance(unexpected.error.__cause__, ValueError) and "secret" not in unexpected.presentation.as_text()
    assert invalid.error is not None and invalid.error.kind is ErrorKind.INVALID_ARGUMENTS


async def test_timeouts_still_bound_plain_tools_on_both_paths() -> None:
    reg = registry()
    with anyio.fail_after(30):
        result = await reg.dispatch("hang", ctx=ToolContext(timeout=0.05))
        assert result.error is not None and result.error.kind is ErrorKind.TIMEOUT
        with pytest.raises(ToolExecutionError) as info:
            await reg.dispatch_native(hang, ctx=ToolContext(timeout=0.05))
        assert info.value.kind is ErrorKind.TIMEOUT
        timed = ToolRegistry(default_timeout=0.05)
        timed.register(hang)
        with pytest.raises(ToolExecutionError) as info:
            await timed.dispatch_native(hang)
        assert info.value.kind is ErrorKind.TIMEOUT
        assert (await timed.dispatch("hang")).error.kind is ErrorKind.TIMEOUT  # type: ignore[union-attr]
        own = ToolRegistry()
        own.register(hang, timeout=0.05)
        assert own["hang"].plain_tool is None and reg["hang"].plain_tool is not None
        assert (await own.dispatch("hang")).error.kind is ErrorKind.TIMEOUT  # type: ignore[union-attr]
    assert await reg.dispatch_native(add, 1, y=2) == 3


def test_results_made_by_the_slot_constructor_are_frozen_tool_results() -> None:
    made = slot_constructor(ToolResult)("c", "add", "native", Disposition.SUCCEEDED, None, None, None, {}, 0.5)
    assert type(made) is ToolResult and made.duration == 0.5
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.name = "other"  # type: ignore[misc]
