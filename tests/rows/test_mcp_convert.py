"""mcp_types <-> toolmesh conversions (toolmesh._rows.mcp_convert), on the SDK's own wire types."""

from __future__ import annotations

import base64

import mcp_types as t
import pytest

from toolmesh import Audio, EmbeddedResource, Image, Json, ResourceLink, TaskSupport, Text
from toolmesh._core.output import presentation_of
from toolmesh._rows.mcp_convert import (
    call_result_to_output,
    error_text,
    resource_contents_to_blocks,
    tool_capabilities,
    tool_definition,
    tool_title,
)

PNG = b"\x89PNG\r\n\x1a\nfake"
WAV = b"RIFF....WAVEfmt "


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def result(*content: t.ContentBlock, structured: object = None, **extra: object) -> t.CallToolResult:
    data: dict[str, object] = {"content": list(content), **extra}
    if structured is not None:
        data["structured_content"] = structured
    return t.CallToolResult(**data)  # type: ignore[arg-type]


def test_every_block_type_keeps_its_order() -> None:
    output = call_result_to_output(
        result(
            t.TextContent(type="text", text="first"),
            t.ImageContent(type="image", data=b64(PNG), mime_type="image/png"),
            t.AudioContent(type="audio", data=b64(WAV), mime_type="audio/wav"),
            t.ResourceLink(
                type="resource_link",
                uri="file:///a.txt",
                name="a.txt",
                title="A",
                description="the a file",
                mime_type="text/plain",
                size=3,
            ),
            t.EmbeddedResource(
                type="resource", resource=t.TextResourceContents(uri="mem://t", mime_type="text/plain", text="inline")
            ),
            t.EmbeddedResource(
                type="resource", resource=t.BlobResourceContents(uri="mem://b", mime_type="image/png", blob=b64(PNG))
            ),
            t.TextContent(type="text", text="last"),
        )
    )
    assert list(output) == [
        Text("first"),
        Image(PNG, "image/png"),
        Audio(WAV, "audio/wav"),
        ResourceLink("file:///a.txt", "a.txt", "the a file", "text/plain", "A", 3),
        EmbeddedResource("mem://t", "text/plain", text="inline"),
        EmbeddedResource("mem://b", "image/png", blob=PNG),
        Text("last"),
    ]


def test_structured_content_is_kept_for_the_host_and_the_model_sees_the_content() -> None:
    # Issue 7 #2: the model never sees one value twice; structuredContent stays on output.
    image = t.ImageContent(type="image", data=b64(PNG), mime_type="image/png")
    output = call_result_to_output(
        result(image, t.TextContent(type="text", text='{\n  "sum": 3\n}'), structured={"sum": 3})
    )
    assert list(output) == [Json({"sum": 3}), Image(PNG, "image/png"), Text('{\n  "sum": 3\n}')]
    assert output.structured == {"sum": 3}
    assert list(presentation_of(output)) == [Image(PNG, "image/png"), Text('{\n  "sum": 3\n}')]


def test_a_wrapped_primitive_is_shown_once() -> None:
    output = call_result_to_output(result(t.TextContent(type="text", text="next"), structured={"result": "next"}))
    assert output.structured == {"result": "next"}
    assert list(presentation_of(output)) == [Text("next")]


def test_structured_content_alone_is_shown_as_json() -> None:
    output = call_result_to_output(result(structured={"sum": 3}))
    assert list(output) == [Json({"sum": 3})]
    assert list(presentation_of(output)) == [Json({"sum": 3})]


def test_text_is_never_parsed_beside_structured_content() -> None:
    deep = "[" * 100_000 + "]" * 100_000  # Issue 8 #6: a deeply nested JSON text block
    output = call_result_to_output(result(t.TextContent(type="text", text=deep), structured={"a": 1}))
    assert list(presentation_of(output)) == [Text(deep)]


def test_plain_text_is_never_parsed() -> None:
    assert list(call_result_to_output(result(t.TextContent(type="text", text='{"a": 1}')))) == [Text('{"a": 1}')]


def test_bad_base64_is_an_error() -> None:
    with pytest.raises(ValueError, match="base64"):
        call_result_to_output(result(t.ImageContent(type="image", data="***", mime_type="image/png")))


def test_error_text() -> None:
    assert error_text(result(t.TextContent(type="text", text="a"), t.TextContent(type="text", text="b"))) == "a\nb"
    assert error_text(result(structured={"code": "E1"})) == '{"code":"E1"}'
    assert "without any detail" in error_text(result())


def test_resource_contents() -> None:
    output = resource_contents_to_blocks(
        [
            t.TextResourceContents(uri="demo://readme", mime_type="text/plain", text="hi"),
            t.BlobResourceContents(uri="demo://x.png", mime_type="image/png", blob=b64(PNG)),
        ]
    )
    assert list(output) == [
        EmbeddedResource("demo://readme", "text/plain", text="hi"),
        EmbeddedResource("demo://x.png", "image/png", blob=PNG),
    ]


def test_tool_definition_and_capabilities() -> None:
    tool = t.Tool(
        name="search",
        title="Search the docs",
        description="Find pages.",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        output_schema={"type": "object", "properties": {"hits": {"type": "array"}}},
        annotations=t.ToolAnnotations(title="Search (annotation)", read_only_hint=True, open_world_hint=True),
        icons=[t.Icon(src="https://example.com/i.png", mime_type="image/png", sizes=["48x48"])],
        execution=t.ToolExecution(task_support="optional"),
        _meta={"vendor/x": 1},
    )
    definition = tool_definition("docs__search", tool)
    assert definition.name == "docs__search"
    assert definition.description == "Find pages."
    assert definition.parameters == tool.input_schema
    assert definition.output_schema == tool.output_schema
    caps = tool_capabilities(tool)
    assert caps.title == "Search the docs"
    assert caps.annotations is not None and caps.annotations.read_only is True
    assert caps.annotations.open_world is True and caps.annotations.destructive is None
    assert caps.annotations.title == "Search (annotation)"
    assert caps.icons == ({"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]},)
    assert caps.task_support is TaskSupport.OPTIONAL
    assert caps.meta == {"vendor/x": 1}
    assert caps.output_schema == tool.output_schema


def test_title_precedence() -> None:
    schema = {"type": "object"}
    assert tool_title(t.Tool(name="n", input_schema=schema)) == "n"
    assert tool_title(t.Tool(name="n", input_schema=schema, annotations=t.ToolAnnotations(title="A"))) == "A"
    assert tool_title(t.Tool(name="n", title="T", input_schema=schema, annotations=t.ToolAnnotations(title="A"))) == "T"
    bare = tool_capabilities(t.Tool(name="n", input_schema=schema))
    assert bare.task_support is TaskSupport.FORBIDDEN and bare.annotations is None and bare.icons == ()
    assert tool_definition("n", t.Tool(name="n", input_schema=schema)).description == ""
