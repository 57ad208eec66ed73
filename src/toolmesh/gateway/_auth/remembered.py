"""``Remembered``: a bounded map whose entries expire, for what the token checker remembers of tokens.

Every operation costs O(1): a full map drops its oldest entry (a flood of distinct tokens
cannot grow it), an expired entry is dropped when it is looked up, and nothing scans the map.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["Remembered"]

K = TypeVar("K")
V = TypeVar("V")


class Remembered(Generic[K, V]):
    """At most ``size`` entries, each until its own deadline; when full, the oldest goes first.

    Example:
        >>> seen = Remembered[str, int](2)
        >>> seen.put("a", 1, until=10.0); seen.put("b", 2, until=10.0); seen.put("c", 3, until=10.0)
        >>> seen.get("a", now=0.0), seen.get("c", now=0.0), seen.get("c", now=10.0)
        (None, 3, None)
    """

    def __init__(self, size: int) -> None:
        self.size = size
        """The most entries kept."""
        self._entries: OrderedDict[K, tuple[V, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K, now: float) -> V | None:
        """The value remembered for ``key`` while its deadline is after ``now``, else None."""
        found = self._entries.get(key)
        if found is None:
            return None
        if found[1] <= now:
            del self._entries[key]
            return None
        return found[0]

    def put(self, key: K, value: V, until: float) -> None:
        """Remember ``value`` for ``key`` until ``until`` (the newest entry); the oldest goes when full."""
        self._entries.pop(key, None)
        while len(self._entries) >= self.size:
            self._entries.popitem(last=False)
        self._entries[key] = (value, until)
