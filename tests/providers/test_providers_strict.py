"""OpenAI strict mode: which schemas get a strict form, what it is, and how nulls for optional parameters are undone."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

import pydantic
import pytest
from _provider_support import assert_sdk_shape
from openai.types.responses import FunctionToolParam

from toolmesh import ToolRegistry, run_tool_calls, tool
from toolmesh.providers import openai_responses as responses
from toolmesh.providers._strict import drop_optional_nulls, strict_parameters


class Color(StrEnum):
    RED = "red"
    BLUE = "blue"


class Address(pydantic.BaseModel):
    street: str
    city: str = pydantic.Field("Paris", description="The city.")


class Cat(pydantic.BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int


class Dog(pydantic.BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool = True


@tool
async def ship(address: Address, to: Address | None = None, color: Color = Color.RED, note: str | None = None) -> str:
    """Ship a parcel.

    Args:
        address: Where from.
        to: Where to.
        color: Wrapping paper.
        note: A note for the courier.
    """
    return f"{address.street}, {address.city} -> {to.city if to else '-'} in {color.value}: {note}"


@tool
async def adopt(pet: Cat | Dog = pydantic.Field(discriminator="kind")) -> str:  # noqa: B008
    """Adopt a pet."""
    return pet.kind


def schema_of(fn: Any) -> dict[str, Any]:
    registry = ToolRegistry()
    return dict(registry.register(fn).definition.parameters)


def test_optional_parameters_become_required_and_nullable_recursively() -> None:
    strict = strict_parameters(schema_of(ship))
    assert strict is not None
    assert strict["required"] == ["address", "to", "color", "note"]
    assert strict["additionalProperties"] is False
    props = strict["properties"]
    # A $ref with a description is inlined (strict mode rejects siblings of $ref).
    assert props["address"] == {"description": "Where from.", **strict["$defs"]["Address"]}
    assert props["to"] == {"description": "Where to.", "anyOf": [{"$ref": "#/$defs/Address"}, {"type": "null"}]}
    assert props["note"] == {"description": "A note for the courier.", "anyOf": [{"type": "string"}, {"type": "null"}]}
    assert props["color"] == {
        "title": "Color",
        "description": "Wrapping paper.",
        "type": ["string", "null"],
        "enum": ["red", "blue", None],
    }
    address = strict["$defs"]["Address"]
    assert address["required"] == ["street", "city"]
    assert address["additionalProperties"] is False
    assert address["properties"]["city"] == {"description": "The city.", "type": ["string", "null"]}
    assert strict["$defs"]["Color"] == {"title": "Color", "type": "string", "enum": ["red", "blue"]}


def test_discriminated_unions_become_any_of() -> None:
    strict = strict_parameters(schema_of(adopt))
    assert strict is not None
    pet = strict["properties"]["pet"]
    assert "oneOf" not in pet and "discriminator" not in pet
    assert pet["anyOf"] == [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]
    assert strict["$defs"]["Dog"]["properties"]["good"]["type"] == ["boolean", "null"]
    assert strict["$defs"]["Cat"]["properties"]["kind"] == {"type": "string", "const": "cat"}  # a tag: required
    assert strict["$defs"]["Cat"]["required"] == ["kind", "lives"]


def test_strict_declarations_validate_as_sdk_types() -> None:
    registry = ToolRegistry()
    registry.register(ship)
    registry.register(adopt)
    for item in responses.tools(registry, strict=True):
        assert_sdk_shape(FunctionToolParam, item)
        assert item["strict"] is True


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties)}


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        (obj(tags={"type": "object", "additionalProperties": {"type": "integer"}}), "free-form dict"),
        (obj(tags={"type": "object"}), "object without properties"),
        (obj(name={"type": "string", "minLength": 1}), "unsupported keyword"),
        (obj(site={"type": "string", "format": "uri"}), "unknown format"),
        (obj(pair={"type": "array", "prefixItems": [{"type": "integer"}], "items": False}), "tuple"),
        (obj(things={"type": "array"}), "array without items"),
        (obj(anything={}), "untyped value"),
        (obj(both={"allOf": [{"type": "integer"}, {"minimum": 1}]}), "allOf of two"),
        (obj(ext={"$ref": "https://example.com/schema.json"}), "remote ref"),
        ({"type": "object", "properties": {}, "additionalProperties": True}, "open root"),
        ({"anyOf": [obj(a={"type": "string"})]}, "root union"),
        ({"type": "object", "properties": {"x": True}}, "boolean schema"),
    ],
)
def test_schemas_with_no_strict_form_are_left_alone(schema: dict[str, Any], why: str) -> None:
    assert strict_parameters(schema) is None, why


def test_objects_nested_too_deep_are_not_strict() -> None:
    schema: dict[str, Any] = obj(leaf={"type": "string"})
    for _ in range(10):
        schema = obj(inner=schema)
    assert strict_parameters(schema) is None
    assert strict_parameters(schema["properties"]["inner"]) is not None


def test_recursive_models_stay_references() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
        "$defs": {"Node": obj(name={"type": "string"}, children={"type": "array", "items": {"$ref": "#/$defs/Node"}})},
    }
    strict = strict_parameters(schema)
    assert strict is not None
    assert strict["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


def test_the_input_schema_is_not_modified() -> None:
    schema = schema_of(ship)
    before = repr(schema)
    strict_parameters(schema)
    assert repr(schema) == before


def test_drop_optional_nulls() -> None:
    schema = schema_of(ship)
    arguments = {
        "address": {"street": "Rue 1", "city": None},
        "to": None,
        "color": None,
        "note": None,
        "extra": None,
    }
    assert drop_optional_nulls(arguments, schema) == {
        "address": {"street": "Rue 1"},
        "to": None,  # `to` accepts null: the model may mean it
        "note": None,
        "extra": None,  # not a parameter: left for validation to report
    }
    assert drop_optional_nulls({"address": None}, schema) == {"address": None}  # required: never dropped
    items = {
        "type": "object",
        "properties": {"xs": {"type": "array", "items": obj(a={"type": "integer"}) | {"required": []}}},
    }
    assert drop_optional_nulls({"xs": [{"a": None}, {"a": 1}]}, items) == {"xs": [{}, {"a": 1}]}


async def test_strict_round_trip_lets_defaults_apply() -> None:
    registry = ToolRegistry()
    registry.register(ship)
    snapshot = registry.snapshot()
    arguments = '{"address": {"street": "Rue 1", "city": null}, "to": null, "color": null, "note": null}'
    output = [{"type": "function_call", "call_id": "c", "name": "ship", "arguments": arguments}]
    (naive,) = await run_tool_calls(snapshot, responses.parse_tool_calls(output))
    assert not naive.ok
    (repaired,) = await run_tool_calls(snapshot, responses.parse_tool_calls(output, catalog=snapshot))
    assert repaired.ok, repaired.presentation.as_text()
    assert repaired.presentation.as_text() == "Rue 1, Paris -> - in red: None"
