"""Resources and prompts of the registry's upstream MCP servers, served under namespaced names."""

from __future__ import annotations

from typing import Any

from .._registry import ToolRegistry

__all__ = ["Upstream"]


class Upstream:
    """The ``resources/*`` and ``prompts/*`` handlers of a gateway."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry

    def handlers(self) -> dict[str, Any]:
        """The low-level server's ``on_*`` handlers for resources and prompts."""
        return {}
