"""Conversions between the MCP wire types (``mcp_types``) and toolmesh's own types.

* a discovered ``Tool`` becomes a ``ToolDefinition`` (the server's ``inputSchema`` as
  parameters) and ``ToolCapabilities`` (title, annotations, icons, outputSchema,
  ``execution.taskSupport``, ``_meta``);
* a ``CallToolResult`` becomes a ``ToolOutput``: the ``content`` blocks in order (text,
  images, audio, resource links, embedded resources), after one JSON block of the
  ``structuredContent`` when there is one. The model is shown the ``content`` blocks
  only (servers send the structured value as text too), or the JSON block when
  ``content`` is empty: it never sees one value twice;
* a ``ReadResourceResult`` becomes ``EmbeddedResource`` blocks.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types

from toolmesh._core.capabilities import IoMode, TaskSupport, ToolAnnotations, ToolCapabilities
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.output import (
    Audio,
    ContentBlock,
    EmbeddedResource,
    Image,
    Json,
    PresentedOutput,
    ResourceLink,
    Text,
    ToolOutput,
)
from toolmesh._core.slots import slot_constructor

__all__ = [
    "call_result_to_output",
    "content_to_block",
    "error_text",
    "resource_contents_to_blocks",
    "tool_capabilities",
    "tool_definition",
    "tool_title",
]

_EMPTY_OBJECT_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


def tool_title(tool: mcp_types.Tool) -> str:
    """The display title: ``title``, then ``annotations.title``, then the name (MCP's precedence)."""
    if tool.title:
        return tool.title
    if tool.annotations is not None and tool.annotations.title:
        return tool.annotations.title
    return tool.name


_new_definition = slot_constructor(ToolDefinition)
_new_capabilities = slot_constructor(ToolCapabilities)


def tool_definition(name: str, tool: mcp_types.Tool) -> ToolDefinition:
    """What the model sees of ``tool`` under the model-visible ``name``."""
    parameters: Mapping[str, Any] = tool.input_schema or _EMPTY_OBJECT_SCHEMA
    definition: ToolDefinition = _new_definition(name, tool.description or "", parameters, tool.output_schema)
    return definition


def _annotations(tool: mcp_types.Tool) -> ToolAnnotations | None:
    hints = tool.annotations
    if hints is None:
        return None
    return ToolAnnotations(
        read_only=hints.read_only_hint,
        destructive=hints.destructive_hint,
        idempotent=hints.idempotent_hint,
        open_world=hints.open_world_hint,
        title=hints.title,
    )


def _task_support(tool: mcp_types.Tool, modern: bool) -> TaskSupport | None:
    execution = tool.execution
    value = execution.task_support if execution is not None else None
    if value:
        return TaskSupport(value)
    # 2025-11-25's default when a tool says nothing: it cannot run as a task. On 2026-07-28
    # tools carry no execution field and the server decides per call: not known.
    return None if modern else TaskSupport.FORBIDDEN


def tool_capabilities(tool: mcp_types.Tool, *, modern: bool = False) -> ToolCapabilities:
    """The host-only facts a server advertises about ``tool`` (``modern``: listed on 2026-07-28)."""
    icons = (
        tuple(icon.model_dump(mode="json", by_alias=True, exclude_none=True) for icon in tool.icons)
        if tool.icons
        else ()
    )
    # every field by position, in ToolCapabilities' order (discovery makes thousands)
    capabilities: ToolCapabilities = _new_capabilities(
        _task_support(tool, modern),  # task_support
        tool.output_schema,  # output_schema
        False,  # emits_progress
        False,  # may_elicit
        False,  # may_sample
        IoMode.UNARY,  # io_mode
        _annotations(tool),  # annotations
        tool_title(tool),  # title
        None,  # notes
        icons,  # icons
        tool.meta,  # meta
    )
    return capabilities


def _decode(data: str, what: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"the server sent {what} data that is not valid base64") from exc


def _resource(contents: mcp_types.TextResourceContents | mcp_types.BlobResourceContents) -> EmbeddedResource:
    if isinstance(contents, mcp_types.TextResourceContents):
        return EmbeddedResource(str(contents.uri), contents.mime_type, text=contents.text)
    return EmbeddedResource(str(contents.uri), contents.mime_type, blob=_decode(contents.blob, "resource blob"))


def content_to_block(content: mcp_types.ContentBlock) -> ContentBlock:
    """One MCP content block as a toolmesh block (annotations stay on the raw result).

    Raises:
        ValueError: for image, audio or blob data that is not base64.
    """
    match content:
        case mcp_types.TextContent():
            return Text(content.text)
        case mcp_types.ImageContent():
            return Image(_decode(content.data, "image"), content.mime_type)
        case mcp_types.AudioContent():
            return Audio(_decode(content.data, "audio"), content.mime_type)
        case mcp_types.ResourceLink():
            return ResourceLink(
                str(content.uri),
                content.name,
                content.description,
                content.mime_type,
                content.title,
                content.size,
            )
        case mcp_types.EmbeddedResource():
            return _resource(content.resource)
    raise ValueError(f"unsupported MCP content block of type {getattr(content, 'type', type(content).__name__)!r}")


def call_result_to_output(result: mcp_types.CallToolResult) -> ToolOutput:
    """A ``CallToolResult`` as a ``ToolOutput``: structured value first, then ``content``.

    With ``structuredContent``, the output is a ``PresentedOutput`` whose presentation
    (what the model is shown) is the ``content`` blocks alone, or the structured value
    as one JSON block when ``content`` is empty. Text is never parsed.

    Raises:
        ValueError: for binary data that is not base64.
    """
    blocks = [content_to_block(content) for content in result.content]
    if result.structured_content is None and "structured_content" not in result.model_fields_set:
        return ToolOutput(blocks)
    structured = Json(result.structured_content)
    if not blocks:
        return ToolOutput([structured])
    return PresentedOutput([structured, *blocks], ToolOutput(blocks))


def error_text(result: mcp_types.CallToolResult) -> str:
    """What the model is shown for an ``isError`` result: the server's own text.

    Text blocks joined; without any text, the structured content as JSON; without
    either, a note that the server gave no detail.
    """
    texts = [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        try:
            return json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
        except (ValueError, RecursionError):
            return "The tool reported an error; its structured detail could not be shown."
    return "The tool reported an error without any detail."


def resource_contents_to_blocks(
    contents: Sequence[mcp_types.TextResourceContents | mcp_types.BlobResourceContents],
) -> ToolOutput:
    """The contents of a ``resources/read`` answer, as embedded-resource blocks in order.

    Raises:
        ValueError: for a blob that is not base64.
    """
    return ToolOutput([_resource(item) for item in contents])
