"""What a search returns (``ToolMatch``), a host's own ranker, and how two rankings are fused.

A host ranker (embeddings the host computes, usage statistics, anything) is a callable
``ranker(query, rows) -> {name: score}``: higher is better, rows it leaves out are
unranked by it. It is combined with the lexical ranking by **reciprocal rank fusion**
(Cormack et al., 2009): each ranking gives a row ``weight / (RRF_K + rank)`` (rank 1 is the
best) and the fused score is the sum. Rank fusion needs no common scale between BM25
scores and the host's, which are never comparable, and a row ranked well by either
ranking rises.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from toolmesh._rows.rows import Entry

__all__ = ["RRF_K", "AsyncRanker", "Ranker", "RankerScores", "ToolMatch", "awaited", "fuse", "is_async", "rank_scores"]

_logger = logging.getLogger("toolmesh")

RRF_K = 5
"""The constant of reciprocal rank fusion. The original paper's 60 suits long ranked lists; a
search returns a handful of tools, and a smaller constant lets the first ranks of either
ranking weigh more (chosen on the tuning half of ``bench/data/queries.json``: recall@5 of BM25
fused with MiniLM embeddings 0.86 at 60, 0.88 at 5; on the held-out half 0.85 and 0.89)."""

Ranker: TypeAlias = Callable[[str, Sequence[Entry]], Mapping[str, float]]
"""``ranker(query, rows) -> {row name: score}``: a host's own relevance, higher is better.

``rows`` are the rows the search may return (the catalog's, or a turn's deferred rows);
names it does not return are not ranked by it. It runs in the searching task: precompute
what is slow (the rows' embeddings) and keep the per-query work small. A ranker that must
await (the query's embedding from a service) is an ``AsyncRanker``.
"""
AsyncRanker: TypeAlias = Callable[[str, Sequence[Entry]], Awaitable[Mapping[str, float]]]
"""An ``async def`` ranker: used by ``asearch`` and by a turn's search row (``search`` refuses it)."""
RankerScores: TypeAlias = "Mapping[str, float] | BaseException"
"""What a ranker answered, or what it raised."""


@dataclass(frozen=True, slots=True)
class ToolMatch:
    """One row a search found."""

    name: str
    """The row's model-visible name."""
    row: Entry
    """The row itself (as the catalog searched holds it)."""
    score: float
    """How well it matches: the BM25 score, or the fused score when a host ranker took part
    (comparable only within one search)."""


def rank_scores(ranker: Ranker | AsyncRanker, query: str, candidates: Sequence[Entry]) -> Any:
    """``ranker``'s answer (an awaitable for an async ranker), or the exception it raised."""
    try:
        return ranker(query, candidates)
    except Exception as exc:
        return exc


async def awaited(answer: Any) -> RankerScores:
    """An async ranker's answer, or the exception it raised."""
    try:
        return await answer  # type: ignore[no-any-return]
    except Exception as exc:
        return exc


def is_async(answer: object) -> bool:
    """Whether a ranker answered with an awaitable (it is an async ranker)."""
    return inspect.isawaitable(answer)


def fuse(
    lexical: Sequence[tuple[Entry, float]],
    candidates: Sequence[Entry],
    scores: RankerScores,
    limit: int,
    *,
    lexical_weight: float = 1.0,
    ranker_weight: float = 1.0,
) -> list[ToolMatch]:
    """The best ``limit`` rows by reciprocal rank fusion of ``lexical`` (best first) and a ranker's ``scores``.

    A ranker that raised, or answered something other than a mapping of names to numbers,
    is logged and left out: the lexical ranking alone answers.
    """
    fused: dict[str, float] = {}
    rows: dict[str, Entry] = {}
    for rank, (row, _score) in enumerate(lexical, start=1):
        fused[row.name] = lexical_weight / (RRF_K + rank)
        rows[row.name] = row
    by_name = {row.name: row for row in candidates}
    try:
        if isinstance(scores, BaseException):
            raise scores
        ranked = sorted(
            ((float(score), name) for name, score in scores.items() if name in by_name),
            key=lambda pair: -pair[0],
        )
    except Exception:
        _logger.exception("the host's search ranker failed; the lexical ranking answers alone")
        ranked = []
    for rank, (_score, name) in enumerate(ranked, start=1):
        fused[name] = fused.get(name, 0.0) + ranker_weight / (RRF_K + rank)
        rows.setdefault(name, by_name[name])
    best = sorted(fused.items(), key=lambda pair: -pair[1])[:limit]
    return [ToolMatch(name, rows[name], score) for name, score in best]
