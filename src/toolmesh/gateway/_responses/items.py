"""Output items and the response object, shaped as the ``openai`` SDK types them (``openai.types.responses``)."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from toolmesh._core.result import ToolResult
from toolmesh.providers.openai_responses import mcp_call_item

from .request import ResponsesRequest

__all__ = [
    "Usage",
    "approval_request_item",
    "call_item",
    "function_call_item",
    "list_tools_item",
    "message_item",
    "new_id",
    "response_object",
]


def new_id(prefix: str) -> str:
    """A fresh item id such as ``msg_3f2a...``."""
    return f"{prefix}_{secrets.token_hex(12)}"


@dataclass
class Usage:
    """Token counts summed over every upstream call of one response."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, usage: Any) -> None:
        """Add a Chat Completions ``usage`` (an SDK object or None)."""
        if usage is None:
            return
        self.input_tokens += getattr(usage, "prompt_tokens", 0) or 0
        self.output_tokens += getattr(usage, "completion_tokens", 0) or 0
        prompt_details = getattr(usage, "prompt_tokens_details", None)
        self.cached_tokens += getattr(prompt_details, "cached_tokens", 0) or 0
        completion_details = getattr(usage, "completion_tokens_details", None)
        self.reasoning_tokens += getattr(completion_details, "reasoning_tokens", 0) or 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "input_tokens_details": {"cached_tokens": self.cached_tokens, "cache_write_tokens": 0},
            "output_tokens": self.output_tokens,
            "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
            "total_tokens": self.input_tokens + self.output_tokens,
        }


def message_item(text: str, item_id: str, status: str = "completed") -> dict[str, Any]:
    """An assistant ``message`` with one ``output_text`` part."""
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": status,
        "content": [text_part(text)],
    }


def text_part(text: str) -> dict[str, Any]:
    """An ``output_text`` content part."""
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def function_call_item(call_id: str, name: str, arguments: str, status: str = "completed") -> dict[str, Any]:
    """A client ``function_call``: the client runs it and sends a ``function_call_output`` back."""
    return {
        "type": "function_call",
        "id": new_id("fc"),
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def list_tools_item(label: str, tools: list[dict[str, Any]], error: str | None) -> dict[str, Any]:
    """An ``mcp_list_tools`` item: what one declared server offers (or why it could not be listed)."""
    return {"type": "mcp_list_tools", "id": new_id("mcpl"), "server_label": label, "tools": tools, "error": error}


def approval_request_item(request_id: str, label: str, name: str, arguments: str) -> dict[str, Any]:
    """An ``mcp_approval_request``: the call waits for the client's ``mcp_approval_response``."""
    return {
        "type": "mcp_approval_request",
        "id": request_id,
        "server_label": label,
        "name": name,
        "arguments": arguments,
    }


def call_item(
    result: ToolResult,
    item_id: str,
    *,
    server_label: str | None = None,
    name: str | None = None,
    arguments: str | None = None,
    approval_request_id: str | None = None,
) -> dict[str, Any]:
    """An ``mcp_call`` item for a finished call (``mcp_call_item`` of the provider module, with this item's id)."""
    item = mcp_call_item(result, server_label=server_label, name=name, arguments=arguments)
    item["id"] = item_id
    item["approval_request_id"] = approval_request_id
    return item


def response_object(
    request: ResponsesRequest,
    response_id: str,
    created_at: float,
    output: list[dict[str, Any]],
    *,
    status: str,
    usage: Usage | None,
    incomplete: str | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``response`` object (the body of a non-streamed answer, and the payload of lifecycle events)."""
    tool_choice: Any = request.tool_choice if request.tool_choice is not None else "auto"
    return {
        "id": response_id,
        "object": "response",
        "created_at": created_at,
        "completed_at": time.time() if status == "completed" else None,
        "status": status,
        "model": request.model,
        "instructions": request.instructions,
        "output": output,
        "parallel_tool_calls": request.parallel_tool_calls is not False,
        "tool_choice": tool_choice,
        "tools": [tool.public() for tool in request.tools],
        "temperature": request.temperature,
        "top_p": request.top_p,
        "max_output_tokens": request.max_output_tokens,
        "max_tool_calls": request.max_tool_calls,
        "metadata": request.metadata or {},
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "error": error,
        "usage": usage.as_dict() if usage is not None else None,
        "text": request.text or {"format": {"type": "text"}},
        "user": request.user,
    }
