"""ToolSnapshot: a frozen view of some rows, and the record of the turn that uses it.

What one model turn advertises is exactly what it runs, whatever the registry does meanwhile.
When some rows are deferred (``DeferPolicy``, ``defer_loading``), the snapshot also holds
the turn's search row and its ledger: what was declared, found and called (``ledger``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from toolmesh._context.context import ToolContext, new_call_id
from toolmesh._core.errors import ConfigurationError, ErrorKind, ToolExecutionError
from toolmesh._core.output import ToolOutput
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._core.suggest import NameIndex
from toolmesh._rows.rows import DynamicEntry, Entry
from toolmesh._search.index import SearchIndex
from toolmesh._search.matches import AsyncRanker, Ranker, ToolMatch
from toolmesh._search.policy import DeferPolicy

from .catalog import Catalog
from .execution import DispatchSettings
from .ledger import CalledTool, FoundTool, TurnLedger
from .search_row import make_search_row
from .searching import SearchPlan

__all__ = ["SnapshotSearch", "ToolSnapshot"]

_DEFAULT_POLICY = DeferPolicy()


class SnapshotSearch(NamedTuple):
    """What a registry gives its snapshot for searching: its policy, ranker and index.

    A named tuple: a snapshot is taken per turn, and a tuple is the cheapest record to make.
    """

    policy: DeferPolicy | None
    ranker: Ranker | AsyncRanker | None
    deferred: frozenset[str]
    """The deferred rows of the whole catalog version."""
    shared: Callable[[], SearchIndex | None]
    """The registry's index at the snapshot's catalog version (None once the registry moved on)."""
    whole: bool
    """The snapshot holds every row of that version (no ``active`` subset)."""


class ToolSnapshot(Catalog):
    """A frozen set of rows: keeps dispatching exactly what it captured, and records its turn."""

    def __init__(
        self,
        rows: Mapping[str, Entry],
        settings: DispatchSettings,
        name_index: NameIndex | None = None,
        search: SnapshotSearch | None = None,
    ) -> None:
        self._rows = dict(rows)
        self._settings = settings
        self._name_index = name_index
        self._search = search
        self._private: SearchIndex | None = None
        deferred = frozenset() if search is None else search.deferred
        if deferred and search is not None and not search.whole:
            deferred = frozenset(name for name in deferred if name in self._rows)
        self._policy = (search.policy if search is not None else None) or _DEFAULT_POLICY
        self.search_row: DynamicEntry | None = None
        """The turn's search row (``search_tools``) when some rows are deferred, else None."""
        if deferred:
            name = self._policy.search_tool
            if name in self._rows:
                raise ConfigurationError(
                    f"the search row of a turn is named {name!r}, and a row of the catalog has that name: "
                    "name the search row otherwise with DeferPolicy(search_tool=...)"
                )
            self.search_row = make_search_row(self._policy, self._search_deferred)
            self._rows[name] = self.search_row
            self._name_index = None
        self.ledger = TurnLedger(deferred)
        """What the turn declared, found and called (see ``declared``, ``found``, ``called``)."""

    def __repr__(self) -> str:
        deferred = f", {len(self.ledger.deferred)} deferred" if self.ledger.deferred else ""
        return f"ToolSnapshot({len(self._rows)} rows{deferred})"

    # -- the turn's record --------------------------------------------------------

    @property
    def declared(self) -> frozenset[str]:
        """The names declared up front: every row that is not deferred (and the search row)."""
        deferred = self.ledger.deferred
        return frozenset(name for name in self._rows if name not in deferred)

    @property
    def deferred(self) -> frozenset[str]:
        """The names left to be found by a search."""
        return self.ledger.deferred

    @property
    def found(self) -> tuple[FoundTool, ...]:
        """The deferred rows found so far, in the order found."""
        return tuple(self.ledger.found)

    @property
    def called(self) -> tuple[CalledTool, ...]:
        """The rows dispatched so far, in the order their calls ended (the latest 4,096)."""
        return tuple(self.ledger.called)

    @property
    def step(self) -> int:
        """The current step (model call) of the turn, from 0; ``run_tool_calls`` ends one."""
        return self.ledger.step

    def end_step(self) -> None:
        """End the current step: ``run_tool_calls`` does it; a host dispatching calls itself calls it."""
        self.ledger.step += 1

    def record_found(self, names: list[str], *, search: str, query: str | None = None) -> list[str]:
        """Record deferred rows a search found (a provider's own search, read from its response).

        Names that are not deferred rows of this snapshot, or found already, are ignored.

        Returns:
            The names newly found.
        """
        return self.ledger.find(names, search, query)

    def offered(self) -> list[Entry]:
        """The rows to declare to the model now: those declared up front and those found, in catalog order."""
        ledger = self.ledger
        if not ledger.deferred:
            return list(self._rows.values())
        return [row for name, row in self._rows.items() if ledger.offered(name)]

    # -- searching ----------------------------------------------------------------

    def _index(self) -> SearchIndex:
        search = self._search
        index = search.shared() if search is not None else None
        if index is not None:
            return index
        if self._private is None:
            self._private = SearchIndex()
            self._private.sync({name: row for name, row in self._rows.items() if row is not self.search_row})
        return self._private

    def search(
        self, query: str, *, limit: int = 5, ranker: Ranker | None = None, deferred_only: bool = False
    ) -> list[ToolMatch]:
        """The rows of this snapshot that best match ``query``, best first (see ``ToolRegistry.search``).

        Args:
            deferred_only: Search the deferred rows only (what the search row does).

        Raises:
            TypeError: ``query`` is not a string, or the ranker is async (use ``asearch``).
            ValueError: ``limit`` is below 1.
        """
        return self._plan(query, limit, ranker, deferred_only).finish()

    async def asearch(
        self,
        query: str,
        *,
        limit: int = 5,
        ranker: Ranker | AsyncRanker | None = None,
        deferred_only: bool = False,
    ) -> list[ToolMatch]:
        """``search``, with a ranker that may be ``async def`` (awaited in this task).

        Raises:
            TypeError: ``query`` is not a string.
            ValueError: ``limit`` is below 1.
        """
        return await self._plan(query, limit, ranker, deferred_only).afinish()

    def _plan(self, query: str, limit: int, ranker: Ranker | AsyncRanker | None, deferred_only: bool) -> SearchPlan:
        rows = self._rows
        deferred = self.ledger.deferred
        index = self._index()
        accept: Callable[[Entry], bool] | None
        if deferred_only:

            def accept(row: Entry) -> bool:
                return row.name in deferred and rows.get(row.name) is row

        elif index is self._private or (self._search is not None and self._search.whole):
            accept = None
        else:

            def accept(row: Entry) -> bool:
                return rows.get(row.name) is row

        ranker = ranker or (self._search.ranker if self._search is not None else None)
        return SearchPlan(index, rows, query, limit, ranker, accept)

    async def _search_deferred(self, query: str, limit: int) -> list[ToolMatch]:
        matches = await self.asearch(query, limit=limit, deferred_only=True)
        self.ledger.find([match.name for match in matches], self._policy.search_tool, query[:200])
        return matches

    # -- dispatch -------------------------------------------------------------------

    def unoffered(self, name: object, call_id: str, found: frozenset[str] | None = None) -> ToolResult | None:
        """The refusal of a call of a deferred row no search of the turn found, or None when it may run.

        ``found``: the rows found when the model made the call (``run_tool_calls`` passes those found
        before its step, so a call asked for beside the search that finds it is refused however long
        the search takes); the rows found so far by default. ``DeferPolicy(unfound="allow")`` lets
        such calls run.
        """
        ledger = self.ledger
        if not ledger.deferred or not isinstance(name, str):
            return None
        if name not in ledger.deferred or name in (ledger.found_names if found is None else found):
            return None
        if self._policy.unfound == "allow":
            return None
        row = self._rows[name]
        feedback = (
            f"The tool {name!r} is not loaded. Search for it with {self._policy.search_tool!r} first; "
            "the tools found can be called from your next step."
        )
        error = ToolExecutionError(
            f"the call of {name!r} was refused: it is a deferred row that no search of this turn found",
            kind=ErrorKind.NOT_FOUND,
            model_feedback=feedback,
        )
        return ToolResult(
            call_id, name, row.kind, Disposition.REFUSED, ToolOutput(), ToolOutput.text(feedback), error=error
        )

    async def dispatch(
        self,
        name: str,
        arguments: str | Mapping[str, Any] | None = None,
        ctx: ToolContext[Any] | None = None,
    ) -> ToolResult:
        """``Catalog.dispatch``, refusing deferred rows not found in this turn and recording the call."""
        ledger = self.ledger
        if ledger.deferred:
            refused = self.unoffered(name, ctx.call_id if ctx is not None else new_call_id())
            if refused is not None:
                return refused
        result = await Catalog.dispatch(self, name, arguments, ctx)
        if result.kind != "unknown":
            ledger.called.append(CalledTool(result.name, result.call_id, ledger.step))
        return result
