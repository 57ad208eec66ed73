"""The defaults and field types of a server spec: a leaf every other spec module may build on.

``SpecFields`` is what the checks and the secret collection read of an ``McpServer``,
so that they take the fields they need instead of importing the class that calls them.
"""

from __future__ import annotations

import typing
from typing import Any, Literal

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_MAX_CONFIG_BYTES",
    "DEFAULT_MAX_DESCRIPTION_CHARS",
    "DEFAULT_MAX_PAGES",
    "DEFAULT_MAX_PRESENTATION_CHARS",
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_SCHEMA_BYTES",
    "DEFAULT_MAX_TOOLS",
    "DEFAULT_TIMEOUT",
    "Protocol",
    "SpecFields",
    "Transport",
]

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

Protocol = Literal["auto", "2025-11-25", "2026-07-28"]
"""The MCP protocol versions a server spec may ask for."""


class SpecFields(typing.Protocol):
    """The fields of a server spec that the checks and the secret collection read."""

    @property
    def label(self) -> str: ...
    @property
    def transport(self) -> Transport: ...
    @property
    def command(self) -> Any: ...
    @property
    def args(self) -> Any: ...
    @property
    def env(self) -> Any: ...
    @property
    def url(self) -> Any: ...
    @property
    def headers(self) -> Any: ...
    @property
    def auth(self) -> Any: ...
    @property
    def server_object(self) -> Any: ...
    @property
    def include(self) -> Any: ...
    @property
    def exclude(self) -> Any: ...
    @property
    def aliases(self) -> Any: ...
    @property
    def allow_insecure_http(self) -> Any: ...
    @property
    def max_concurrent_calls(self) -> Any: ...
    @property
    def max_page_bytes(self) -> Any: ...
    @property
    def max_presentation_chars(self) -> Any: ...
    @property
    def on_too_many_tools(self) -> Any: ...
    @property
    def protocol(self) -> Any: ...
    @property
    def defer_loading(self) -> Any: ...
