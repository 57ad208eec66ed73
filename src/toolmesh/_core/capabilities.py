"""What a row can do beyond its schema: host-only metadata about a tool.

None of this is part of the model-facing definition, except where a provider format
has a field for it (the gateway passes annotations on, for instance).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["IoMode", "TaskSupport", "ToolAnnotations", "ToolCapabilities"]


class TaskSupport(StrEnum):
    """MCP ``execution.taskSupport``: whether a tool may or must run as a task."""

    FORBIDDEN = "forbidden"
    OPTIONAL = "optional"
    REQUIRED = "required"


class IoMode(StrEnum):
    """Whether a tool returns one output (unary) or yields partial outputs (streaming)."""

    UNARY = "unary"
    STREAMING = "streaming"


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """Behaviour hints, as MCP defines them; hints, not guarantees."""

    read_only: bool | None = None
    """The tool does not modify its environment."""
    destructive: bool | None = None
    """The tool may perform destructive updates (meaningful when not read-only)."""
    idempotent: bool | None = None
    """Calling it again with the same arguments has no further effect."""
    open_world: bool | None = None
    """The tool talks to an open world of external entities (e.g. the web)."""
    title: str | None = None
    """A human-readable title given with the annotations."""


@dataclass(frozen=True, slots=True)
class ToolCapabilities:
    """Host-only facts about a row: what it returns, how it runs, what it may ask for."""

    task_support: TaskSupport | None = None
    """MCP task support; ``None`` for native tools, which have no task protocol, and for MCP
    tools listed on 2026-07-28, which do not say (the server decides per call)."""
    output_schema: Mapping[str, Any] | None = None
    """JSON Schema of the structured output, when the tool declares one."""
    emits_progress: bool = False
    """The tool reports progress through its context."""
    may_elicit: bool = False
    """The tool may ask the user for input (MCP elicitation)."""
    may_sample: bool = False
    """The tool may ask the host's model for a completion (MCP sampling)."""
    io_mode: IoMode = IoMode.UNARY
    """Unary, or streaming partial outputs."""
    annotations: ToolAnnotations | None = None
    """Behaviour hints: read-only, destructive, idempotent, open-world."""
    title: str | None = None
    """A display title for people (not the model-visible name)."""
    notes: str | None = None
    """Free text for operators."""
    icons: tuple[Mapping[str, Any], ...] = ()
    """Icons the server advertised for the tool, as MCP ``Icon`` objects in JSON form."""
    meta: Mapping[str, Any] | None = field(default=None)
    """The tool's MCP ``_meta``, untouched."""
