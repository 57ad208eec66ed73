"""SearchIndex: BM25 over a catalog's rows, kept current row by row.

The ranking is tantivy's BM25 (a Rust search library, in memory here) over five fields of
each row: its name, its MCP server's label, title, description, and its parameters' names
and descriptions, every identifier split into words (``words.split_words``) and every word
stemmed, with English stop words dropped. Each field weighs as ``FIELD_BOOSTS`` says (chosen on the tuning
half of ``bench/data/queries.json``: a description says most about what a tool does).

Kept current incrementally: ``sync(rows)`` compares the catalog with what is indexed, by
row identity (a refresh keeps the row objects of unchanged tools) and then by definition,
and only adds the new or changed rows and deletes the gone ones; nothing is rebuilt.
Changes are committed lazily, at the next search, because a commit costs milliseconds:
registering a thousand tools one by one costs one commit, not a thousand.

A query never reaches tantivy's query language: its words are analysed by the index's
own analyser and searched as plain terms (``words.query_text`` bounds them first).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import tantivy

from toolmesh._rows.rows import Entry, McpEntry

from .synonyms import EXPANSION_WEIGHT, related_words
from .words import schema_text, split_words

__all__ = ["FIELD_BOOSTS", "SearchIndex"]

_ANALYSER = "toolmesh_words"
FIELD_BOOSTS: Mapping[str, float] = {
    "name": 0.5,
    "server": 1.0,
    "title": 1.0,
    "description": 2.0,
    "parameters": 0.6,
}
"""How much a match in each field counts."""
_WRITER_HEAP = 15_000_000
"""tantivy's smallest indexing budget (bytes): rows are small, catalogs change in small steps."""
_MAX_TITLE = 200
_MAX_DESCRIPTION = 4_000


def _analyser() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stopword("english"))
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("key", stored=False, indexed=True, fast=True)
    for name in FIELD_BOOSTS:
        builder.add_text_field(name, stored=False, tokenizer_name=_ANALYSER, index_option="freq")
    return builder.build()


def row_texts(row: Entry) -> dict[str, str]:
    """The indexed texts of a row (``FIELD_BOOSTS``'s fields), identifiers split into words."""
    definition = row.definition
    title = row.capabilities.title or ""
    if not title and row.capabilities.annotations is not None:
        title = row.capabilities.annotations.title or ""
    server, name = "", " ".join(split_words(row.name))
    if isinstance(row, McpEntry):
        server, name = row.server, " ".join(split_words(row.wire_name))
        if row.name not in (row.wire_name, f"{server}__{row.wire_name}"):
            name = f"{name} {' '.join(split_words(row.name))}"  # named otherwise by a NamePolicy
    return {
        "name": name,
        "server": " ".join(split_words(server)),
        "title": " ".join(split_words(title[:_MAX_TITLE])),
        "description": " ".join(split_words(definition.description[:_MAX_DESCRIPTION])),
        "parameters": schema_text(definition.parameters),
    }


@dataclass(slots=True)
class _Indexed:
    row: Entry
    key: int


class SearchIndex:
    """A BM25 index over rows by model-visible name; ``sync`` keeps it equal to a catalog."""

    def __init__(self) -> None:
        self._schema = _schema()
        self._index = tantivy.Index(self._schema)
        self._analyser = _analyser()
        self._index.register_tokenizer(_ANALYSER, self._analyser)
        self._writer: tantivy.IndexWriter | None = None
        self._searcher: tantivy.Searcher | None = None
        self._indexed: dict[str, _Indexed] = {}
        self._by_key: dict[int, Entry] = {}
        self._keys = itertools.count(1)
        self._pending = False
        self._lock = threading.Lock()
        self.synced: object = None
        """A marker of the catalog version last synced (the owner's; ``sync`` does not read it)."""

    def __len__(self) -> int:
        return len(self._indexed)

    def _write(self) -> tantivy.IndexWriter:
        if self._writer is None:
            self._writer = self._index.writer(heap_size=_WRITER_HEAP, num_threads=1)
        return self._writer

    def sync(self, rows: Mapping[str, Entry]) -> int:
        """Make the index hold exactly ``rows``: index new and changed rows, delete gone ones.

        Returns:
            How many rows were (re)indexed or deleted.
        """
        with self._lock:
            changed = 0
            indexed = self._indexed
            for name, row in rows.items():
                known = indexed.get(name)
                if known is not None:
                    if known.row is row:
                        continue
                    if _same_text(known.row, row):
                        known.row = row
                        self._by_key[known.key] = row
                        continue
                    self._delete(known)
                self._add(name, row)
                changed += 1
            if len(indexed) > len(rows):
                for name in [name for name in indexed if name not in rows]:
                    self._delete(indexed.pop(name))
                    changed += 1
            return changed

    def _add(self, name: str, row: Entry) -> None:
        key = next(self._keys)
        document = tantivy.Document()
        document.add_integer("key", key)
        for field, text in row_texts(row).items():
            document.add_text(field, text)
        self._write().add_document(document)
        self._indexed[name] = _Indexed(row, key)
        self._by_key[key] = row
        self._pending = True

    def _delete(self, known: _Indexed) -> None:
        self._write().delete_documents_by_term("key", known.key)
        del self._by_key[known.key]
        self._pending = True

    def _current(self) -> tantivy.Searcher:
        if self._pending or self._searcher is None:
            if self._pending:
                self._write().commit()
                self._pending = False
            self._index.reload()
            self._searcher = self._index.searcher()
        return self._searcher

    def search(self, text: str, limit: int, accept: Callable[[Entry], bool] | None = None) -> list[tuple[Entry, float]]:
        """The best ``limit`` rows for ``text`` (already bounded by ``words.query_text``), best first.

        ``accept`` keeps only some rows (a snapshot's, a turn's deferred ones); more hits are
        read until ``limit`` of them are accepted or none is left.
        """
        with self._lock:
            query = self._query(text)
            if query is None or not self._indexed or limit < 1:
                return []
            searcher = self._current()
            total = len(self._indexed)
            wanted = limit if accept is None else min(total, max(limit * 4, 32))
            while True:
                hits = searcher.search(query, wanted, count=False).hits
                keys = searcher.fast_field_values("key", [address for _score, address in hits])
                found: list[tuple[Entry, float]] = []
                for (score, _address), key in zip(hits, keys, strict=True):
                    row = self._by_key.get(key) if isinstance(key, int) else None
                    if row is not None and (accept is None or accept(row)):
                        found.append((row, float(score)))
                if len(found) >= limit or len(hits) < wanted or wanted >= total:
                    return found[:limit]
                wanted = total

    def _fields(self, token: str, weight: float) -> list[tantivy.Query]:
        """``token`` searched in every field, each with its boost times ``weight``."""
        return [
            tantivy.Query.boost_query(
                tantivy.Query.term_query(self._schema, field, token, index_option="freq"), boost * weight
            )
            for field, boost in FIELD_BOOSTS.items()
        ]

    def _query(self, text: str) -> tantivy.Query | None:
        """The query of ``text``'s words: each word's terms (analysed: lower-cased, stemmed, stop words
        out) in every field, and for a word of the thesaurus, the best match of its related words
        (one of them counts, at ``EXPANSION_WEIGHT``). None when nothing is left to search."""
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        own: set[str] = set()
        for word in text.split():
            for token in self._analyser.analyze(word):
                if token not in own:
                    own.add(token)
                    clauses.extend((tantivy.Occur.Should, query) for query in self._fields(token, 1.0))
        for word in text.split():
            related = [
                tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in self._fields(token, EXPANSION_WEIGHT)])
                for other in related_words(word)
                for token in self._analyser.analyze(other)
                if token not in own
            ]
            if related:
                clauses.append((tantivy.Occur.Should, tantivy.Query.disjunction_max_query(related)))
        return tantivy.Query.boolean_query(clauses) if clauses else None


def _same_text(old: Entry, new: Entry) -> bool:
    """Whether ``new`` would be indexed exactly as ``old`` (same family, definition and title)."""
    if old.kind != new.kind or old.definition != new.definition:
        return False
    if isinstance(old, McpEntry) and isinstance(new, McpEntry) and old.wire_name != new.wire_name:
        return False
    return (
        old.capabilities.title == new.capabilities.title
        and old.capabilities.annotations == new.capabilities.annotations
    )
