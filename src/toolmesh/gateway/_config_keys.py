"""The keys of ``toolmesh.json`` as pydantic models, and their errors in the file's terms.

Every model forbids unknown keys. ``validate`` turns the first validation error into a
``ServerConfigError`` naming the file, the key path as written (``serve.auth.tokens[0].env``),
what the key takes and, for an unknown key, the closest known one. A value is never
shown: the file may hold secrets' names next to other things.
The ``mcpServers`` object is checked by the MCP config reader, not here.
"""

from __future__ import annotations

import difflib
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .._errors import ServerConfigError
from ..mcp._config_keys import json_type

__all__ = [
    "AuthKeys",
    "DocumentKeys",
    "NamesKeys",
    "PolicyKeys",
    "ProfileKeys",
    "ResponsesKeys",
    "ServeKeys",
    "TokenKeys",
    "validate",
]

_STRICT = ConfigDict(extra="forbid", strict=True, populate_by_name=False)


class TokenKeys(BaseModel):
    """One bearer token: where to read it (never the token itself), and its profiles."""

    model_config = _STRICT

    env: str | None = None
    file: str | None = None
    profiles: list[str] | None = None


class AuthKeys(BaseModel):
    model_config = _STRICT

    tokens: list[TokenKeys] = Field(default_factory=list)


class ServeKeys(BaseModel):
    model_config = _STRICT

    transport: Literal["http", "stdio"] = "http"
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    path: str = "/mcp"
    profile: str = "default"
    stateless: bool = False
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1, alias="maxBodyBytes")
    allowed_hosts: list[str] = Field(default_factory=list, alias="allowedHosts")
    allowed_origins: list[str] = Field(default_factory=list, alias="allowedOrigins")
    auth: AuthKeys | None = None


class NamesKeys(BaseModel):
    model_config = _STRICT

    provider: str | None = None
    template: str = "{server}__{tool}"
    dedupe: bool = False


class PolicyKeys(BaseModel):
    model_config = _STRICT

    allow_tools: list[str] | None = Field(None, alias="allowTools")
    deny_tools: list[str] | None = Field(None, alias="denyTools")
    allow_servers: list[str] | None = Field(None, alias="allowServers")
    deny_servers: list[str] | None = Field(None, alias="denyServers")
    deny_destructive: bool = Field(False, alias="denyDestructive")
    approval: Literal["off"] = "off"


class ProfileKeys(BaseModel):
    model_config = _STRICT

    description: str | None = None
    tools: list[str] | None = None
    exclude_tools: list[str] | None = Field(None, alias="excludeTools")
    servers: list[str] | None = None
    native: bool = True
    read_only: bool | None = Field(None, alias="readOnly")
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = Field(None, alias="openWorld")


class ResponsesKeys(BaseModel):
    """``responses``: the ``/v1/responses`` endpoint (served when an upstream is given here or by
    ``--responses-upstream``); secrets are named by environment variable, never written here."""

    model_config = _STRICT

    upstream: str | None = None
    api_key_env: str | None = Field(None, alias="apiKeyEnv")
    secret_env: str | None = Field(None, alias="secretEnv")
    allowed_hosts: list[str] = Field(default_factory=list, alias="allowedHosts")
    profile: str = "default"
    offer_catalog: bool = Field(False, alias="offerCatalog")
    read_resource: bool = Field(False, alias="readResource")
    max_servers: int = Field(64, ge=1, alias="maxServers")
    max_tools: int = Field(128, ge=1, alias="maxTools")
    max_rounds: int = Field(10, ge=1, alias="maxRounds")
    max_result_bytes: int = Field(8 * 1024 * 1024, ge=1, alias="maxResultBytes")
    pool_size: int = Field(64, ge=1, alias="poolSize")
    pool_idle_seconds: int = Field(300, ge=1, alias="poolIdleSeconds")


class DocumentKeys(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)

    schema_: str | None = Field(None, alias="$schema")
    mcpServers: dict[str, Any] | None = None  # the files' own spelling; checked by the MCP reader
    include: list[str] | str | None = None
    native: list[str] = Field(default_factory=list)
    names: NamesKeys | None = None
    policy: PolicyKeys | None = None
    profiles: dict[str, ProfileKeys] = Field(default_factory=dict)
    serve: ServeKeys = Field(default_factory=lambda: ServeKeys.model_validate({}))
    responses: ResponsesKeys | None = None


_WANTED = {
    "int_type": "a whole number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def validate(data: Any, origin: str) -> DocumentKeys:
    """``DocumentKeys.model_validate(data)``; the first error becomes a ``ServerConfigError``."""
    try:
        return DocumentKeys.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = tuple(error["loc"])
        key, value = _path(data, loc)
        if error["type"] == "extra_forbidden":
            known = _known_keys(loc[:-1])
            raise ServerConfigError(
                "unknown key", key=key, fix=_did_you_mean(str(loc[-1]), known), origin=origin
            ) from None
        problem = _problem(error, value)
        if loc[:1] == ("include",) and len(loc) <= 2:
            problem = f"must be a path string or an array of them, not {json_type(value)}"
        raise ServerConfigError(problem, key=key, fix=_fix(loc), origin=origin) from None


def _problem(error: Any, value: Any) -> str:
    kind, context = error["type"], error.get("ctx", {})
    if kind == "literal_error":
        found = repr(value) if isinstance(value, str) else json_type(value)
        return f"must be {context['expected']}, not {found}"
    if kind == "greater_than_equal":
        return f"must be at least {context['ge']}"
    if kind == "less_than_equal":
        return f"must be at most {context['le']}"
    if kind in _WANTED:
        return f"must be {_WANTED[kind]}, not {json_type(value)}"
    return str(error["msg"])


def _fix(loc: tuple[Any, ...]) -> str | None:
    head = loc[0] if loc else None
    if loc[:2] == ("policy", "approval"):
        return (
            "A gateway has no one to ask: the MCP client that calls a tool asks its user (Claude Desktop, "
            "VS Code and Cursor do). Remove the key, or refuse tools with denyTools or denyDestructive"
        )
    return {
        "include": 'Give the path of an mcpServers file (or a list of them), e.g. "claude_desktop_config.json"',
        "native": 'Give a list of "path/to/file.py:registry" or "package.module:attribute" strings',
        "profiles": 'Use {"<name>": {"tools": ["glob", ...], "servers": [...], "readOnly": true}}',
    }.get(str(head))


def _did_you_mean(key: str, known: list[str]) -> str:
    folded = {k.lower().replace("_", "").replace("-", ""): k for k in known}
    exact = folded.get(key.lower().replace("_", "").replace("-", ""))
    close = [exact] if exact else difflib.get_close_matches(key, known, n=1)
    hint = f"Did you mean {close[0]!r}? Otherwise remove it" if close else "Remove it"
    return f"{hint}; known keys here are " + ", ".join(repr(k) for k in known)


def _known_keys(parent: tuple[Any, ...]) -> list[str]:
    """The keys the object at ``parent`` (a validation location) accepts, as spelt in the file."""
    current: Any = DocumentKeys
    for step in parent:
        current = _step(current, step)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return [info.alias or name for name, info in current.model_fields.items()]
    return []


def _step(annotation: Any, step: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        for name, info in annotation.model_fields.items():
            if step in (name, info.alias):
                return _unwrap(info.annotation)
        return None
    origin = get_origin(annotation)
    if origin is list and isinstance(step, int):
        return _unwrap(get_args(annotation)[0])
    if origin is dict:
        return _unwrap(get_args(annotation)[1])
    return None


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X``; the model or container of a field."""
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [a for a in get_args(annotation) if a is not type(None)]
        models = [a for a in kept if isinstance(a, type) and issubclass(a, BaseModel)]
        return models[0] if models else kept[0]
    return annotation


def _path(data: Any, loc: tuple[Any, ...]) -> tuple[str, Any]:
    """The key path as written (``profiles.ro.tools[0]``) and the value there."""
    value, path = data, ""
    for step in loc:
        if isinstance(value, dict) and step in value:
            path = f"{path}.{step}" if path else str(step)
            value = value[step]
        elif isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
            path = f"{path}[{step}]"
            value = value[step]
        # Any other step names a union member (``list[str]``), not a key of the file.
    return path, value
