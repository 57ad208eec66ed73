"""ToolResult: the outcome of one dispatched call, and its disposition."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from .errors import ErrorKind, ToolExecutionError
from .metadata import MCP_RESULT
from .output import Text, ToolOutput
from .slots import slot_constructor

__all__ = ["Disposition", "ToolResult"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Disposition(StrEnum):
    """How a call ended."""

    SUCCEEDED = "succeeded"
    """The tool ran and returned output."""
    FAILED = "failed"
    """The call went wrong (see ``error``)."""
    REFUSED = "refused"
    """Policy or the tool itself declined to run it (see ``error``)."""
    SKIPPED = "skipped"
    """A hook answered instead of the tool; the tool did not run."""


@dataclass(frozen=True, slots=True, repr=False)
class ToolResult:
    """One call's outcome: raw output, what the model is shown, error, host-only metadata."""

    call_id: str
    """The id of the call this answers (the provider's tool-call id)."""
    name: str
    """The model-visible name of the row."""
    kind: str
    """The row kind: ``native``, ``mcp``, ``dynamic``, ``hosted`` (``unknown`` for no row)."""
    disposition: Disposition
    """How the call ended."""
    output: ToolOutput
    """What the tool returned, untouched by hooks (empty when it did not run)."""
    presentation: ToolOutput
    """What the model is shown; hooks may rewrite it."""
    error: ToolExecutionError | None = None
    """Why the call failed or was refused."""
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """Host-only values (from ``ctx.metadata`` and the row, e.g. the raw MCP result)."""
    duration: float = 0.0
    """Seconds the call took."""

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.disposition is Disposition.SUCCEEDED

    def raise_for_error(self) -> ToolResult:
        """Raise the call's ``ToolExecutionError`` when it failed or was refused; else return self."""
        if self.error is not None and self.disposition in (Disposition.FAILED, Disposition.REFUSED):
            raise self.error
        return self

    @classmethod
    def failure(
        cls,
        call_id: str,
        name: str,
        kind: str,
        error: ToolExecutionError,
        *,
        metadata: Mapping[str, Any] = _EMPTY,
        duration: float = 0.0,
        output: ToolOutput | None = None,
    ) -> ToolResult:
        """A failed (or, for kind ``refused``, refused) result showing the error's model feedback."""
        disposition = Disposition.REFUSED if error.kind is ErrorKind.REFUSED else Disposition.FAILED
        return cls(
            call_id,
            name,
            kind,
            disposition,
            output if output is not None else ToolOutput(),
            ToolOutput([Text(error.model_feedback)]),
            error,
            metadata,
            duration,
        )

    @property
    def mcp_result(self) -> Any:
        """The raw ``mcp_types.CallToolResult`` of an MCP row's call (None when there was none)."""
        return self.metadata.get(MCP_RESULT)

    def __repr__(self) -> str:
        error = f", error_kind={self.error.kind.value!r}" if self.error is not None else ""
        return (
            f"ToolResult(call_id={self.call_id!r}, name={self.name!r}, kind={self.kind!r}, "
            f"disposition={self.disposition.value!r}{error}, output={self.output!r}, "
            f"duration={self.duration:.6f})"
        )


new_result: Callable[
    [str, str, str, Disposition, ToolOutput, ToolOutput, ToolExecutionError | None, Mapping[str, Any], float],
    ToolResult,
] = slot_constructor(ToolResult)
"""``ToolResult(...)`` with every field given by position, for the dispatch hot path (see ``_hot_path``)."""
