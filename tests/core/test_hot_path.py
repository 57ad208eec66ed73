"""The hot path's speed measures build the same objects as the plain code they replace."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from opentelemetry import trace

from toolmesh import (
    Disposition,
    ErrorKind,
    Json,
    Text,
    ToolContext,
    ToolExecutionError,
    ToolOutput,
    ToolRegistry,
    ToolResult,
    to_output,
)
from toolmesh._core.result import new_result
from toolmesh._core.slots import (
    DERIVED,
    derive_on_first_read,
    global_tracer_provider,
    one_block_constructor,
    slot_constructor,
)
from toolmesh._dispatch.execution import DispatchSettings, call_timeout


def test_new_result_is_the_same_result_as_the_dataclass_constructor() -> None:
    error = ToolExecutionError("boom", kind=ErrorKind.INTERNAL)
    values = ("c1", "add", "native", Disposition.FAILED, ToolOutput(), ToolOutput([Text("x")]), error, {"k": 1}, 0.25)
    made = new_result(*values)
    assert type(made) is ToolResult
    assert made == ToolResult(*values)
    assert (made.call_id, made.error, made.duration) == ("c1", error, 0.25)


def test_slot_constructor_follows_the_dataclass_fields() -> None:
    @dataclass(frozen=True, slots=True)
    class Pair:
        left: int
        right: str

    build = slot_constructor(Pair)
    assert build(1, "a") == Pair(1, "a")
    with pytest.raises(TypeError):
        build(1)

    @dataclass(frozen=True)
    class Unslotted:
        value: int

    with pytest.raises(TypeError, match="not a slotted dataclass"):
        slot_constructor(Unslotted)


def test_a_derived_slot_is_made_once_at_its_first_read_and_then_is_an_ordinary_field() -> None:
    made: list[int] = []

    @dataclass(frozen=True, slots=True)
    class Square:
        side: int
        area: int

    def area(square: Square) -> int:
        made.append(square.side)
        return square.side * square.side

    derive_on_first_read(Square, "area", area)
    lazy = slot_constructor(Square)(3, DERIVED)
    also_lazy = Square(4, DERIVED)
    assert made == []
    assert lazy.area == 9 and lazy.area == 9 and made == [3]  # made once, then kept
    assert also_lazy == Square(4, 16) and repr(also_lazy).endswith("Square(side=4, area=16)")
    assert replace(Square(5, DERIVED), side=2) == Square(2, 25)  # replace reads the derived value, then copies it
    assert Square(2, 7).area == 7 and made == [3, 4, 5]  # a value given is kept as given
    with pytest.raises(AttributeError):
        lazy.area = 1  # type: ignore[misc]
    with pytest.raises(TypeError, match="not a slot"):
        derive_on_first_read(Square, "perimeter", area)


def test_one_block_outputs_equal_checked_outputs() -> None:
    one_json = one_block_constructor(ToolOutput, Json)
    made = one_json(3)
    assert made == ToolOutput([Json(3)]) and type(made.blocks[0]) is Json and hash(made.blocks[0]) == hash(Json(3))
    with pytest.raises(AttributeError):
        made.blocks[0].value = 4  # type: ignore[misc]
    with pytest.raises(TypeError, match="one field"):
        one_block_constructor(ToolOutput, ToolResult)
    assert to_output("hi") == ToolOutput([Text("hi")]) and type(to_output(2.5)) is ToolOutput
    assert to_output(None).blocks == [Json(None)]


def test_global_tracer_provider_is_none_until_one_is_installed() -> None:
    provider = global_tracer_provider()
    installed = trace.get_tracer_provider()
    if provider is None:
        assert isinstance(installed, trace.ProxyTracerProvider)
    else:
        assert provider is installed


def test_call_timeout_prefers_the_call_then_the_row_then_the_registry() -> None:
    registry = ToolRegistry()

    @registry.tool(timeout=2.0)
    async def slow() -> str:
        return "ok"

    @registry.tool
    async def free() -> str:
        return "ok"

    settings = DispatchSettings(default_timeout=9.0)
    assert call_timeout(registry["slow"], ToolContext(timeout=1.0), settings) == 1.0
    assert call_timeout(registry["slow"], ToolContext(), settings) == 2.0
    assert call_timeout(registry["free"], ToolContext(), settings) == 9.0
    assert call_timeout(registry["free"], ToolContext(), DispatchSettings()) is None
