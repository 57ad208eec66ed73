"""@tool: schemas from signatures, docstrings, the context parameter, and the ways a function runs."""

from __future__ import annotations

import enum
import threading
from collections.abc import AsyncIterator
from typing import Annotated, Any

import pydantic
import pytest
from pydantic import Field

from toolmesh import (
    ConfigurationError,
    FromContext,
    Image,
    IoMode,
    Json,
    Text,
    ToolCapabilities,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    tool,
)


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Location(pydantic.BaseModel):
    city: str
    country: str | None = None


@tool
async def forecast(
    where: Location,
    days: int = 3,
    unit: Unit = Unit.CELSIUS,
    note: str | None = None,
    detail: Annotated[bool, Field(description="Include hourly detail.")] = False,
) -> dict[str, Any]:
    """Forecast the weather.

    Looks the location up first.

    Args:
        where: Where to forecast.
        days: How many days ahead.
    """
    return {"city": where.city, "days": days, "unit": unit.value, "detail": detail}


def test_schema_from_signature_with_defaults_optionals_enums_and_nested_models() -> None:
    params = forecast.parameters
    assert params["type"] == "object"
    assert params["required"] == ["where"]
    assert params["additionalProperties"] is False
    props = params["properties"]
    assert props["where"]["$ref"] == "#/$defs/Location"
    assert params["$defs"]["Location"]["required"] == ["city"]
    assert props["days"] == {"default": 3, "description": "How many days ahead.", "type": "integer"}
    assert props["unit"]["default"] == "celsius"
    assert params["$defs"]["Unit"]["enum"] == ["celsius", "fahrenheit"]
    assert props["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert props["detail"]["description"] == "Include hourly detail."
    assert "title" not in params and "title" not in props["days"]


def test_description_comes_from_docstring_without_the_args_section() -> None:
    assert forecast.description == "Forecast the weather.\n\nLooks the location up first."
    assert forecast.parameters["properties"]["days"]["description"] == "How many days ahead."


@pytest.mark.parametrize(
    "doc",
    [
        "Greet.\n\nArgs:\n    name: Who to greet.\n",
        "Greet.\n\nParameters\n----------\nname : str\n    Who to greet.\n",
        "Greet.\n\n:param name: Who to greet.\n",
    ],
    ids=["google", "numpy", "sphinx"],
)
def test_parameter_descriptions_from_google_numpy_and_sphinx_docstrings(doc: str) -> None:
    def greet(name: str) -> str:
        return f"hi {name}"

    greet.__doc__ = doc
    native = tool(greet)
    assert native.description == "Greet."
    assert native.parameters["properties"]["name"]["description"] == "Who to greet."


def test_decorated_tool_is_still_callable_as_the_function() -> None:
    @tool
    def add(x: int, y: int) -> int:
        """Add."""
        return x + y

    assert add(2, 3) == 5
    assert add.__name__ == "add"
    assert add.__doc__ == "Add."


def test_decorator_with_options() -> None:
    @tool(name="sum_numbers", description="Adds numbers.", timeout=2.5)
    async def add(x: int, y: int) -> int:
        return x + y

    assert (add.name, add.description, add.timeout) == ("sum_numbers", "Adds numbers.", 2.5)


def test_return_annotation_gives_output_schema_when_json_able() -> None:
    class Report(pydantic.BaseModel):
        total: int

    @tool
    async def report() -> Report:
        return Report(total=1)

    @tool
    async def text() -> str:
        return "x"

    @tool
    async def picture() -> Image:
        return Image(b"x", "image/png")

    assert report.capabilities.output_schema is not None
    assert report.capabilities.output_schema["properties"]["total"]["type"] == "integer"
    assert report.definition.output_schema == report.capabilities.output_schema
    assert text.capabilities.output_schema is None
    assert picture.capabilities.output_schema is None


def test_bytes_return_annotation_is_refused_at_definition() -> None:
    with pytest.raises(ConfigurationError, match=r"returns bytes, which carry no MIME type; return Image"):

        @tool
        async def raw() -> bytes:
            return b""


# -- the context parameter ------------------------------------------------------


def test_context_parameter_is_excluded_from_the_schema() -> None:
    @tool
    async def whoami(ctx: ToolContext[str], loud: bool = False) -> str:
        return ctx.deps

    assert whoami.context_param == "ctx"
    assert list(whoami.parameters["properties"]) == ["loud"]


def test_marked_alias_receives_the_context() -> None:
    Ctx = Annotated[ToolContext[int], FromContext]

    @tool
    async def count(c: Ctx, step: int = 1) -> int:
        return c.deps + step

    assert count.context_param == "c"
    assert list(count.parameters["properties"]) == ["step"]


def test_parameter_merely_named_ctx_is_an_ordinary_argument() -> None:
    @tool
    async def echo(ctx: str) -> str:
        return ctx

    assert echo.context_param is None
    assert echo.parameters["properties"]["ctx"]["type"] == "string"


def test_two_context_parameters_are_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="parameters 'a' and 'b' both ask for the ToolContext; keep one"):

        @tool
        async def bad(a: ToolContext[Any], b: ToolContext[Any]) -> None:
            return None


def test_a_parameter_pydantic_cannot_describe_is_named_with_the_fix_for_its_kind() -> None:
    with pytest.raises(ConfigurationError) as caught:

        @tool
        async def bad_type(name: str, lock: threading.Lock) -> None:
            return None

    text = str(caught.value)
    assert "parameter 'lock' cannot be turned into a JSON Schema" in text and "use JSON-able types" in text
    assert "ToolContext.deps" in text and "arbitrary_types_allowed" not in text

    with pytest.raises(ConfigurationError) as caught:

        @tool
        async def bad_field(name: str, tags: Annotated[list[str], Field(default_factory=list)] = ["a"]) -> None:  # noqa: B006
            return None

    text = str(caught.value)
    assert "parameter 'tags' cannot be turned into a JSON Schema" in text
    assert "cannot specify both default and default_factory" in text
    assert "fix the declaration of parameter 'tags'" in text and "JSON-able" not in text


def test_variadic_context_parameter_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="context parameter 'ctx' is variadic and cannot be filled"):

        @tool
        async def bad(*ctx: ToolContext[Any]) -> None:
            return None


def test_variadic_arguments_are_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"\*args/\*\*kwargs parameter 'rest' cannot be described"):

        @tool
        async def bad(x: int, **rest: int) -> None:
            return None


def test_unresolvable_type_hint_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="its type hints cannot be resolved"):

        @tool
        async def bad(x: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
            return None


async def test_keyword_only_context_is_filled() -> None:
    @tool
    async def tagged(text: str, *, ctx: ToolContext[str]) -> str:
        return f"{ctx.deps}:{text}"

    registry = ToolRegistry()
    registry.register(tagged)
    result = await registry.dispatch("tagged", '{"text": "a"}', ctx=ToolContext(deps="user"))
    assert result.output.blocks == [Text("user:a")]


async def test_positional_only_parameters_are_passed_by_position() -> None:
    @tool
    async def power(base: int, exp: int = 2, /) -> int:
        return int(base**exp)

    registry = ToolRegistry()
    registry.register(power)
    assert (await registry.dispatch("power", {"base": 3})).output.structured == 9


# -- how functions run ----------------------------------------------------------


async def test_sync_function_runs_off_the_event_loop() -> None:
    loop_thread = threading.get_ident()

    @tool
    def where() -> bool:
        return threading.get_ident() != loop_thread

    registry = ToolRegistry()
    registry.register(where)
    result = await registry.dispatch("where")
    assert result.output.blocks == [Json(True)]


async def test_async_generator_streams_partials_and_collects_them_in_order() -> None:
    @tool
    async def count(n: int) -> AsyncIterator[str]:
        for i in range(n):
            yield f"step {i}"

    assert count.capabilities.io_mode is IoMode.STREAMING
    partials: list[ToolOutput] = []

    async def on_partial(output: ToolOutput) -> None:
        partials.append(output)

    registry = ToolRegistry()
    registry.register(count)
    result = await registry.dispatch("count", {"n": 3}, ctx=ToolContext(on_partial=on_partial))
    assert [p.blocks for p in partials] == [[Text("step 0")], [Text("step 1")], [Text("step 2")]]
    assert result.output.blocks == [Text("step 0"), Text("step 1"), Text("step 2")]


async def test_progress_reaches_the_host_callback() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    @tool(capabilities=ToolCapabilities(emits_progress=True))
    async def work(ctx: ToolContext[None]) -> str:
        await ctx.report_progress(1, 2, "half")
        await ctx.report_progress(2, 2)
        return "ok"

    registry = ToolRegistry()
    registry.register(work)
    result = await registry.dispatch("work", ctx=ToolContext(progress=progress))
    assert result.ok
    assert seen == [(1, 2, "half"), (2, 2, None)]
    assert registry["work"].capabilities.emits_progress


async def test_bytes_returned_at_call_time_fail_with_a_clear_operator_message() -> None:
    @tool
    async def raw() -> Any:
        return b"\x00"

    registry = ToolRegistry()
    registry.register(raw)
    result = await registry.dispatch("raw")
    assert result.error is not None
    assert result.error.kind == "internal"
    assert "returned a value with no output form" in result.error.message
    assert "Image(data, 'image/png')" in result.error.message
