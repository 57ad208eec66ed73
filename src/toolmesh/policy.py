"""Ready-made hooks: allow/deny rules, approval, concurrency and rate limits, sizes, pinning.

Every refusal has disposition ``refused`` and a reason the model is shown (error
kind ``refused``; ``rate_limited`` for ``RateLimit``, which is retryable). Name and
server patterns are ``fnmatch`` patterns, matched case-sensitively (``"fs__*"``).

One policy object may serve many turns at once: limits and pins are shared by
every turn the object is passed to.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

import anyio

from ._calls import ToolCall
from ._capabilities import ToolAnnotations
from ._context import ToolContext
from ._definition import ToolDefinition
from ._entries import Entry, McpEntry
from ._errors import ConfigurationError, ErrorKind, ToolmeshError
from ._registry import ToolRegistry
from ._snapshot import ToolSnapshot
from .hooks import PROCEED, Hook, Refuse, ToolCallAction

__all__ = [
    "AllowServers",
    "AllowTools",
    "ApprovalCallback",
    "ArgumentSizeLimit",
    "ConcurrencyLimit",
    "DefinitionPinning",
    "DenyAnnotated",
    "DenyServers",
    "DenyTools",
    "DenyWhere",
    "RateLimit",
    "RequireApproval",
    "definition_digest",
]

ApprovalCallback = Callable[[ToolCall, Entry], Awaitable["bool | str"]]
"""``await approve(call, entry)``: True runs the call; False or a reason (str) refuses it."""


def _matcher(patterns: Iterable[str], what: str) -> Callable[[str], bool]:
    items = [patterns] if isinstance(patterns, str) else list(patterns)
    if not items or not all(isinstance(p, str) for p in items):
        raise ConfigurationError(f"{what} needs one or more fnmatch patterns (str), got {items!r}")
    regex = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in items))
    return lambda name: regex.match(name) is not None


def _not_allowed(name: str, why: str = "") -> Refuse:
    return Refuse(f"The tool {name!r} is not allowed here{why}.")


class _RowRule(Hook):
    """A rule about rows alone: refuse a call when ``refusal(entry)`` gives a reason."""

    __slots__ = ()

    def refusal(self, entry: Entry) -> Refuse | None:
        raise NotImplementedError

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        return self.refusal(entry) or PROCEED


class _PatternRule(_RowRule):
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
        self._match = _matcher(patterns, type(self).__name__)

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


def _mcp_hint(annotations: ToolAnnotations | None, hint: str) -> tuple[bool, bool]:
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


class DenyAnnotated(_RowRule):
    """Refuse rows whose annotations carry every given hint, e.g. ``DenyAnnotated(destructive=True)``.

    MCP rows follow the MCP spec's defaults: a hint the server does not state (or a tool
    without annotations at all) counts as ``read_only=False``, ``destructive=True``,
    ``idempotent=False``, ``open_world=True``, so ``DenyAnnotated(destructive=True)``
    refuses an MCP tool unless its server says it is read-only or not destructive. For
    native, dynamic and hosted rows (declared by the host), a hint the row does not
    state does not match: to refuse those too, use ``DenyWhere``.
    """

    __slots__ = ("hints",)

    def __init__(
        self,
        *,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
    ) -> None:
        given = dict(zip(_HINTS, (read_only, destructive, idempotent, open_world), strict=True))
        self.hints: dict[str, bool] = {k: v for k, v in given.items() if v is not None}
        """The hints a row must carry to be refused."""
        if not self.hints:
            raise ConfigurationError("DenyAnnotated needs at least one hint, e.g. DenyAnnotated(destructive=True)")

    def refusal(self, entry: Entry) -> Refuse | None:
        annotations = entry.capabilities.annotations
        if not isinstance(entry, McpEntry):
            if annotations is None or any(getattr(annotations, k) is not v for k, v in self.hints.items()):
                return None
            marked = ", ".join(f"{k.replace('_', '-')}={v}".lower() for k, v in self.hints.items())
            return _not_allowed(entry.name, f" (it is marked {marked})")
        stated = True
        for hint, wanted in self.hints.items():
            value, said = _mcp_hint(annotations, hint)
            if value is not wanted:
                return None
            stated = stated and said
        marked = ", ".join(f"{k.replace('_', '-')}={v}".lower() for k, v in self.hints.items())
        if stated:
            return _not_allowed(entry.name, f" (it is marked {marked})")
        return _not_allowed(entry.name, f" (it counts as {marked}: its server does not say otherwise)")

    def __repr__(self) -> str:
        return f"DenyAnnotated({', '.join(f'{k}={v}' for k, v in self.hints.items())})"


class DenyWhere(_RowRule):
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


class RequireApproval(Hook):
    """Ask ``await callback(call, entry)`` before a call runs: True runs it; False or a reason refuses it.

    ``when(entry)`` narrows which rows need approval (all by default). Put approval
    after cheaper rules, so nobody is asked about a call a rule would refuse.
    """

    __slots__ = ("callback", "when")

    def __init__(self, callback: ApprovalCallback, *, when: Callable[[Entry], bool] | None = None) -> None:
        self.callback = callback
        """Decides each call."""
        self.when = when
        """Which rows need approval (None: every row)."""

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if self.when is not None and not self.when(entry):
            return PROCEED
        verdict = await self.callback(call, entry)
        if verdict is True:
            return PROCEED
        if verdict is False:
            return Refuse(f"Running the tool {call.name!r} was not approved.")
        if isinstance(verdict, str):
            return Refuse(verdict)
        raise TypeError(f"the approval callback returned {type(verdict).__name__}; it must return a bool or a str")


class ConcurrencyLimit(Hook):
    """At most ``limit`` calls of each matching row run at once; the others wait for a slot.

    Each row has its own slots, held only while its tool runs (refused and skipped
    calls never take one), and released however the call ends.
    """

    __slots__ = ("_match", "_slots", "limit")

    def __init__(self, limit: int, *, tools: Iterable[str] = ("*",)) -> None:
        if limit < 1:
            raise ConfigurationError(f"ConcurrencyLimit needs a limit of at least 1, got {limit!r}")
        self.limit = limit
        """Calls of one row that may run at once."""
        self._match = _matcher(tools, "ConcurrencyLimit(tools=...)")
        self._slots: dict[str, anyio.Semaphore] = {}

    def around_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> anyio.Semaphore | None:
        if not self._match(entry.name):
            return None
        slots = self._slots.get(entry.name)
        if slots is None:
            slots = self._slots[entry.name] = anyio.Semaphore(self.limit)
        return slots

    def __repr__(self) -> str:
        return f"ConcurrencyLimit({self.limit})"


class RateLimit(Hook):
    """At most ``calls`` calls of each matching row per ``per`` seconds (a token bucket per row).

    A call over the limit is refused with kind ``rate_limited`` (retryable) and the
    model is told how long to wait. Bursts of up to ``calls`` are allowed.
    """

    __slots__ = ("_buckets", "_clock", "_match", "_rate", "calls", "per")

    def __init__(
        self,
        calls: int,
        per: float = 1.0,
        *,
        tools: Iterable[str] = ("*",),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if calls < 1 or per <= 0:
            raise ConfigurationError(
                f"RateLimit needs calls >= 1 and per > 0 seconds, got calls={calls!r}, per={per!r}"
            )
        self.calls = calls
        """Calls allowed per period (and the largest burst)."""
        self.per = per
        """The period, in seconds."""
        self._rate = calls / per
        self._match = _matcher(tools, "RateLimit(tools=...)")
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if not self._match(entry.name):
            return PROCEED
        now = self._clock()
        tokens, then = self._buckets.get(entry.name, (float(self.calls), now))
        tokens = min(float(self.calls), tokens + (now - then) * self._rate)
        if tokens >= 1.0:
            self._buckets[entry.name] = (tokens - 1.0, now)
            return PROCEED
        self._buckets[entry.name] = (tokens, now)
        wait = (1.0 - tokens) / self._rate
        return Refuse(
            f"The tool {entry.name!r} is rate limited to {self.calls} calls per {self.per:g} seconds. "
            f"Try again in {wait:.1f} seconds.",
            kind=ErrorKind.RATE_LIMITED,
        )

    def __repr__(self) -> str:
        return f"RateLimit({self.calls}, per={self.per:g})"


class ArgumentSizeLimit(Hook):
    """Refuse calls whose arguments, as JSON text, are larger than ``max_bytes`` (UTF-8)."""

    __slots__ = ("_match", "max_bytes")

    def __init__(self, max_bytes: int, *, tools: Iterable[str] = ("*",)) -> None:
        if max_bytes < 2:
            raise ConfigurationError(f"ArgumentSizeLimit needs max_bytes of at least 2 ('{{}}'), got {max_bytes!r}")
        self.max_bytes = max_bytes
        """The largest argument text allowed, in bytes."""
        self._match = _matcher(tools, "ArgumentSizeLimit(tools=...)")

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if len(call.arguments) * 4 <= self.max_bytes or not self._match(entry.name):
            return PROCEED  # a str of n characters is at most 4n bytes in UTF-8
        size = len(call.arguments.encode())
        if size <= self.max_bytes:
            return PROCEED
        return Refuse(
            f"The arguments are {size} bytes; the tool {entry.name!r} accepts at most {self.max_bytes} bytes. "
            "Send smaller arguments."
        )

    def __repr__(self) -> str:
        return f"ArgumentSizeLimit({self.max_bytes})"


def definition_digest(definition: ToolDefinition) -> str:
    """The sha256 (hex) of a definition's canonical JSON: name, description, parameters, output schema."""
    canonical = json.dumps(
        {
            "name": definition.name,
            "description": definition.description,
            "parameters": definition.parameters,
            "output_schema": definition.output_schema,
        },
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class DefinitionPinning(Hook):
    """Refuse calls to rows whose definition changed since it was approved, until re-approved.

    ``pin(rows)`` approves the definitions the host (or its user) reviewed. A row whose
    name, description, parameters or output schema differ from its pin afterwards
    (an MCP server silently rewriting a tool) is refused, as is a row never pinned
    (unless ``trust_on_first_use``). ``approve(name)`` accepts the changed
    definition; ``pins`` can be saved and passed back to the constructor.
    """

    __slots__ = ("_digests", "_pending", "_pins", "trust_on_first_use")

    def __init__(self, pins: Mapping[str, str] | None = None, *, trust_on_first_use: bool = False) -> None:
        self._pins: dict[str, str] = dict(pins or {})
        self.trust_on_first_use = trust_on_first_use
        """Pin a row never seen before on its first call instead of refusing it."""
        self._pending: dict[str, str] = {}
        self._digests: dict[str, tuple[ToolDefinition, str]] = {}

    @property
    def pins(self) -> dict[str, str]:
        """Approved digests by row name (a copy, to save)."""
        return dict(self._pins)

    def pin(self, rows: ToolSnapshot | ToolRegistry | Iterable[Entry]) -> None:
        """Approve the current definition of every row given."""
        for entry in rows:
            self._pins[entry.name] = self._digest(entry.definition)
            self._pending.pop(entry.name, None)

    def approve(self, row: str | Entry) -> None:
        """Approve a row's changed definition: the one last refused under ``name``, or this row's.

        Raises:
            ToolmeshError: for a name with no refused definition waiting for approval.
        """
        if not isinstance(row, str):
            self.pin([row])
            return
        try:
            self._pins[row] = self._pending.pop(row)
        except KeyError:
            raise ToolmeshError(
                f"no changed definition of {row!r} is waiting for approval; pass the row itself "
                "(approve(registry[name])) to approve its current definition"
            ) from None

    def revoke(self, name: str) -> None:
        """Forget a row's pin: its calls are refused until it is pinned again."""
        self._pins.pop(name, None)

    def changed(self, rows: ToolSnapshot | ToolRegistry | Iterable[Entry]) -> list[str]:
        """The names of the rows given whose definition is not the pinned one (or is not pinned)."""
        return [entry.name for entry in rows if self._pins.get(entry.name) != self._digest(entry.definition)]

    def pin_or_refuse(self, entry: Entry) -> str | None:
        """Why a call to ``entry`` must be refused, or None; records what it saw.

        Not a pure check: a row never pinned is pinned here under ``trust_on_first_use``,
        and a refused definition is kept for ``approve(name)``. For hosts that dispatch
        without hooks.
        """
        digest = self._digest(entry.definition)
        pinned = self._pins.get(entry.name)
        if pinned == digest:
            return None
        if pinned is None:
            if self.trust_on_first_use:
                self._pins[entry.name] = digest
                return None
            self._pending[entry.name] = digest
            return f"The tool {entry.name!r} has not been approved for use."
        self._pending[entry.name] = digest
        return f"The tool {entry.name!r} changed since it was approved and cannot be used until it is approved again."

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        reason = self.pin_or_refuse(entry)
        return PROCEED if reason is None else Refuse(reason)

    def _digest(self, definition: ToolDefinition) -> str:
        # definitions are frozen: one digest per definition object, not one per call
        cached = self._digests.get(definition.name)
        if cached is not None and cached[0] is definition:
            return cached[1]
        digest = definition_digest(definition)
        self._digests[definition.name] = (definition, digest)
        return digest

    def __repr__(self) -> str:
        return f"DefinitionPinning({len(self._pins)} pins)"
