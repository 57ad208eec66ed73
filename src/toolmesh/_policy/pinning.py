"""Definition pinning: a call runs only against the definition that was approved."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.errors import ToolmeshError
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._hooks.actions import PROCEED, Hook, Refuse, ToolCallAction
from toolmesh._rows.rows import Entry

__all__ = ["DefinitionPinning", "definition_digest"]


def definition_digest(definition: ToolDefinition) -> str:
    """The sha256 (hex) of a definition's canonical JSON: name, description, parameters, output schema."""
    canonical = json.dumps(
        {
            "name": definition.name,
            "description": definition.description,
            "parameters": definition.parameters,
            "output_schema": definition.output_schema,
        },
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class DefinitionPinning(Hook):
    """Refuse calls to rows whose definition changed since it was approved, until re-approved.

    ``pin(rows)`` approves the definitions the host (or its user) reviewed. A row whose
    name, description, parameters or output schema differ from its pin afterwards
    (an MCP server silently rewriting a tool) is refused, as is a row never pinned
    (unless ``trust_on_first_use``). ``approve(name)`` accepts the changed
    definition; ``pins`` can be saved and passed back to the constructor.
    """

    __slots__ = ("_digests", "_pending", "_pins", "trust_on_first_use")

    def __init__(self, pins: Mapping[str, str] | None = None, *, trust_on_first_use: bool = False) -> None:
        self._pins: dict[str, str] = dict(pins or {})
        self.trust_on_first_use = trust_on_first_use
        """Pin a row never seen before on its first call instead of refusing it."""
        self._pending: dict[str, str] = {}
        self._digests: dict[str, tuple[ToolDefinition, str]] = {}

    @property
    def pins(self) -> dict[str, str]:
        """Approved digests by row name (a copy, to save)."""
        return dict(self._pins)

    def pin(self, rows: ToolSnapshot | ToolRegistry | Iterable[Entry]) -> None:
        """Approve the current definition of every row given."""
        for entry in rows:
            self._pins[entry.name] = self._digest(entry.definition)
            self._pending.pop(entry.name, None)

    def approve(self, row: str | Entry) -> None:
        """Approve a row's changed definition: the one last refused under ``name``, or this row's.

        Raises:
            ToolmeshError: for a name with no refused definition waiting for approval.
        """
        if not isinstance(row, str):
            self.pin([row])
            return
        try:
            self._pins[row] = self._pending.pop(row)
        except KeyError:
            raise ToolmeshError(
                f"no changed definition of {row!r} is waiting for approval; pass the row itself "
                "(approve(registry[name])) to approve its current definition"
            ) from None

    def revoke(self, name: str) -> None:
        """Forget a row's pin: its calls are refused until it is pinned again."""
        self._pins.pop(name, None)

    def changed(self, rows: ToolSnapshot | ToolRegistry | Iterable[Entry]) -> list[str]:
        """The names of the rows given whose definition is not the pinned one (or is not pinned)."""
        return [entry.name for entry in rows if self._pins.get(entry.name) != self._digest(entry.definition)]

    def pin_or_refuse(self, entry: Entry) -> str | None:
        """Why a call to ``entry`` must be refused, or None; records what it saw.

        Not a pure check: a row never pinned is pinned here under ``trust_on_first_use``,
        and a refused definition is kept for ``approve(name)``. For hosts that dispatch
        without hooks.
        """
        digest = self._digest(entry.definition)
        pinned = self._pins.get(entry.name)
        if pinned == digest:
            return None
        if pinned is None:
            if self.trust_on_first_use:
                self._pins[entry.name] = digest
                return None
            self._pending[entry.name] = digest
            return f"The tool {entry.name!r} has not been approved for use."
        self._pending[entry.name] = digest
        return f"The tool {entry.name!r} changed since it was approved and cannot be used until it is approved again."

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        reason = self.pin_or_refuse(entry)
        return PROCEED if reason is None else Refuse(reason)

    def _digest(self, definition: ToolDefinition) -> str:
        # definitions are frozen: one digest per definition object, not one per call
        cached = self._digests.get(definition.name)
        if cached is not None and cached[0] is definition:
            return cached[1]
        digest = definition_digest(definition)
        self._digests[definition.name] = (definition, digest)
        return digest

    def __repr__(self) -> str:
        return f"DefinitionPinning({len(self._pins)} pins)"
