"""The search row of a turn: ``search_tools``, toolmesh's own search over the turn's deferred rows.

Declared to providers without a search of their own (Chat Completions, Gemini) as a plain
function, and answered by toolmesh for the others when they ask the client to search
(the Responses API's ``tool_search`` with ``execution: "client"``, a client-side search
tool on Anthropic). A call finds the best deferred rows for the query, records them as
found on the snapshot (so they are declared from the next model call on, and may be
called) and returns their names and descriptions. The found rows themselves go on the
result's metadata (``SEARCH_FOUND``) for provider modules that answer with definitions.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import jsonschema

from toolmesh._context.context import ToolContext
from toolmesh._core.capabilities import ToolAnnotations, ToolCapabilities
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.metadata import SEARCH_FOUND
from toolmesh._rows.rows import DynamicEntry
from toolmesh._search.matches import ToolMatch
from toolmesh._search.policy import DeferPolicy

__all__ = ["SEARCH_DESCRIPTION", "make_search_row", "search_parameters"]

SEARCH_DESCRIPTION = (
    "Search the tools that are available but not loaded yet. Describe the task in a few words "
    "(for example: 'create a calendar event'); the tools found can be called from your next step."
)
_DESCRIPTION_CHARS = 300
"""How much of a found tool's description the search result repeats."""

Searcher = Callable[[str, int], Awaitable[list[ToolMatch]]]
"""``search(query, limit)``: the deferred rows found, recorded as found."""


def search_parameters(policy: DeferPolicy) -> dict[str, Any]:
    """The JSON Schema of the search row's arguments."""
    return {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The task to find tools for, in a few words."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": policy.max_search_limit,
                "description": f"How many tools to return (default {policy.search_limit}).",
            },
        },
        "required": ["query"],
    }


def make_search_row(policy: DeferPolicy, search: Searcher) -> DynamicEntry:
    """The search row of one turn, answering with ``search``."""
    parameters = search_parameters(policy)

    async def handler(arguments: dict[str, Any], ctx: ToolContext[Any]) -> dict[str, Any]:
        limit = int(arguments.get("limit", policy.search_limit))  # the schema holds 2.0 as an integer
        matches = await search(arguments["query"], min(limit, policy.max_search_limit))
        ctx.metadata[SEARCH_FOUND] = tuple(match.row for match in matches)
        tools = [
            {"name": match.name, "description": match.row.definition.description[:_DESCRIPTION_CHARS]}
            for match in matches
        ]
        if not tools:
            return {"tools": [], "hint": "No tool matches; try other words for the task."}
        return {"tools": tools}

    capabilities = ToolCapabilities(
        annotations=ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False),
        title="Search tools",
    )
    definition = ToolDefinition(policy.search_tool, SEARCH_DESCRIPTION, parameters)
    validator = jsonschema.Draft202012Validator(parameters)
    return DynamicEntry(policy.search_tool, definition, capabilities, handler, None, None, validator, True, False)
