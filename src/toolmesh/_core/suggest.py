"""Close-name suggestions for an unknown tool name, with bounded work at any catalog size.

``difflib.get_close_matches`` compares the unknown name with every name of the
catalog (about 18 µs each: 0.9 s per unknown name at 50,000 rows). ``NameIndex``
indexes the names once, on the first unknown name, and then looks at a bounded
number of candidates per query:

- the same name up to case and separators (``Get-Weather`` for ``get_weather``);
- names whose last ``__`` part is the query, or the query's last part (``search`` or
  ``web__search`` for ``docs__search``): a model that drops or swaps a server prefix;
- names a row also goes by (an MCP tool's own name, for a tool given an alias): the
  query, or its last part (``cat`` for ``fs__read_text_file`` or ``read_text_file``);
- names one edit away (a character dropped, added or replaced), found by the two
  thirds of the name such an edit leaves alone (when few names share them);

and scores at most ``_MAX_SCORED`` of them with ``difflib``'s ratio (cutoff 0.7, as
``get_close_matches``), the first two kinds being accepted whatever their ratio.
A small catalog is scored whole, so its suggestions are exactly ``difflib``'s plus
the first two kinds.

A new catalog version's index is derived from the last one built (``previous=``): its
tables are copied (dict copies, at C speed) and only the names that came and went are
indexed, so the first unknown name after a change costs a fraction of indexing every
name again (at 50,000 rows, 15-25 ms instead of 140 ms and more on the shared 2-core
machine; see bench/unknown_names.py). Derived tables share the lists they did not
change with the older index, which never changes them either.

``closest`` is the one "did you mean" of a short list (a document's keys, a module's
names, the profiles): the name the same up to case and separators, else ``difflib``'s best.
"""

from __future__ import annotations

import gc
import threading
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from difflib import SequenceMatcher, get_close_matches
from itertools import islice
from typing import TypeVar

__all__ = ["NameIndex", "closest"]

_K = TypeVar("_K", bound=Hashable)

_CUTOFF = 0.7
"""The least ``difflib`` ratio of a suggestion that is not a strong match."""
_SCAN_ALL = 48
"""Catalogs up to this size are scored whole."""
_MAX_QUERY = 256
"""Longer unknown names get no suggestion: no tool name is that long."""
_MAX_SCORED = 24
"""Candidates scored per query, at most."""
_MAX_POSTING = 32
"""Two thirds shared by more names than this say little about which one was meant."""
_DERIVE_MAX_SHARE = 4
"""A change of more than one name in this many (plus a few) is indexed afresh, not derived."""


@contextmanager
def _no_collection() -> Iterator[None]:
    """No garbage collection while a table is built: it makes tens of thousands of lists and no
    cycles, and a full collection triggered meanwhile would hold the GIL (and the event loop)
    for a quarter of a second at 50,000 names."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _key(name: str) -> str:
    """``name`` in lower case with the separators other tool-name rules allow (``-.:``) as ``_``."""
    return name.lower().replace("-", "_").replace(".", "_").replace(":", "_")


def closest(name: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``name`` most likely means, or None.

    First a name equal to it up to case and separators (``allow_tools`` or ``allowtools``
    for ``allowTools``), else the closest by ``difflib``'s ratio (at least its 0.6: a short
    list, unlike a catalog, is scored whole). Every "did you mean" of a short list is this one.
    """
    names = list(known)
    folded = _key(name).replace("_", "")
    same = next((candidate for candidate in names if _key(candidate).replace("_", "") == folded), None)
    if same is not None:
        return same
    close = get_close_matches(name, names, n=1)
    return close[0] if close else None


def _tail(key: str) -> str | None:
    head, separator, tail = key.rpartition("__")
    return tail if separator and head and tail else None


class NameIndex:
    """The names of one catalog version, indexed lazily for ``suggest``.

    Building the index costs a few microseconds per name, once (the thirds of the
    names of one length when a query first needs them); each ``suggest`` after that
    does bounded work whatever the number of names.
    """

    __slots__ = (
        "_base",
        "_by_key",
        "_by_length",
        "_by_other",
        "_by_tail",
        "_lock",
        "_name_set",
        "_names",
        "_others",
        "_parts",
    )

    def __init__(
        self,
        names: Iterable[str],
        other_names: Mapping[str, str] | Callable[[], Mapping[str, str]] | None = None,
        *,
        previous: NameIndex | None = None,
    ) -> None:
        """Index ``names`` (when first asked).

        Args:
            names: The names, in catalog order.
            other_names: Other names a row goes by -> its name; or a function giving them,
                called when the index is built (in whichever thread first asks).
            previous: The index of an earlier version of the catalog, to derive this one from.
        """
        self._names: tuple[str, ...] = tuple(names)
        self._name_set: frozenset[str] | None = None
        """The names as a set, once built (what the next version's index is derived against)."""
        self._others: Mapping[str, str] | Callable[[], Mapping[str, str]] = other_names or {}
        """Other names a row goes by (an MCP tool's own name) -> its name: asked for, they suggest it."""
        self._by_other: dict[str, list[str]] = {}
        """Names by the ``_key`` of another name they go by."""
        self._by_key: dict[str, list[str]] | None = None
        """Names by ``_key``."""
        self._by_tail: dict[str, list[str]] = {}
        """Names by the ``_key`` of their last ``__`` part."""
        self._by_length: dict[int, list[str]] = {}
        """Keys by length."""
        self._parts: dict[int, tuple[dict[str, list[str]], ...]] = {}
        """Per key length, built when first needed: names by two of their key's three thirds."""
        self._lock = threading.Lock()
        """Held while a table is built: lookups may come from worker threads at once."""
        self._base: NameIndex | None = None
        """A built index of an earlier version to derive the tables from (dropped once built)."""
        if previous is not None:
            self._base = previous if previous._by_key is not None else previous._base

    def __len__(self) -> int:
        return len(self._names)

    def _other_names(self) -> Mapping[str, str]:
        others = self._others
        if callable(others):
            others = self._others = others()
        return others

    def _build(self) -> dict[str, list[str]]:
        base, self._base = self._base, None
        self._name_set = frozenset(self._names)
        if base is not None and (derived := self._derive(base)) is not None:
            return derived
        by_key: defaultdict[str, list[str]] = defaultdict(list)
        by_tail: defaultdict[str, list[str]] = defaultdict(list)
        by_length: defaultdict[int, list[str]] = defaultdict(list)
        for name in self._names:
            key = _key(name)
            names = by_key.get(key)
            if names is None:
                by_key[key] = [name]
                by_length[len(key)].append(key)
            else:
                names.append(name)
            tail = _tail(key)
            if tail is not None:
                by_tail[tail].append(name)
        by_other: defaultdict[str, list[str]] = defaultdict(list)
        for other, name in self._other_names().items():
            by_other[_key(other)].append(name)
        self._by_other = dict(by_other)
        self._by_tail = dict(by_tail)
        self._by_length = dict(by_length)
        self._by_key = dict(by_key)
        return self._by_key

    def _derive(self, base: NameIndex) -> dict[str, list[str]] | None:
        """The tables of ``base`` with the names that came and went since (None for a large change)."""
        assert base._by_key is not None and base._name_set is not None and self._name_set is not None
        old, new = base._name_set, self._name_set
        removed, added = sorted(old - new), sorted(new - old)
        was, now = base._other_names(), self._other_names()
        others_gone = sorted(was.items() - now.items()) if was else []
        others_new = sorted(now.items() - was.items()) if now else []
        changes = len(removed) + len(added) + len(others_gone) + len(others_new)
        if changes > len(self._names) // _DERIVE_MAX_SHARE + 64:
            return None
        by_key, by_tail, by_length = dict(base._by_key), dict(base._by_tail), dict(base._by_length)
        by_other = dict(base._by_other)
        with base._lock:
            parts = dict(base._parts)
        copied: set[int] = set()
        owned: dict[int, list[str]] = {}
        """The lists made here (by id, kept alive): changed in place; any other is copied first."""

        def thirds(key: str) -> Iterator[tuple[dict[str, list[str]], str]]:
            tables = parts.get(len(key))
            if tables is None:
                return
            if len(key) not in copied:
                tables = parts[len(key)] = tuple(dict(table) for table in tables)
                copied.add(len(key))
            yield from zip(tables, _thirds(key, len(key), 0), strict=True)

        for name in removed:
            key = _key(name)
            _drop(by_key, key, name, owned)
            if key not in by_key:
                _drop(by_length, len(key), key, owned)
            if (tail := _tail(key)) is not None:
                _drop(by_tail, tail, name, owned)
            for table, part in thirds(key):
                _drop(table, part, name, owned)
        for name in added:
            key = _key(name)
            if key not in by_key:
                _put(by_length, len(key), key, owned)
            _put(by_key, key, name, owned)
            if (tail := _tail(key)) is not None:
                _put(by_tail, tail, name, owned)
            for table, part in thirds(key):
                _put(table, part, name, owned)
        for other, name in others_gone:
            _drop(by_other, _key(other), name, owned)
        for other, name in others_new:
            _put(by_other, _key(other), name, owned)
        self._parts = parts
        self._by_other, self._by_tail, self._by_length = by_other, by_tail, by_length
        self._by_key = by_key
        return by_key

    def _thirds_of(self, length: int, by_key: dict[str, list[str]]) -> tuple[dict[str, list[str]], ...]:
        tables = self._parts.get(length)
        if tables is not None:
            return tables
        with self._lock, _no_collection():
            return self._parts.get(length) or self._build_thirds(length, by_key)

    def _build_thirds(self, length: int, by_key: dict[str, list[str]]) -> tuple[dict[str, list[str]], ...]:
        first: defaultdict[str, list[str]] = defaultdict(list)
        second: defaultdict[str, list[str]] = defaultdict(list)
        third: defaultdict[str, list[str]] = defaultdict(list)
        for key in self._by_length.get(length, ()):
            a, b, c = _thirds(key, length, 0)
            names = by_key[key]
            first[a].extend(names)
            second[b].extend(names)
            third[c].extend(names)
        tables = self._parts[length] = (dict(first), dict(second), dict(third))
        return tables

    def suggest(self, name: object, n: int = 3) -> tuple[str, ...]:
        """Up to ``n`` names close to ``name``, best first; none for a non-string or a very long name."""
        if not isinstance(name, str) or not name or len(name) > _MAX_QUERY or n < 1:
            return ()
        by_key = self._by_key
        if by_key is None:
            with self._lock, _no_collection():
                by_key = self._by_key if self._by_key is not None else self._build()
        key = _key(name)
        tail = _tail(key) or key
        strong: dict[str, None] = {}
        for bucket in (
            by_key.get(key),
            self._by_other.get(key),
            self._by_tail.get(key),
            by_key.get(tail),
            self._by_other.get(tail),
            self._by_tail.get(tail),
        ):
            if bucket:
                strong.update(dict.fromkeys(islice(bucket, _MAX_SCORED)))
        strong.pop(name, None)
        if len(self._names) <= _SCAN_ALL:
            return _rank(name, strong, self._names, n)
        return _rank(name, strong, self._candidates(key, by_key), n)

    def _candidates(self, key: str, by_key: dict[str, list[str]]) -> list[str]:
        """At most ``_MAX_SCORED`` names likely one edit away from ``key``."""
        found: list[str] = []
        for length in (len(key), len(key) + 1, len(key) - 1):
            if length not in self._by_length:
                continue
            tables = self._thirds_of(length, by_key)
            for table, part in zip(tables, _thirds(key, length, len(key) - length), strict=True):
                bucket = table.get(part)
                if bucket and len(bucket) <= _MAX_POSTING:
                    found.extend(bucket)
        return list(dict.fromkeys(found))[:_MAX_SCORED]


def _put(table: dict[_K, list[str]], key: _K, value: str, owned: dict[int, list[str]]) -> None:
    """Add ``value`` to ``table[key]``, copying a list another index shares before changing it."""
    bucket: list[str] | None = table.get(key)
    if bucket is not None and id(bucket) in owned:
        bucket.append(value)
        return
    grown = [value] if bucket is None else [*bucket, value]
    table[key] = owned[id(grown)] = grown


def _drop(table: dict[_K, list[str]], key: _K, value: str, owned: dict[int, list[str]]) -> None:
    """Remove one ``value`` from ``table[key]`` (the key too, when it was the last), copying a shared list."""
    bucket: list[str] | None = table.get(key)
    if bucket is None or value not in bucket:
        return
    if id(bucket) not in owned:
        bucket = list(bucket)
        table[key] = owned[id(bucket)] = bucket
    bucket.remove(value)
    if not bucket:
        del table[key]


def _thirds(key: str, length: int, shift: int) -> tuple[str, str, str]:
    """Three keys of a name of ``length`` characters, each leaving out one third of it.

    One edit (a character dropped, added or replaced) changes at most one third, so a
    name one edit from a query shares at least one of these keys with it. For a query,
    ``length`` is the name's (the query's own, plus or minus one) and ``shift`` is how
    much longer the query is: the thirds after the edit are found ``shift`` further on.
    The tables are per length, so the keys need not say it.
    """
    first, second = length // 3, 2 * length // 3
    return key[:second], f"{key[:first]}\x00{key[second + shift :]}", key[first + shift :]


def _rank(name: str, strong: dict[str, None], weak: Iterable[str], n: int) -> tuple[str, ...]:
    """The best ``n``: strong matches first, then by ``difflib`` ratio, ties by name."""
    matcher = SequenceMatcher()
    matcher.set_seq2(name)
    scored: dict[str, tuple[bool, float]] = {}
    for candidate in strong:
        matcher.set_seq1(candidate)
        scored[candidate] = (True, matcher.ratio())
    for candidate in weak:
        if candidate in scored or candidate == name:
            continue
        matcher.set_seq1(candidate)
        if (
            matcher.real_quick_ratio() >= _CUTOFF
            and matcher.quick_ratio() >= _CUTOFF
            and (ratio := matcher.ratio()) >= _CUTOFF
        ):
            scored[candidate] = (False, ratio)
    best = sorted(scored.items(), key=lambda item: (not item[1][0], -item[1][1], item[0]))
    return tuple(candidate for candidate, _ in best[:n])
