"""A small thesaurus of the words people and tool descriptions use for the same things.

People ask in their words ("make a folder", "open a PR", "look at this picture") and tools
describe themselves in theirs ("create a directory", "pull request", "image"). BM25 only
meets words that match, so a query is expanded with the other words of each group its
words belong to; the added words weigh less than the query's own (``EXPANSION_WEIGHT``).
The groups are general words of software tools, not of any one catalog.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["EXPANSION_WEIGHT", "related_words"]

EXPANSION_WEIGHT = 0.7
"""How much a word added by the thesaurus counts, against 1 for a word of the query."""

_GROUPS: tuple[tuple[str, ...], ...] = (
    ("directory", "folder", "dir"),
    ("image", "picture", "photo", "png", "jpg", "jpeg"),
    ("repository", "repo", "repos"),
    ("pull", "pr", "prs", "merge"),
    ("issue", "bug", "ticket"),
    ("delete", "remove", "erase", "forget", "drop", "destroy"),
    ("create", "make", "new", "add"),
    ("list", "show", "enumerate", "which"),
    ("search", "find", "lookup", "query", "look"),
    ("message", "post", "send", "tell", "notify", "chat"),
    ("email", "mail", "inbox"),
    ("fetch", "download", "url", "webpage", "page"),
    ("web", "internet", "online", "news"),
    ("time", "clock", "timezone", "date", "now"),
    ("sum", "add", "plus", "total"),
    ("branch", "checkout", "switch"),
    ("table", "database", "sql", "db", "rows"),
    ("remember", "memorize", "memory", "knowledge", "observation", "note"),
    ("navigate", "go", "visit", "browse", "open"),
    ("click", "press", "tap", "button"),
    ("fill", "type", "enter", "input", "form"),
    ("stage", "add"),
    ("rename", "move"),
    ("info", "information", "metadata", "details", "size", "properties"),
    ("weather", "forecast", "rain", "temperature"),
    ("calendar", "event", "meeting", "schedule", "appointment"),
    ("run", "execute", "exec", "launch"),
    ("read", "view", "contents", "inside", "cat", "open"),
    ("write", "save", "store", "put"),
    ("edit", "modify", "change", "update", "replace"),
    ("screenshot", "capture", "snapshot"),
    ("commit", "commits", "history", "log"),
    ("local", "nearby", "near", "places", "businesses"),
    ("link", "relation", "relate", "connect"),
    ("comment", "reply", "respond"),
    ("channel", "slack", "team"),
)


def _index(groups: tuple[tuple[str, ...], ...]) -> Mapping[str, tuple[str, ...]]:
    related: dict[str, dict[str, None]] = {}
    for group in groups:
        for word in group:
            words = related.setdefault(word, {})
            for other in group:
                if other != word:
                    words.setdefault(other, None)
    return {word: tuple(others) for word, others in related.items()}


_RELATED = _index(_GROUPS)


def related_words(word: str) -> tuple[str, ...]:
    """The other words of the groups ``word`` (lower case) belongs to."""
    return _RELATED.get(word, ())
