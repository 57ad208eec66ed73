"""ToolDefinition: what the model sees of a row."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
