"""Catalog events: what each registration, connect, refresh or disconnect did to the rows.

``CatalogEvents`` is a mixin of ``ToolRegistry``: a mutation runs inside
``with self._reporting():``, which (only while someone listens) copies the rows before
and compares them after, then tells every listener one ``CatalogChange`` per server
touched (``server=None`` for native, dynamic and hosted rows). A row counts as
*changed* when its name stays but what a model sees of it (definition, capabilities or
kind) differs. *Refused* names are a refreshed server's tools left out because another
row owns the name.

Listeners are plain callbacks (``on_change``) or async iterators (``changes``). An
iterator's queue is bounded: a consumer that falls ``max_queued`` changes behind loses
them, and gets one ``CatalogChange(resync=True)`` in their place, meaning "read the
catalog again"; the registry never waits for a consumer.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import anyio

from toolmesh._rows.rows import Entry

__all__ = ["CatalogChange", "CatalogEvents", "reported"]

F = TypeVar("F", bound=Callable[..., Any])

_logger = logging.getLogger("toolmesh")


@dataclass(frozen=True, slots=True)
class CatalogChange:
    """What one registration, connect, refresh or disconnect did to one server's rows (or the local rows)."""

    server: str | None
    """The MCP server's label, or None for native, dynamic and hosted rows."""
    added: tuple[str, ...] = ()
    """Names of new rows, in catalog order."""
    changed: tuple[str, ...] = ()
    """Names whose row now shows the model something else (definition, capabilities, kind)."""
    removed: tuple[str, ...] = ()
    """Names no longer in the catalog."""
    refused: tuple[str, ...] = ()
    """Names a refreshed server asked for that another row owns (left out)."""
    resync: bool = False
    """True when a ``changes()`` consumer fell behind and changes were lost: read the catalog again."""


def _server(row: Entry) -> str | None:
    return getattr(row, "server", None) if row.kind == "mcp" else None


def _differs(old: Entry, new: Entry) -> bool:
    if old is new:
        return False
    return old.kind != new.kind or old.definition != new.definition or old.capabilities != new.capabilities


def diff(
    before: Mapping[str, Entry], after: Mapping[str, Entry], refused: Mapping[str | None, Sequence[str]]
) -> list[CatalogChange]:
    """One change per server touched (in the order first touched), the local rows' as ``server=None``."""
    found: dict[str | None, dict[str, list[str]]] = {}

    def note(server: str | None, what: str, name: str) -> None:
        found.setdefault(server, {"added": [], "changed": [], "removed": [], "refused": []})[what].append(name)

    for name, row in after.items():
        old = before.get(name)
        if old is None:
            note(_server(row), "added", name)
        elif _differs(old, row):
            note(_server(row), "changed", name)
    for name, row in before.items():
        if name not in after:
            note(_server(row), "removed", name)
    for server, names in refused.items():
        for name in names:
            note(server, "refused", name)
    return [
        CatalogChange(server, tuple(p["added"]), tuple(p["changed"]), tuple(p["removed"]), tuple(p["refused"]))
        for server, p in found.items()
    ]


class _Queue:
    """One ``changes()`` consumer's bounded queue."""

    def __init__(self, limit: int) -> None:
        self.items: deque[CatalogChange] = deque()
        self.limit = limit
        self.ready = anyio.Event()

    def put(self, change: CatalogChange) -> None:
        if len(self.items) >= self.limit:
            self.items.clear()
            change = CatalogChange(None, resync=True)
        self.items.append(change)
        self.ready.set()


class _Changes(AsyncGenerator[CatalogChange, None]):
    """One ``changes()`` iterator: its listener stays registered until it is closed or collected.

    A class rather than an async generator function: a generator closed or dropped
    before its first step never runs its ``finally``, which left the listener behind.
    """

    __slots__ = ("_queue", "_unsubscribe")

    def __init__(self, queue: _Queue, unsubscribe: Callable[[], None]) -> None:
        self._queue = queue
        self._unsubscribe: Callable[[], None] | None = unsubscribe

    async def asend(self, value: None) -> CatalogChange:
        queue = self._queue
        while not queue.items:
            if self._unsubscribe is None:
                raise StopAsyncIteration
            await queue.ready.wait()
            queue.ready = anyio.Event()
        return queue.items.popleft()

    async def athrow(self, typ: Any, val: Any = None, tb: Any = None) -> CatalogChange:
        self._close()
        raise typ if val is None else val

    async def aclose(self) -> None:
        self._close()

    def _close(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()
            self._queue.items.clear()
            self._queue.ready.set()  # a consumer waiting in another task ends its iteration

    def __del__(self) -> None:
        self._close()


class CatalogEvents:
    """``on_change`` and ``changes`` for ``ToolRegistry`` (which supplies ``_rows``)."""

    _rows: dict[str, Entry]
    _listeners: list[Callable[[CatalogChange], None]]
    _report_depth: int = 0
    _refused: dict[str | None, list[str]] | None = None

    def on_change(self, callback: Callable[[CatalogChange], None]) -> Callable[[], None]:
        """Call ``callback(change)`` after each change of the catalog; returns the function that stops it.

        The callback runs synchronously, right after the change, in the task that made it;
        an exception it raises is logged and does not undo the change.

        Raises:
            TypeError: ``callback`` is an ``async def`` (it would never be awaited): use
                ``changes()`` to consume changes in a task of your own.
        """
        if inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(type(callback).__call__):
            name = getattr(callback, "__qualname__", type(callback).__name__)
            raise TypeError(
                f"on_change takes a plain function, called synchronously right after each change; {name!r} is "
                "async and would never be awaited: iterate registry.changes() in a task instead"
            )
        self._listeners.append(callback)

        def unsubscribe() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unsubscribe

    def changes(self, max_queued: int = 256) -> AsyncGenerator[CatalogChange, None]:
        """Each change of the catalog from this call on, as an async iterator that never ends by itself.

        Close it (``aclose()``, or ``contextlib.aclosing``) to stop listening; an iterator
        dropped without being closed stops listening when it is garbage-collected.

        Args:
            max_queued: Changes kept for a consumer that is behind; past that they are
                dropped and replaced by one ``CatalogChange(None, resync=True)``.

        Raises:
            ValueError: ``max_queued`` is below 1.
        """
        if max_queued < 1:
            raise ValueError(f"max_queued must be at least 1, got {max_queued!r}")
        queue = _Queue(max_queued)
        return _Changes(queue, self.on_change(queue.put))

    def _refuse(self, server: str | None, names: Sequence[str]) -> None:
        if self._refused is not None and names:
            self._refused.setdefault(server, []).extend(names)

    @contextmanager
    def _reporting(self) -> Iterator[None]:
        """Report what the block did to ``_rows`` (nested blocks report once, from the outermost)."""
        if self._report_depth or not self._listeners:
            self._report_depth += 1
            try:
                yield
            finally:
                self._report_depth -= 1
            return
        before = dict(self._rows)
        self._report_depth, self._refused = 1, {}
        try:
            yield
        finally:
            refused, self._report_depth, self._refused = self._refused, 0, None
        for change in diff(before, self._rows, refused):
            for listener in list(self._listeners):
                try:
                    listener(change)
                except Exception:
                    _logger.exception("a catalog change listener raised")


def reported(method: F) -> F:
    """Run a ``CatalogEvents`` method inside ``_reporting()``: its effect on the rows is reported."""

    @functools.wraps(method)
    def wrapper(self: CatalogEvents, *args: Any, **kwargs: Any) -> Any:
        with self._reporting():
            return method(self, *args, **kwargs)

    return cast(F, wrapper)
