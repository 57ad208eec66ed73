"""Building model tool calls in tests: one helper shared by the hook, turn and policy tests."""

from __future__ import annotations

from typing import Any

from toolmesh import ToolCall


def call(id: str, tool: str, **arguments: Any) -> ToolCall:
    """The call ``tool(**arguments)`` with id ``id``, as a model would send it."""
    return ToolCall.from_arguments(id, tool, arguments)
