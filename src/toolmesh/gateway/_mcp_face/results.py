"""A dispatched call's ``ToolResult`` as the ``CallToolResult`` the gateway answers with.

What the downstream client gets is what the model is shown (``result.presentation``),
never an error's operator detail (``error.message``, its cause, the host-only
metadata):

* an MCP row's upstream answer is passed through as it came (content annotations,
  ``_meta``, ``structuredContent``, ``isError``), when nothing changed what the model
  is shown: no hook rewrote the presentation and no presentation limit cut it. Only
  the protocol's reserved ``_meta`` keys of that hop (``io.modelcontextprotocol/*``,
  such as the upstream's ``serverInfo``) are dropped: the gateway answers as itself;
* otherwise the presentation's blocks become MCP content blocks (JSON as text), the
  structured value becomes ``structuredContent`` when it is an object (what MCP's
  ``structuredContent`` is), and a failed or refused call is ``isError``.
"""

from __future__ import annotations

import base64
from typing import Any, TypeVar

import mcp_types

from toolmesh._core.metadata import MCP_RESULT
from toolmesh._core.output import (
    Audio,
    ContentBlock,
    EmbeddedResource,
    Image,
    Json,
    ResourceLink,
    Text,
    ToolOutput,
    block_text,
    presentation_of,
)
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._rows.mcp_convert import error_text

__all__ = ["call_result", "content_block", "content_blocks", "own_hop"]


def content_block(block: ContentBlock) -> mcp_types.ContentBlock:
    """One toolmesh block as an MCP content block (a JSON value as its compact text)."""
    match block:
        case Text(text=text):
            return mcp_types.TextContent(type="text", text=text)
        case Json():
            return mcp_types.TextContent(type="text", text=block_text(block))
        case Image():
            return mcp_types.ImageContent(type="image", data=block.base64, mime_type=block.mime_type)
        case Audio():
            return mcp_types.AudioContent(type="audio", data=block.base64, mime_type=block.mime_type)
        case ResourceLink():
            return mcp_types.ResourceLink(
                type="resource_link",
                uri=block.uri,
                name=block.name,
                description=block.description,
                mime_type=block.mime_type,
                title=block.title,
                size=block.size,
            )
        case EmbeddedResource():
            return mcp_types.EmbeddedResource(type="resource", resource=resource_contents(block))
    raise AssertionError(block)  # pragma: no cover


def resource_contents(block: EmbeddedResource) -> mcp_types.TextResourceContents | mcp_types.BlobResourceContents:
    """An embedded resource's contents as MCP resource contents."""
    if block.text is not None:
        return mcp_types.TextResourceContents(uri=block.uri, mime_type=block.mime_type, text=block.text)
    blob = base64.b64encode(block.blob or b"").decode("ascii")
    return mcp_types.BlobResourceContents(uri=block.uri, mime_type=block.mime_type, blob=blob)


def content_blocks(output: ToolOutput) -> list[mcp_types.ContentBlock]:
    """Every block of ``output``, in order, as MCP content."""
    return [content_block(block) for block in output.blocks]


def _structured(result: ToolResult) -> Any:
    shown = result.presentation
    source = result.output if shown is presentation_of(result.output) else shown
    value = source.structured if any(isinstance(b, Json) for b in source.blocks) else None
    return value if isinstance(value, dict) else None


_RESERVED = "io.modelcontextprotocol/"
"""The prefix of ``_meta`` keys the protocol reserves: they describe one hop (the upstream
server's ``serverInfo``, ...), never the gateway's answer."""


R = TypeVar("R", bound=mcp_types.Result)


def own_hop(raw: R) -> R:
    """An upstream answer without that hop's reserved ``_meta`` keys (its ``serverInfo``, ...)."""
    meta = raw.meta
    if not meta or not any(key.startswith(_RESERVED) for key in meta):
        return raw
    kept = {key: value for key, value in meta.items() if not key.startswith(_RESERVED)}
    return raw.model_copy(update={"meta": kept or None})


def _passthrough(result: ToolResult) -> mcp_types.CallToolResult | None:
    """The upstream server's own answer, when the model is shown exactly what it said."""
    raw = result.metadata.get(MCP_RESULT)
    if not isinstance(raw, mcp_types.CallToolResult):
        return None
    if result.disposition is Disposition.SUCCEEDED and not raw.is_error:
        return own_hop(raw) if result.presentation is presentation_of(result.output) else None
    if result.disposition is Disposition.FAILED and raw.is_error:
        return own_hop(raw) if result.presentation.as_text() == error_text(raw) else None
    return None


def call_result(result: ToolResult) -> mcp_types.CallToolResult:
    """The ``tools/call`` answer for one dispatched call."""
    raw = _passthrough(result)
    if raw is not None:
        return raw
    failed = result.disposition in (Disposition.FAILED, Disposition.REFUSED)
    answer = mcp_types.CallToolResult(content=content_blocks(result.presentation), is_error=failed)
    if not failed:
        structured = _structured(result)
        if structured is not None:
            answer.structured_content = structured
    return answer
