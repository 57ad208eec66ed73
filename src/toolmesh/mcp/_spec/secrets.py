"""Configured secrets never leave toolmesh: one redaction for results, errors, logs.

A server spec carries secrets: the values of ``headers`` (``Authorization: Bearer xyz``)
and ``env`` (except the well-known ``PATH``, ``HOME``, locale and terminal variables),
tokens in the URL (query values, path segments after the first that mix letters and
digits), and values of stdio ``args`` that follow a flag naming a key or token
(``--api-key X``).

A server may echo any of them back (in a result, an ``isError`` text, a JSON-RPC
error, a failing handshake), and the HTTP library and the SDK log full URLs and
messages. ``Secrets.of(spec)`` collects the strings once per spec (plus the credentials
an ``auth`` object put on the requests, once they were sent); ``redact`` replaces each
with ``***``, and the connection applies it wherever server-sent text becomes model
feedback, output or an error message. Log records and spans made while a connection is
open are the telemetry guard's (``toolmesh.mcp._client.telemetry``).

Values shorter than ``MIN_SECRET_CHARS`` are not redacted: flags such as ``"1"``,
``"true"`` or ``"debug"`` would otherwise be starred out of every result, and a value
that short is no secret worth the damage (it falls to brute force anyway).

``jwts=True`` also stars out every string shaped like a JWT (a compact JWS or JWE: dot-separated
base64url segments, the first starting ``eyJ``, the encoding of ``{"``), a credential no
configuration names: the audit uses it, so that an access token a model copied into a tool's
arguments is not written in clear. The search is one pass of a regex whose quantifiers are
possessive (no backtracking), in time linear in the text.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, unquote, urlsplit

import mcp_types
import pydantic

from toolmesh._core.errors import ServerConnectionError

from .defaults import SpecFields

__all__ = ["MASK", "MIN_SECRET_CHARS", "Secrets"]

logger = logging.getLogger("toolmesh.mcp")

MASK = "***"
"""What a secret is replaced with."""
MIN_SECRET_CHARS = 8
"""The shortest value treated as a secret (the length of the shortest password most policies accept)."""

E = TypeVar("E", bound=BaseException)
M = TypeVar("M", bound=pydantic.BaseModel)

_PUBLIC_ENV = frozenset(
    {
        "PATH", "HOME", "PWD", "OLDPWD", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR",
        "TMP", "TEMP", "TZ", "HOSTNAME", "SHLVL", "PYTHONPATH", "VIRTUAL_ENV", "NODE_PATH", "COLORTERM",
    }
)  # fmt: skip
"""Variables that hold paths, locale or terminal settings, never credentials: a host that
passes its whole environment (``env={**os.environ, ...}``) would otherwise see every path
under its home directory starred out of every answer."""
_SECRET_FLAG = re.compile(r"key|token|secret|passw|auth|credential|bearer", re.IGNORECASE)
_B64URL = "[A-Za-z0-9_-]"
_JWT = re.compile(rf"(?<![A-Za-z0-9_.-])eyJ{_B64URL}*+\.{_B64URL}++\.{_B64URL}*+(?:\.{_B64URL}*+)*+")
"""A compact JWS (three segments; the signature may be empty) or JWE (five) not inside a longer word:
possessive quantifiers, so no backtracking; runs of token characters a match can start in never overlap."""


@dataclass(frozen=True, slots=True)
class Secrets:
    """The secret strings of one server spec, longest first (so a longer one wins an overlap)."""

    values: tuple[str, ...] = ()
    """Every form a configured secret may take in text: as given, JSON-escaped, percent-encoded."""
    jwts: bool = False
    """Also star out every string shaped like a JWT (``eyJ...``, dot-separated base64url segments)."""

    @classmethod
    def of(cls, spec: SpecFields, credentials: Iterable[str] = ()) -> Secrets:
        """Collect the secrets of ``spec``: header and env values, URL tokens, flagged args.

        Args:
            spec: The server spec.
            credentials: Header values the spec's ``auth`` put on requests
                (``Authorization: Bearer <token>``), taken apart like configured headers.
        """
        return cls.from_values(_spec_values(spec, credentials))

    @classmethod
    def from_values(cls, values: Iterable[str], *, jwts: bool = False) -> Secrets:
        """Secrets from raw values; each also in its JSON-escaped and percent-encoded forms (``jwts``: and
        every string shaped like a JWT)."""
        found: set[str] = set()
        for value in values:
            if len(value) < MIN_SECRET_CHARS:
                continue
            found.update(_variants(value))
        return cls(tuple(sorted(found, key=lambda s: (-len(s), s))), jwts)

    def __bool__(self) -> bool:
        return bool(self.values) or self.jwts

    def __repr__(self) -> str:
        return f"Secrets(<{len(self.values)} values>{', jwts' * self.jwts})"

    def found_in(self, text: str) -> bool:
        """Whether any secret occurs in ``text``."""
        return any(value in text for value in self.values) or (
            self.jwts and "eyJ" in text and _JWT.search(text) is not None
        )

    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by ``***`` (the same object when there is none)."""
        for value in self.values:
            if value in text:
                text = text.replace(value, MASK)
        if self.jwts and "eyJ" in text:
            text = _JWT.sub(MASK, text)
        return text

    def redact_exception(self, exc: E) -> E:
        """``exc`` itself, redacted in place along its chain of causes.

        Used on errors toolmesh has just built from a server's answer
        (``ToolExecutionError``: ``message``, ``model_feedback``; ``ServerConnectionError``:
        its text). The exceptions they were made from (``__cause__``, ``__context__``,
        the members of exception groups) are redacted too, so a traceback a host logs
        shows no secret either: their string arguments and attributes (``__notes__``
        included), and the wire objects they hold (``MCPError.error``).
        """
        if not self.values:
            return exc
        seen: set[int] = set()
        pending: list[BaseException] = [exc]
        while pending:
            item = pending.pop()
            if id(item) in seen:
                continue
            seen.add(id(item))
            self._redact_in_place(item)
            pending.extend(e for e in (item.__cause__, item.__context__) if e is not None)
            if isinstance(item, BaseExceptionGroup):
                pending.extend(item.exceptions)
        return exc

    def _redact_in_place(self, exc: BaseException) -> None:
        exc.args = tuple(self.redact(arg) if isinstance(arg, str) else arg for arg in exc.args)
        attributes = getattr(exc, "__dict__", {})
        for name, value in list(attributes.items()):
            if isinstance(value, str):
                attributes[name] = self.redact(value)
            elif isinstance(value, list) and all(isinstance(item, str) for item in value):  # __notes__
                attributes[name] = [self.redact(item) for item in value]
            elif isinstance(value, pydantic.BaseModel):
                try:
                    attributes[name] = self.redact_model(value)
                except (ValueError, pydantic.ValidationError):
                    continue

    def redact_model(self, model: M) -> M:
        """An MCP wire object (a result, a tool) with every secret in its strings replaced.

        Returns ``model`` itself when no secret occurs in it (the common case: one walk
        over its strings, one search per secret and string, no copy).

        Raises:
            ValueError: when a secret occurs in an object too deeply nested to rebuild;
                the caller fails the call rather than pass the secret on.
        """
        if not self.values or not any(self.found_in(text) for text in _strings(model)):
            return model
        try:
            data = self._scrub(model.model_dump(mode="json", by_alias=True, exclude_unset=True))
        except RecursionError as exc:
            raise ValueError("the server's answer holds a configured secret too deeply nested to mask") from exc
        return type(model).model_validate(data)

    def redact_tools(self, tools: list[mcp_types.Tool], label: str) -> list[mcp_types.Tool]:
        """The listed tools with the spec's secrets starred out of descriptions and schemas.

        A tool whose *name* holds a secret is left out (with a warning that does not
        repeat the name): a starred name could not be called, and the name would reach
        the model in its alias.
        """
        if not self:
            return tools
        kept = [tool for tool in tools if not self.found_in(tool.name)]
        if len(kept) < len(tools):
            logger.warning(
                "MCP server %r: %d tool(s) whose name holds a configured secret (a header, env or URL value) "
                "are left out",
                label,
                len(tools) - len(kept),
            )
        try:
            return [self.redact_model(tool) for tool in kept]
        except ValueError as exc:
            raise ServerConnectionError(label, f"tools/list: {exc}") from exc

    def _scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, list):
            return [self._scrub(item) for item in value]
        if isinstance(value, dict):
            return {self.redact(key): self._scrub(item) for key, item in value.items()}
        return value


def _strings(value: Any) -> Iterator[str]:
    """Every string in a wire object: field values, dict keys and values, list items (no recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, pydantic.BaseModel):
            stack.extend(item.__dict__.values())
            if item.__pydantic_extra__:
                stack.extend(item.__pydantic_extra__.items())
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _spec_values(spec: SpecFields, credentials: Iterable[str]) -> Iterator[str]:
    for value in (*spec.headers.values(), *credentials):
        yield from _header_values(value)
    for name, value in spec.env.items():
        if name not in _PUBLIC_ENV and not name.startswith(("LC_", "XDG_")):
            yield value
    if spec.url:
        yield from _url_values(spec.url)
    args = spec.args
    for i, arg in enumerate(args):
        flag, sep, attached = arg.partition("=")
        if not flag.startswith("-") or not _SECRET_FLAG.search(flag):
            continue
        if sep:
            yield attached
        elif i + 1 < len(args):
            yield args[i + 1]


def _header_values(value: str) -> Iterator[str]:
    """A header value, and the token after its scheme (``Bearer xyz`` gives ``xyz``; Basic decoded)."""
    yield value
    scheme, _, credentials = value.strip().partition(" ")
    credentials = credentials.strip()
    if credentials:
        yield credentials
        if scheme.lower() == "basic":
            yield from _basic_credentials(credentials)


def _basic_credentials(encoded: str) -> Iterator[str]:
    try:
        decoded = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return
    yield decoded
    yield decoded.partition(":")[2]


def _url_values(url: str) -> Iterator[str]:
    """Userinfo, query values, and path segments after the first that look like tokens.

    A path segment is taken for a token when it mixes letters and digits (hex, base64,
    UUIDs): words such as ``production`` in ``/v1/servers/production/mcp`` are kept, or
    they would be starred out of every answer that mentions them.
    """
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return
    for item in (user, password):
        if item:
            yield item
            yield unquote(item)
    for _, value in parse_qsl(parts.query, keep_blank_values=True):
        yield value
    for raw in parts.query.split("&"):
        yield raw.partition("=")[2]
    for segment in parts.path.split("/")[2:]:
        if any(c.isdigit() for c in segment) and any(c.isalpha() for c in segment):
            yield segment
            yield unquote(segment)


def _variants(value: str) -> set[str]:
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1], quote(value, safe="")}
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}
