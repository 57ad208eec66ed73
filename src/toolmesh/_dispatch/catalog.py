"""Catalog: what ToolRegistry and ToolSnapshot share: reading rows and dispatching calls."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from time import perf_counter
from typing import Any

import anyio.to_thread

from toolmesh._context.context import ToolContext, new_call_id
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.errors import ErrorKind, ToolExecutionError, ToolNotFoundError
from toolmesh._core.output import ToolOutput, presentation_of, to_output
from toolmesh._core.result import ToolResult, new_result
from toolmesh._core.slots import global_tracer_provider
from toolmesh._core.suggest import NameIndex
from toolmesh._rows.rows import Entry, McpEntry

from .execution import NO_METADATA, SUCCEEDED, DispatchSettings, execute, failed, trace_not_found, unexpected_error
from .stream import ToolStream

__all__ = ["Catalog", "catalog_index"]

_INDEX_OFF_LOOP = 2_000
"""From this many rows, an unknown name met in a dispatch or a turn is looked up in a worker
thread: the first one of a catalog version builds the name index (~6 µs a name), which must not
stall the event loop (a tenth of a second at 20,000 rows)."""
_INDEX_LOCK = threading.Lock()


def catalog_index(rows: Mapping[str, Entry], previous: NameIndex | None = None) -> NameIndex:
    """The names of one catalog version for suggestions, with its MCP tools' own names as other names.

    ``rows`` must not change afterwards (a snapshot's rows, or a copy). Given the index of
    an earlier version, the new one is derived from it when first needed: only the names
    that came and went are indexed.
    """

    def others() -> dict[str, str]:  # when the index is built, off the event loop for a large catalog
        return {row.wire_name: name for name, row in rows.items() if type(row) is McpEntry}

    return NameIndex(rows, others, previous=previous)


class Catalog:
    """What a registry and a snapshot share: reading rows and dispatching calls."""

    _rows: dict[str, Entry]
    _settings: DispatchSettings
    _name_index: NameIndex | None = None
    """The names, indexed for suggestions; None until asked for, and again after any change."""
    _last_index: NameIndex | None = None
    """The latest version's index, kept across changes: the next one is derived from it."""

    def entries(self) -> list[Entry]:
        """The rows, in stable catalog order."""
        return list(self._rows.values())

    def names(self) -> list[str]:
        """The model-visible names, in catalog order."""
        return list(self._rows)

    def definitions(self) -> list[ToolDefinition]:
        """What the model is shown, in catalog order (hosted rows included)."""
        return [row.definition for row in self._rows.values()]

    def get(self, name: str) -> Entry | None:
        """The row named ``name``, or None (also for a name that is not a string)."""
        return self._rows.get(name) if isinstance(name, str) else None

    def __getitem__(self, name: str) -> Entry:
        row = self.get(name)
        if row is None:
            raise self._missing(name)
        return row

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Entry]:
        return iter(list(self._rows.values()))

    def _missing(self, name: object) -> ToolNotFoundError:
        """The error for a name no row has, with close names of this catalog suggested.

        The names are indexed once per catalog version (derived from the previous
        version's index), so this costs well under a millisecond even with tens of
        thousands of rows, and a few tens of milliseconds at 50,000 rows for the first
        one after a change.
        """
        index = self._name_index
        if index is None:
            with _INDEX_LOCK:  # one index per version, even when worker threads ask at once
                index = self._name_index
                if index is None:
                    rows = dict(self._rows)  # the registry's own rows change in place
                    index = self._name_index = self._last_index = catalog_index(rows, self._last_index)
        return ToolNotFoundError(name, index)

    async def _missing_off_loop(self, name: object) -> ToolNotFoundError:
        """``_missing``, run in a worker thread for a large catalog so the event loop keeps running."""
        if len(self._rows) < _INDEX_OFF_LOOP:
            return self._missing(name)
        return await anyio.to_thread.run_sync(self._missing, name)

    async def dispatch(
        self,
        name: str,
        arguments: str | Mapping[str, Any] | None = None,
        ctx: ToolContext[Any] | None = None,
    ) -> ToolResult:
        """Run the model's call of ``name`` and return its result; never raises for a bad call.

        ``arguments`` is JSON text, a mapping or None (absent, empty and ``null`` mean
        ``{}``). An unknown name (or one that is not a string), bad arguments, a timeout
        or a failing tool each give a failed ``ToolResult``; only cancellation of the
        awaiting task propagates.
        """
        try:
            row = self._rows.get(name)
        except TypeError:  # an unhashable name, e.g. a list
            row = None
        if row is None:
            return await self._not_found(name, ctx)
        settings = self._settings
        native = row.plain_tool
        if (
            native is None
            or not settings.plain
            or (ctx is not None and ctx.timeout is not None)
            or global_tracer_provider() is not None
        ):
            return await execute(row, arguments, ctx, settings)
        # a plain async native tool, untraced and untimed: run here, one coroutine layer, no context
        start = perf_counter()
        call_id = new_call_id() if ctx is None else ctx.call_id
        try:
            output = to_output(await native.fn(**native.validate(arguments)))
        except ToolExecutionError as error:
            return failed(row, error, call_id, start)
        except Exception as exc:
            return failed(row, unexpected_error(row, exc, settings), call_id, start)
        shown = output if output.__class__ is ToolOutput else presentation_of(output)
        duration = perf_counter() - start
        return new_result(call_id, row.name, "native", SUCCEEDED, output, shown, None, NO_METADATA, duration)

    def stream(
        self,
        name: str,
        arguments: str | Mapping[str, Any] | None = None,
        ctx: ToolContext[Any] | None = None,
        *,
        max_queued: int = 32,
    ) -> ToolStream:
        """Run the call ``dispatch`` would run, handing out its events as they happen.

        ``async with registry.stream(name, arguments) as events: async for event in events``
        gives progress, partial outputs, log messages and elicitation/sampling requests as
        they happen, then a ``ResultEvent`` with the ``ToolResult`` that ``dispatch`` would
        return (also for an unknown name or bad arguments). The context's own callbacks
        still receive everything. Closing the stream early cancels the call.

        Args:
            max_queued: Events held for a consumer that is behind; when full, the tool
                waits until the consumer reads (0: each event waits for the reader).

        Raises:
            ValueError: ``max_queued`` is negative.
        """
        if not isinstance(max_queued, int) or max_queued < 0:
            raise ValueError(f"max_queued must be a whole number of events, 0 or more; got {max_queued!r}")
        return ToolStream(self.dispatch, self._settings.callbacks, name, arguments, ctx, max_queued)

    async def _not_found(self, name: object, ctx: ToolContext[Any] | None) -> ToolResult:
        missing = await self._missing_off_loop(name)
        error = ToolExecutionError(str(missing), kind=ErrorKind.NOT_FOUND)
        call_id = ctx.call_id if ctx is not None else new_call_id()
        result = ToolResult.failure(call_id, name if isinstance(name, str) else "", "unknown", error)
        return trace_not_found(result, self._settings)
