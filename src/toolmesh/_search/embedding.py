"""EmbeddingRanker: a host ranker made of any embedding model, for ``ToolRegistry(ranker=...)``.

BM25 meets only words a query and a tool share; an embedding model also meets words that
mean the same ("vertical bars" and "column chart"). A host brings the model (a local
sentence-transformer, fastembed, an embedding service) as one function from texts to
vectors; this module does the rest, the same for every model:

- **Two views of each row**, each embedded once: what it does (its name split into words,
  title and description) and what it takes (its name and its parameters' names and
  descriptions). A query scores a row by its better view (cosine similarity): a request
  often names what it has ("the pod's logs", "this URL") rather than what the tool does.
  On ``bench/data/queries.json`` with all-MiniLM-L6-v2, recall@5 fused with BM25 was 0.883
  with the first view alone and 0.907 with both (tuning half 0.870 -> 0.909, held-out
  half 0.897 -> 0.905).
- **Incremental**: vectors are kept by text, so a refresh that keeps a tool's text embeds
  nothing; only new or changed texts are sent to the model, in batches of similar length
  (a padded model wastes little). Vectors of texts no longer asked for are dropped when the
  kept set outgrows twice the rows searched.
- **Untrusted on both sides**: a row's texts and the query are cut to bounded lengths before
  the model sees them; the model's answer is checked (one finite, non-zero vector per text,
  one dimension) and a bad one raises ``EmbeddingError``, which the search logs before
  answering with the lexical ranking alone.

Needs ``numpy`` (``pip install 'toolmesh[embeddings]'``), imported when a ranker is made.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import anyio

from toolmesh._core.errors import EmbeddingError
from toolmesh._rows.rows import Entry

from .index import row_texts
from .words import MAX_QUERY_CHARS, split_words

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["AsyncEmbed", "AsyncEmbeddingRanker", "Embed", "EmbeddingRanker", "row_views"]

Embed: TypeAlias = Callable[[Sequence[str]], Sequence[Sequence[float]] | Any]
"""``embed(texts) -> vectors``: one vector per text, in order (a list of lists or a numpy array)."""
AsyncEmbed: TypeAlias = Callable[[Sequence[str]], Awaitable[Sequence[Sequence[float]] | Any]]
"""``async def embed(texts) -> vectors``: an embedding service's client."""

MAX_VIEW_CHARS = 600
"""A view's text is cut here: a tool's name and first sentences say what it does, and
models read a few hundred tokens at most."""
_PARAMETER_CHARS = 400


def row_views(row: Entry) -> tuple[str, str]:
    """The two texts of ``row`` that are embedded: what it does, and what it takes."""
    texts = row_texts(row)
    name = " ".join(split_words(row.name))  # the model-visible name: ``github create pull request``
    does = f"{name}. {texts['title']}. {texts['description']}"[:MAX_VIEW_CHARS]
    takes = f"{name}. {texts['parameters'][:_PARAMETER_CHARS]}"[:MAX_VIEW_CHARS]
    return does, takes


class _Vectors:
    """The vectors of the texts embedded so far, and the scoring of rows by their views."""

    def __init__(self, batch_size: int) -> None:
        try:
            import numpy  # optional (the embeddings extra): only a host that makes a ranker needs it
        except ImportError as exc:
            raise ImportError("an embedding ranker needs numpy: pip install 'toolmesh[embeddings]'") from exc

        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number of at least 1, not {batch_size!r}")
        self._np = numpy
        self.batch_size = batch_size
        self._by_text: dict[str, NDArray[np.float32]] = {}
        self._dimension: int | None = None
        self._row_views: dict[str, tuple[Entry, tuple[str, str]]] = {}
        self._matrix: tuple[tuple[int, ...], tuple[Entry, ...], NDArray[np.float32]] | None = None
        """The stacked vectors of the rows last searched, by their identities (the rows kept
        alive with it, so an identity is not reused)."""

    def _views(self, row: Entry) -> tuple[str, str]:
        """``row_views(row)``, computed once per row object."""
        known = self._row_views.get(row.name)
        if known is None or known[0] is not row:
            known = self._row_views[row.name] = (row, row_views(row))
        return known[1]

    def missing(self, rows: Sequence[Entry]) -> list[list[str]]:
        """The texts of ``rows``' views not embedded yet, in batches, shortest first."""
        todo = {text for row in rows for text in self._views(row) if text not in self._by_text}
        ordered = sorted(todo, key=len)
        return [ordered[start : start + self.batch_size] for start in range(0, len(ordered), self.batch_size)]

    def store(self, texts: Sequence[str], answer: Any) -> None:
        """Keep the model's vectors for ``texts``, unit length.

        Raises:
            EmbeddingError: not one finite, non-zero vector per text of one dimension.
        """
        for text, vector in zip(texts, self._unit(answer, len(texts)), strict=True):
            self._by_text[text] = vector

    def _unit(self, answer: Any, count: int) -> Iterator[NDArray[np.float32]]:
        np = self._np
        try:
            vectors = np.asarray(answer, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"the embedding function answered {type(answer).__name__}, not vectors") from exc
        if vectors.ndim != 2 or vectors.shape[0] != count or vectors.shape[1] < 1:
            raise EmbeddingError(
                f"the embedding function answered an array of shape {vectors.shape} for {count} texts: "
                "it must answer one vector per text"
            )
        if self._dimension is None:
            self._dimension = int(vectors.shape[1])
        elif vectors.shape[1] != self._dimension:
            raise EmbeddingError(
                f"the embedding function answered vectors of {vectors.shape[1]} numbers after vectors of "
                f"{self._dimension}: one ranker needs one model"
            )
        norms = np.linalg.norm(vectors, axis=1)
        if not np.all(np.isfinite(norms)) or np.any(norms == 0):
            raise EmbeddingError("the embedding function answered a vector that is zero or not finite")
        yield from vectors / norms[:, None]

    def query_vector(self, answer: Any) -> NDArray[np.float32]:
        return next(self._unit(answer, 1))

    def scores(self, query: NDArray[np.float32], rows: Sequence[Entry]) -> dict[str, float]:
        """Each row's cosine similarity with ``query`` by its better view."""
        key = tuple(map(id, rows))
        if self._matrix is None or self._matrix[0] != key:
            texts = [text for row in rows for text in self._views(row)]
            self._matrix = (key, tuple(rows), self._np.stack([self._by_text[text] for text in texts]))
            self._forget(rows, set(texts))
        best = (self._matrix[2] @ query).reshape(len(rows), 2).max(axis=1)
        return {row.name: float(score) for row, score in zip(rows, best.tolist(), strict=True)}

    def _forget(self, rows: Sequence[Entry], wanted: set[str]) -> None:
        """Drop what is kept of texts and rows no longer searched, once it outnumbers what is."""
        if len(self._by_text) > 2 * len(wanted) + 1024:
            self._by_text = {text: vector for text, vector in self._by_text.items() if text in wanted}
        if len(self._row_views) > 2 * len(rows) + 1024:
            names = {row.name for row in rows}
            self._row_views = {name: known for name, known in self._row_views.items() if name in names}


def _query(query: str) -> list[str]:
    return [query[:MAX_QUERY_CHARS]]


class EmbeddingRanker:
    """A ``Ranker`` made of an embedding function: ``ToolRegistry(ranker=EmbeddingRanker(model.encode))``.

    The rows are embedded when a search first sees them (or ahead, by ``embed_rows``); each
    search embeds its query once. Fused with BM25 by reciprocal rank fusion.
    """

    def __init__(self, embed: Embed, *, batch_size: int = 32) -> None:
        """Args:
        embed: ``embed(texts) -> vectors``, one vector per text in order; any scale (they are
            normalised). An ``async def`` one belongs in ``AsyncEmbeddingRanker``.
        batch_size: At most this many texts per call of ``embed``.

        Raises:
            ImportError: numpy is not installed (``pip install 'toolmesh[embeddings]'``).
            TypeError: ``embed`` is an ``async def`` function (use ``AsyncEmbeddingRanker``).
        """
        if inspect.iscoroutinefunction(embed) or inspect.iscoroutinefunction(type(embed).__call__):
            raise TypeError("this embedding function is async: use AsyncEmbeddingRanker(embed) and search with asearch")
        self._embed = embed
        self._vectors = _Vectors(batch_size)

    def embed_rows(self, rows: Sequence[Entry]) -> None:
        """Embed the views of ``rows`` not embedded yet (at start, so the first search is quick)."""
        for batch in self._vectors.missing(rows):
            self._vectors.store(batch, self._embed(batch))

    def __call__(self, query: str, rows: Sequence[Entry]) -> Mapping[str, float]:
        self.embed_rows(rows)
        if not rows:
            return {}
        return self._vectors.scores(self._vectors.query_vector(self._embed(_query(query))), rows)


class AsyncEmbeddingRanker:
    """``EmbeddingRanker`` for an ``async def`` embedding function (a service's client, or a local
    model run in a worker thread): an ``AsyncRanker``, used by ``asearch`` and by a turn's search row."""

    def __init__(self, embed: AsyncEmbed, *, batch_size: int = 32, timeout: float | None = 10.0) -> None:
        """Args: as ``EmbeddingRanker``'s, with ``embed`` awaited, and
        timeout: Seconds one call of ``embed`` may take (None: no bound). A call that takes
            longer is cancelled and raises ``EmbeddingError``: a search then answers with the
            lexical ranking alone instead of waiting for a service that does not answer.
        """
        if timeout is not None and not timeout > 0:
            raise ValueError(f"timeout must be positive seconds or None, not {timeout!r}")
        self._embed = embed
        self._timeout = timeout
        self._vectors = _Vectors(batch_size)

    async def _call(self, texts: list[str]) -> Any:
        with anyio.move_on_after(self._timeout):
            return await self._embed(texts)
        raise EmbeddingError(
            f"the embedding function did not answer {len(texts)} text(s) within {self._timeout} s "
            "(AsyncEmbeddingRanker's timeout)"
        )

    async def embed_rows(self, rows: Sequence[Entry]) -> None:
        """Embed the views of ``rows`` not embedded yet."""
        for batch in self._vectors.missing(rows):
            self._vectors.store(batch, await self._call(batch))

    async def __call__(self, query: str, rows: Sequence[Entry]) -> Mapping[str, float]:
        await self.embed_rows(rows)
        if not rows:
            return {}
        return self._vectors.scores(self._vectors.query_vector(await self._call(_query(query))), rows)
