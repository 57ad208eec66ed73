"""ToolDefinition: what the model sees of a row."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolDefinition"]


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """The model-facing description of one tool; provider formats are made from it."""

    name: str
    """The model-visible name (the registry key)."""
    description: str
    """What the tool does, for the model."""
    parameters: Mapping[str, Any]
    """JSON Schema (an object schema) of the arguments."""
    output_schema: Mapping[str, Any] | None = None
    """JSON Schema of the structured output, when there is one."""
    _declarations: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Provider declarations made from this definition, by (format, options); see
    ``toolmesh.providers._declarations``. It lives and dies with the definition, so a
    replaced or refreshed row (a new definition) starts empty and a dead row frees it."""
