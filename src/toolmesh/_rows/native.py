"""``@tool`` and ``NativeTool``: a Python function made into a tool.

Everything is worked out once, at decoration (``_function_schema`` reads the
signature and docstring): the argument validator, the schema, where the context goes
and how the function is called; a call only validates and runs.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Generic, ParamSpec, TypedDict, TypeVar, Unpack, overload

import anyio.to_thread
import pydantic

from toolmesh._context.context import ToolContext
from toolmesh._core import arguments as _arguments
from toolmesh._core.capabilities import IoMode, ToolCapabilities
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.errors import ConfigurationError
from toolmesh._core.output import ContentBlock, ToolOutput, to_output

from .function_schema import FunctionSchema, fields_validator, function_schema, output_schema

__all__ = ["NativeTool", "ToolOptions", "tool"]

P = ParamSpec("P")
T = TypeVar("T")


class ToolOptions(TypedDict, total=False):
    """The options of ``@tool``, ``@registry.tool`` and ``NativeTool``; each may be left out."""

    name: str | None
    """The tool name (the function's name unless given)."""
    description: str | None
    """What the model is told the tool does (the docstring unless given)."""
    capabilities: ToolCapabilities | None
    """Host-only facts: annotations, output schema, streaming, ..."""
    timeout: float | None
    """Seconds a call may take, unless the call's context says otherwise."""
    show_error_details: bool | None
    """Show unexpected exceptions' text to the model (None: the registry decides)."""
    defer_loading: bool | None
    """Leave the tool out of a turn's declarations until a search finds it (True), always declare
    it (False), or let the registry's ``DeferPolicy`` decide (None)."""


def check_options(caller: str, options: Mapping[str, object]) -> None:
    """Refuse keywords that are not ``ToolOptions``, as Python does for a misspelt keyword.

    Raises:
        TypeError: naming the unknown keyword.
    """
    for key in options:
        if key not in ToolOptions.__optional_keys__:
            raise TypeError(f"{caller} got an unexpected keyword argument {key!r}")


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
        defer_loading: Deferred until found by a search (True), always declared (False), or
            as the registry's ``DeferPolicy`` decides (None).
        plain_async: An async function taking only keyword arguments and no context: the
            common case, which callers may await directly as ``fn(**validated)``.

    ``localns`` is the namespace the function was defined in, so string annotations of
    types local to a function body resolve (``@tool`` passes its caller's).
    """

    def __init__(
        self, fn: Callable[P, T], *, localns: Mapping[str, Any] | None = None, **options: Unpack[ToolOptions]
    ) -> None:
        if not callable(fn):
            raise ConfigurationError(f"@tool needs a function, got {type(fn).__name__}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        check_options("NativeTool()", options)
        self.name: str = options.get("name") or str(getattr(fn, "__name__", ""))
        where = f"tool {self.name!r} ({getattr(fn, '__qualname__', self.name)})"
        if not self.name:
            raise ConfigurationError(f"{where}: a tool needs a name; pass name=...")
        timeout = options.get("timeout")
        if timeout is not None and timeout <= 0:
            raise ConfigurationError(f"{where}: timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = timeout
        self.show_error_details = options.get("show_error_details")
        self.defer_loading: bool | None = options.get("defer_loading")

        schema = function_schema(fn, self.name, localns=localns)
        self.args_model: type[pydantic.BaseModel] = schema.args_model
        self.parameters: dict[str, Any] = schema.parameters
        self._validator = fields_validator(schema.args_model)
        self.context_param: str | None = schema.context_param
        self._positional = schema.positional
        self._mode = schema.mode
        description = options.get("description")
        self.description = description if description is not None else schema.description

        self.capabilities = _capabilities(options.get("capabilities") or ToolCapabilities(), schema)
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
                    return self._validator.validate_python({})[0]
                return self._validator.validate_json(arguments)[0]
            if arguments is None:
                return self._validator.validate_python({})[0]
            if type(arguments) is dict or isinstance(arguments, Mapping):
                if not _arguments.plain_ascii(arguments):
                    problem = _arguments.unsendable(arguments, wire=False)
                    if problem is not None:
                        raise _arguments.invalid_arguments(self.name, problem + ".", self.parameters)
                return self.validate_call((), arguments)
        except pydantic.ValidationError as exc:
            raise _arguments.from_validation_error(self.name, exc, arguments, self.parameters) from None
        raise _arguments.not_an_object(self.name, arguments, self.parameters)

    def validate_call(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """The validated keyword arguments of the host's own call (``dispatch_native``, a direct call).

        Python values the host wrote, checked by the argument model alone: the scan of
        ``validate`` for text no encoder takes back is for what a model writes.

        Raises:
            ToolExecutionError: kind ``invalid_arguments``, as ``validate``.
        """
        data = self.bind(args, kwargs) if args else kwargs
        try:  # validation never mutates its input: a dict needs no copy
            return self._validator.validate_python(data if type(data) is dict else dict(data))[0]
        except pydantic.ValidationError as exc:
            raise _arguments.from_validation_error(self.name, exc, data, self.parameters) from None

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


def _capabilities(base: ToolCapabilities, schema: FunctionSchema) -> ToolCapabilities:
    """``base`` with what the function says filled in: its output schema, or the streaming mode."""
    if schema.mode == "stream":
        return dataclasses.replace(base, io_mode=IoMode.STREAMING)
    if base.output_schema is not None:
        return base
    returns_schema = output_schema(schema.returns)
    return base if returns_schema is None else dataclasses.replace(base, output_schema=returns_schema)


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


def caller_namespace(depth: int = 2) -> dict[str, Any]:
    """The local names of the frame ``depth`` calls up (where a decorated function was defined)."""
    frame = sys._getframe(depth)
    return dict(frame.f_locals) if frame.f_code.co_name != "<module>" else {}


@overload
def tool(fn: Callable[P, T], /) -> NativeTool[P, T]: ...


@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[P, T]], NativeTool[P, T]]: ...


def tool(
    fn: Callable[P, T] | None = None, /, **options: Unpack[ToolOptions]
) -> NativeTool[P, T] | Callable[[Callable[P, T]], NativeTool[P, T]]:
    """Make a function a tool: ``@tool`` or ``@tool(name=..., timeout=...)`` (see ``ToolOptions``).

    Raises:
        ConfigurationError: for a signature that cannot be described to a model (two
            context parameters, ``*args``, a variadic context, types with no JSON Schema,
            a bare ``bytes`` return).
    """
    check_options("tool()", options)
    localns = caller_namespace()

    def decorate(func: Callable[P, T]) -> NativeTool[P, T]:
        return NativeTool(func, localns=localns, **options)

    return decorate(fn) if fn is not None else decorate
