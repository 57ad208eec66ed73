"""The checks an ``McpServer`` spec passes when it is made, one function per transport.

Each check raises ``ServerConfigError`` naming the server, the key and the fix, and
normalises what it checked (collections become immutable, paths strings, numbers
floats) on the frozen spec. Secret values (``env``, ``headers``) never appear in a
message; only their keys do.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from urllib.parse import urlsplit

import httpx2

from toolmesh._core.errors import ServerConfigError

from .defaults import SpecFields
from .hosts import is_loopback, redact_url

__all__ = ["EMPTY", "check_http", "check_in_process", "check_options", "check_stdio"]

EMPTY: Mapping[str, str] = MappingProxyType({})
"""The empty mapping a spec's ``env``, ``headers`` and ``aliases`` default to."""


def _error(spec: SpecFields, key: str, problem: str, fix: str | None = None) -> ServerConfigError:
    return ServerConfigError(problem, server=spec.label, key=key, fix=fix)


def _set(spec: SpecFields, name: str, value: object) -> None:
    object.__setattr__(spec, name, value)


def _refuse(spec: SpecFields, keys: Iterable[str], transport: str, use: str) -> None:
    for key in keys:
        value = getattr(spec, key)
        if value is not None and value != () and value != {} and value is not EMPTY:
            raise _error(spec, key, f"{key!r} does not apply to a {transport} server", use)


def check_stdio(spec: SpecFields) -> None:
    _refuse(spec, ("url", "headers", "auth", "server_object"), "stdio", "Use McpServer.http(...) for an HTTP server")
    if not isinstance(spec.command, str) or not spec.command.strip():
        raise _error(spec, "command", "a stdio server needs a command", "Pass the executable, e.g. 'npx'")
    if "\0" in spec.command:
        raise _error(spec, "command", "contains a NUL character, which no command line can carry")
    if isinstance(spec.args, str) or not isinstance(spec.args, Iterable):
        raise _error(spec, "args", "args must be a list of strings", "Pass e.g. ['-y', 'package']")
    args = tuple(spec.args)
    for i, arg in enumerate(args):
        if not isinstance(arg, str):
            raise _error(spec, f"args[{i}]", f"must be a string, not {type(arg).__name__}")
        if "\0" in arg:
            raise _error(spec, f"args[{i}]", "contains a NUL character, which no command line can carry")
    _set(spec, "args", args)
    _set(spec, "env", _string_map(spec, "env", spec.env, secret=True))
    for name in spec.env:
        if not name or "=" in name or "\0" in name:
            raise _error(spec, f"env.{name}", "is not a valid environment variable name")
        if "\0" in spec.env[name]:
            raise _error(spec, f"env.{name}", "the value contains a NUL character, which no environment can carry")
    for key in ("cwd", "stderr"):
        value = getattr(spec, key)
        if value is None:
            continue
        if not isinstance(value, (str, os.PathLike)):
            raise _error(spec, key, f"must be a path, not {type(value).__name__}")
        path = os.fspath(value)
        if not isinstance(path, str) or "\0" in path:
            raise _error(spec, key, "contains a NUL character")
        if key == "stderr":
            if not path.strip():
                raise _error(spec, key, "is empty", "Give a file path, or leave stderr out to use the host's stderr")
            path = os.path.abspath(os.path.expanduser(path))  # the file of today's directory, whenever it connects
        _set(spec, key, path)


def check_http(spec: SpecFields) -> None:
    _refuse(
        spec,
        ("command", "args", "env", "cwd", "stderr", "server_object"),
        "HTTP",
        "Use McpServer.stdio(...) for a local process",
    )
    if not isinstance(spec.url, str) or not spec.url.strip():
        raise _error(spec, "url", "an HTTP server needs a url", "Pass the endpoint, e.g. 'https://example.com/mcp'")
    url = spec.url.strip()
    _set(spec, "url", url)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises ValueError for a bad port
    except ValueError:
        raise _error(spec, "url", f"{redact_url(url)!r} is not a valid URL") from None
    shown = redact_url(url)
    if parts.scheme.lower() not in ("http", "https"):
        raise _error(
            spec,
            "url",
            f"{shown!r} is not an http(s) URL",
            "Use the server's Streamable HTTP endpoint, e.g. 'https://example.com/mcp'",
        )
    if not parts.hostname:
        raise _error(spec, "url", f"{shown!r} has no host", "Use a full URL, e.g. 'https://example.com/mcp'")
    if parts.username is not None or parts.password is not None:
        raise _error(
            spec,
            "url",
            f"{shown!r} has credentials in it (user:password@)",
            "Remove them from the URL and put them in headers, "
            "e.g. headers={'Authorization': 'Bearer <token>'}, or pass auth=",
        )
    if not isinstance(spec.allow_insecure_http, bool):
        raise _error(spec, "allow_insecure_http", "must be true or false")
    if parts.scheme.lower() == "http" and not is_loopback(parts.hostname) and not spec.allow_insecure_http:
        raise _error(
            spec,
            "url",
            f"{shown!r} is plain http to a host that is not loopback, so headers and tool data "
            "would travel unencrypted",
            "Use https://, or pass allow_insecure_http=True (allowInsecureHttp in JSON) if the network is trusted",
        )
    headers = _string_map(spec, "headers", spec.headers, secret=True)
    for name in headers:
        if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
            raise _error(spec, f"headers.{name}", "is not a valid HTTP header name")
        if any(c in headers[name] for c in "\r\n\0"):
            raise _error(spec, f"headers.{name}", "the value contains a line break or NUL character")
    _set(spec, "headers", headers)
    if spec.auth is not None and not isinstance(spec.auth, httpx2.Auth):
        raise _error(
            spec, "auth", f"must be an httpx2.Auth, not {type(spec.auth).__name__}", "Or put a token in headers"
        )


def check_in_process(spec: SpecFields) -> None:
    _refuse(
        spec,
        ("command", "args", "env", "cwd", "stderr", "url", "headers", "auth"),
        "in-process",
        "Use McpServer.stdio(...) or McpServer.http(...) for a server outside this process",
    )
    # An SDK server object exists only once its module is imported: no import needed here.
    sdk = sys.modules.get("mcp.server")
    if sdk is None or not isinstance(spec.server_object, (sdk.Server, sdk.MCPServer)):
        raise _error(
            spec,
            "server_object",
            f"must be an mcp.server.Server or MCPServer instance, not {type(spec.server_object).__name__}",
            "Pass the server object itself, e.g. McpServer.in_process('demo', MCPServer('demo'))",
        )


def check_options(spec: SpecFields) -> None:
    for key in ("timeout", "call_timeout"):
        value = getattr(spec, key)
        if key == "call_timeout" and value is None:
            continue
        try:
            seconds = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else -1.0
        except OverflowError:
            seconds = math.inf
        if not (0 < seconds < math.inf):
            shown = "a number too large" if seconds == math.inf and isinstance(value, int) else repr(value)
            raise _error(spec, key, f"must be a positive number of seconds, not {shown}")
        _set(spec, key, seconds)
    for key in ("max_pages", "max_tools", "max_description_chars", "max_schema_bytes", "max_result_bytes"):
        value = getattr(spec, key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _error(spec, key, f"must be a whole number of at least 1, not {value!r}")
    for key in ("max_page_bytes", "max_presentation_chars", "max_concurrent_calls"):
        value = getattr(spec, key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise _error(spec, key, f"must be a whole number of at least 1 or None, not {value!r}")
    for key in ("prefix", "validate_arguments"):
        if not isinstance(getattr(spec, key), bool):
            raise _error(spec, key, f"must be true or false, not {getattr(spec, key)!r}")
    if spec.defer_loading is not None and not isinstance(spec.defer_loading, bool):
        raise _error(spec, "defer_loading", f"must be true, false or None, not {spec.defer_loading!r}")
    if spec.protocol not in ("auto", "2025-11-25", "2026-07-28"):
        raise _error(spec, "protocol", f"must be 'auto', '2025-11-25' or '2026-07-28', not {spec.protocol!r}")
    if spec.on_too_many_tools not in ("error", "keep_first"):
        raise _error(spec, "on_too_many_tools", f"must be 'error' or 'keep_first', not {spec.on_too_many_tools!r}")
    _set(spec, "aliases", _string_map(spec, "aliases", spec.aliases, secret=False))
    for raw, alias in spec.aliases.items():
        if not alias:
            raise _error(spec, f"aliases.{raw}", "the alias is empty", "Give the model-visible name to use")
    if spec.include is not None:
        include = _patterns(spec, "include", spec.include)
        if not include:
            raise _error(spec, "include", "is empty, so no tool would be kept", "Leave it out to keep every tool")
        _set(spec, "include", include)
    _set(spec, "exclude", _patterns(spec, "exclude", spec.exclude))


def _string_map(spec: SpecFields, key: str, value: object, *, secret: bool) -> Mapping[str, str]:
    if value is None:
        return EMPTY
    if not isinstance(value, Mapping):
        raise _error(spec, key, f"must be a mapping of strings to strings, not {type(value).__name__}")
    for k, v in value.items():
        if not isinstance(k, str):
            raise _error(spec, key, f"keys must be strings, not {type(k).__name__}")
        if not isinstance(v, str):
            shown = "" if secret else f" ({v!r})"
            raise _error(spec, f"{key}.{k}", f"the value must be a string, not {type(v).__name__}{shown}")
    return MappingProxyType(dict(value))


def _patterns(spec: SpecFields, key: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Iterable):
        raise _error(spec, key, f"must be a list of glob patterns, not {type(value).__name__}")
    patterns = tuple(value)
    for i, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern:
            raise _error(spec, f"{key}[{i}]", f"must be a non-empty glob pattern string, not {pattern!r}")
    return patterns
