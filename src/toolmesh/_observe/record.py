"""``CallRecord``: one finished call as an observer sees it (who, what, where, how it ended, how long).

Made once per call by ``CallObserver`` from what the turn hands its hooks: the call,
its result (or its cancellation), the row that ran it and the call's context. It holds
names, kinds and times, never a result's text or an error's message; the arguments are
the call's canonical JSON text, which an audit hashes (and writes only when asked).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ErrorKind
from toolmesh._core.result import ToolResult
from toolmesh._core.slots import slot_constructor
from toolmesh._rows.rows import Entry, McpEntry

__all__ = ["CANCELLED", "CallRecord", "row_facts"]

CANCELLED = "cancelled"
"""The disposition of a call whose caller went away while it ran (no result was made)."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One finished call: the facts an audit line and the metrics are made of."""

    time: float
    """When the call ended (seconds since the epoch)."""
    call_id: str
    """The call's id."""
    tool: str
    """The model-visible name the call asked for (a name no row has, for an unknown tool)."""
    wire_name: str | None
    """The MCP server's own name of the tool (MCP rows only)."""
    server: str | None
    """The label of the MCP server whose tool it is (MCP rows only)."""
    kind: str
    """The row kind (``native``, ``mcp``, ``dynamic``, ``hosted``; ``unknown`` for a name no row has)."""
    profile: str | None
    """The gateway profile the call came through (None outside a gateway)."""
    subject: str | None
    """Who called: the identity's subject (None when the call carries no identity)."""
    client_id: str | None
    """The OAuth client the caller used (None when unknown, and for static tokens)."""
    issuer: str | None
    """Who vouched for the subject: the OAuth token's issuer (None for static tokens)."""
    disposition: str
    """``succeeded``, ``failed``, ``refused``, ``skipped``, or ``cancelled``."""
    error_kind: str | None
    """The error kind when the call did not succeed (``not_found``, ``refused``, ``upstream_error``...)."""
    duration: float
    """Seconds the tool ran (0 for a call that never reached it: refused, unknown, invalid)."""
    arguments: str
    """The arguments the call ran with, as canonical JSON text (as the model sent them when unparsable)."""
    ran: bool
    """Whether the tool was reached (the row's dispatch started)."""

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.disposition == "succeeded"


_new_record = slot_constructor(CallRecord)  # one per observed call: the fast constructor (_core.slots)


def row_facts(entry: Entry | None) -> tuple[str | None, str | None]:
    """The (wire name, server label) of a row: both None for rows that are not an MCP server's."""
    if isinstance(entry, McpEntry):
        return entry.wire_name, entry.server
    return None, None


def identity_of(ctx: ToolContext[Any]) -> tuple[str | None, str | None, str | None]:
    """The (subject, client id, issuer) of the call's identity; all None without one."""
    identity = ctx.identity
    if identity is None:
        return None, None, None
    return identity.subject, identity.client_id, identity.issuer


def make_record(
    now: float,
    call: ToolCall,
    entry: Entry | None,
    ctx: ToolContext[Any],
    profile: str | None,
    result: ToolResult | None,
    duration: float,
    ran: bool,
) -> CallRecord:
    """The record of ``call``: from its ``result``, or of its cancellation when ``result`` is None."""
    wire_name, server = row_facts(entry)
    subject, client_id, issuer = identity_of(ctx)
    name = call.name if isinstance(call.name, str) else ""  # a model may send any JSON as a name
    error_kind: str | None
    if result is None:
        disposition, error_kind = CANCELLED, ErrorKind.CANCELLED.value
        kind = entry.kind if entry is not None else "unknown"
    else:
        disposition = result.disposition.value
        error_kind = result.error.kind.value if result.error is not None else None
        kind = result.kind
    return _new_record(
        now,
        call.id,
        name,
        wire_name,
        server,
        kind,
        profile,
        subject,
        client_id,
        issuer,
        disposition,
        error_kind,
        duration,
        call.arguments,
        ran,
    )
