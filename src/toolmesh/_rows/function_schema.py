"""A Python function's signature and docstring, described for a model.

``function_schema(fn)`` is pure: it reads the signature, the type hints and the
docstring once and returns what a tool needs (the argument model that validates a
call, its JSON Schema, the parameter that takes the ``ToolContext``, how the function
is called), or raises ``ConfigurationError`` saying what cannot be described. It is
the one module that builds pydantic models from signatures; ``NativeTool`` holds the
result.
"""

from __future__ import annotations

import inspect
import types
import typing
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol, cast

import docstring_parser
import pydantic
import pydantic.fields
import pydantic_core
from pydantic.json_schema import GenerateJsonSchema

from toolmesh._context.context import FromContext, ToolContext
from toolmesh._core.errors import ConfigurationError
from toolmesh._core.output import Audio, ContentBlock, EmbeddedResource, Image, Json, ResourceLink, Text, ToolOutput

__all__ = ["CallMode", "FieldsValidator", "FunctionSchema", "fields_validator", "function_schema", "output_schema"]

CallMode = Literal["sync", "async", "stream"]
"""How the function is run: in a worker thread, awaited, or iterated as an async generator."""

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


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """What a function's signature and docstring say, ready for validating and running calls."""

    args_model: type[pydantic.BaseModel]
    """Validates a call's arguments (``extra="forbid"``; context parameters left out)."""
    parameters: dict[str, Any]
    """The JSON Schema of the arguments (an object schema, ``properties`` always present)."""
    description: str
    """The docstring's summary and body (empty when there is no docstring)."""
    context_param: str | None
    """The parameter that receives the ``ToolContext``, if any."""
    positional: tuple[str, ...]
    """Positional-only parameters, in order: passed by position, not by keyword."""
    mode: CallMode
    """How the function is run."""
    returns: object
    """The return annotation (``inspect.Signature.empty`` when there is none)."""


class FieldsValidator(Protocol):
    """Validates arguments into ``(fields, extra, fields_set)``: ``fields`` is the model's ``__dict__`` to be."""

    def validate_json(self, data: str) -> tuple[dict[str, Any], Any, Any]: ...

    def validate_python(self, data: Any) -> tuple[dict[str, Any], Any, Any]: ...


def fields_validator(model: type[pydantic.BaseModel]) -> FieldsValidator:
    """A validator of ``model``'s fields alone: the model's checks, errors and defaults, no model instance.

    A call's arguments are needed as keyword arguments, never as a model: pydantic's
    ``model-fields`` validator, run with the model's config (``extra="forbid"``, its
    title), gives the same dict as the model's ``__dict__`` and the same errors,
    without building the instance (0.54 µs against 0.86 for two integers). The argument
    models ``function_schema`` makes have no model-level validators; a model of another
    shape is validated whole.
    """
    schema: Any = model.__pydantic_core_schema__
    inner = schema["schema"] if schema["type"] == "definitions" else schema
    if inner["type"] != "model" or inner["schema"]["type"] != "model-fields" or inner.get("custom_init"):
        return _WholeModel(model)
    fields = inner["schema"]
    if inner is not schema:
        fields = {"type": "definitions", "schema": fields, "definitions": schema["definitions"]}
    return pydantic_core.SchemaValidator(fields, inner.get("config"))


class _WholeModel:
    """``FieldsValidator`` for a model whose fields cannot be validated alone."""

    def __init__(self, model: type[pydantic.BaseModel]) -> None:
        self._validator = model.__pydantic_validator__

    def validate_json(self, data: str) -> tuple[dict[str, Any], Any, Any]:
        return self._validator.validate_json(data).__dict__, None, None

    def validate_python(self, data: Any) -> tuple[dict[str, Any], Any, Any]:
        return self._validator.validate_python(data).__dict__, None, None


def function_schema(fn: Callable[..., Any], name: str, *, localns: Mapping[str, Any] | None = None) -> FunctionSchema:
    """Describe ``fn`` as the tool ``name``.

    Args:
        fn: The function.
        name: The tool name: names the argument model and the errors.
        localns: The namespace ``fn`` was defined in, so string annotations of types
            local to a function body resolve.

    Raises:
        ConfigurationError: for type hints that do not resolve, two context parameters,
            ``*args``/``**kwargs``, a variadic context, types with no JSON Schema, or a
            bare ``bytes`` return.
    """
    where = f"tool {name!r} ({getattr(fn, '__qualname__', name)})"
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, localns=dict(localns or {}), include_extras=True)
    except Exception as exc:
        raise ConfigurationError(
            f"{where}: its type hints cannot be resolved ({exc}); import every type the signature names at module level"
        ) from exc
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    context_param, positional, fields = _parameters(signature, hints, doc, where)
    try:
        args_model, parameters = _arguments_model(name, fields)
    except _UNDESCRIBABLE as exc:
        raise _undescribable(name, fields, where, exc) from exc
    parameters.pop("title", None)
    parameters.setdefault("properties", {})

    returns = hints.get("return", signature.return_annotation)
    mode: CallMode = (
        "stream" if inspect.isasyncgenfunction(fn) else "async" if inspect.iscoroutinefunction(fn) else "sync"
    )
    if mode != "stream" and _mentions_bytes(returns):
        raise ConfigurationError(
            f"{where}: returns bytes, which carry no MIME type; return Image(data, 'image/png'), "
            "Audio(data, mime_type) or EmbeddedResource(uri, mime_type=..., blob=data) instead"
        )
    return FunctionSchema(args_model, parameters, _description(doc), context_param, positional, mode, returns)


_UNDESCRIBABLE = (pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError, NameError, TypeError)
"""What pydantic raises for parameters it cannot build a model or a JSON Schema of."""


def _arguments_model(name: str, fields: Mapping[str, Any]) -> tuple[type[pydantic.BaseModel], dict[str, Any]]:
    """The argument model of ``fields`` and its JSON Schema (raises one of ``_UNDESCRIBABLE``)."""
    with warnings.catch_warnings():
        # a parameter named json, schema, copy...: fine here, the model is never used as a model
        warnings.filterwarnings("ignore", "Field name .* shadows an attribute in parent", UserWarning)
        model: type[pydantic.BaseModel] = pydantic.create_model(
            f"{name}_arguments",
            __config__=pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )
    return model, model.model_json_schema(schema_generator=_NoFieldTitles)


def _undescribable(name: str, fields: Mapping[str, Any], where: str, exc: Exception) -> ConfigurationError:
    """The error for parameters pydantic refused: it names the first parameter that fails on its own."""
    culprit = ""
    for field, spec in fields.items():
        try:
            _arguments_model(name, {field: spec})
        except _UNDESCRIBABLE:
            culprit = f"parameter {field!r} "
            break
    if isinstance(exc, (pydantic.PydanticSchemaGenerationError, pydantic.PydanticInvalidForJsonSchema)):
        fix = (
            "use JSON-able types (str, int, float, bool, lists, dicts, enums, pydantic models); an object the "
            "tool needs (a lock, a client, a callback) comes from the call's context (ToolContext.deps), not "
            "from the model"
        )
    else:
        fix = f"fix the declaration of {culprit.strip() or 'its parameters'}"
    subject = culprit or "its parameters "
    detail = str(exc).strip().splitlines()[0].split(". ")[0]  # pydantic's first sentence: the rest is advice for models
    return ConfigurationError(f"{where}: {subject}cannot be turned into a JSON Schema ({detail}); {fix}")


def _parameters(
    signature: inspect.Signature, hints: Mapping[str, Any], doc: docstring_parser.Docstring, where: str
) -> tuple[str | None, tuple[str, ...], dict[str, Any]]:
    """The context parameter, the positional-only parameters and the argument model's fields."""
    param_docs = {p.arg_name: p.description for p in doc.params if p.description}
    context_param: str | None = None
    positional: tuple[str, ...] = ()
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        annotation = hints.get(param.name, Any)
        variadic = param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
        if _is_context_annotation(annotation):
            if context_param is not None:
                raise ConfigurationError(
                    f"{where}: parameters {context_param!r} and {param.name!r} both ask for the ToolContext; keep one"
                )
            if variadic:
                raise ConfigurationError(
                    f"{where}: the context parameter {param.name!r} is variadic and cannot be "
                    "filled; declare it as a plain parameter, e.g. ctx: ToolContext"
                )
            context_param = param.name
        elif variadic:
            raise ConfigurationError(
                f"{where}: *args/**kwargs parameter {param.name!r} cannot be described to a model; "
                "declare each argument as a named parameter"
            )
        else:
            fields[param.name] = (annotation, _field(param, param_docs.get(param.name)))
        if param.kind is param.POSITIONAL_ONLY:
            positional += (param.name,)
    return context_param, positional, fields


def _field(param: inspect.Parameter, description: str | None) -> pydantic.fields.FieldInfo:
    default = ... if param.default is param.empty else param.default
    if isinstance(default, pydantic.fields.FieldInfo):
        return default
    if description is not None:
        return cast(pydantic.fields.FieldInfo, pydantic.Field(default, description=description))
    return cast(pydantic.fields.FieldInfo, pydantic.Field(default))


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


def _description(doc: docstring_parser.Docstring) -> str:
    parts = [part for part in (doc.short_description, doc.long_description) if part]
    return "\n\n".join(parts)


def output_schema(returns: object) -> dict[str, Any] | None:
    """The JSON Schema of a return annotation, or None when it has none worth declaring.

    None for plain text and content-block returns (and lists of blocks), and for types
    pydantic cannot describe.
    """
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
