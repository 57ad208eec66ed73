"""MCP server specs: ``McpServer`` in Python, or the ``mcpServers`` JSON users already have.

A spec only describes a server; connecting is ``registry.connect(spec)``. Every check
happens when the spec is made, so a bad spec fails at start-up with a message that
names the server, the key and the fix, never at the first tool call.

Secrets: the values of ``env`` and ``headers`` (and a URL's credentials, query values
and path after its first segment) never appear in ``repr()``, ``str()`` or error
messages; only their keys do.

The checks a spec passes live in ``_spec_checks``, host and URL safety in ``_hosts``,
the ``mcpServers`` file readers in ``_config_files``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack
from urllib.parse import urlsplit

import httpx2

from toolmesh._core.errors import ServerConfigError

from .checks import EMPTY, check_http, check_in_process, check_options, check_stdio
from .defaults import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_MAX_CONFIG_BYTES,
    DEFAULT_MAX_DESCRIPTION_CHARS,
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_PRESENTATION_CHARS,
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_MAX_SCHEMA_BYTES,
    DEFAULT_MAX_TOOLS,
    DEFAULT_TIMEOUT,
    Protocol,
    Transport,
)
from .files import load_config
from .hosts import check_allowed_hosts, redact_url

if TYPE_CHECKING:
    from mcp.server import MCPServer, Server

__all__ = ["McpServer", "McpServerOptions", "ServerConfigError", "check_allowed_hosts", "redact_url"]

_LABEL = re.compile(r"[A-Za-z0-9_-]{1,64}")
_EMPTY: Mapping[str, str] = MappingProxyType({})


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
    max_page_bytes: int | None
    max_presentation_chars: int | None
    protocol: Protocol
    max_concurrent_calls: int | None
    defer_loading: bool | None


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
    env: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    """stdio: environment variables set over the default environment (values are secret)."""
    cwd: str | None = None
    """stdio: the working directory of the child process (default: the current one)."""
    stderr: str | None = None
    """stdio: a file the child's stderr is appended to (created when missing); None: the host's
    stderr (the ``toolmesh`` command's log file under the CLI)."""
    url: str | None = None
    """http: the Streamable HTTP endpoint, e.g. ``https://example.com/mcp``."""
    headers: Mapping[str, str] = field(default_factory=lambda: EMPTY)
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
    aliases: Mapping[str, str] = field(default_factory=lambda: EMPTY)
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
    """The most tools this server may list that ``include``/``exclude`` keep (counted page by page,
    before the tools of a page are read)."""
    on_too_many_tools: Literal["error", "keep_first"] = "error"
    """Over ``max_tools``: fail discovery, or keep the first ``max_tools`` with a warning."""
    max_description_chars: int = DEFAULT_MAX_DESCRIPTION_CHARS
    """The longest tool description accepted at discovery."""
    max_schema_bytes: int = DEFAULT_MAX_SCHEMA_BYTES
    """The largest input or output schema (compact JSON bytes) accepted at discovery."""
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    """The largest ``tools/call`` result accepted; more fails as ``upstream_error``."""
    max_page_bytes: int | None = None
    """The largest ``tools/list`` page (bytes of its message), refused before it is parsed; None:
    ``max_tools`` * ``max_schema_bytes``. Never more than ``max_result_bytes``, which bounds any message."""
    max_presentation_chars: int | None = DEFAULT_MAX_PRESENTATION_CHARS
    """Text blocks longer than this are truncated in what the model is shown (the output keeps all); None: no bound."""
    protocol: Protocol = "auto"
    """The MCP protocol version to speak: ``"auto"`` (2026-07-28 when the server offers it, else
    the 2025-11-25 handshake), ``"2025-11-25"`` (always the handshake) or ``"2026-07-28"`` (only
    the new protocol). An in-process server speaks 2025-11-25 under ``"auto"``."""
    max_concurrent_calls: int | None = None
    """The most calls sent to this server at once (others wait for a turn, within their
    ``call_timeout``); None: no bound. 1 lets a 2025-11-25 stdio server ask for input
    mid-call even when the host runs calls in parallel."""
    defer_loading: bool | None = None
    """Leave this server's tools out of a turn's declarations until a search finds them (True),
    always declare them (False), or let the registry's ``DeferPolicy`` decide (None)."""

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
            check_stdio(self)
        elif self.transport == "http":
            check_http(self)
        else:
            check_in_process(self)
        check_options(self)

    # -- constructors ---------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        label: str,
        command: str,
        args: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: str | os.PathLike[str] | None = None,
        **options: Unpack[McpServerOptions],
    ) -> McpServer:
        """A server run as a child process, spoken to over stdin/stdout.

        Args:
            label: The server's name in the registry (letters, digits, ``_``, ``-``).
            command: The executable, e.g. ``"npx"`` or ``"uvx"``.
            args: Its arguments.
            env: Environment variables set over the default environment.
            cwd: The working directory of the child process.
            stderr: A file its stderr is appended to (default: the host's stderr).
            **options: ``timeout``, ``call_timeout``, ``prefix``, ``aliases``, ``include``,
                ``exclude``, ``max_pages`` and the limits (``validate_arguments``, ``max_tools``,
                ``on_too_many_tools``, ``max_description_chars``, ``max_schema_bytes``,
                ``max_result_bytes``, ``max_page_bytes``, ``max_presentation_chars``), ``protocol``,
                ``max_concurrent_calls``.

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
            stderr=stderr,  # type: ignore[arg-type]  # normalized to str in __post_init__
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
        return load_config(source, cls, allowed_hosts=allowed_hosts, max_bytes=max_bytes)

    # -- reading ----------------------------------------------------------------------

    def allows(self, tool_name: str) -> bool:
        """Whether the ``include``/``exclude`` filters keep the tool named ``tool_name``."""
        if self.include is None and not self.exclude:
            return True
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
            "max_page_bytes": None,
            "max_presentation_chars": DEFAULT_MAX_PRESENTATION_CHARS,
            "protocol": "auto",
            "max_concurrent_calls": None,
            "defer_loading": None,
        }
        for name, default in defaults.items():
            value = getattr(self, name)
            if value != default:
                parts.append(f"{name}={value!r}")
        if self.aliases:
            parts.append(f"aliases={dict(self.aliases)!r}")
        return f"McpServer.{self.transport}({', '.join(parts)})"
