"""ToolSnapshot: a frozen view of some rows.

What one model turn advertises is exactly what it runs, whatever the registry does meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping

from toolmesh._core.suggest import NameIndex
from toolmesh._rows.rows import Entry

from .catalog import Catalog
from .execution import DispatchSettings

__all__ = ["ToolSnapshot"]


class ToolSnapshot(Catalog):
    """A frozen set of rows: keeps dispatching exactly what it captured."""

    def __init__(
        self, rows: Mapping[str, Entry], settings: DispatchSettings, name_index: NameIndex | None = None
    ) -> None:
        self._rows = dict(rows)
        self._settings = settings
        self._name_index = name_index

    def __repr__(self) -> str:
        return f"ToolSnapshot({len(self._rows)} rows)"
