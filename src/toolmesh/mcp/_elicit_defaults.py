"""SEP-1034: an accepted elicitation form carries the schema's default for every field left out.

Since 2025-11-25 each field of an elicitation's ``requestedSchema`` may give a ``default``
for the client to pre-fill its form with. A host's callback that accepts the form without
a field has left that field as the user was shown it: at its default. toolmesh, the MCP
client, puts those values in before the answer goes back to the server, so every host
answers as the spec's clients do whether or not its callback reads the defaults.
"""

from __future__ import annotations

from typing import Any

import mcp_types

__all__ = ["form_defaults", "with_form_defaults"]

_Value = str | int | float | bool | list[str] | None


def _usable(value: Any) -> bool:
    """A default the elicitation content may carry: a primitive, or a list of strings (multi-select)."""
    if isinstance(value, str | int | float | bool):
        return True
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def form_defaults(requested_schema: mcp_types.ElicitRequestedSchema) -> dict[str, _Value]:
    """The ``default`` of each top-level property of an elicitation's requested schema that has one."""
    properties = requested_schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {
        name: field["default"]
        for name, field in properties.items()
        if isinstance(field, dict) and "default" in field and _usable(field["default"])
    }


def with_form_defaults(
    params: mcp_types.ElicitRequestFormParams | mcp_types.ElicitRequestURLParams, result: mcp_types.ElicitResult
) -> mcp_types.ElicitResult:
    """``result`` with the schema's defaults added for the fields an accepted form left out.

    A declined or cancelled answer, a URL-mode elicitation and a field the host did give
    (even as null) are left as they are.
    """
    if result.action != "accept" or not isinstance(params, mcp_types.ElicitRequestFormParams):
        return result
    defaults = form_defaults(params.requested_schema)
    content = result.content or {}
    missing = {name: value for name, value in defaults.items() if name not in content}
    if not missing:
        return result
    return result.model_copy(update={"content": {**content, **missing}})
