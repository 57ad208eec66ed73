"""Native tools validate arguments with the argument model's fields alone: same dict, same errors as the model."""

from __future__ import annotations

import enum
from typing import Annotated, Any

import pydantic
import pytest

from toolmesh import ErrorKind, Text, ToolExecutionError, ToolOutput, ToolRegistry, tool
from toolmesh._rows.function_schema import fields_validator, function_schema


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(pydantic.BaseModel):
    x: int
    y: int = 0


class Tree(pydantic.BaseModel):
    label: str
    children: list[Tree] = []


async def mixed(
    name: Annotated[str, pydantic.Field(min_length=2)],
    count: int = 3,
    tags: list[str] | None = None,
    colour: Colour = Colour.RED,
    where: Point | None = None,
    tree: Tree | None = None,
) -> str:
    return name


CASES: list[Any] = [
    '{"name": "ab"}',
    '{"name": "ab", "count": "7", "tags": ["a"], "colour": "blue"}',
    '{"name": "ab", "where": {"x": 1}, "tree": {"label": "r", "children": [{"label": "c"}]}}',
    {"name": "abc", "count": 2},
    '{"name": "a"}',
    '{"name": "ab", "count": "many"}',
    '{"name": "ab", "surprise": 1}',
    '{"name": "ab", "tree": {"children": []}}',
    '{"count": 1}',
    "[1, 2]",
]


def _outcome(validate: Any, arguments: Any) -> Any:
    try:
        return ("ok", validate(arguments))
    except pydantic.ValidationError as exc:
        return ("error", exc.title, exc.errors(include_url=False))


@pytest.mark.parametrize("arguments", CASES)
def test_fields_alone_give_the_models_dict_and_its_errors(arguments: Any) -> None:
    model = function_schema(mixed, "mixed").args_model
    fields = fields_validator(model)
    method = "validate_json" if isinstance(arguments, str) else "validate_python"
    by_model = _outcome(lambda a: getattr(model.__pydantic_validator__, method)(a).__dict__, arguments)
    by_fields = _outcome(lambda a: getattr(fields, method)(a)[0], arguments)
    assert by_fields == by_model


def test_a_model_with_its_own_validators_is_validated_whole() -> None:
    class Ordered(pydantic.BaseModel):
        low: int
        high: int

        @pydantic.model_validator(mode="after")
        def _ordered(self) -> Ordered:
            if self.low > self.high:
                raise ValueError("low must not exceed high")
            return self

    fields = fields_validator(Ordered)
    assert fields.validate_json('{"low": 1, "high": 2}')[0] == {"low": 1, "high": 2}
    with pytest.raises(pydantic.ValidationError, match="low must not exceed high"):
        fields.validate_json('{"low": 3, "high": 2}')


async def test_dispatch_reports_field_errors_to_the_model() -> None:
    registry = ToolRegistry()
    registry.register(tool(mixed))
    result = await registry.dispatch("mixed", '{"name": "ab", "surprise": 1, "count": "many"}')
    assert isinstance(result.error, ToolExecutionError) and result.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert "surprise" in result.error.model_feedback and "count" in result.error.model_feedback
    good = await registry.dispatch("mixed", {"name": "abc", "where": {"x": 2}})
    assert good.ok and good.output == ToolOutput([Text("abc")])


async def test_parameters_named_like_model_methods_work_without_warnings(recwarn: pytest.WarningsRecorder) -> None:
    async def shadowing(json: str, schema: int = 1, copy: bool = False) -> str:
        return f"{json}:{schema}:{copy}"

    registry = ToolRegistry()
    registry.register(tool(shadowing))
    result = await registry.dispatch("shadowing", '{"json": "a", "schema": 2}')
    assert result.output == ToolOutput([Text("a:2:False")])
    assert not [w for w in recwarn.list if "shadows an attribute" in str(w.message)]
