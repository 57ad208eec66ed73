"""What one turn offered, found and ran: the record a snapshot keeps.

A snapshot is the rows of one turn (one user request, however many model calls it
takes). It records which rows were declared up front, which deferred rows a search
found (which search, at which step, for which query), and which rows were called. A
*step* is one model call and the tool calls it asked for: ``run_tool_calls`` on the
snapshot ends one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

__all__ = ["MAX_CALLS_RECORDED", "CalledTool", "FoundTool", "TurnLedger"]

MAX_CALLS_RECORDED = 4096
"""The calls a snapshot remembers (the latest): a snapshot a gateway serves for a long time is no turn,
and must not grow without bound."""


@dataclass(frozen=True, slots=True)
class FoundTool:
    """A deferred row a search of the turn found."""

    name: str
    """The row's model-visible name."""
    search: str
    """Which search found it: the search row's name (``search_tools``) for toolmesh's own search,
    or the provider's search tool (``tool_search``, ``tool_search_tool_bm25``, ...)."""
    step: int
    """The step (model call) of the turn at which it was found, from 0."""
    query: str | None = None
    """The query that found it, when known."""


@dataclass(frozen=True, slots=True)
class CalledTool:
    """A row the turn dispatched."""

    name: str
    """The row's model-visible name."""
    call_id: str
    """The call's id."""
    step: int
    """The step (model call) of the turn the call belongs to, from 0."""


class TurnLedger:
    """The mutable record of one turn, held by its snapshot (a plain slotted class: one is made per turn)."""

    __slots__ = ("called", "deferred", "found", "found_names", "step")

    def __init__(self, deferred: frozenset[str]) -> None:
        self.deferred = deferred
        """Rows left to be found by a search."""
        self.found: list[FoundTool] = []
        self.found_names: set[str] = set()
        self.called: deque[CalledTool] = deque(maxlen=MAX_CALLS_RECORDED)
        self.step = 0

    def find(self, names: list[str], search: str, query: str | None) -> list[str]:
        """Record ``names`` (deferred rows only, each once) as found; the names newly found."""
        new: list[str] = []
        for name in names:
            if name in self.deferred and name not in self.found_names:
                self.found_names.add(name)
                self.found.append(FoundTool(name, search, self.step, query))
                new.append(name)
        return new

    def offered(self, name: str) -> bool:
        """Whether the model was offered ``name`` so far: declared, or deferred and found."""
        return name not in self.deferred or name in self.found_names
