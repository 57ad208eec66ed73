"""``@tool``: a Python function's signature becomes an argument model and a JSON Schema.

This is the one module that builds pydantic models from signatures. Everything is
worked out once, at decoration: the argument validator, the schema, where the
context goes and how the function is called; a call only validates and runs.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import types
import typing
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Annotated, Any, Generic, ParamSpec, TypeVar, cast, overload

import anyio.to_thread
import docstring_parser
import pydantic
import pydantic.fields
from pydantic.json_schema import GenerateJsonSchema

from . import _arguments
from .capabilities import IoMode, ToolCapabilities
from .context import FromContext, ToolContext
from .definition import ToolDefinition
from .errors import ConfigurationError
from .output import (
    Audio,
    ContentBlock,
    EmbeddedResource,
    Image,
    Json,
    ResourceLink,
    Text,
    ToolOutput,
    to_output,
)

__all__ = ["NativeTool", "tool"]

P = ParamSpec("P")
T = TypeVar("T")

_NO_SCHEMA_RETURNS: tuple[object, ...] = (
    Any,
    None,
    type(None),
    str,
    ToolOutput,
    Text,
    Json,
    Image,
    Audio,
    ResourceLink,
    EmbeddedResource,
    ContentBlock,
    inspect.Signature.empty,
)


class _NoFieldTitles(GenerateJsonSchema):
    """Schemas without the per-field ``title`` pydantic adds: tokens the model does not need."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _is_context_annotation(annotation: object) -> bool:
    if annotation is ToolContext or typing.get_origin(annotation) is ToolContext:
        return True
    if typing.get_origin(annotation) is Annotated:
        return any(m is FromContext or isinstance(m, FromContext) for m in annotation.__metadata__)  # type: ignore[attr-defined]
    return False


def _mentions_bytes(annotation: object) -> bool:
    if annotation in (bytes, bytearray):
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_mentions_bytes(arg) for arg in typing.get_args(annotation))
    return False


class NativeTool(Generic[P, T]):
    """A Python function made into a tool; still callable as the function itself.

    Attributes:
        fn: The original function.
        name: The tool name (the function's name unless given).
        description: From the docstring unless given.
        parameters: JSON Schema of the arguments (context parameters left out).
        args_model: The pydantic model that validates the arguments.
        context_param: The parameter that receives the ``ToolContext``, if any.
        capabilities: Host-only facts (output schema, streaming, ...).
        timeout: Seconds a call may take, unless the call's context says otherwise.
        show_error_details: Show unexpected exceptions' text to the model (None: registry decides).
        plain_async: An async function taking only keyword arguments and no context: the
            common case, which callers may await directly as ``fn(**validated)``.

    ``localns`` is the namespace the function was defined in, so string annotations of
    types local to a function body resolve (``@tool`` passes its caller's).
    """

    def __init__(
        self,
        fn: Callable[P, T],
        *,
        name: str | None = None,
        description: str | None = None,
        capabilities: ToolCapabilities | None = None,
        timeout: float | None = None,
        show_error_details: bool | None = None,
        localns: Mapping[str, Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise ConfigurationError(f"@tool needs a function, got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", ""))
        where = f"tool {self.name!r} ({getattr(fn, '__qualname__', self.name)})"
        if not self.name:
            raise ConfigurationError(f"{where}: a tool needs a name; pass name=...")
        if timeout is not None and timeout <= 0:
            raise ConfigurationError(f"{where}: timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = timeout
        self.show_error_details = show_error_details

        signature = inspect.signature(fn)
        try:
            hints = typing.get_type_hints(fn, localns=dict(localns or {}), include_extras=True)
        except Exception as exc:
            raise ConfigurationError(
                f"{where}: its type hints cannot be resolved ({exc}); "
                "import every type the signature names at module level"
            ) from exc
        doc = docstring_parser.parse(inspect.getdoc(fn) or "")
        param_docs = {p.arg_name: p.description for p in doc.params if p.description}

        self.context_param: str | None = None
        self._positional: tuple[str, ...] = ()
        fields: dict[str, Any] = {}
        for param in signature.parameters.values():
            annotation = hints.get(param.name, Any)
            if _is_context_annotation(annotation):
                if self.context_param is not None:
                    raise ConfigurationError(
                        f"{where}: parameters {self.context_param!r} and {param.name!r} both ask for "
                        "the ToolContext; keep one"
                    )
                if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                    raise ConfigurationError(
                        f"{where}: the context parameter {param.name!r} is variadic and cannot be "
                        "filled; declare it as a plain parameter, e.g. ctx: ToolContext"
                    )
                self.context_param = param.name
            elif param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ConfigurationError(
                    f"{where}: *args/**kwargs parameter {param.name!r} cannot be described to a model; "
                    "declare each argument as a named parameter"
                )
            else:
                default = ... if param.default is param.empty else param.default
                if isinstance(default, pydantic.fields.FieldInfo):
                    info = default
                elif param.name in param_docs:
                    info = pydantic.Field(default, description=param_docs[param.name])
                else:
                    info = pydantic.Field(default)
                fields[param.name] = (annotation, info)
            if param.kind is param.POSITIONAL_ONLY:
                self._positional += (param.name,)

        try:
            self.args_model: type[pydantic.BaseModel] = pydantic.create_model(
                f"{self.name}_arguments",
                __config__=pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=False),
                **fields,
            )
            schema = self.args_model.model_json_schema(schema_generator=_NoFieldTitles)
        except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError, NameError, TypeError) as exc:
            raise ConfigurationError(
                f"{where}: its parameters cannot be turned into a JSON Schema ({exc}); "
                "use JSON-able types (str, int, float, bool, lists, dicts, enums, pydantic models)"
            ) from exc
        schema.pop("title", None)
        schema.setdefault("properties", {})
        self.parameters: dict[str, Any] = schema
        self._validator = self.args_model.__pydantic_validator__

        self.description = description if description is not None else _description(doc)

        returns = hints.get("return", signature.return_annotation)
        self._mode = (
            "stream" if inspect.isasyncgenfunction(fn) else "async" if inspect.iscoroutinefunction(fn) else "sync"
        )
        if self._mode != "stream" and _mentions_bytes(returns):
            raise ConfigurationError(
                f"{where}: returns bytes, which carry no MIME type; return Image(data, 'image/png'), "
                "Audio(data, mime_type) or EmbeddedResource(uri, mime_type=..., blob=data) instead"
            )
        base = capabilities or ToolCapabilities()
        changes: dict[str, Any] = {}
        if base.output_schema is None and self._mode != "stream":
            output_schema = _output_schema(returns)
            if output_schema is not None:
                changes["output_schema"] = output_schema
        if self._mode == "stream":
            changes["io_mode"] = IoMode.STREAMING
        self.capabilities = dataclasses.replace(base, **changes) if changes else base
        self.definition = ToolDefinition(self.name, self.description, self.parameters, self.capabilities.output_schema)
        self.plain_async: bool = self._mode == "async" and self.context_param is None and not self._positional

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"NativeTool(name={self.name!r}, fn={getattr(self.fn, '__qualname__', self.fn)!r})"

    def validate(self, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
        """The validated keyword arguments for a call.

        Raises:
            ToolExecutionError: kind ``invalid_arguments``, with feedback for the model.
        """
        try:
            if isinstance(arguments, str):
                if len(arguments) < 8 and _arguments.is_empty_arguments(arguments):
                    return self._validator.validate_python({}).__dict__  # type: ignore[no-any-return]
                return self._validator.validate_json(arguments).__dict__  # type: ignore[no-any-return]
            if arguments is None:
                return self._validator.validate_python({}).__dict__  # type: ignore[no-any-return]
            if type(arguments) is dict:  # validation never mutates its input: no copy needed
                return self._validator.validate_python(arguments).__dict__  # type: ignore[no-any-return]
            if isinstance(arguments, Mapping):
                return self._validator.validate_python(dict(arguments)).__dict__  # type: ignore[no-any-return]
        except pydantic.ValidationError as exc:
            raise _arguments.from_validation_error(self.name, exc, arguments, self.parameters) from None
        raise _arguments.not_an_object(self.name, arguments, self.parameters)

    def bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Map a direct call's positional and keyword arguments to parameter names."""
        if not args:
            return dict(kwargs)
        names = list(self.parameters["properties"])
        named = dict(kwargs)
        if len(args) > len(names):
            raise _arguments.invalid_arguments(
                self.name, f"takes {len(names)} positional arguments, got {len(args)}.", self.parameters
            )
        for name, value in zip(names, args, strict=False):
            if name in named:
                raise _arguments.invalid_arguments(self.name, f"{name}: given twice.", self.parameters)
            named[name] = value
        return named

    async def run(self, kwargs: dict[str, Any], ctx: ToolContext[Any]) -> Any:
        """Run the function with validated arguments; a streaming tool's run returns a ToolOutput."""
        fn: Callable[..., Any] = self.fn
        if self.plain_async:
            return await fn(**kwargs)
        if self.context_param is not None:
            kwargs[self.context_param] = ctx
        args: tuple[Any, ...] = ()
        if self._positional:
            args = tuple(kwargs.pop(name) for name in self._positional if name in kwargs)
        if self._mode == "async":
            return await fn(*args, **kwargs)
        if self._mode == "sync":
            return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), abandon_on_cancel=True)
        return await _collect(fn(*args, **kwargs), ctx)


async def _collect(stream: AsyncIterator[Any], ctx: ToolContext[Any]) -> ToolOutput:
    """Drive a streaming tool: each item is a partial output; the final output is all of them in order."""
    blocks: list[ContentBlock] = []
    try:
        async for item in stream:
            partial = to_output(item)
            blocks.extend(partial.blocks)
            if ctx.on_partial is not None:
                await ctx.on_partial(partial)
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    return ToolOutput(blocks)


def _description(doc: docstring_parser.Docstring) -> str:
    parts = [part for part in (doc.short_description, doc.long_description) if part]
    return "\n\n".join(parts)


def _output_schema(returns: object) -> dict[str, Any] | None:
    if returns in _NO_SCHEMA_RETURNS:
        return None
    origin = typing.get_origin(returns)
    if origin in (list, tuple) and any(arg in _NO_SCHEMA_RETURNS[4:] for arg in typing.get_args(returns)):
        return None
    try:
        adapter = pydantic.TypeAdapter[Any](cast(Any, returns))
        schema = adapter.json_schema(mode="serialization", schema_generator=_NoFieldTitles)
    except (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError, TypeError, NameError):
        return None
    return schema


def caller_namespace(depth: int = 2) -> dict[str, Any]:
    """The local names of the frame ``depth`` calls up (where a decorated function was defined)."""
    frame = sys._getframe(depth)
    return dict(frame.f_locals) if frame.f_code.co_name != "<module>" else {}


@overload
def tool(fn: Callable[P, T], /) -> NativeTool[P, T]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    capabilities: ToolCapabilities | None = None,
    timeout: float | None = None,
    show_error_details: bool | None = None,
) -> Callable[[Callable[P, T]], NativeTool[P, T]]: ...


def tool(
    fn: Callable[P, T] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    capabilities: ToolCapabilities | None = None,
    timeout: float | None = None,
    show_error_details: bool | None = None,
) -> NativeTool[P, T] | Callable[[Callable[P, T]], NativeTool[P, T]]:
    """Make a function a tool: ``@tool`` or ``@tool(name=..., timeout=...)``.

    Raises:
        ConfigurationError: for a signature that cannot be described to a model (two
            context parameters, ``*args``, a variadic context, types with no JSON Schema,
            a bare ``bytes`` return).
    """

    localns = caller_namespace()

    def decorate(func: Callable[P, T]) -> NativeTool[P, T]:
        return NativeTool(
            func,
            name=name,
            description=description,
            capabilities=capabilities,
            timeout=timeout,
            show_error_details=show_error_details,
            localns=localns,
        )

    return decorate(fn) if fn is not None else decorate
