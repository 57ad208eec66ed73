"""The realistic tool the scale benchmarks use: a 190-character description, a 640-byte schema.

``bench/provider_export.py`` declares rows of this shape, and ``bench/scale_server.py``
serves MCP tools of it, so the figures of both describe the same catalog.
"""

from __future__ import annotations

from typing import Any

DESCRIPTION = (
    "Search the issue tracker of the given repository for issues matching a free-text query, "
    "optionally filtered by state and label, and return the newest matches with their titles and URLs."
)


def schema(i: int) -> dict[str, Any]:
    """Tool ``i``'s parameters: six typed properties, two required, closed (strict-compatible but for defaults)."""
    return {
        "type": "object",
        "properties": {
            "repository": {"type": "string", "description": "Owner and name, such as 'octo/widgets'."},
            "query": {"type": "string", "description": f"Words to look for in titles and bodies ({i})."},
            "state": {"type": "string", "enum": ["open", "closed", "all"], "default": "open"},
            "labels": {"type": "array", "items": {"type": "string"}, "description": "Labels every match carries."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            "since": {"type": "string", "format": "date-time", "description": "Only issues updated after this."},
        },
        "required": ["repository", "query"],
        "additionalProperties": False,
    }
