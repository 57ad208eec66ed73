"""One ``tools/call`` of a profile: the call run through the gateway's hooks, its result as MCP's.

Both ways a call reaches a profile use it: the SDK's server (``ProfileFace``) and the
lean path (``lean``). The call runs against the profile's snapshot, so a row outside
the profile is unknown; a request's W3C trace context (``_meta``'s ``traceparent``) is
the parent of the dispatch's span when the SDK's own span is not already current.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import mcp_types
from mcp.shared._otel import extract_trace_context
from opentelemetry import context as otel_context
from opentelemetry import trace

from toolmesh._context.context import ToolContext, new_call_id
from toolmesh._core.calls import ToolCall
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._dispatch.turn import run_tool_calls
from toolmesh._hooks.stack import HookStack

from .results import call_result

__all__ = ["run_call"]


async def run_call(
    snapshot: ToolSnapshot,
    hooks: HookStack,
    params: mcp_types.CallToolRequestParams,
    meta: Mapping[str, Any] | None,
    context: Callable[[ToolCall], ToolContext[Any]],
) -> mcp_types.CallToolResult:
    """Run the call ``params`` names against ``snapshot`` through ``hooks``; ``context`` makes its ``ToolContext``."""
    call = ToolCall.from_arguments(new_call_id(), params.name, params.arguments)
    parent = extract_trace_context(meta) if meta else None
    token = None
    if parent is not None and not trace.get_current_span().get_span_context().is_valid:
        token = otel_context.attach(parent)  # the SDK's own span is off: continue the caller's trace here
    try:
        turn = await run_tool_calls(snapshot, [call], ctx_factory=context, hooks=hooks, max_concurrency=1)
    finally:
        if token is not None:
            otel_context.detach(token)
    return call_result(turn.results[0])
