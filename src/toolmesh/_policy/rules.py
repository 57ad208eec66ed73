"""Allow/deny rules: which rows a call may reach, by name, server, annotation or predicate.

Names and servers are ``fnmatch`` patterns, matched case-sensitively; the four
Allow/Deny classes share one pattern rule.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._core.calls import ToolCall
from toolmesh._core.capabilities import ToolAnnotations
from toolmesh._core.errors import ConfigurationError
from toolmesh._hooks.actions import PROCEED, Hook, Refuse, ToolCallAction
from toolmesh._rows.rows import Entry, McpEntry

__all__ = ["AllowServers", "AllowTools", "DenyAnnotated", "DenyServers", "DenyTools", "DenyWhere", "matcher"]


def matcher(patterns: Iterable[str], what: str) -> Callable[[str], bool]:
    items = [patterns] if isinstance(patterns, str) else list(patterns)
    if not items or not all(isinstance(p, str) for p in items):
        raise ConfigurationError(f"{what} needs one or more fnmatch patterns (str), got {items!r}")
    regex = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in items))
    return lambda name: regex.match(name) is not None


def _not_allowed(name: str, why: str = "") -> Refuse:
    return Refuse(f"The tool {name!r} is not allowed here{why}.")


class RowRule(Hook):
    """A rule about rows alone: refuse a call when ``refusal(entry)`` gives a reason."""

    __slots__ = ()

    def refusal(self, entry: Entry) -> Refuse | None:
        raise NotImplementedError

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        return self.refusal(entry) or PROCEED


class _PatternRule(RowRule):
    """The rule of the Allow/Deny classes: fnmatch patterns against one text of each row.

    ``subject(entry)`` is that text (the row name, or an MCP row's server label; None
    for rows the rule does not cover). An allow rule refuses a subject no pattern
    matches; a deny rule refuses one that a pattern matches.
    """

    __slots__ = ("_match", "patterns")

    allows: bool
    """True: refuse what no pattern matches; False: refuse what a pattern matches (set per class)."""

    def __init__(self, *patterns: str) -> None:
        self.patterns = patterns
        """The fnmatch patterns."""
        self._match = matcher(patterns, type(self).__name__)

    @staticmethod
    def subject(entry: Entry) -> str | None:
        raise NotImplementedError

    def refusal(self, entry: Entry) -> Refuse | None:
        subject = self.subject(entry)
        if subject is None or self._match(subject) is self.allows:
            return None
        return _not_allowed(entry.name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.patterns!r}"


def _name(entry: Entry) -> str:
    return entry.name


def _server(entry: Entry) -> str | None:
    return entry.server if isinstance(entry, McpEntry) else None


class AllowTools(_PatternRule):
    """Run only rows whose name matches one of the patterns; refuse the rest."""

    __slots__ = ()
    allows = True
    subject = staticmethod(_name)


class DenyTools(_PatternRule):
    """Refuse rows whose name matches one of the patterns."""

    __slots__ = ()
    allows = False
    subject = staticmethod(_name)


class AllowServers(_PatternRule):
    """Run MCP rows only from servers whose label matches a pattern; other rows are not affected."""

    __slots__ = ()
    allows = True
    subject = staticmethod(_server)


class DenyServers(_PatternRule):
    """Refuse MCP rows of servers whose label matches a pattern."""

    __slots__ = ()
    allows = False
    subject = staticmethod(_server)


_HINTS = ("read_only", "destructive", "idempotent", "open_world")


_MCP_DEFAULTS: Mapping[str, bool] = MappingProxyType(
    {"read_only": False, "destructive": True, "idempotent": False, "open_world": True}
)
"""The MCP spec's value of each hint a tool does not state."""


def mcp_hint(annotations: ToolAnnotations | None, hint: str) -> tuple[bool, bool]:
    """An MCP row's hint and whether it was stated, the spec's default filling the gaps.

    ``destructiveHint`` (and ``idempotentHint``) mean something only for a tool that is
    not read-only: a tool stating ``readOnlyHint: true`` is not destructive.
    """
    value = getattr(annotations, hint) if annotations is not None else None
    if value is not None:
        return value, True
    if hint == "destructive" and annotations is not None and annotations.read_only is True:
        return False, False
    return _MCP_DEFAULTS[hint], False


class DenyAnnotated(RowRule):
    """Refuse rows whose annotations carry every given hint, e.g. ``DenyAnnotated(destructive=True)``.

    MCP rows follow the MCP spec's defaults: a hint the server does not state (or a tool
    without annotations at all) counts as ``read_only=False``, ``destructive=True``,
    ``idempotent=False``, ``open_world=True``, so ``DenyAnnotated(destructive=True)``
    refuses an MCP tool unless its server says it is read-only or not destructive. For
    native, dynamic and hosted rows (declared by the host), a hint the row does not
    state does not match, unless ``mcp_defaults=True``: then every row takes the MCP
    spec's defaults, as an MCP client does when the row is served to it (the gateway's
    ``denyDestructive``).
    """

    __slots__ = ("hints", "mcp_defaults")

    def __init__(
        self,
        *,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        mcp_defaults: bool = False,
    ) -> None:
        given = dict(zip(_HINTS, (read_only, destructive, idempotent, open_world), strict=True))
        self.hints: dict[str, bool] = {k: v for k, v in given.items() if v is not None}
        """The hints a row must carry to be refused."""
        if not self.hints:
            raise ConfigurationError("DenyAnnotated needs at least one hint, e.g. DenyAnnotated(destructive=True)")
        self.mcp_defaults = mcp_defaults
        """Whether rows declared in Python also take the MCP spec's defaults for hints they do not state."""

    def refusal(self, entry: Entry) -> Refuse | None:
        annotations = entry.capabilities.annotations
        mcp = isinstance(entry, McpEntry)
        if not mcp and not self.mcp_defaults:
            if annotations is None or any(getattr(annotations, k) is not v for k, v in self.hints.items()):
                return None
            marked = ", ".join(f"{k.replace('_', '-')}={v}".lower() for k, v in self.hints.items())
            return _not_allowed(entry.name, f" (it is marked {marked})")
        stated = True
        for hint, wanted in self.hints.items():
            value, said = mcp_hint(annotations, hint)
            if value is not wanted:
                return None
            stated = stated and said
        marked = ", ".join(f"{k.replace('_', '-')}={v}".lower() for k, v in self.hints.items())
        if stated:
            return _not_allowed(entry.name, f" (it is marked {marked})")
        who = "its server does" if mcp else "it does"
        return _not_allowed(entry.name, f" (it counts as {marked}: {who} not say otherwise)")

    def __repr__(self) -> str:
        given = [f"{k}={v}" for k, v in self.hints.items()] + ["mcp_defaults=True"] * self.mcp_defaults
        return f"DenyAnnotated({', '.join(given)})"


class DenyWhere(RowRule):
    """Refuse rows for which ``predicate(entry)`` is true."""

    __slots__ = ("predicate", "reason")

    def __init__(self, predicate: Callable[[Entry], bool], reason: str | None = None) -> None:
        self.predicate = predicate
        """Decides which rows are refused."""
        self.reason = reason
        """What the model is shown (default: the tool is not allowed here)."""

    def refusal(self, entry: Entry) -> Refuse | None:
        if not self.predicate(entry):
            return None
        return Refuse(self.reason) if self.reason is not None else _not_allowed(entry.name)
