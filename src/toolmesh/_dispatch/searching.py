"""Searching a catalog: the registry's index kept current, a snapshot's view of it, the fused ranking.

A registry keeps one ``SearchIndex``, made at its first search and synced to the catalog
at each search after a change (only changed rows are indexed again). A snapshot searches
that index while the registry still holds the catalog version the snapshot froze, keeping
only its own rows; once the registry has moved on, the snapshot indexes its own rows once,
so a turn's search always answers with exactly the rows the turn holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from toolmesh._rows.rows import Entry
from toolmesh._search.index import SearchIndex
from toolmesh._search.matches import AsyncRanker, Ranker, ToolMatch, awaited, fuse, is_async, rank_scores
from toolmesh._search.words import MAX_QUERY_CHARS, query_text

if TYPE_CHECKING:
    from toolmesh._core.suggest import NameIndex

__all__ = ["RegistrySearch", "SearchPlan"]

_FUSION_DEPTH = 50
"""How many lexical hits (at least) take part in a fusion with a host ranker."""


class SearchPlan:
    """One search's lexical half, done; the ranker's half is ``finish`` (sync) or ``afinish`` (async)."""

    __slots__ = ("candidates", "lexical", "limit", "query", "ranker")

    def __init__(
        self,
        index: SearchIndex,
        rows: Mapping[str, Entry],
        query: str,
        limit: int,
        ranker: Ranker | AsyncRanker | None,
        accept: Callable[[Entry], bool] | None,
    ) -> None:
        if not isinstance(query, str):
            raise TypeError(f"a search query is a string, not {type(query).__name__}")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a whole number of at least 1, not {limit!r}")
        self.query, self.limit, self.ranker = query[:MAX_QUERY_CHARS], limit, ranker
        depth = limit if ranker is None else max(limit * 4, _FUSION_DEPTH)
        self.lexical = index.search(query_text(query), depth, accept)
        self.candidates: Sequence[Entry] = (
            () if ranker is None else [row for row in rows.values() if accept is None or accept(row)]
        )

    def _plain(self) -> list[ToolMatch]:
        return [ToolMatch(row.name, row, score) for row, score in self.lexical]

    def finish(self) -> list[ToolMatch]:
        """The matches, a sync ranker's scores fused in.

        Raises:
            TypeError: the ranker is an ``async def`` one (use ``asearch``).
        """
        if self.ranker is None:
            return self._plain()
        answer = rank_scores(self.ranker, self.query, self.candidates)
        if is_async(answer):
            answer.close()  # never awaited
            raise TypeError("this ranker is async: search with `await ...asearch(...)`")
        return fuse(self.lexical, self.candidates, answer, self.limit)

    async def afinish(self) -> list[ToolMatch]:
        """The matches, a sync or async ranker's scores fused in."""
        if self.ranker is None:
            return self._plain()
        answer = rank_scores(self.ranker, self.query, self.candidates)
        if is_async(answer):
            answer = await awaited(answer)
        return fuse(self.lexical, self.candidates, answer, self.limit)


class RegistrySearch:
    """The registry's index: made at the first search, synced at each search after a change."""

    _rows: dict[str, Entry]
    _name_index: NameIndex | None = None
    _generation: int = 0
    """Bumped by every change of the catalog's rows."""
    _index: SearchIndex | None = None
    _ranker: Ranker | AsyncRanker | None = None

    def _touch(self) -> None:
        """The rows changed: suggestions and the search index are out of date."""
        self._name_index = None
        self._generation += 1

    def _index_at(self, generation: int) -> SearchIndex | None:
        """The index synced to catalog version ``generation``, or None when the registry has moved on."""
        if generation != self._generation:
            return None
        index = self._index
        if index is None:
            index = self._index = SearchIndex()
        if index.synced != generation:
            index.sync(self._rows)
            index.synced = generation
        return index

    def search(self, query: str, *, limit: int = 5, ranker: Ranker | None = None) -> list[ToolMatch]:
        """The rows that best match ``query``, best first (at most ``limit``).

        Ranked by BM25 over each row's name, title, description and parameters (identifiers
        split into words), fused with ``ranker`` (or the registry's own) by reciprocal rank
        fusion. The query is untrusted text: it is bounded, never parsed as a pattern or a
        query language, and an empty or unusable one finds nothing.

        Raises:
            TypeError: ``query`` is not a string, or the ranker is async (use ``asearch``).
            ValueError: ``limit`` is below 1.
        """
        return self._plan(query, limit, ranker).finish()

    async def asearch(
        self, query: str, *, limit: int = 5, ranker: Ranker | AsyncRanker | None = None
    ) -> list[ToolMatch]:
        """``search``, with a ranker that may be ``async def`` (awaited in this task).

        Raises:
            TypeError: ``query`` is not a string.
            ValueError: ``limit`` is below 1.
        """
        return await self._plan(query, limit, ranker).afinish()

    def _plan(self, query: str, limit: int, ranker: Ranker | AsyncRanker | None) -> SearchPlan:
        index = self._index_at(self._generation)
        assert index is not None
        return SearchPlan(index, self._rows, query, limit, ranker or self._ranker, None)

    def _close_search(self) -> None:
        self._index = None
