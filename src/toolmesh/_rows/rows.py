"""The typed rows of a registry: NativeEntry, McpEntry, DynamicEntry, HostedEntry.

Every row has ``name``, ``definition`` and ``capabilities``, and knows how to run a
call (``invoke``). Hosts tell the families apart with ``match``/``isinstance``; the
caller of ``dispatch`` never chooses the family.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeAlias

import jsonschema
import jsonschema.exceptions

from toolmesh._context.context import ToolContext
from toolmesh._core import arguments as _arguments
from toolmesh._core.capabilities import ToolCapabilities
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.errors import ConfigurationError, DynamicSchemaError, ErrorKind, ToolExecutionError
from toolmesh._core.metadata import MCP_ARGUMENTS, MCP_SERVER_LABEL, MCP_WIRE_NAME
from toolmesh._core.names import describe_mcp_tool
from toolmesh._core.output import ToolOutput, to_output
from toolmesh._core.problems import schema_problems
from toolmesh._core.schema import SchemaUnusableError, compile_schema
from toolmesh._core.slots import derive_on_first_read

if TYPE_CHECKING:
    import mcp_types

    from toolmesh._core.schema import SchemaValidator

    from .native import NativeTool

__all__ = ["DynamicEntry", "Entry", "HostedEntry", "McpEntry", "NativeEntry"]

DynamicHandler: TypeAlias = Callable[..., Awaitable[Any]]
_UNCOMPILED: Any = object()
"""An McpEntry's schema not compiled yet (None means compiled and unusable, or none)."""


def _row_hash(row: Any) -> int:
    """A row's hash: its family and name (equal rows have both equal), since its schemas are dicts."""
    return hash((row.kind, row.name))


@dataclass(frozen=True, slots=True, repr=False)
class NativeEntry:
    """A Python function registered as a tool."""

    kind: ClassVar[str] = "native"
    name: str
    """The model-visible name."""
    definition: ToolDefinition
    """What the model sees."""
    capabilities: ToolCapabilities
    """Host-only facts."""
    tool: NativeTool[..., Any]
    """The decorated function (its ``fn`` is the original)."""
    timeout: float | None = None
    """Seconds a call may take (the call's context may override it)."""
    show_error_details: bool | None = None
    """Show unexpected exceptions' text to the model (None: the registry decides)."""
    defer_loading: bool | None = None
    """Leave the row out of a turn's declarations until a search finds it (True), always declare it
    (False), or let the registry's ``DeferPolicy`` decide (None)."""
    max_presentation_chars: ClassVar[int | None] = None
    """Text shown to the model is not bounded for the host's own functions."""
    plain_tool: NativeTool[..., Any] | None = field(init=False, repr=False, compare=False)
    """``tool`` when it is a plain async function (``NativeTool.plain_async``) with no timeout of its
    own: dispatch may await it directly. None otherwise, as on every other kind of row."""

    def __post_init__(self) -> None:
        plain = self.timeout is None and self.tool.plain_async
        object.__setattr__(self, "plain_tool", self.tool if plain else None)

    @property
    def function(self) -> Callable[..., Any]:
        """The original Python callable."""
        return self.tool.fn

    @property
    def args_model(self) -> type[Any]:
        """The pydantic model that validates the arguments."""
        return self.tool.args_model

    async def invoke(self, arguments: str | Mapping[str, Any] | None, ctx: ToolContext[Any]) -> ToolOutput:
        """Validate the arguments, run the function, convert what it returns."""
        native = self.tool
        if native.plain_async:
            return to_output(await native.fn(**native.validate(arguments)))
        return to_output(await native.run(native.validate(arguments), ctx))

    __hash__ = _row_hash

    def __repr__(self) -> str:
        return f"NativeEntry(name={self.name!r}, function={getattr(self.tool.fn, '__qualname__', '?')!r})"


@dataclass(frozen=True, slots=True, repr=False)
class DynamicEntry:
    """A tool defined at run time: a JSON Schema and an async handler taking a dict."""

    kind: ClassVar[str] = "dynamic"
    plain_tool: ClassVar[None] = None
    name: str
    definition: ToolDefinition
    capabilities: ToolCapabilities
    handler: DynamicHandler
    """``await handler(arguments)`` or ``await handler(arguments, ctx)``."""
    timeout: float | None = None
    show_error_details: bool | None = None
    _validator: Any = field(default=None, compare=False)
    _takes_context: bool = field(default=False, compare=False)
    defer_loading: bool | None = None
    """Leave the row out of a turn's declarations until a search finds it (True), always declare it
    (False), or let the registry's ``DeferPolicy`` decide (None)."""
    max_presentation_chars: ClassVar[int | None] = None

    @classmethod
    def create(
        cls,
        name: str,
        schema: Mapping[str, Any],
        handler: DynamicHandler,
        *,
        description: str = "",
        capabilities: ToolCapabilities | None = None,
        timeout: float | None = None,
        show_error_details: bool | None = None,
        defer_loading: bool | None = None,
    ) -> DynamicEntry:
        """Check the schema and the handler once, and build the row.

        Raises:
            ConfigurationError: for a schema that is not a valid JSON Schema of an object,
                or a handler that is not an async function of one or two parameters.
        """
        if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
            raise DynamicSchemaError(
                f"dynamic tool {name!r}: its schema must be a JSON Schema object with "
                f'"type": "object", got {schema!r:.80}'
            )
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            validator_class.check_schema(dict(schema))
        except jsonschema.exceptions.SchemaError as exc:
            raise DynamicSchemaError(
                f"dynamic tool {name!r}: invalid JSON Schema at {'/'.join(map(str, exc.path)) or 'the root'}: "
                f"{exc.message}"
            ) from None
        if not inspect.iscoroutinefunction(handler) and not inspect.iscoroutinefunction(
            getattr(handler, "__call__", None)  # noqa: B004
        ):
            raise ConfigurationError(f"dynamic tool {name!r}: the handler must be an async function")
        try:
            arity = len(inspect.signature(handler).parameters)
        except (TypeError, ValueError):
            arity = 1
        if arity not in (1, 2):
            raise ConfigurationError(
                f"dynamic tool {name!r}: the handler takes {arity} parameters; it must take "
                "(arguments) or (arguments, ctx)"
            )
        params = dict(schema)
        params.setdefault("type", "object")
        params.setdefault("properties", {})
        return cls(
            name,
            ToolDefinition(name, description, params, (capabilities or ToolCapabilities()).output_schema),
            capabilities or ToolCapabilities(),
            handler,
            timeout,
            show_error_details,
            validator_class(params),
            arity == 2,
            defer_loading,
        )

    def validate(self, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
        """The arguments as a dict, checked against the schema.

        Raises:
            ToolExecutionError: kind ``invalid_arguments``, naming every problem.
        """
        params = self.definition.parameters
        data = _arguments.parse_object(self.name, arguments, params)
        problem = _arguments.unsendable(data, wire=False)
        if problem is not None:
            raise _arguments.invalid_arguments(self.name, problem + ".", params)
        problems = schema_problems(self._validator.iter_errors(data))
        if problems:
            raise _arguments.invalid_arguments(self.name, "; ".join(problems) + ".", params)
        return data

    async def invoke(self, arguments: str | Mapping[str, Any] | None, ctx: ToolContext[Any]) -> ToolOutput:
        """Validate the arguments against the schema, run the handler."""
        data = self.validate(arguments)
        value = await (self.handler(data, ctx) if self._takes_context else self.handler(data))
        return to_output(value)

    __hash__ = _row_hash

    def __repr__(self) -> str:
        return f"DynamicEntry(name={self.name!r})"


@dataclass(frozen=True, slots=True, repr=False)
class HostedEntry:
    """A provider-executed tool (web search, code execution): advertised, never run locally."""

    kind: ClassVar[str] = "hosted"
    plain_tool: ClassVar[None] = None
    name: str
    definition: ToolDefinition
    capabilities: ToolCapabilities
    provider_tool: Mapping[str, Any]
    """The provider's own declaration, e.g. ``{"type": "web_search"}``."""
    provider: str | None = None
    """Which provider runs it (``openai``, ``anthropic``, ``gemini``), if specific."""
    defer_loading: ClassVar[bool | None] = None
    """A hosted row is always declared (the provider runs it)."""
    timeout: float | None = None
    show_error_details: bool | None = None
    max_presentation_chars: ClassVar[int | None] = None

    async def invoke(self, arguments: str | Mapping[str, Any] | None, ctx: ToolContext[Any]) -> ToolOutput:
        """Hosted tools run at the provider; a local call is a not-found error."""
        raise ToolExecutionError(
            f"tool {self.name!r} is hosted by the provider and cannot be dispatched locally; "
            "the provider runs it and returns its result in the model's response",
            kind=ErrorKind.NOT_FOUND,
            model_feedback=f"The tool {self.name!r} is not available to call here.",
        )

    __hash__ = _row_hash

    def __repr__(self) -> str:
        return f"HostedEntry(name={self.name!r}, provider={self.provider!r})"


class McpCaller(Protocol):
    """What an McpEntry needs of its server's connection."""

    async def call_tool(
        self, entry: McpEntry, arguments: dict[str, Any] | None, ctx: ToolContext[Any]
    ) -> ToolOutput: ...


@dataclass(frozen=True, slots=True, repr=False)
class McpEntry:
    """A tool of an MCP server: called on that server under its own (wire) name."""

    kind: ClassVar[str] = "mcp"
    plain_tool: ClassVar[None] = None
    name: str
    """The model-visible name (an alias of ``wire_name``)."""
    definition: ToolDefinition
    """What the model sees; discovery leaves it to be made from ``tool`` at its first read."""
    capabilities: ToolCapabilities
    """Host-only facts; discovery leaves them to be made from ``tool`` at their first read."""
    server: str
    """The server's label."""
    wire_name: str
    """The server's own tool name, always the one sent in ``tools/call``."""
    tool: mcp_types.Tool
    """The tool as discovered."""
    caller: McpCaller = field(compare=False)
    """The server's connection."""
    timeout: float | None = None
    show_error_details: bool | None = None
    max_presentation_chars: int | None = None
    """Longer text blocks are truncated in what the model is shown (the server spec's limit); None: no bound."""
    validate_arguments: bool = False
    """Check the model's arguments against the ``inputSchema`` before the wire (discovery sets the spec's option)."""
    protocol_version: str | None = None
    """The protocol version of the session that listed the tool: ``capabilities`` read ``tool`` by its rules
    (on 2026-07-28 a tool that says nothing about tasks has ``task_support=None``, before it ``forbidden``)."""
    defer_loading: bool | None = None
    """Leave the row out of a turn's declarations until a search finds it (True), always declare it
    (False), or let the registry's ``DeferPolicy`` decide (None)."""
    _input: Any = field(default=_UNCOMPILED, init=False, compare=False)
    _output: Any = field(default=_UNCOMPILED, init=False, compare=False)

    @property
    def input_validator(self) -> SchemaValidator | None:
        """The compiled ``inputSchema`` (None: arguments are not checked locally).

        Compiled at the row's first call, not at discovery, so a large catalog connects
        at the cost of its listing; an unusable schema is reported (once) then.
        """
        if self._input is _UNCOMPILED:
            compiled = (
                compile_schema(self.tool.input_schema, server=self.server, tool=self.wire_name, what="inputSchema")
                if self.validate_arguments
                else None
            )
            object.__setattr__(self, "_input", compiled)
        validator: SchemaValidator | None = self._input
        return validator

    @property
    def output_validator(self) -> SchemaValidator | None:
        """The compiled ``outputSchema`` (None: none declared, or it cannot be used); compiled at first use."""
        if self._output is _UNCOMPILED:
            compiled = compile_schema(
                self.tool.output_schema, server=self.server, tool=self.wire_name, what="outputSchema"
            )
            object.__setattr__(self, "_output", compiled)
        validator: SchemaValidator | None = self._output
        return validator

    def validate(self, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
        """The arguments as a dict, checked as far as can be done without the server.

        Raises:
            ToolExecutionError: ``invalid_arguments`` for arguments that are not a JSON
                object, cannot be sent (see ``_arguments.unsendable``) or do not match the
                tool's ``inputSchema``; ``upstream_error`` when that schema itself fails.
        """
        params = self.definition.parameters
        data = _arguments.parse_object(self.name, arguments, params)
        if data:
            problem = _arguments.unsendable(data, wire=True)
            if problem is not None:
                raise _arguments.invalid_arguments(self.name, problem + ".", params)
        validator = self.input_validator
        if validator is not None:
            problems = self._problems(validator, data, "inputSchema")
            if problems:
                raise _arguments.invalid_arguments(self.name, "; ".join(problems) + ".", params)
        return data

    async def invoke(self, arguments: str | Mapping[str, Any] | None, ctx: ToolContext[Any]) -> ToolOutput:
        """Check the arguments (``validate``), then send ``tools/call`` with the wire name.

        Arguments ``validate`` rejects never reach the wire. The server label and wire
        name go on the call's metadata first, so even a call refused before the wire can
        be reported as an ``mcp_call`` item.
        """
        ctx.metadata[MCP_SERVER_LABEL] = self.server
        ctx.metadata[MCP_WIRE_NAME] = self.wire_name
        if isinstance(arguments, str):
            ctx.metadata[MCP_ARGUMENTS] = arguments
        data = self.validate(arguments)
        return await self.caller.call_tool(self, data or None, ctx)

    def check_output(self, result: mcp_types.CallToolResult) -> None:
        """Check a successful result's ``structuredContent`` against the tool's ``outputSchema``.

        Raises:
            ToolExecutionError: ``upstream_error`` when a declared outputSchema gets no
                structured content, or content that does not match it.
        """
        if self.tool.output_schema is None:
            return
        structured = result.structured_content
        if structured is None and "structured_content" not in result.model_fields_set:
            raise self._output_error("declares an outputSchema but returned no structuredContent")
        validator = self.output_validator
        if validator is not None:
            problems = self._problems(validator, structured, "outputSchema")
            if problems:
                raise self._output_error(
                    f"returned structuredContent that does not match its outputSchema: {'; '.join(problems[:5])}"
                )

    def _output_error(self, detail: str) -> ToolExecutionError:
        return ToolExecutionError(
            f"MCP server {self.server!r}, tool {self.wire_name!r} (row {self.name!r}) {detail}",
            kind=ErrorKind.UPSTREAM_ERROR,
            model_feedback=f"The tool {self.name!r} returned a result that does not match its declared output schema.",
        )

    def _problems(self, validator: SchemaValidator, value: object, what: str) -> list[str]:
        try:
            return validator.problems(value, "(arguments)" if what == "inputSchema" else "(structuredContent)")
        except SchemaUnusableError as exc:
            raise ToolExecutionError(
                f"MCP server {self.server!r}, tool {self.wire_name!r} (row {self.name!r}): its {what} "
                f"cannot be used: {exc}",
                kind=ErrorKind.UPSTREAM_ERROR,
                model_feedback=f"The tool {self.name!r} cannot be used: its server declared an unusable {what}.",
            ) from exc

    __hash__ = _row_hash

    def __repr__(self) -> str:
        return f"McpEntry(name={self.name!r}, server={self.server!r}, wire_name={self.wire_name!r})"


def _listed_definition(row: McpEntry) -> ToolDefinition:
    from .mcp_convert import tool_definition

    return tool_definition(row.name, row.tool)


def _listed_capabilities(row: McpEntry) -> ToolCapabilities:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    from .mcp_convert import tool_capabilities

    return tool_capabilities(row.tool, modern=row.protocol_version in MODERN_PROTOCOL_VERSIONS)


derive_on_first_read(McpEntry, "definition", _listed_definition)
derive_on_first_read(McpEntry, "capabilities", _listed_capabilities)


Entry: TypeAlias = NativeEntry | McpEntry | DynamicEntry | HostedEntry
"""Any row of a registry."""


def describe_row(row: Entry) -> str:
    """How error messages name a row: its family and where it comes from."""
    match row:
        case NativeEntry():
            where = f"{getattr(row.tool.fn, '__module__', '?')}.{getattr(row.tool.fn, '__qualname__', '?')}"
            return f"native tool {row.name!r} ({where})"
        case McpEntry():
            return describe_mcp_tool(row.server, row.wire_name)
        case DynamicEntry():
            return f"dynamic tool {row.name!r}"
        case HostedEntry():
            return f"hosted tool {row.name!r}"
