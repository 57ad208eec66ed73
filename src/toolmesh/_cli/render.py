"""What the ``toolmesh`` command prints: the catalog and results as tables and as JSON.

Tables are ``rich`` tables whose text cells are literal (``Text``), so markup in a
tool's description or a server's answer is printed as it is, never interpreted.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterable
from typing import Any

from rich.table import Table
from rich.text import Text

from toolmesh._core.output import Audio, ContentBlock, EmbeddedResource, Image, Json, ResourceLink
from toolmesh._core.output import Text as TextBlock
from toolmesh._core.result import ToolResult
from toolmesh._rows.rows import Entry, McpEntry

__all__ = ["block_json", "catalog_table", "result_json", "result_table", "row_json"]


def catalog_table(entries: Iterable[Entry], title: str = "Tools") -> Table:
    """The catalog as a rich table: name, family, source, parameters, description.

    Names are never wrapped: their column is as wide as the longest one, and the other
    columns fold into what is left.
    """
    rows = list(entries)
    table = Table(title=title, show_lines=False)
    sources = [f"{row.server}:{row.wire_name}" if isinstance(row, McpEntry) else "-" for row in rows]
    table.add_column("name", no_wrap=True, min_width=max((len(row.name) for row in rows), default=4))
    table.add_column("kind", no_wrap=True)
    table.add_column("source", no_wrap=True, min_width=max((len(source) for source in sources), default=6))
    for column in ("parameters", "description"):
        table.add_column(column, overflow="fold")
    for row, source in zip(rows, sources, strict=True):
        props = row.definition.parameters.get("properties") or {}
        required = set(row.definition.parameters.get("required") or ())
        params = ", ".join(f"{name}{'*' if name in required else ''}" for name in props)
        description = (row.definition.description or "").strip().splitlines()
        summary = description[0] if description else ""
        table.add_row(Text(row.name), row.kind, Text(source), Text(params or "-"), Text(summary))
    return table


def result_table(results: Iterable[tuple[str, ToolResult]]) -> Table:
    """Calls and their results: what the model is shown, and the error kind when it failed.

    A call's label starts with the tool name, which is never wrapped: the column is at
    least as wide as the longest name.
    """
    rows = list(results)
    table = Table(title="Calls", show_lines=True)
    longest = max((len(label.split(maxsplit=1)[0]) for label, _ in rows if label.strip()), default=4)
    table.add_column("call", overflow="fold", min_width=max(longest, 4))
    for column in ("disposition", "error kind", "the model sees", "ms"):
        table.add_column(column, overflow="fold")
    for label, result in rows:
        style = "green" if result.ok else "red"
        table.add_row(
            Text(label),
            Text(result.disposition.value, style=style),
            result.error.kind.value if result.error is not None else "-",
            Text(result.presentation.as_text()),
            f"{result.duration * 1000:.2f}",
        )
    return table


def row_json(row: Entry) -> dict[str, Any]:
    definition = row.definition
    return {
        "name": row.name,
        "kind": row.kind,
        "server": row.server if isinstance(row, McpEntry) else None,
        "wire_name": row.wire_name if isinstance(row, McpEntry) else None,
        "description": definition.description,
        "parameters": definition.parameters,
        "output_schema": definition.output_schema,
    }


def result_json(result: ToolResult) -> dict[str, Any]:
    """The whole result as JSON-able values: what ``toolmesh call --json`` prints."""
    error = result.error
    return {
        "call_id": result.call_id,
        "name": result.name,
        "kind": result.kind,
        "disposition": result.disposition.value,
        "error": None
        if error is None
        else {
            "kind": error.kind.value,
            "message": error.message,
            "retryable": error.retryable,
            "code": error.code,
            "http_status": error.http_status,
            "model_feedback": error.model_feedback,
        },
        "output": {"blocks": [block_json(b) for b in result.output], "structured": result.output.structured},
        "presentation": result.presentation.as_text(),
        "duration": result.duration,
    }


def block_json(block: ContentBlock) -> dict[str, Any]:
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case Json(value=value):
            return {"type": "json", "value": value}
        case Image() | Audio():
            return {"type": block.type, "mime_type": block.mime_type, "data": block.base64}
        case ResourceLink():
            return {"type": block.type, **dataclasses.asdict(block)}
        case EmbeddedResource(uri=uri, mime_type=mime, text=text, blob=blob):
            data = {"blob": base64.b64encode(blob).decode("ascii")} if blob is not None else {"text": text}
            return {"type": block.type, "uri": uri, "mime_type": mime, **data}
    raise AssertionError(block)  # pragma: no cover
