"""Parts of the upstream's Chat Completions request that the Responses request words differently."""

from __future__ import annotations

from typing import Any

from .request import FunctionToolSpec
from .servers import Declared

__all__ = ["function_tool", "response_format", "server_descriptions"]


def server_descriptions(servers: list[Declared]) -> dict[str, Any] | None:
    """A system message telling the model what each declared server is for (their ``server_description``)."""
    lines = [
        f"- {server.label}: {server.spec.server_description}"
        for server in servers
        if server.spec.server_description and server.rows
    ]
    if not lines:
        return None
    return {
        "role": "system",
        "content": "The tools named <server>__<tool> come from these MCP servers:\n" + "\n".join(lines),
    }


def response_format(text: dict[str, Any] | None) -> dict[str, Any] | None:
    """``text.format`` as Chat Completions' ``response_format`` (None: plain text)."""
    fmt = (text or {}).get("format") or {}
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    if fmt.get("type") != "json_schema":
        return None
    schema: dict[str, Any] = {"name": fmt.get("name", "output"), "schema": fmt.get("schema", {})}
    if fmt.get("strict") is not None:
        schema["strict"] = fmt["strict"]
    if fmt.get("description"):
        schema["description"] = fmt["description"]
    return {"type": "json_schema", "json_schema": schema}


def function_tool(tool: FunctionToolSpec) -> dict[str, Any]:
    function: dict[str, Any] = {
        "name": tool.name,
        "parameters": tool.parameters or {"type": "object", "properties": {}},
    }
    if tool.description:
        function["description"] = tool.description
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": function}
