"""Words of a row and of a query: identifiers split, untrusted text bounded.

A tool's name is an identifier (``github__create_pull_request``, ``getWeatherForecast``):
split into words it matches what a person asks for ("create a pull request"). The same
split applies to every text of a row and to the query, so both sides meet on words.

A query is model text, hence untrusted: it is cut to ``MAX_QUERY_CHARS`` before any work,
split by fixed-width patterns that run in linear time (never compiled as a pattern of its
own), and kept to ``MAX_QUERY_TERMS`` distinct words of at most ``MAX_TERM_CHARS``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["MAX_QUERY_CHARS", "MAX_QUERY_TERMS", "MAX_TERM_CHARS", "query_text", "schema_text", "split_words"]

MAX_QUERY_CHARS = 1_000
"""The most characters of a query read; the rest is ignored."""
MAX_QUERY_TERMS = 32
"""The most distinct words of a query searched for."""
MAX_TERM_CHARS = 40
"""Longer words are dropped (no tool text has them; the index drops them too)."""
MAX_SCHEMA_TEXT = 4_000
"""The most characters of a row's parameter names and descriptions indexed."""
_MAX_DEPTH = 4
"""How deep nested parameter objects are read for their names and descriptions."""

REQUEST_WORDS = frozenset(
    "i im me my mine myself we us our you your he she him her his they them their it its "  # noqa: SIM905
    "please can could would should will shall might must do does did am be been being have has had "
    "want wants need needs let lets just also so then there here some any those these "
    "what whats how why where whether give s t d ll m re ve".split()
)
"""Words of a request that name no tool ("can you please give me ...", the tails of "what's"
and "don't"): dropped from a query, with the index's English stop words (``the``, ``a``, ...)."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
"""Where a camelCase or PascalCase identifier changes words (fixed-width look-arounds: linear)."""
_SEPARATORS = re.compile(r"[\W_]+")
"""Anything that is not a letter or a digit (``_``, ``__``, ``-``, ``.``, ``/``, spaces, control characters)."""


def split_words(text: str) -> list[str]:
    """The words of ``text``, identifiers split: ``"getHTTPResponse_v2"`` -> ``["get", "HTTP", "Response", "v2"]``."""
    return [word for word in _SEPARATORS.split(_CAMEL.sub(" ", text)) if word]


def query_text(query: str) -> str:
    """The words of an untrusted query, bounded, lower-cased and space-separated (nothing else in it),
    without ``REQUEST_WORDS``.

    Never raises for a string: an empty answer means there is nothing to search for.
    """
    seen: dict[str, None] = {}
    for word in split_words(query[:MAX_QUERY_CHARS]):
        lower = word.lower()
        if len(word) <= MAX_TERM_CHARS and lower not in REQUEST_WORDS:
            seen.setdefault(lower, None)
            if len(seen) >= MAX_QUERY_TERMS:
                break
    return " ".join(seen)


def schema_text(schema: Mapping[str, Any]) -> str:
    """The parameter names (split) and descriptions of a JSON Schema, nested objects included, bounded."""
    text = " ".join(_schema_words(schema, 0))
    return text[:MAX_SCHEMA_TEXT]


def _schema_words(schema: Mapping[str, Any], depth: int) -> Iterator[str]:
    if depth > _MAX_DEPTH or not isinstance(schema, Mapping):
        return
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, sub in properties.items():
            if isinstance(name, str):
                yield " ".join(split_words(name))
            if isinstance(sub, Mapping):
                description = sub.get("description")
                if isinstance(description, str):
                    yield description[:500]
                yield from _schema_words(sub, depth + 1)
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _schema_words(items, depth + 1)
