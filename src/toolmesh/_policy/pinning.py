"""Definition pinning: a call runs only against the definition that was approved.

Given a shared ``StateBackend`` (``state=``, or by ``McpGateway(state=...)``), the pins
live there (key ``pin:<row>``, a TTL refreshed by every use), so a definition pinned,
approved or revoked through one replica holds on all of them. The pins given to the
constructor seed the backend where it has none; ``pin``, ``approve`` and ``revoke`` take
effect locally at once and in the backend at the next check (or ``await flush()``). A
revoked pin is kept as a tombstone, so no replica's seed brings it back. While the
backend cannot be reached, calls are refused as ``unavailable`` (retryable).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.errors import ErrorKind, ToolmeshError
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._hooks.actions import PROCEED, Hook, Refuse, ToolCallAction
from toolmesh._rows.rows import Entry
from toolmesh._state.backend import StateBackend
from toolmesh._state.errors import StateUnavailableError

__all__ = ["DefinitionPinning", "definition_digest"]

logger = logging.getLogger("toolmesh.policy")

PIN_TTL = 90 * 24 * 3600.0
"""Seconds a shared pin lives without being used (each check refreshes it)."""
_PENDING_TTL = 7 * 24 * 3600.0
_REVOKED = b"-"


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

    __slots__ = ("_digests", "_pending", "_pins", "_state", "_writes", "trust_on_first_use")

    def __init__(
        self,
        pins: Mapping[str, str] | None = None,
        *,
        trust_on_first_use: bool = False,
        state: StateBackend | None = None,
    ) -> None:
        self._pins: dict[str, str] = dict(pins or {})
        self.trust_on_first_use = trust_on_first_use
        """Pin a row never seen before on its first call instead of refusing it."""
        self._pending: dict[str, str] = {}
        self._digests: dict[str, tuple[ToolDefinition, str]] = {}
        self._state = state
        self._writes: dict[str, bytes] = {}
        """Pins set (digest) or revoked (tombstone) here and not yet written to the shared state."""

    def use_state(self, state: StateBackend) -> None:
        """Keep the pins in ``state`` (unless given a backend already): they then hold across processes."""
        if self._state is None:
            self._state = state

    @property
    def pins(self) -> dict[str, str]:
        """Approved digests by row name (a copy, to save)."""
        return dict(self._pins)

    def pin(self, rows: ToolSnapshot | ToolRegistry | Iterable[Entry]) -> None:
        """Approve the current definition of every row given."""
        for entry in rows:
            self._set(entry.name, self._digest(entry.definition))
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
            self._set(row, self._pending.pop(row))
        except KeyError:
            raise ToolmeshError(
                f"no changed definition of {row!r} is waiting for approval; pass the row itself "
                "(approve(registry[name])) to approve its current definition"
            ) from None

    def revoke(self, name: str) -> None:
        """Forget a row's pin: its calls are refused until it is pinned again."""
        self._pins.pop(name, None)
        self._writes[name] = _REVOKED

    def _set(self, name: str, digest: str) -> None:
        self._pins[name] = digest
        self._writes[name] = digest.encode()

    async def flush(self) -> None:
        """Write the pins set and revoked here to the shared state (each check does it first).

        Raises:
            StateUnavailableError: when the shared state cannot be reached (the writes stay queued).
        """
        if self._state is None:
            self._writes.clear()
            return
        while self._writes:
            name, value = next(iter(self._writes.items()))
            await self._state.set(f"pin:{name}", value, ttl=PIN_TTL)
            if self._writes.get(name) is value:
                del self._writes[name]

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
        if self._state is None:
            reason = self.pin_or_refuse(entry)
            return PROCEED if reason is None else Refuse(reason)
        try:
            reason = await self._shared_check(self._state, entry)
        except StateUnavailableError as exc:
            logger.warning("DefinitionPinning: %s; refusing calls of %r until it is back", exc, entry.name)
            return Refuse(
                f"The approved definition of the tool {entry.name!r} cannot be checked just now. "
                "Try again in a moment.",
                kind=ErrorKind.UNAVAILABLE,
            )
        return PROCEED if reason is None else Refuse(reason)

    async def _shared_check(self, state: StateBackend, entry: Entry) -> str | None:
        """``pin_or_refuse`` against the shared pins."""
        await self.flush()
        name, digest = entry.name, self._digest(entry.definition)
        key = f"pin:{name}"
        pinned = await state.get(key, refresh_ttl=PIN_TTL)
        seed = self._pins.get(name)
        if pinned is None and (seed is not None or self.trust_on_first_use):
            await state.claim(key, ttl=PIN_TTL, value=(seed or digest).encode())  # the first replica's seed wins
            pinned = await state.get(key)
        if pinned == digest.encode():
            self._pins[name] = digest
            return None
        self._pending[name] = digest
        await state.set(f"pin-pending:{name}", digest.encode(), ttl=_PENDING_TTL)
        if pinned is None or pinned == _REVOKED:
            self._pins.pop(name, None)
            return f"The tool {name!r} has not been approved for use."
        return f"The tool {name!r} changed since it was approved and cannot be used until it is approved again."

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
