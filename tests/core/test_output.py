"""The rule that turns a tool's return value into ToolOutput, case by case."""

from __future__ import annotations

import dataclasses
import datetime
import enum

import pydantic
import pytest

from toolmesh import (
    Audio,
    EmbeddedResource,
    Image,
    Json,
    OutputConversionError,
    ResourceLink,
    Text,
    ToolOutput,
    to_output,
)

PNG = b"\x89PNG\r\n\x1a\nfake"


def test_str_stays_text_even_when_it_looks_like_json() -> None:
    output = to_output('{"a": 1}')
    assert output.blocks == [Text('{"a": 1}')]
    assert output[0].type == "text"


@pytest.mark.parametrize("value", [{"a": 1}, [1, 2], 3, 2.5, True, None])
def test_json_able_values_become_one_json_block(value: object) -> None:
    assert to_output(value).blocks == [Json(value)]


def test_pydantic_model_becomes_json_of_its_dump() -> None:
    class City(pydantic.BaseModel):
        name: str
        founded: datetime.date

    output = to_output(City(name="Rome", founded=datetime.date(753, 4, 21)))
    assert output.blocks == [Json({"name": "Rome", "founded": "0753-04-21"})]


def test_dataclass_becomes_json() -> None:
    @dataclasses.dataclass
    class Point:
        x: int
        y: int

    assert to_output(Point(1, 2)).blocks == [Json({"x": 1, "y": 2})]


def test_enum_and_date_become_json() -> None:
    class Color(enum.Enum):
        RED = "red"

    assert to_output(Color.RED).blocks == [Json("red")]
    assert to_output(datetime.date(2026, 1, 2)).blocks == [Json("2026-01-02")]


def test_blocks_keep_type_and_order() -> None:
    blocks = [
        Text("a"),
        Image(PNG, "image/png"),
        Json({"k": 1}),
        Audio(b"RIFF", "audio/wav"),
        ResourceLink("file:///x", "x"),
        EmbeddedResource("file:///y", "text/plain", text="hello"),
    ]
    output = to_output(blocks)
    assert output.blocks == blocks
    assert [b.type for b in output] == ["text", "image", "json", "audio", "resource_link", "resource"]


def test_single_block_and_tool_output_are_kept() -> None:
    image = Image(PNG, "image/png")
    assert to_output(image).blocks == [image]
    explicit = ToolOutput([Text("x"), image])
    assert to_output(explicit) is explicit


def test_mixed_list_with_blocks_converts_other_items_by_the_same_rule() -> None:
    output = to_output([Text("caption"), {"n": 1}, "plain"])
    assert output.blocks == [Text("caption"), Json({"n": 1}), Text("plain")]


def test_list_without_blocks_is_json() -> None:
    assert to_output(["a", "b"]).blocks == [Json(["a", "b"])]


def test_bytes_without_mime_type_are_an_error_that_says_what_to_do() -> None:
    with pytest.raises(OutputConversionError, match=r"bytes, which have no MIME type; return Image\(data"):
        to_output(b"\x00\x01")


def test_unserialisable_value_is_an_error_naming_the_type() -> None:
    class Opaque:
        pass

    with pytest.raises(OutputConversionError, match="returned a Opaque, which cannot be converted to JSON"):
        to_output(Opaque())


def test_image_needs_bytes_and_a_mime_type() -> None:
    with pytest.raises(TypeError, match="mime_type must be a MIME type"):
        Image(PNG, "png")
    with pytest.raises(TypeError, match=r"Image.data must be bytes"):
        Image("not bytes", "image/png")  # type: ignore[arg-type]


def test_embedded_resource_needs_exactly_one_of_text_or_blob() -> None:
    with pytest.raises(TypeError, match="exactly one of text= or blob="):
        EmbeddedResource("file:///x")
    with pytest.raises(TypeError, match="exactly one"):
        EmbeddedResource("file:///x", text="a", blob=b"b")


def test_tool_output_refuses_non_blocks() -> None:
    with pytest.raises(TypeError, match="ToolOutput item 1 is a dict, not a content block"):
        ToolOutput([Text("a"), {"a": 1}])  # type: ignore[list-item]


def test_as_text_flattens_every_block_visibly() -> None:
    output = ToolOutput([Text("hi"), Json({"a": 1}), Image(PNG, "image/png"), ResourceLink("u://1", "one")])
    assert output.as_text() == 'hi\n{"a":1}\n[image: image/png]\n[resource link: one <u://1>]'
    assert output.structured == {"a": 1}


def test_image_repr_does_not_dump_bytes() -> None:
    assert repr(Image(PNG, "image/png")) == f"Image(mime_type='image/png', size={len(PNG)})"
