"""ToolResult: the outcome of one dispatched call, and its disposition."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from ._hot_path import slot_constructor
from .errors import ErrorKind, ToolExecutionError
from .output import Text, ToolOutput

__all__ = [
    "MCP_ARGUMENTS",
    "MCP_META",
    "MCP_RESULT",
    "MCP_SERVER_LABEL",
    "MCP_WIRE_NAME",
    "Disposition",
    "ToolResult",
]

_EMPTY: Mapping[str, Any] = MappingProxyType({})

# Keys an MCP row records on ``ToolResult.metadata`` (host-only, never shown to the model).
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

# JSON-RPC codes reported for failures that did not come with a code of their own.
_JSONRPC_CODES: Mapping[str, int] = MappingProxyType(
    {
        "invalid_arguments": -32602,
        "not_found": -32602,
        "timeout": -32001,
        "unavailable": -32000,
        "cancelled": -32800,
    }
)


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

    def to_mcp_call_item(
        self,
        *,
        server_label: str | None = None,
        name: str | None = None,
        arguments: str | Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """This result as the OpenAI Responses API ``mcp_call`` output item.

        The server label, the wire name and the arguments are read from the metadata an
        MCP row records (``MCP_SERVER_LABEL``, ``MCP_WIRE_NAME``, ``MCP_ARGUMENTS``);
        pass them for results that have none (a call refused before it reached the row).
        A failure is reported the way OpenAI reports it: ``mcp_tool_execution_error``
        with the server's content for an ``isError`` result, ``mcp_protocol_error``
        with a JSON-RPC code otherwise (``http_error`` when an HTTP status is known).

        Raises:
            ValueError: when no server label or wire name is known.
        """
        label = server_label if server_label is not None else self.metadata.get(MCP_SERVER_LABEL)
        wire = name if name is not None else self.metadata.get(MCP_WIRE_NAME)
        if label is None or wire is None:
            raise ValueError(
                f"result of {self.name!r} (a {self.kind} row) has no MCP server label or wire name; "
                "pass server_label= and name= to describe it as an mcp_call item"
            )
        args = arguments if arguments is not None else self.metadata.get(MCP_ARGUMENTS)
        item: dict[str, Any] = {
            "type": "mcp_call",
            "id": self.call_id,
            "server_label": label,
            "name": wire,
            "arguments": args if isinstance(args, str) else json.dumps(dict(args or {}), ensure_ascii=False),
            "output": None,
            "error": None,
            "status": "completed",
        }
        if self.disposition in (Disposition.SUCCEEDED, Disposition.SKIPPED):
            item["output"] = self.presentation.as_text()
            return item
        item["status"] = "incomplete" if self.error is not None and self.error.kind.value == "cancelled" else "failed"
        item["error"] = self._mcp_call_error()
        return item

    def _mcp_call_error(self) -> dict[str, Any]:
        raw = self.mcp_result
        if raw is not None and getattr(raw, "is_error", False):
            content = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in raw.content]
            return {"type": "mcp_tool_execution_error", "content": content}
        error = self.error
        message = self.presentation.as_text()
        if error is not None and error.http_status is not None:
            return {"type": "http_error", "code": error.http_status, "message": message}
        code = error.code if error is not None and isinstance(error.code, int) else None
        if code is None:
            code = _JSONRPC_CODES.get(error.kind.value if error is not None else "", -32603)
        return {"type": "mcp_protocol_error", "code": code, "message": message}

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
