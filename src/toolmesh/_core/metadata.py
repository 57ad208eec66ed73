"""The keys MCP rows record on ``ToolResult.metadata`` (host-only, never shown to the model).

A neutral module: the rows (``McpEntry``), the MCP connection and the provider formats
all read or write these keys without depending on one another. The public home is
``toolmesh.mcp``.
"""

from __future__ import annotations

__all__ = [
    "MCP_ARGUMENTS",
    "MCP_ASKED",
    "MCP_META",
    "MCP_RESULT",
    "MCP_SERVER_LABEL",
    "MCP_TASK_ID",
    "MCP_WIRE_NAME",
    "SEARCH_FOUND",
]

MCP_SERVER_LABEL = "mcp.server_label"
"""The label of the server that ran the call."""
MCP_WIRE_NAME = "mcp.wire_name"
"""The server's own tool name, as sent in ``tools/call``."""
MCP_ARGUMENTS = "mcp.arguments"
"""The arguments sent (a dict, or None for none)."""
MCP_RESULT = "mcp.result"
"""The raw ``mcp_types.CallToolResult``, when the server answered with one."""
MCP_META = "mcp.meta"
"""The ``_meta`` of that result, when it had one."""
MCP_TASK_ID = "mcp.task_id"
"""The id of the MCP task the call ran as, when it ran as one."""
MCP_ASKED = "mcp.asked"
"""What the server asked the host for during the call (elicitation, sampling), one dict per
request, in order: ``kind``, ``mode`` (elicitation), ``message``, ``answered`` and, when
answered, ``action`` (elicitation) or ``model`` (sampling); else ``reason``."""
SEARCH_FOUND = "toolmesh.search.found"
"""On a turn's search row call: the rows it found, in rank order (a tuple of rows), so a provider
module can answer the search with its own item (``tool_search_output``, ``tool_reference`` blocks)."""
