"""One ToolOptions serves @tool, @registry.tool and NativeTool; signatures are described by one pure function."""

from __future__ import annotations

import typing
from typing import Any

import pytest

from toolmesh import NativeTool, ToolCapabilities, ToolContext, ToolOptions, ToolRegistry, tool
from toolmesh._rows.function_schema import function_schema


async def lookup(city: str, ctx: ToolContext[Any], days: int = 1) -> dict[str, int]:
    """Look up the weather.

    Args:
        city: The city.
        days: How many days.
    """
    return {city: days}


def test_tool_options_names_every_option_of_the_three_entry_points() -> None:
    assert ToolOptions.__optional_keys__ == {
        "name",
        "description",
        "capabilities",
        "timeout",
        "show_error_details",
        "defer_loading",
    }
    options: ToolOptions = {
        "name": "weather",
        "description": "Weather by city.",
        "capabilities": ToolCapabilities(),
        "timeout": 5.0,
        "show_error_details": True,
        "defer_loading": True,
    }
    registry = ToolRegistry()
    made = [NativeTool(lookup, **options), tool(**options)(lookup), registry.tool(**options)(lookup)]
    for native in made:
        assert (native.name, native.description, native.timeout, native.show_error_details, native.defer_loading) == (
            "weather",
            "Weather by city.",
            5.0,
            True,
            True,
        )
    assert registry["weather"].timeout == 5.0


def test_a_misspelt_option_is_refused_where_it_is_written() -> None:
    registry = ToolRegistry()
    with pytest.raises(TypeError, match=r"tool\(\) got an unexpected keyword argument 'timout'"):
        tool(timout=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"registry\.tool\(\) got an unexpected keyword argument 'nmae'"):
        registry.tool(nmae="x")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match=r"NativeTool\(\) got an unexpected keyword argument 'descr'"):
        NativeTool(lookup, descr="x")  # type: ignore[call-arg]
    assert len(registry) == 0


def test_function_schema_describes_a_signature_without_side_effects() -> None:
    schema = function_schema(lookup, "weather")
    assert schema.context_param == "ctx"
    assert schema.mode == "async" and schema.positional == ()
    assert schema.description == "Look up the weather."
    assert schema.parameters == {
        "additionalProperties": False,
        "properties": {
            "city": {"description": "The city.", "type": "string"},
            "days": {"default": 1, "description": "How many days.", "type": "integer"},
        },
        "required": ["city"],
        "type": "object",
    }
    assert schema.args_model.__name__ == "weather_arguments"
    assert typing.get_origin(schema.returns) is dict
    assert function_schema(lookup, "weather").parameters == schema.parameters
