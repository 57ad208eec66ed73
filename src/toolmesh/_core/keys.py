"""The keys of a document as pydantic models, and their errors in the document's terms.

A document (an ``mcpServers`` file, ``toolmesh.json``, a ``POST /v1/responses`` body) is
checked by ``validate_keys`` against its pydantic model. The first problem (an unknown
key first: a misspelt key explains the errors that follow from it) becomes a
``KeyProblem``: the key path as written in the document (``args[1]``, ``env.A``,
``tools[0].allowed_tools.tool_name``; pydantic's union branches left out), the value
there (for its JSON type: a value is never shown, it may be a secret), and for an
unknown key the keys the object holding it takes, as spelt in the document, and the
closest of them. The caller turns it into its own error (``refuse``), so each document
keeps its own error type and wording while the reading of pydantic's errors is one.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from .problems import json_type
from .suggest import closest

__all__ = ["KeyProblem", "spellings", "validate_keys"]

_M = TypeVar("_M", bound=BaseModel)

_WANTED = {
    "int_type": "a whole number",
    "bool_type": "true or false",
    "string_type": "a string",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}
"""What a key takes, by pydantic's error type, when the document says nothing more precise."""


@dataclass(frozen=True)
class KeyProblem:
    """The first problem of a document, in the document's terms."""

    error: ErrorDetails
    """pydantic's error."""
    key: str
    """The key path as written (``profiles.ro.tools[0]``); ``""`` for the document itself."""
    steps: tuple[int | str, ...]
    """The steps of ``key``: the keys and indexes of the document, union branches left out."""
    value: Any
    """The value at ``key`` (for its type only: never show it)."""
    known: tuple[str, ...] = ()
    """For an unknown key: the keys the object holding it takes, as spelt in the document."""
    close: str | None = None
    """For an unknown key: the known key it most likely means."""
    also_unknown: tuple[str, ...] = ()
    """For an unknown key: the document's other unknown keys (paths as written), so one run names them all."""

    @property
    def unknown(self) -> bool:
        """Whether the problem is a key the object does not take."""
        return self.error["type"] == "extra_forbidden"

    def must_be(self, wanted: str | None = None) -> str:
        """The problem as ``must be <wanted>, not <JSON type found>``.

        ``wanted`` is what the document says the key takes; without it, the error's own
        bounds or type are used, else pydantic's message.
        """
        kind, context, value = self.error["type"], self.error.get("ctx", {}), self.value
        if kind == "literal_error" and wanted is None:
            found = repr(value) if isinstance(value, str) else json_type(value)
            return f"must be {context['expected']}, not {found}"
        if kind == "greater_than_equal":
            return f"must be at least {context['ge']}"
        if kind == "less_than_equal":
            return f"must be at most {context['le']}"
        wanted = wanted or _WANTED.get(kind)
        if wanted is None:
            return str(self.error["msg"])
        found = json_type(value)
        if isinstance(value, int) and not isinstance(value, bool) and kind == "float_type":
            found = "a number too large to use"
        return f"must be {wanted}, not {found}"

    def unknown_key_fix(self) -> str:
        """What to do about an unknown key: the key meant, else remove it; and the keys taken here."""
        hint = f"Did you mean {self.close!r}? Otherwise remove it" if self.close else "Remove it"
        fix = f"{hint}; known keys here are " + ", ".join(repr(key) for key in self.known)
        if self.also_unknown:
            fix += ". Also unknown: " + ", ".join(repr(key) for key in self.also_unknown)
        return fix


def validate_keys(
    model: type[_M], data: Any, refuse: Callable[[KeyProblem], Exception], *, unlisted: Collection[str] = ()
) -> _M:
    """``model.model_validate(data)``; the first problem is raised as ``refuse(problem)``.

    Args:
        model: The document's model (unknown keys are problems where it forbids them).
        data: The document as read.
        refuse: The document's error for a problem.
        unlisted: Keys accepted but neither listed nor suggested (other hosts' keys).
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # An unknown key first: other union branches' errors (not a list, not "always") would only mislead.
        unknown = [e for e in errors if e["type"] == "extra_forbidden"]
        problem = _problem(model, data, unknown[0] if unknown else errors[0], unlisted)
        others = dict.fromkeys(_problem(model, data, e, unlisted).key for e in unknown[1:])
        others.pop(problem.key, None)
        if others:
            problem = replace(problem, also_unknown=tuple(others))
        raise refuse(problem) from None


def _problem(model: type[BaseModel], data: Any, error: ErrorDetails, unlisted: Collection[str]) -> KeyProblem:
    loc = tuple(error["loc"])
    value: Any = data
    steps: list[int | str] = []
    for index, step in enumerate(loc):
        in_list = isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value)
        if in_list or (isinstance(value, Mapping) and step in value):
            value = value[step]
        elif index == len(loc) - 1 and error["type"] == "missing" and isinstance(step, str):
            value = None
        else:
            continue  # a union branch (``list[str]``, ``mcp``), not a key of the document
        steps.append(step)
    key = "".join(f"[{s}]" if isinstance(s, int) else (f".{s}" if i else s) for i, s in enumerate(steps))
    if error["type"] != "extra_forbidden" or not loc:
        return KeyProblem(error, key, tuple(steps), value)
    known = tuple(name for name in _known_keys(model, loc[:-1]) if name not in unlisted)
    return KeyProblem(error, key, tuple(steps), value, known, closest(str(loc[-1]), known))


def spellings(name: str, info: FieldInfo) -> tuple[str, ...]:
    """The keys a field is written as in the document: its aliases, else its name."""
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(str(choice) for choice in alias.choices)
    if isinstance(alias, str):
        return (alias,)
    return (info.alias or name,)


def _known_keys(model: type[BaseModel], parent: tuple[int | str, ...]) -> list[str]:
    """The keys the object at ``parent`` (a validation location) takes, as spelt in the document."""
    current: Any = model
    for step in parent:
        current = _step(_unwrap(current), step)
    current = _unwrap(current)
    if _is_model(current):
        return [key for name, info in current.model_fields.items() for key in spellings(name, info)]
    return []


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _unwrap(annotation: Any) -> Any:
    """``Annotated[X, ...]`` -> ``X``; ``X | None`` -> ``X``."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [a for a in get_args(annotation) if a is not type(None)]
        if len(kept) == 1:
            return _unwrap(kept[0])
    return annotation


def _step(annotation: Any, step: int | str) -> Any:
    """The annotation one step of a location down (a union branch's name or tag picks the branch)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [_unwrap(a) for a in get_args(annotation) if a is not type(None)]
        for member in members:
            if step == getattr(member, "__name__", None) or step == str(member) or _tagged(member, step):
                return member
        models = [member for member in members if _is_model(member)]
        return _step(models[0], step) if models else None
    if _is_model(annotation):
        for name, info in annotation.model_fields.items():
            if step == name or step in spellings(name, info):
                return info.annotation
        return annotation  # a step no field has: a branch's name within the model's own validation
    origin = get_origin(annotation)
    if origin is list and isinstance(step, int):
        return get_args(annotation)[0]
    if origin is dict:
        return get_args(annotation)[1]
    return annotation


def _tagged(member: Any, tag: int | str) -> bool:
    """Whether a model of a discriminated union has a ``Literal`` field of the value ``tag``."""
    if not _is_model(member):
        return False
    return any(
        get_origin(info.annotation) is Literal and tag in get_args(info.annotation)
        for info in member.model_fields.values()
    )
