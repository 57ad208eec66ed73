"""The keys an ``mcpServers`` server entry may have, and their errors in the file's terms.

One pydantic model per shape (the document, one server entry). ``validate`` turns the
first validation error into a ``ServerConfigError`` naming the key as written in the
file (``args[1]``, ``env.A``), the JSON type wanted and found, and for an unknown key
the closest known one. A value is never shown: an ``env`` or ``headers`` value is a secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypeVar

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from toolmesh._core.errors import ServerConfigError
from toolmesh._core.keys import KeyProblem, validate_keys
from toolmesh._core.keys import spellings as field_spellings

from .defaults import Transport

__all__ = ["IGNORED", "OPTIONS", "TYPES", "Document", "ServerEntry", "Switch", "spellings", "validate"]


def _both(camel: str, snake: str) -> Any:
    return Field(None, validation_alias=AliasChoices(camel, snake))


class Document(BaseModel):
    """The file: ``mcpServers`` (Claude Desktop, Cursor, Cline, Windsurf) or ``servers`` (VS Code)."""

    model_config = ConfigDict(extra="ignore", strict=True)

    mcpServers: dict[str, Any] | None = None  # the files' own spelling
    servers: dict[str, Any] | None = None


class Switch(BaseModel):
    """Read first, so a disabled server is skipped without checking anything else."""

    model_config = ConfigDict(extra="ignore", strict=True)

    disabled: bool = False


class ServerEntry(BaseModel):
    """One server of the file; toolmesh's multi-word options in camelCase or snake_case."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: str | None = None
    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str | int | float] | None = None
    envFile: str | None = None
    cwd: str | None = None
    stderr: str | None = None
    url: str | None = None
    serverUrl: str | None = None
    headers: dict[str, str] | None = None
    disabled: bool = False

    timeout: float | None = None
    call_timeout: float | None = _both("callTimeout", "call_timeout")
    prefix: bool | None = None
    aliases: dict[str, str] | None = None
    include: list[str] | str | None = None
    exclude: list[str] | str | None = None
    max_pages: int | None = _both("maxPages", "max_pages")
    allow_insecure_http: bool | None = _both("allowInsecureHttp", "allow_insecure_http")
    validate_arguments: bool | None = _both("validateArguments", "validate_arguments")
    max_tools: int | None = _both("maxTools", "max_tools")
    on_too_many_tools: str | None = _both("onTooManyTools", "on_too_many_tools")
    max_description_chars: int | None = _both("maxDescriptionChars", "max_description_chars")
    max_schema_bytes: int | None = _both("maxSchemaBytes", "max_schema_bytes")
    max_result_bytes: int | None = _both("maxResultBytes", "max_result_bytes")
    max_page_bytes: int | None = _both("maxPageBytes", "max_page_bytes")
    max_presentation_chars: int | None = _both("maxPresentationChars", "max_presentation_chars")
    protocol: str | None = _both("protocolVersion", "protocol")
    max_concurrent_calls: int | None = _both("maxConcurrentCalls", "max_concurrent_calls")
    defer_loading: bool | None = _both("deferLoading", "defer_loading")

    # Keys other hosts keep in the same file; they mean nothing to toolmesh.
    transportType: Any = None  # Cline
    autoApprove: Any = None  # Cline, Claude Code
    alwaysAllow: Any = None  # Roo Code
    dev: Any = None  # VS Code: watch/debug settings of a server under development
    inputs: Any = None  # VS Code
    description: Any = None


IGNORED: Final = ("transportType", "autoApprove", "alwaysAllow", "dev", "inputs", "description")
OPTIONS: Final = tuple(
    name for name in ServerEntry.model_fields if name not in {"type", "envFile", "serverUrl", "disabled", *IGNORED}
)


def spellings(name: str) -> tuple[str, ...]:
    """The keys the server entry's field ``name`` is written as (``callTimeout``, ``call_timeout``)."""
    return field_spellings(name, ServerEntry.model_fields[name])


TYPES: Final[Mapping[str, Transport]] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamableHttp": "http",
}
_WANTED: Final = {
    "type": '"stdio" or "http"',
    "command": "a string",
    "args": "an array of strings",
    "args[]": "a string",
    "env": "an object of strings",
    "env.": "a string or a number",
    "envFile": "a path string",
    "cwd": "a string",
    "stderr": "a path string",
    "url": "a string",
    "serverUrl": "a string",
    "headers": "an object of strings",
    "headers.": "a string",
    "disabled": "true or false",
    "timeout": "a number of seconds",
    "call_timeout": "a number of seconds or null",
    "prefix": "true or false",
    "aliases": "an object of strings",
    "aliases.": "a string",
    "include": "an array of glob patterns",
    "include[]": "a glob pattern string",
    "exclude": "an array of glob patterns",
    "exclude[]": "a glob pattern string",
    "max_pages": "a whole number",
    "allow_insecure_http": "true or false",
    "validate_arguments": "true or false",
    "max_tools": "a whole number",
    "on_too_many_tools": '"error" or "keep_first"',
    "max_description_chars": "a whole number",
    "max_schema_bytes": "a whole number",
    "max_result_bytes": "a whole number",
    "max_page_bytes": "a whole number or null",
    "max_presentation_chars": "a whole number or null",
    "protocol": '"auto", "2025-11-25" or "2026-07-28"',
    "max_concurrent_calls": "a whole number or null",
    "defer_loading": "true, false or null",
    "mcpServers": "an object of servers by label",
    "servers": "an object of servers by label",
}
_M = TypeVar("_M", bound=BaseModel)

_FIELD_OF: Final = {key: name for name in ServerEntry.model_fields for key in spellings(name)}


def validate(model: type[_M], data: Any, label: str | None, fix: str | None = None) -> _M:
    """``model.model_validate(data)``; the first problem becomes a ``ServerConfigError``.

    The message names the key as written in the file and the JSON type found, never the
    value (an ``env`` or ``headers`` value is a secret).
    """

    def refuse(problem: KeyProblem) -> ServerConfigError:
        if problem.unknown:
            return ServerConfigError("unknown key", server=label, key=problem.key, fix=problem.unknown_key_fix())
        return ServerConfigError(
            problem.must_be(_wanted(problem.steps)), server=label, key=problem.key or None, fix=fix
        )

    return validate_keys(model, data, refuse, unlisted=IGNORED)


def _wanted(steps: tuple[int | str, ...]) -> str | None:
    """What the key at ``steps`` (``args[1]``, ``env.A``) takes, in the file's words."""
    if not steps:
        return None
    field = _FIELD_OF.get(str(steps[0]), str(steps[0]))
    if len(steps) == 1:
        return _WANTED.get(field)
    return _WANTED.get(f"{field}[]" if isinstance(steps[-1], int) else f"{field}.")
