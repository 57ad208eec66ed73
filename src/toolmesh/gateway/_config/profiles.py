"""Profiles: named subsets of the catalog, each served at its own endpoint.

A profile narrows what the policy allows; it never widens it. Every condition given
must hold for a row to be in the profile: its name matches one of ``tools`` and none
of ``exclude_tools``; an MCP row's server matches one of ``servers``; a row declared
in Python (native, dynamic, hosted) is kept only when ``native`` is true; and each
annotation hint given (``read_only=True``, ``destructive=False``...) is what the row
carries. MCP rows follow the MCP spec's defaults for hints their server does not state
(as ``DenyAnnotated`` does); a Python row that does not state a hint does not match it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from toolmesh._core.errors import ConfigurationError
from toolmesh._policy.rules import matcher, mcp_hint
from toolmesh._rows.rows import Entry, McpEntry

DEFAULT_PROFILE = "default"
"""The profile served at the gateway's path itself: the whole catalog unless the config narrows it."""
PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""What a profile's name may be: it is a path segment of its URL."""

__all__ = ["DEFAULT_PROFILE", "PROFILE_NAME", "Profile"]

_HINTS = ("read_only", "destructive", "idempotent", "open_world")


def _never(_: str) -> bool:
    return False


def _always(_: str) -> bool:
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class Profile:
    """A named subset of the catalog; ``allows(entry)`` says whether a row is in it.

    Example:
        >>> reader = Profile(name="reader", servers=("notes",), native=False, read_only=True)
        >>> reader.name
        'reader'
    """

    name: str
    """Its URL segment (``/<name>/mcp``, also ``/mcp/<name>``) and the ``--profile`` value."""
    description: str | None = None
    """What it is for, shown by ``toolmesh serve``."""
    tools: tuple[str, ...] | None = None
    """Glob patterns of model-visible names to keep; None keeps every name."""
    exclude_tools: tuple[str, ...] = ()
    """Glob patterns of model-visible names to leave out."""
    servers: tuple[str, ...] | None = None
    """Glob patterns of MCP server labels whose rows are kept; None keeps every server's."""
    native: bool = True
    """Whether rows declared in Python (native, dynamic, hosted tools) are kept."""
    read_only: bool | None = None
    """Keep only rows whose ``readOnlyHint`` is this."""
    destructive: bool | None = None
    """Keep only rows whose ``destructiveHint`` is this."""
    idempotent: bool | None = None
    """Keep only rows whose ``idempotentHint`` is this."""
    open_world: bool | None = None
    """Keep only rows whose ``openWorldHint`` is this."""
    search: bool = False
    """Serve the profile in search mode: two tools, ``search_tools`` and ``call_tool``, instead of its rows."""
    _tools: Callable[[str], bool] = field(init=False, repr=False, compare=False)
    _excluded: Callable[[str], bool] = field(init=False, repr=False, compare=False)
    _servers: Callable[[str], bool] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not PROFILE_NAME.fullmatch(self.name):
            raise ConfigurationError(
                f"profile name {self.name!r}: use 1-64 letters, digits, '_', '-' or '.', starting with a letter "
                "or digit (it is a URL path segment)"
            )
        for name in ("tools", "exclude_tools", "servers"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))
        object.__setattr__(self, "_tools", matcher(self.tools, "tools") if self.tools is not None else _always)
        object.__setattr__(
            self, "_excluded", matcher(self.exclude_tools, "exclude_tools") if self.exclude_tools else _never
        )
        object.__setattr__(self, "_servers", matcher(self.servers, "servers") if self.servers is not None else _always)

    def allows(self, entry: Entry) -> bool:
        """Whether ``entry`` is in this profile."""
        if not self._tools(entry.name) or self._excluded(entry.name):
            return False
        if isinstance(entry, McpEntry):
            if not self._servers(entry.server):
                return False
        elif not self.native:
            return False
        return all(self._hint_holds(entry, hint) for hint in _HINTS if getattr(self, hint) is not None)

    def _hint_holds(self, entry: Entry, hint: str) -> bool:
        wanted = getattr(self, hint)
        annotations = entry.capabilities.annotations
        if isinstance(entry, McpEntry):
            return mcp_hint(annotations, hint)[0] is wanted
        return annotations is not None and getattr(annotations, hint) is wanted
