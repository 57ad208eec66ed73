"""One line per problem with a value, in the model's terms: the path, then what is wrong.

``field_path`` writes a location as the model sees the value (``tags[1].name``;
``root`` names the value itself). ``schema_problems`` words jsonschema's errors as
``_arguments.from_validation_error`` words pydantic's, so a wrong argument reads the
same whichever kind of row checked it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jsonschema.exceptions

__all__ = ["MAX_PROBLEM_CHARS", "field_path", "json_type", "schema_problems"]

MAX_PROBLEM_CHARS = 200
"""A schema problem's message is cut here: jsonschema's messages quote the offending value."""


def _branch_problems(error: jsonschema.exceptions.ValidationError, root: str) -> list[str]:
    """An ``anyOf``/``oneOf`` failure in the terms of its branches (jsonschema says only "not valid under any").

    Branches the value is not even of the type of are summed up in one line (``'ten' is not
    of type 'integer' or 'null'``, the usual optional parameter); when a branch of the right
    type failed deeper, its problems are given instead (``tags[1]: 5 is not of type 'string'``).
    """
    here = tuple(error.absolute_path)
    context = error.context or []
    wrong_type = [sub for sub in context if sub.validator == "type" and tuple(sub.absolute_path) == here]
    deeper = [sub for sub in context if sub not in wrong_type]
    if deeper:
        return schema_problems(deeper, root)
    types: list[str] = []
    for sub in wrong_type:
        value = sub.validator_value
        types.extend(str(kind) for kind in (value if isinstance(value, list) else [value]) if str(kind) not in types)
    message = f"{error.instance!r} is not of type {' or '.join(repr(kind) for kind in types)}"
    return [f"{field_path(here, root)}: {_cut(message)}"]


def _cut(message: str) -> str:
    return message if len(message) <= MAX_PROBLEM_CHARS else message[:MAX_PROBLEM_CHARS] + "..."


def json_type(value: object) -> str:
    """The JSON type of ``value`` as a problem names it (``a string``, ``an object``, ``null``), never the value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def field_path(loc: Iterable[int | str], root: str = "(arguments)") -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or root


def schema_problems(errors: Iterable[jsonschema.exceptions.ValidationError], root: str = "(arguments)") -> list[str]:
    """jsonschema's errors as one line per problem, worded as ``from_validation_error`` words pydantic's.

    A missing property is ``path.name: missing required field`` and a property the
    schema forbids is ``path.name: unknown field``, whichever validated the value; any
    other problem is ``path: jsonschema's message``, cut to 200 characters (it may quote
    the value). ``root`` names the value itself.
    """
    problems: list[str] = []
    for error in errors:
        path = tuple(error.absolute_path)
        instance = error.instance
        if error.validator in ("anyOf", "oneOf") and error.context:
            problems.extend(_branch_problems(error, root))
            continue
        required = error.validator_value
        if error.validator == "required" and isinstance(instance, Mapping) and isinstance(required, list):
            missing = [name for name in required if isinstance(name, str) and name not in instance]
            named = [name for name in missing if error.message == f"{name!r} is a required property"]
            if named:
                problems.append(f"{field_path((*path, named[0]), root)}: missing required field")
                continue
        if (
            error.validator == "additionalProperties"
            and error.validator_value is False
            and isinstance(instance, Mapping)
            and isinstance(error.schema, Mapping)
            and not error.schema.get("patternProperties")
        ):
            known = error.schema.get("properties")
            known = known if isinstance(known, Mapping) else {}
            problems.extend(
                f"{field_path((*path, name), root)}: unknown field" for name in instance if name not in known
            )
            continue
        problems.append(f"{field_path(path, root)}: {_cut(error.message)}")
    return problems
