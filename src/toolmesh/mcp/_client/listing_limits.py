"""The limits of one server's ``tools/list``, checked as early as each can be.

A page's bytes are bounded before it is parsed (``page_bytes``: ``max_page_bytes``, else
``max_tools`` * ``max_schema_bytes``, never more than ``max_result_bytes``); the tools
``include``/``exclude`` keep are counted on the parsed page, before the SDK builds a
model of any of them (``PageGuard.inspect``): past ``max_tools`` the page is refused, or
(``on_too_many_tools="keep_first"``) cut at the last tool kept, and listing stops. Over
a transport that toolmesh does not read itself (an in-process server) the count is
checked on the listed tools instead. One tool's description and schemas are checked on
its model (``check_size``). Each refusal is a ``ServerConnectionError`` naming the
server, the limit and how to raise it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import mcp_types
import pydantic_core

from toolmesh._core.errors import ServerConnectionError

if TYPE_CHECKING:
    from toolmesh.mcp._spec.server import McpServer

__all__ = ["PageGuard", "check_size", "page_bytes", "too_many"]

logger = logging.getLogger("toolmesh.mcp")


def page_bytes(spec: McpServer) -> int:
    """The most bytes one ``tools/list`` page of the server ``spec`` may have."""
    bound = spec.max_page_bytes if spec.max_page_bytes is not None else spec.max_tools * spec.max_schema_bytes
    return min(bound, spec.max_result_bytes)


class PageGuard:
    """The checks of one ``tools/list`` page on the wire (a ``wire.AnswerGuard``), and what they found."""

    __slots__ = ("_spec", "cut", "kept", "max_bytes", "refused")

    def __init__(self, spec: McpServer, kept: int) -> None:
        """Args:
        spec: The server's spec.
        kept: How many tools the pages before this one kept.
        """
        self._spec = spec
        self.kept = kept
        self.max_bytes = page_bytes(spec)
        """The page's bound in bytes."""
        self.refused: ServerConnectionError | None = None
        """Why the page was refused, when it was."""
        self.cut: tuple[int, bool] | None = None
        """``keep_first`` only: when the page took the count past ``max_tools``, the count and
        whether more pages were announced; the page is then cut to ``max_tools`` kept tools."""

    def too_large(self) -> str:
        """Refuse a page over ``max_bytes`` (nothing of it parsed)."""
        spec = self._spec
        given = "max_page_bytes" if spec.max_page_bytes is not None else "max_tools * max_schema_bytes"
        if spec.max_page_bytes is None and self.max_bytes == spec.max_result_bytes:
            given = "max_result_bytes"
        text = (
            f"a tools/list page is larger than {self.max_bytes} bytes ({given}), so it was not read; "
            "raise max_page_bytes on the server spec if its pages really are that large"
        )
        self.refused = ServerConnectionError(spec.label, text)
        return text

    def inspect(self, result: dict[str, Any]) -> str | None:
        """Count the tools the page keeps; past ``max_tools`` refuse it, or cut it (``keep_first``)."""
        tools = result.get("tools")
        if not isinstance(tools, list):
            return None  # not a listing: the SDK says what is wrong with it
        spec = self._spec
        if spec.include is None and not spec.exclude:
            if self.kept + len(tools) <= spec.max_tools:
                return None
            kept: Sequence[int] = range(len(tools))
        else:
            kept = [index for index, tool in enumerate(tools) if _allowed(spec, tool)]
        count = self.kept + len(kept)
        if count <= spec.max_tools:
            return None
        more = bool(result.get("nextCursor"))
        if spec.on_too_many_tools == "keep_first":
            room = spec.max_tools - self.kept
            result["tools"] = tools[: kept[room - 1] + 1] if room > 0 else []
            result.pop("nextCursor", None)
            self.cut = (count, more)
            return None
        self.refused = too_many(spec, count, more)
        return str(self.refused)


def _allowed(spec: McpServer, tool: Any) -> bool:
    """Whether the filters keep a tool as listed (a tool without a name counts: the SDK refuses it)."""
    name = tool.get("name") if isinstance(tool, dict) else None
    return not isinstance(name, str) or spec.allows(name)


def too_many(spec: McpServer, count: int, more: bool) -> ServerConnectionError:
    """The refusal of a listing past ``max_tools`` (``count`` kept so far, ``more`` pages announced)."""
    return ServerConnectionError(
        spec.label,
        f"tools/list has {_count(spec, count, more)}, more than max_tools={spec.max_tools}; raise max_tools on "
        'the server spec, or keep the first ones with on_too_many_tools="keep_first"',
    )


def kept_first(spec: McpServer, count: int, more: bool) -> None:
    """Warn that only the first ``max_tools`` tools are kept."""
    logger.warning(
        "MCP server %r lists %s, more than max_tools=%d: keeping the first %d "
        "(raise max_tools on the server spec to keep them all)",
        spec.label,
        _count(spec, count, more),
        spec.max_tools,
        spec.max_tools,
    )


def _count(spec: McpServer, count: int, more: bool) -> str:
    text = f"{count}{' or more' if more else ''} tools"
    if spec.include is not None or spec.exclude:
        text += " that include/exclude keep"
    return text


def check_size(spec: McpServer, tool: mcp_types.Tool) -> None:
    """Refuse a tool whose description or schemas are larger than the spec allows.

    Raises:
        ServerConnectionError: naming the tool, the field and the limit.
    """
    description = tool.description or ""
    if len(description) > spec.max_description_chars:
        raise ServerConnectionError(
            spec.label,
            f"the description of tool {tool.name!r} has {len(description)} characters, more than "
            f"max_description_chars={spec.max_description_chars}; raise max_description_chars on the server "
            "spec, or leave the tool out with exclude=[...]",
        )
    if tool.input_schema is not None:
        _check_schema_size(spec, tool, "inputSchema", tool.input_schema)
    if tool.output_schema is not None:
        _check_schema_size(spec, tool, "outputSchema", tool.output_schema)


def _check_schema_size(spec: McpServer, tool: mcp_types.Tool, field: str, schema: Any) -> None:
    size = len(pydantic_core.to_json(schema))
    if size > spec.max_schema_bytes:
        raise ServerConnectionError(
            spec.label,
            f"the {field} of tool {tool.name!r} has {size} bytes, more than max_schema_bytes="
            f"{spec.max_schema_bytes}; raise max_schema_bytes on the server spec, or leave the tool out "
            "with exclude=[...]",
        )
