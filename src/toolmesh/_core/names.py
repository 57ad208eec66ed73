"""NamePolicy: model-visible names, provider name rules, sanitization and collisions.

A row has two names: the MCP *wire name* (what the server calls the tool, always the
one sent in ``tools/call``) and the *model-visible name* (the registry key, what the
model sees and calls). ``NamePolicy`` turns the first into the second:

1. an explicit alias (``aliases={"search": "find_docs"}``) wins, then
2. the policy's ``alias(server, tool)`` function (when it returns a name), then
3. the template (``"{server}__{tool}"``) when the server is prefixed, else the raw name;

and the result is sanitized for the provider's rule (``openai``, ``anthropic``,
``gemini``, or ``mcp`` when no provider is given). Sanitization is deterministic and
readable; it never resolves a clash by itself: two tools that end up with one name
are a ``NameCollisionError`` unless the policy opts into ``dedupe=True``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .errors import ConfigurationError, NameCollisionError

_logger = logging.getLogger("toolmesh.names")

__all__ = ["PROVIDER_RULES", "NamePolicy", "NameRule"]

_HASH_CHARS = 8
"""Hex characters of sha256 kept when a long name is shortened."""


@dataclass(frozen=True, slots=True)
class NameRule:
    """What one provider accepts as a tool name.

    A valid name is 1..``max_length`` characters of ``chars`` (a regex character-class
    body) whose first character, when ``first`` is set, is also of ``first``.
    """

    provider: str
    """The key of the rule in ``PROVIDER_RULES`` (``"openai"``, ...)."""
    chars: str
    """Allowed characters, as the body of a regex character class (``a-zA-Z0-9_-``)."""
    max_length: int
    """The longest name the provider accepts."""
    first: str | None = None
    """Allowed first characters (a character-class body), when they are restricted."""
    source: str = ""
    """Where the rule is documented."""
    _valid: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _rejected: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _first: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_length < 2 * _HASH_CHARS:
            raise ConfigurationError(f"name rule {self.provider!r}: max_length must be at least {2 * _HASH_CHARS}")
        first = f"[{self.first}]" if self.first is not None else f"[{self.chars}]"
        object.__setattr__(self, "_valid", re.compile(f"{first}[{self.chars}]{{0,{self.max_length - 1}}}"))
        object.__setattr__(self, "_rejected", re.compile(f"[^{self.chars}]"))
        object.__setattr__(self, "_first", re.compile(first) if self.first is not None else None)
        # Sanitization falls back to '_' for rejected characters and as a leading character.
        if not self._valid.fullmatch("_"):
            raise ConfigurationError(f"name rule {self.provider!r}: '_' must be an allowed (first) character")

    @property
    def pattern(self) -> str:
        """The rule as one anchored regular expression, e.g. ``^[a-zA-Z0-9_-]{1,64}$``."""
        if self.first is None:
            return f"^[{self.chars}]{{1,{self.max_length}}}$"
        return f"^[{self.first}][{self.chars}]{{0,{self.max_length - 1}}}$"

    def matches(self, name: object) -> bool:
        """Whether ``name`` is a string the provider accepts as a tool name."""
        return isinstance(name, str) and self._valid.fullmatch(name) is not None

    def sanitize(self, name: str) -> str:
        """Make ``name`` valid under this rule, deterministically; valid names are unchanged.

        Rejected characters become ``_``; a name that may not start with its first
        character gets a leading ``_``; an empty name becomes ``_``; a name longer than
        ``max_length`` keeps its first ``max_length - 9`` characters followed by ``_``
        and 8 hex characters of the sha256 of the original name, so it is exactly
        ``max_length`` long and two long names differ when their originals differ.
        """
        if self.matches(name):
            return name
        clean = self._rejected.sub("_", name) or "_"
        if self._first is not None and not self._first.match(clean):
            clean = "_" + clean
        if len(clean) > self.max_length:
            digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
            clean = f"{clean[: self.max_length - _HASH_CHARS - 1]}_{digest}"
        return clean

    def describe(self) -> str:
        """The rule in words, for error messages."""
        return f"the {self.provider} tool-name rule {self.pattern}"


# OpenAI (Chat Completions and Responses function tools): "Must be a-z, A-Z, 0-9, or
# contain underscores and dashes, with a maximum length of 64."
# https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools
# (also the docstring of FunctionDefinition.name in the openai SDK).
_OPENAI = NameRule(
    "openai",
    "a-zA-Z0-9_-",
    64,
    source="https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools",
)

# Anthropic Messages API, user-defined tools: "Must match the regex ^[a-zA-Z0-9_-]{1,128}$."
# https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools
# (older pages said {1,64}; the current "Define tools" page says 128.)
_ANTHROPIC = NameRule(
    "anthropic",
    "a-zA-Z0-9_-",
    128,
    source="https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools",
)

# Gemini FunctionDeclaration.name: "Must start with a letter or an underscore. Must be
# a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes", with "a maximum length
# of 64" in the Gemini API reference (https://ai.google.dev/api/caching#FunctionDeclaration)
# and of 128 in the google-genai SDK's types.FunctionDeclaration docstring (3.x). The
# smaller bound is used so a name is accepted by both the Gemini API and Vertex AI.
_GEMINI = NameRule(
    "gemini",
    "a-zA-Z0-9_.:-",
    64,
    first="a-zA-Z_",
    source="https://ai.google.dev/api/caching#FunctionDeclaration",
)

# MCP tool names, SEP-986 (spec 2025-11-25, "Tool names"): 1-128 characters of
# A-Z a-z 0-9 _ - . https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names
_MCP = NameRule(
    "mcp",
    "A-Za-z0-9._-",
    128,
    source="https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names",
)

PROVIDER_RULES: Mapping[str, NameRule] = MappingProxyType(
    {rule.provider: rule for rule in (_OPENAI, _ANTHROPIC, _GEMINI, _MCP)}
)
"""Tool-name rules by provider: ``openai``, ``anthropic``, ``gemini`` and ``mcp``."""

AliasFunction = Callable[[str, str], str | None]
"""``alias(server, tool) -> model name``, or None to fall back to the template."""


def describe_mcp_tool(server: str, wire_name: str) -> str:
    """How error messages name an MCP tool: ``MCP tool 'read' of server 'fs'`` (the one place)."""
    return f"MCP tool {wire_name!r} of server {server!r}"


@dataclass(frozen=True, slots=True, kw_only=True)
class NamePolicy:
    """How rows get their model-visible names, and which names the provider accepts.

    Example:
        >>> policy = NamePolicy(provider="openai")
        >>> policy.model_name("docs", "search.v2")
        'docs__search_v2'
        >>> policy.model_name("docs", "search", prefix=False, aliases={"search": "find"})
        'find'
    """

    provider: str | NameRule | None = None
    """The provider whose name rule applies (a key of ``PROVIDER_RULES`` or a ``NameRule``);
    None applies the MCP rule."""
    template: str = "{server}__{tool}"
    """How a prefixed MCP tool is named; fields ``{server}`` (the label) and ``{tool}``."""
    alias: AliasFunction | None = None
    """A custom alias function, consulted after the explicit alias map."""
    dedupe: bool = False
    """Resolve collisions with a deterministic ``_2``, ``_3`` suffix instead of raising."""
    _rule: NameRule = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.provider, str) and self.provider not in PROVIDER_RULES:
            known = ", ".join(repr(p) for p in sorted(PROVIDER_RULES))
            raise ConfigurationError(
                f"NamePolicy: unknown provider {self.provider!r}; use one of {known}, a NameRule, "
                "or None for the MCP rule"
            )
        rule = self.provider if isinstance(self.provider, NameRule) else PROVIDER_RULES[self.provider or "mcp"]
        object.__setattr__(self, "_rule", rule)
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(self.template) if f is not None}
        except ValueError as exc:
            raise ConfigurationError(f"NamePolicy: template {self.template!r} is not a format string: {exc}") from None
        if "tool" not in fields or not fields <= {"server", "tool"}:
            raise ConfigurationError(
                f"NamePolicy: template {self.template!r} must contain '{{tool}}' and may contain only "
                "'{server}' and '{tool}', e.g. '{server}__{tool}'"
            )

    @property
    def rule(self) -> NameRule:
        """The name rule in force."""
        return self._rule

    def is_valid(self, name: object) -> bool:
        """Whether ``name`` is accepted by the provider's rule (the MCP rule without one)."""
        return self.rule.matches(name)

    def sanitize(self, name: str) -> str:
        """Make ``name`` valid under the rule; deterministic, valid names unchanged.

        See ``NameRule.sanitize``: rejected characters become ``_`` and over-long names
        are shortened to exactly the maximum length with an 8-hex-digit hash suffix.
        """
        return self.rule.sanitize(name)

    def check_name(self, name: str, *, owner: str = "tool") -> str:
        """Validate a name the host chose (native, dynamic or hosted rows) and return it.

        Args:
            name: The model-visible name to check.
            owner: How the error names the row, e.g. ``"native tool 'add'"``.

        Raises:
            ConfigurationError: when the name breaks the rule; the message names the rule
                and suggests the sanitized name.
        """
        if self.rule.matches(name):
            return name
        hint = f" Register it as {self.sanitize(name)!r} instead." if isinstance(name, str) else ""
        raise ConfigurationError(f"{owner}: name {name!r} does not match {self.rule.describe()}.{hint}")

    def model_name(
        self,
        server: str,
        tool: str,
        *,
        prefix: bool = True,
        aliases: Mapping[str, str] | None = None,
    ) -> str:
        """The model-visible name of MCP tool ``tool`` of server ``server``.

        An explicit alias wins, then the policy's alias function, then the template
        (``prefix=True``) or the raw name (``prefix=False``); the result is sanitized.
        """
        name: str | None = aliases.get(tool) if aliases else None
        if name is None and self.alias is not None:
            name = self.alias(server, tool)
        if name is None:
            name = self.template.format(server=server, tool=tool) if prefix else tool
        return self._rule.sanitize(name)

    def assign(
        self,
        server: str,
        wire_names: Iterable[str],
        *,
        prefix: bool = True,
        aliases: Mapping[str, str] | None = None,
        taken: Mapping[str, str] | None = None,
    ) -> dict[str, str]:
        """Name every tool of one server at once: wire name -> model-visible name.

        Args:
            server: The server's label.
            wire_names: The server's tool names, in the server's order.
            prefix: Whether the server's tools are named by the template.
            aliases: Explicit raw name -> model name overrides for this server.
            taken: Names already owned by other rows -> a description of the owner
                (``"native tool 'x'"``, ``"MCP tool 'y' of server 'z'"``).

        Returns:
            The model-visible name of each wire name, in the server's order.

        Raises:
            NameCollisionError: when two of the server's tools get one name, or a name is
                already in ``taken`` (unless ``dedupe=True``), or the server lists a tool
                twice. Nothing is assigned in that case.
        """
        taken = taken or {}
        natural: dict[str, str] = {}
        claimed: dict[str, str] = {}  # model name -> the wire name that keeps it: an explicit alias, else the first
        aliased: set[str] = set()
        for wire in wire_names:
            if wire in natural:
                raise NameCollisionError(
                    natural[wire],
                    describe_mcp_tool(server, wire),
                    describe_mcp_tool(server, wire) + " (listed twice)",
                    f"Server {server!r} lists tool {wire!r} twice; fix the server, or leave the tool out "
                    f"with exclude=[{wire!r}].",
                )
            name = self.model_name(server, wire, prefix=prefix, aliases=aliases)
            natural[wire] = name
            if aliases and wire in aliases and claimed.get(name) not in aliased:
                claimed[name] = wire  # the host asked for this name for this tool: it wins over a derived one
                aliased.add(wire)
            else:
                claimed.setdefault(name, wire)

        result: dict[str, str] = {}
        used: set[str] = set()
        for wire, name in natural.items():
            first = claimed[name]
            if name not in taken and first == wire:
                result[wire] = name
                used.add(name)
                continue
            owner = taken[name] if name in taken else describe_mcp_tool(server, first)
            if not self.dedupe:
                hint = self._hint(server, wire, prefix)
                if name not in taken:
                    hint = f"{self._why_both(server, first, wire, name, aliases or {})} {hint}"
                raise NameCollisionError(name, owner, describe_mcp_tool(server, wire), hint)
            result[wire] = self._suffixed(name, taken, claimed, used)
            used.add(result[wire])
            _logger.warning(
                "%s is named %r: %r is taken by %s (NamePolicy(dedupe=True))",
                describe_mcp_tool(server, wire),
                result[wire],
                name,
                owner,
            )
        return result

    def _suffixed(self, name: str, taken: Mapping[str, str], natural: Mapping[str, str], used: set[str]) -> str:
        limit = self.rule.max_length
        n = 2
        while True:
            suffix = f"_{n}"
            candidate = name[: limit - len(suffix)] + suffix
            if candidate not in taken and candidate not in natural and candidate not in used:
                return candidate
            n += 1

    def _why_both(self, server: str, first: str, wire: str, name: str, aliases: Mapping[str, str]) -> str:
        """Why two tools of one server got ``name``: an alias the host gave, or the naming rule."""
        if first in aliases and wire in aliases:
            return f"The aliases of tools {first!r} and {wire!r} of server {server!r} are both {name!r}."
        if first in aliases or wire in aliases:
            given, other = (first, wire) if first in aliases else (wire, first)
            return (
                f"The alias {aliases[given]!r} given to tool {given!r} of server {server!r} is also the name "
                f"tool {other!r} gets."
            )
        return f"Tools {first!r} and {wire!r} of server {server!r} both map to {name!r} under {self.rule.describe()}."

    def _hint(self, server: str, wire: str, prefix: bool) -> str:
        fixes = [f"give it another name with aliases={{{wire!r}: '<new name>'}} on server {server!r}"]
        if not prefix:
            fixes.append(f"turn prefix on for server {server!r}")
        fixes.append("or pass NamePolicy(dedupe=True) to add a numeric suffix")
        text = ", ".join(fixes)
        return f"Fix: {text}."
