"""DeferPolicy: which rows a turn declares up front and which it leaves to be found by search.

A row is deferred by its own setting first (``defer_loading`` on the row: set per row at
registration, or per MCP server with ``McpServer(defer_loading=...)``), then by the policy:
``always_declare`` patterns are never deferred, and ``defer_mcp_over`` defers every MCP row
whose own setting is unset once the catalog has more rows than that.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Literal

from toolmesh._core.errors import ConfigurationError
from toolmesh._rows.rows import Entry, HostedEntry, McpEntry

__all__ = ["DEFAULT_SEARCH_TOOL", "DeferPolicy", "deferred_names"]

DEFAULT_SEARCH_TOOL = "search_tools"
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True, slots=True)
class DeferPolicy:
    """Which rows are deferred, and how a turn treats calls of deferred rows.

    Example:
        >>> policy = DeferPolicy(defer_mcp_over=40, always_declare=["fs__read_*"])
    """

    defer_mcp_over: int | None = None
    """Defer every MCP row (whose own ``defer_loading`` is unset) when the catalog has more rows
    than this; None: only rows that ask for it are deferred."""
    always_declare: tuple[str, ...] = ()
    """Names or glob patterns (``fnmatch``, case-sensitive) of rows never deferred, whatever they ask."""
    unfound: Literal["refuse", "allow"] = "refuse"
    """A call of a deferred row that no search of the turn found: refused as ``not_found`` (so what
    runs is what the model was offered), or allowed."""
    search_tool: str = DEFAULT_SEARCH_TOOL
    """The name of the turn's search row (the local ``search_tools`` function; the provider's own
    search tool where toolmesh declares one)."""
    search_limit: int = 5
    """How many tools a search returns when the model does not say."""
    max_search_limit: int = 20
    """The most tools one search may return, whatever the model asks."""

    def __post_init__(self) -> None:
        if isinstance(self.always_declare, str):
            object.__setattr__(self, "always_declare", (self.always_declare,))
        else:
            object.__setattr__(self, "always_declare", tuple(self.always_declare))
        limit = self.defer_mcp_over
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ConfigurationError(
                f"DeferPolicy: defer_mcp_over must be a whole number of rows or None, not {limit!r}"
            )
        if self.unfound not in ("refuse", "allow"):
            raise ConfigurationError(f"DeferPolicy: unfound must be 'refuse' or 'allow', not {self.unfound!r}")
        if not isinstance(self.search_tool, str) or not _NAME.fullmatch(self.search_tool):
            raise ConfigurationError(
                f"DeferPolicy: search_tool {self.search_tool!r} is not a tool name every provider accepts "
                "(1-64 letters, digits, '_' or '-')"
            )
        for key in ("search_limit", "max_search_limit"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"DeferPolicy: {key} must be a whole number of at least 1, not {value!r}")
        if self.search_limit > self.max_search_limit:
            raise ConfigurationError("DeferPolicy: search_limit is larger than max_search_limit")

    def declares(self, name: str) -> bool:
        """Whether ``always_declare`` names ``name``."""
        return any(fnmatchcase(name, pattern) for pattern in self.always_declare)


def deferred_names(rows: Mapping[str, Entry], policy: DeferPolicy | None) -> frozenset[str]:
    """The names of the rows of ``rows`` that are deferred (hosted rows never are)."""
    many = policy is not None and policy.defer_mcp_over is not None and len(rows) > policy.defer_mcp_over
    found: list[str] = []
    for name, row in rows.items():
        if isinstance(row, HostedEntry):
            continue
        wanted = row.defer_loading
        if wanted is None:
            wanted = many and isinstance(row, McpEntry)
        if wanted and not (policy is not None and policy.always_declare and policy.declares(name)):
            found.append(name)
    return frozenset(found)
