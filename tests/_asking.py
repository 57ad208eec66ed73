"""Helpers for the elicitation, sampling and per-call log tests: the asking fixture and host callbacks.

    from _asking import ASKING, PROTOCOLS, asking_in_process, asking_stdio, form_answer, answer_of

`answer_of(result)` reads the JSON the asking fixture's tools answer with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types

from _servers import FIXTURES, fixture_server, stdio_params
from toolmesh import ElicitationRequest, McpServer, SamplingRequest, ToolResult

ASKING = FIXTURES / "asking_server.py"
PROTOCOLS = ["2025-11-25", "2026-07-28"]


def asking_in_process(protocol: str, label: str = "ask", **options: Any) -> McpServer:
    """A fresh asking fixture served in-process, speaking `protocol`."""
    return McpServer.in_process(label, fixture_server(ASKING), protocol=protocol, **options)


def asking_stdio(protocol: str, label: str = "ask", env: Mapping[str, str] | None = None, **options: Any) -> McpServer:
    """The asking fixture over stdio, speaking `protocol`."""
    command, args, child_env = stdio_params(ASKING, env)
    return McpServer.stdio(label, command, args, env=child_env, protocol=protocol, **options)


def asking_http(url: str, protocol: str, label: str = "ask", **options: Any) -> McpServer:
    """The asking fixture over Streamable HTTP, speaking `protocol`."""
    return McpServer.http(label, url, protocol=protocol, **options)


def answer_of(result: ToolResult) -> Any:
    """The JSON a tool of the asking fixture answered (it wraps its text as structured `result`)."""
    assert result.ok, result.error and result.error.message
    block = result.output.blocks[0]
    value = getattr(block, "value", None)
    text = value["result"] if isinstance(value, dict) else result.output.as_text()
    return json.loads(text)


class Recorder:
    """Host callbacks that answer every request and remember what they were asked."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.asked: list[ElicitationRequest | SamplingRequest] = []

    async def elicit(self, request: ElicitationRequest) -> mcp_types.ElicitResult:
        self.asked.append(request)
        return mcp_types.ElicitResult(action="accept", content={"name": f"{self.name}:{request.call_id}"})

    async def sample(self, request: SamplingRequest) -> mcp_types.CreateMessageResult:
        self.asked.append(request)
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text=f"{self.name} says hi"), model=self.name
        )
