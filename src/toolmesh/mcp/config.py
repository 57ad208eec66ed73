"""MCP server specs: ``McpServer`` in Python, or the ``mcpServers`` JSON users already have.

A spec only describes a server; connecting is ``registry.connect(spec)``. Every check
happens when the spec is made, so a bad spec fails at start-up with a message that
names the server, the key and the fix, never at the first tool call.

Secrets: the values of ``env`` and ``headers`` (and a URL's credentials, query values
and path after its first segment) never appear in ``repr()``, ``str()`` or error
messages; only their keys do.

The ``mcpServers`` file readers live in ``_config_files``.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack
from urllib.parse import SplitResult, parse_qsl, urlsplit

import httpx2

from ..errors import ConfigurationError

if TYPE_CHECKING:
    from mcp.server import MCPServer, Server

__all__ = ["McpServer", "McpServerOptions", "ServerConfigError", "check_allowed_hosts", "redact_url"]

Transport = Literal["stdio", "http", "in_process"]

DEFAULT_TIMEOUT = 30.0
"""Seconds allowed for connecting and listing every page of tools."""
DEFAULT_CALL_TIMEOUT = 60.0
"""Seconds allowed for one ``tools/call`` before it fails with kind ``timeout``."""
DEFAULT_MAX_PAGES = 100
"""Pages of ``tools/list`` read before discovery gives up (10,000 tools at 100 a page)."""
DEFAULT_MAX_TOOLS = 1_000
"""Tools one server may list; more fails discovery (or keeps the first ones, see ``on_too_many_tools``)."""
DEFAULT_MAX_DESCRIPTION_CHARS = 16_384
"""Characters of one tool's description; a longer one fails discovery of that server."""
DEFAULT_MAX_SCHEMA_BYTES = 262_144
"""Bytes of one tool's input or output schema (as compact JSON); a larger one fails discovery."""
DEFAULT_MAX_RESULT_BYTES = 8 * 1024 * 1024
"""Bytes of one ``tools/call`` result (8 MiB); a larger one fails as ``upstream_error``."""
DEFAULT_MAX_PRESENTATION_CHARS = 100_000
"""Characters of one text block shown to the model; a longer one is truncated with a note."""
DEFAULT_MAX_CONFIG_BYTES = 1024 * 1024
"""The largest config file (or ``envFile``) ``from_config`` reads: 1 MiB; ``max_bytes=`` raises it."""

_LABEL = re.compile(r"[A-Za-z0-9_-]{1,64}")
_EMPTY: Mapping[str, str] = MappingProxyType({})


class ServerConfigError(ConfigurationError):
    """An MCP server spec or ``mcpServers`` file is wrong: names the server, the key, the fix.

    Attributes:
        server: The server's label, when the problem belongs to one server.
        key: The offending key (``"url"``, ``"env.API_KEY"``, ``"args[2]"``), when there is one.
        origin: The config file, when the spec came from one.
    """

    def __init__(
        self,
        problem: str,
        *,
        server: str | None = None,
        key: str | None = None,
        fix: str | None = None,
        origin: str | None = None,
    ) -> None:
        self.problem = problem
        self.server = server
        self.key = key
        self.fix = fix
        self.origin = origin
        parts = []
        if origin is not None:
            parts.append(f"{origin}: ")
        if server is not None:
            parts.append(f"MCP server {server!r}: ")
        if key is not None:
            parts.append(f"key {key!r}: ")
        parts.append(problem.rstrip("."))
        parts.append(".")
        if fix:
            parts.append(f" {fix.rstrip('.')}.")
        super().__init__("".join(parts))

    def with_origin(self, origin: str) -> ServerConfigError:
        """A copy that also names the file the spec came from."""
        return ServerConfigError(self.problem, server=self.server, key=self.key, fix=self.fix, origin=origin)


class McpServerOptions(TypedDict, total=False):
    """The options every ``McpServer`` constructor accepts besides the transport's own."""

    timeout: float
    call_timeout: float | None
    prefix: bool
    aliases: Mapping[str, str]
    include: Sequence[str] | str | None
    exclude: Sequence[str] | str
    max_pages: int
    allow_insecure_http: bool
    validate_arguments: bool
    max_tools: int
    on_too_many_tools: Literal["error", "keep_first"]
    max_description_chars: int
    max_schema_bytes: int
    max_result_bytes: int
    max_presentation_chars: int | None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class McpServer:
    """How to reach one MCP server and how its tools join the registry.

    Make one with ``McpServer.stdio(...)``, ``McpServer.http(...)`` or
    ``McpServer.from_config(...)``; the fields are checked (and collections copied into
    immutable ones) when the spec is made.

    Example:
        >>> fs = McpServer.stdio("fs", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "."])
        >>> docs = McpServer.http("docs", "http://127.0.0.1:8000/mcp", include=["search*"])
        >>> docs.allows("search_pages"), docs.allows("delete_page")
        (True, False)
    """

    label: str
    """The server's name in the registry: the ``{server}`` of model-visible names."""
    transport: Transport
    """``"stdio"`` (a child process), ``"http"`` (Streamable HTTP) or ``"in_process"`` (an SDK server object)."""
    command: str | None = None
    """stdio: the executable to run."""
    args: tuple[str, ...] = ()
    """stdio: its arguments."""
    env: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """stdio: environment variables set over the default environment (values are secret)."""
    cwd: str | None = None
    """stdio: the working directory of the child process (default: the current one)."""
    url: str | None = None
    """http: the Streamable HTTP endpoint, e.g. ``https://example.com/mcp``."""
    headers: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """http: headers sent with every request, e.g. ``Authorization`` (values are secret)."""
    auth: httpx2.Auth | None = None
    """http: an ``httpx2.Auth`` (e.g. the SDK's OAuth provider) for the HTTP client."""
    server_object: Server[Any] | MCPServer[Any] | None = None
    """in_process: the SDK server object (``mcp.server.Server`` or ``MCPServer``) served in this process."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds for connecting and listing every page of tools (a ``ServerConnectionError`` after)."""
    call_timeout: float | None = DEFAULT_CALL_TIMEOUT
    """Seconds for one ``tools/call`` (a failed result of kind ``timeout`` after); None: no bound."""
    prefix: bool = True
    """Whether model-visible names follow the name policy's template (``{server}__{tool}``)."""
    aliases: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    """Explicit model-visible names: the server's tool name -> the name the model sees."""
    include: tuple[str, ...] | None = None
    """Glob patterns (``fnmatch``, case-sensitive) of tools to keep; None keeps every tool."""
    exclude: tuple[str, ...] = ()
    """Glob patterns of tools to leave out; applied after ``include``."""
    max_pages: int = DEFAULT_MAX_PAGES
    """The most pages of ``tools/list`` read at connect; more is a discovery error."""
    allow_insecure_http: bool = False
    """Allow a plain ``http://`` URL to a host that is not loopback."""
    validate_arguments: bool = True
    """Check the model's arguments against the tool's ``inputSchema`` before sending the call."""
    max_tools: int = DEFAULT_MAX_TOOLS
    """The most tools this server may list (after all pages)."""
    on_too_many_tools: Literal["error", "keep_first"] = "error"
    """Over ``max_tools``: fail discovery, or keep the first ``max_tools`` with a warning."""
    max_description_chars: int = DEFAULT_MAX_DESCRIPTION_CHARS
    """The longest tool description accepted at discovery."""
    max_schema_bytes: int = DEFAULT_MAX_SCHEMA_BYTES
    """The largest input or output schema (compact JSON bytes) accepted at discovery."""
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    """The largest ``tools/call`` result accepted; more fails as ``upstream_error``."""
    max_presentation_chars: int | None = DEFAULT_MAX_PRESENTATION_CHARS
    """Text blocks longer than this are truncated in what the model is shown (the output keeps all); None: no bound."""

    def __post_init__(self) -> None:
        label = self.label
        if not isinstance(label, str) or not _LABEL.fullmatch(label):
            suggestion = re.sub(r"[^A-Za-z0-9_-]", "_", label)[:64] if isinstance(label, str) and label else "docs"
            raise ServerConfigError(
                f"the label {label!r} cannot be used in tool names; use 1-64 letters, digits, '_' or '-'",
                server=label if isinstance(label, str) and label else None,
                key="label",
                fix=f"Rename it, e.g. {suggestion!r}",
            )
        if self.transport not in ("stdio", "http", "in_process"):
            raise ServerConfigError(
                f"unknown transport {self.transport!r}",
                server=label,
                key="transport",
                fix="Use McpServer.stdio(...), McpServer.http(...) or McpServer.in_process(...)",
            )
        if self.transport == "stdio":
            self._check_stdio()
        elif self.transport == "http":
            self._check_http()
        else:
            self._check_in_process()
        self._check_options()

    # -- constructors ---------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        label: str,
        command: str,
        args: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        **options: Unpack[McpServerOptions],
    ) -> McpServer:
        """A server run as a child process, spoken to over stdin/stdout.

        Args:
            label: The server's name in the registry (letters, digits, ``_``, ``-``).
            command: The executable, e.g. ``"npx"`` or ``"uvx"``.
            args: Its arguments.
            env: Environment variables set over the default environment.
            cwd: The working directory of the child process.
            **options: ``timeout``, ``call_timeout``, ``prefix``, ``aliases``, ``include``,
                ``exclude``, ``max_pages`` and the limits (``validate_arguments``, ``max_tools``,
                ``on_too_many_tools``, ``max_description_chars``, ``max_schema_bytes``,
                ``max_result_bytes``, ``max_presentation_chars``).

        Raises:
            ServerConfigError: naming the bad key and the fix.
        """
        return cls(
            label=label,
            transport="stdio",
            command=command,
            args=args,  # type: ignore[arg-type]  # normalized to a tuple in __post_init__
            env=env or _EMPTY,
            cwd=cwd,  # type: ignore[arg-type]  # normalized to str in __post_init__
            **options,  # type: ignore[arg-type]  # include/exclude normalized to tuples
        )

    @classmethod
    def http(
        cls,
        label: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        auth: httpx2.Auth | None = None,
        **options: Unpack[McpServerOptions],
    ) -> McpServer:
        """A server reached over Streamable HTTP.

        ``https://`` is required, except for loopback hosts (``localhost``, 127.0.0.0/8,
        ``::1``) or with ``allow_insecure_http=True``. Credentials go in ``headers`` (or
        ``auth``), never in the URL.

        Args:
            label: The server's name in the registry (letters, digits, ``_``, ``-``).
            url: The MCP endpoint, e.g. ``"https://example.com/mcp"``.
            headers: Headers sent with every request, e.g. ``{"Authorization": "Bearer ..."}``.
            auth: An ``httpx2.Auth`` for the HTTP client (e.g. the SDK's OAuth provider).
            **options: ``timeout``, ``call_timeout``, ``prefix``, ``aliases``, ``include``,
                ``exclude``, ``max_pages``, ``allow_insecure_http`` and the limits (as for ``stdio``).

        Raises:
            ServerConfigError: naming the bad key and the fix.
        """
        return cls(
            label=label,
            transport="http",
            url=url,
            headers=headers or _EMPTY,
            auth=auth,
            **options,  # type: ignore[arg-type]  # include/exclude normalized to tuples
        )

    @classmethod
    def in_process(
        cls,
        label: str,
        server: Server[Any] | MCPServer[Any],
        **options: Unpack[McpServerOptions],
    ) -> McpServer:
        """A server written with the MCP SDK, served in this process: no child process, no network.

        The registry connects to it as ``mcp.Client(server, mode="legacy")`` does: JSON-RPC
        messages over in-memory streams, with the initialize handshake (protocol 2025-11-25,
        so ``notifications/tools/list_changed`` reach the registry). Each session runs the
        server object again (``server.run``), so state kept on the object is shared by every
        session of it. Meant for tests of a host's tool logic and for embedding a server
        already written with the SDK.

        Args:
            label: The server's name in the registry (letters, digits, ``_``, ``-``).
            server: An ``mcp.server.Server`` (low-level) or ``mcp.server.MCPServer`` instance.
            **options: As for ``stdio`` (``timeout``, ``call_timeout``, ``prefix``, ``aliases``,
                ``include``, ``exclude``, ``max_pages`` and the limits).

        Raises:
            ServerConfigError: naming the bad key and the fix.
        """
        return cls(
            label=label,
            transport="in_process",
            server_object=server,
            **options,  # type: ignore[arg-type]  # include/exclude normalized to tuples
        )

    @classmethod
    def from_config(
        cls,
        source: str | os.PathLike[str] | Mapping[str, Any],
        *,
        allowed_hosts: Iterable[str] | None = None,
        max_bytes: int = DEFAULT_MAX_CONFIG_BYTES,
    ) -> list[McpServer]:
        """Load the servers of an ``mcpServers`` JSON file (or its parsed content), in file order.

        Accepts Claude Desktop / Cursor / Claude Code / Cline / Windsurf
        ``{"mcpServers": {label: {...}}}`` and VS Code ``{"servers": {label: {...}}}``
        (comments and trailing commas allowed). Each server has ``command``/``args``/
        ``env``/``envFile``/``cwd`` (stdio) or ``url`` (or ``serverUrl``)/``headers``
        (HTTP), an optional ``type`` (``"stdio"`` or ``"http"``), and toolmesh's optional
        keys (``timeout``, ``callTimeout``, ``prefix``, ``aliases``, ``include``, ``exclude``,
        ``maxPages``, ``allowInsecureHttp``, the limits) and ``disabled`` (true skips the
        server). Keys only other hosts use (``transportType``, ``autoApprove``,
        ``alwaysAllow``, ``dev``, ``inputs``, ``description``) are ignored. ``${env:NAME}``
        in a string value is replaced by the environment variable. A label that is not
        valid in tool names is sanitized (see the README).

        Args:
            source: A path to the JSON file, or the already-parsed mapping.
            allowed_hosts: When given, every HTTP server's host must be one of these
                (see ``check_allowed_hosts``).
            max_bytes: The largest file (config or ``envFile``) read, 1 MiB by default.

        Raises:
            ServerConfigError: for an unreadable, too large or malformed file (naming the
                line), or a bad server (naming the server and the key).
        """
        from ._config_files import load_config  # deferred: the readers build McpServer specs

        return load_config(source, allowed_hosts=allowed_hosts, max_bytes=max_bytes)

    # -- reading ----------------------------------------------------------------------

    def allows(self, tool_name: str) -> bool:
        """Whether the ``include``/``exclude`` filters keep the tool named ``tool_name``."""
        if self.include is not None and not any(fnmatchcase(tool_name, p) for p in self.include):
            return False
        return not any(fnmatchcase(tool_name, p) for p in self.exclude)

    @property
    def host(self) -> str | None:
        """The host of an HTTP server's URL (lower-case, no brackets), else None."""
        return urlsplit(self.url).hostname if self.url is not None else None

    def __repr__(self) -> str:
        parts = [f"{self.label!r}"]
        if self.transport == "stdio":
            parts.append(f"command={self.command!r}")
            # Arguments often carry tokens (``--api-key X``): show how many, not what.
            if self.args:
                parts.append(f"args=<{len(self.args)} args>")
            if self.env:
                parts.append(f"env_keys={sorted(self.env)!r}")
            if self.cwd is not None:
                parts.append(f"cwd={self.cwd!r}")
        elif self.transport == "in_process":
            parts.append(f"server=<{type(self.server_object).__name__}>")
        else:
            parts.append(f"url={redact_url(self.url or '')!r}")
            if self.headers:
                parts.append(f"header_keys={sorted(self.headers)!r}")
            if self.auth is not None:
                parts.append(f"auth=<{type(self.auth).__name__}>")
        defaults = {
            "timeout": DEFAULT_TIMEOUT,
            "call_timeout": DEFAULT_CALL_TIMEOUT,
            "prefix": True,
            "include": None,
            "exclude": (),
            "max_pages": DEFAULT_MAX_PAGES,
            "allow_insecure_http": False,
            "validate_arguments": True,
            "max_tools": DEFAULT_MAX_TOOLS,
            "on_too_many_tools": "error",
            "max_description_chars": DEFAULT_MAX_DESCRIPTION_CHARS,
            "max_schema_bytes": DEFAULT_MAX_SCHEMA_BYTES,
            "max_result_bytes": DEFAULT_MAX_RESULT_BYTES,
            "max_presentation_chars": DEFAULT_MAX_PRESENTATION_CHARS,
        }
        for name, default in defaults.items():
            value = getattr(self, name)
            if value != default:
                parts.append(f"{name}={value!r}")
        if self.aliases:
            parts.append(f"aliases={dict(self.aliases)!r}")
        return f"McpServer.{self.transport}({', '.join(parts)})"

    # -- checks -----------------------------------------------------------------------

    def _error(self, key: str, problem: str, fix: str | None = None) -> ServerConfigError:
        return ServerConfigError(problem, server=self.label, key=key, fix=fix)

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    def _refuse(self, keys: Iterable[str], transport: str, use: str) -> None:
        for key in keys:
            value = getattr(self, key)
            if value is not None and value != () and value != {} and value is not _EMPTY:
                raise self._error(key, f"{key!r} does not apply to a {transport} server", use)

    def _check_stdio(self) -> None:
        self._refuse(("url", "headers", "auth", "server_object"), "stdio", "Use McpServer.http(...) for an HTTP server")
        if not isinstance(self.command, str) or not self.command.strip():
            raise self._error("command", "a stdio server needs a command", "Pass the executable, e.g. 'npx'")
        if "\0" in self.command:
            raise self._error("command", "contains a NUL character, which no command line can carry")
        if isinstance(self.args, str) or not isinstance(self.args, Iterable):
            raise self._error("args", "args must be a list of strings", "Pass e.g. ['-y', 'package']")
        args = tuple(self.args)
        for i, arg in enumerate(args):
            if not isinstance(arg, str):
                raise self._error(f"args[{i}]", f"must be a string, not {type(arg).__name__}")
            if "\0" in arg:
                raise self._error(f"args[{i}]", "contains a NUL character, which no command line can carry")
        self._set("args", args)
        self._set("env", _string_map(self, "env", self.env, secret=True))
        for name in self.env:
            if not name or "=" in name or "\0" in name:
                raise self._error(f"env.{name}", "is not a valid environment variable name")
            if "\0" in self.env[name]:
                raise self._error(f"env.{name}", "the value contains a NUL character, which no environment can carry")
        if self.cwd is not None:
            if not isinstance(self.cwd, (str, os.PathLike)):
                raise self._error("cwd", f"must be a path, not {type(self.cwd).__name__}")
            self._set("cwd", os.fspath(self.cwd))
            if "\0" in self.cwd:
                raise self._error("cwd", "contains a NUL character")

    def _check_http(self) -> None:
        self._refuse(
            ("command", "args", "env", "cwd", "server_object"), "HTTP", "Use McpServer.stdio(...) for a local process"
        )
        if not isinstance(self.url, str) or not self.url.strip():
            raise self._error("url", "an HTTP server needs a url", "Pass the endpoint, e.g. 'https://example.com/mcp'")
        url = self.url.strip()
        self._set("url", url)
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018  # raises ValueError for a bad port
        except ValueError:
            raise self._error("url", f"{redact_url(url)!r} is not a valid URL") from None
        shown = redact_url(url)
        if parts.scheme.lower() not in ("http", "https"):
            raise self._error(
                "url",
                f"{shown!r} is not an http(s) URL",
                "Use the server's Streamable HTTP endpoint, e.g. 'https://example.com/mcp'",
            )
        if not parts.hostname:
            raise self._error("url", f"{shown!r} has no host", "Use a full URL, e.g. 'https://example.com/mcp'")
        if parts.username is not None or parts.password is not None:
            raise self._error(
                "url",
                f"{shown!r} has credentials in it (user:password@)",
                "Remove them from the URL and put them in headers, "
                "e.g. headers={'Authorization': 'Bearer <token>'}, or pass auth=",
            )
        if not isinstance(self.allow_insecure_http, bool):
            raise self._error("allow_insecure_http", "must be true or false")
        if parts.scheme.lower() == "http" and not _is_loopback(parts.hostname) and not self.allow_insecure_http:
            raise self._error(
                "url",
                f"{shown!r} is plain http to a host that is not loopback, so headers and tool data "
                "would travel unencrypted",
                "Use https://, or pass allow_insecure_http=True (allowInsecureHttp in JSON) if the network is trusted",
            )
        headers = _string_map(self, "headers", self.headers, secret=True)
        for name in headers:
            if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
                raise self._error(f"headers.{name}", "is not a valid HTTP header name")
            if any(c in headers[name] for c in "\r\n\0"):
                raise self._error(f"headers.{name}", "the value contains a line break or NUL character")
        self._set("headers", headers)
        if self.auth is not None and not isinstance(self.auth, httpx2.Auth):
            raise self._error(
                "auth", f"must be an httpx2.Auth, not {type(self.auth).__name__}", "Or put a token in headers"
            )

    def _check_in_process(self) -> None:
        self._refuse(
            ("command", "args", "env", "cwd", "url", "headers", "auth"),
            "in-process",
            "Use McpServer.stdio(...) or McpServer.http(...) for a server outside this process",
        )
        # An SDK server object exists only once its module is imported: no import needed here.
        sdk = sys.modules.get("mcp.server")
        if sdk is None or not isinstance(self.server_object, (sdk.Server, sdk.MCPServer)):
            raise self._error(
                "server_object",
                f"must be an mcp.server.Server or MCPServer instance, not {type(self.server_object).__name__}",
                "Pass the server object itself, e.g. McpServer.in_process('demo', MCPServer('demo'))",
            )

    def _check_options(self) -> None:
        for key in ("timeout", "call_timeout"):
            value = getattr(self, key)
            if key == "call_timeout" and value is None:
                continue
            try:
                seconds = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else -1.0
            except OverflowError:
                seconds = math.inf
            if not (0 < seconds < math.inf):
                shown = "a number too large" if seconds == math.inf and isinstance(value, int) else repr(value)
                raise self._error(key, f"must be a positive number of seconds, not {shown}")
            self._set(key, seconds)
        for key in ("max_pages", "max_tools", "max_description_chars", "max_schema_bytes", "max_result_bytes"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise self._error(key, f"must be a whole number of at least 1, not {value!r}")
        chars = self.max_presentation_chars
        if chars is not None and (isinstance(chars, bool) or not isinstance(chars, int) or chars < 1):
            raise self._error("max_presentation_chars", f"must be a whole number of at least 1 or None, not {chars!r}")
        for key in ("prefix", "validate_arguments"):
            if not isinstance(getattr(self, key), bool):
                raise self._error(key, f"must be true or false, not {getattr(self, key)!r}")
        if self.on_too_many_tools not in ("error", "keep_first"):
            raise self._error("on_too_many_tools", f"must be 'error' or 'keep_first', not {self.on_too_many_tools!r}")
        self._set("aliases", _string_map(self, "aliases", self.aliases, secret=False))
        for raw, alias in self.aliases.items():
            if not alias:
                raise self._error(f"aliases.{raw}", "the alias is empty", "Give the model-visible name to use")
        if self.include is not None:
            include = _patterns(self, "include", self.include)
            if not include:
                raise self._error("include", "is empty, so no tool would be kept", "Leave it out to keep every tool")
            self._set("include", include)
        self._set("exclude", _patterns(self, "exclude", self.exclude))


# -- helpers ------------------------------------------------------------------------------


def _string_map(spec: McpServer, key: str, value: object, *, secret: bool) -> Mapping[str, str]:
    if value is None:
        return _EMPTY
    if not isinstance(value, Mapping):
        raise spec._error(key, f"must be a mapping of strings to strings, not {type(value).__name__}")
    for k, v in value.items():
        if not isinstance(k, str):
            raise spec._error(key, f"keys must be strings, not {type(k).__name__}")
        if not isinstance(v, str):
            shown = "" if secret else f" ({v!r})"
            raise spec._error(f"{key}.{k}", f"the value must be a string, not {type(v).__name__}{shown}")
    return MappingProxyType(dict(value))


def _patterns(spec: McpServer, key: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, Iterable):
        raise spec._error(key, f"must be a list of glob patterns, not {type(value).__name__}")
    patterns = tuple(value)
    for i, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern:
            raise spec._error(f"{key}[{i}]", f"must be a non-empty glob pattern string, not {pattern!r}")
    return patterns


def _is_loopback(host: str) -> bool:
    host = host.rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def redact_url(url: str) -> str:
    """``url`` reduced to what is safe for logs and errors.

    Kept: the scheme, host, port, the first path segment and the query's keys. Dropped:
    credentials, the fragment, query values (``***``) and every path segment after the
    first (``/***``), since services put tokens there (``/mcp/<token>/sse``).
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = host if parts.port is None else f"{host}:{parts.port}"
        query = "&".join(f"{k}=***" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    except ValueError:
        return "<invalid url>"
    path = parts.path
    first, _, rest = path[1:].partition("/")
    if rest:
        path = f"/{first}/***"
    return SplitResult(parts.scheme, netloc, path, query, "").geturl()


def check_allowed_hosts(servers: Iterable[McpServer], hosts: Iterable[str]) -> list[McpServer]:
    """Refuse HTTP servers whose host is not allowed; returns the servers as a list.

    A host entry is a host name or IP address (case-insensitive, exact), or ``*.domain``
    for any subdomain of ``domain`` (not ``domain`` itself). Ports are not considered.
    stdio servers are not affected. An empty ``hosts`` refuses every HTTP server.

    Raises:
        ServerConfigError: naming the first server whose host is not allowed.
    """
    if isinstance(hosts, str):
        raise ServerConfigError(
            "allowed_hosts must be a list of host names, not a string",
            fix=f"Pass [{hosts!r}]",
        )
    allowed = [_normal_host(h) for h in hosts]
    servers = list(servers)
    for server in servers:
        host = server.host
        if host is None:
            continue
        host = _normal_host(host)
        if not any(
            host == entry or (entry.startswith("*.") and host.endswith(entry[1:]) and len(host) > len(entry) - 1)
            for entry in allowed
        ):
            shown = ", ".join(repr(h) for h in allowed) or "none"
            raise ServerConfigError(
                f"host {host!r} is not an allowed host (allowed: {shown})",
                server=server.label,
                key="url",
                fix="Add the host to allowed_hosts, or remove the server",
            )
    return servers


def _normal_host(host: str) -> str:
    if not isinstance(host, str) or not host:
        raise ServerConfigError(f"allowed host {host!r} must be a non-empty string")
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host
