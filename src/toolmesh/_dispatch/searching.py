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
from toolmesh._search.matches import Ranker, ToolMatch, fuse
from toolmesh._search.words import MAX_QUERY_CHARS, query_text

if TYPE_CHECKING:
    from toolmesh._core.suggest import NameIndex

__all__ = ["RegistrySearch", "search_index"]

_FUSION_DEPTH = 50
"""How many lexical hits (at least) take part in a fusion with a host ranker."""


def search_index(
    index: SearchIndex,
    rows: Mapping[str, Entry],
    query: str,
    limit: int,
    ranker: Ranker | None,
    accept: Callable[[Entry], bool] | None,
) -> list[ToolMatch]:
    """The best ``limit`` rows of ``index`` for ``query`` (``accept`` filters), fused with ``ranker`` if any.

    Raises:
        TypeError: ``query`` is not a string.
        ValueError: ``limit`` is not a whole number of at least 1.
    """
    if not isinstance(query, str):
        raise TypeError(f"a search query is a string, not {type(query).__name__}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a whole number of at least 1, not {limit!r}")
    text = query_text(query)
    if ranker is None:
        return [ToolMatch(row.name, row, score) for row, score in index.search(text, limit, accept)]
    lexical = index.search(text, max(limit * 4, _FUSION_DEPTH), accept)
    candidates: Sequence[Entry] = [row for row in rows.values() if accept is None or accept(row)]
    return fuse(query[:MAX_QUERY_CHARS], lexical, candidates, ranker, limit)


class RegistrySearch:
    """The registry's index: made at the first search, synced at each search after a change."""

    _rows: dict[str, Entry]
    _name_index: NameIndex | None = None
    _generation: int = 0
    """Bumped by every change of the catalog's rows."""
    _index: SearchIndex | None = None
    _ranker: Ranker | None = None

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
            TypeError: ``query`` is not a string.
            ValueError: ``limit`` is below 1.
        """
        index = self._index_at(self._generation)
        assert index is not None
        return search_index(index, self._rows, query, limit, ranker or self._ranker, None)

    def _close_search(self) -> None:
        self._index = None
