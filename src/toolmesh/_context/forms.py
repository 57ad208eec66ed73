"""An accepted elicitation form: the schema's defaults filled in, then checked against the schema.

The host's callback answers a form with ``ElicitResult(action="accept", content=...)``.
toolmesh hands the answer on through ``check_form_answer``: to an MCP server
(``mcp._client.in_flight``) as it returns it, defaults filled in; to a native tool's
``ctx.elicit`` (``_context.asking``) as the host gave it, checked as if filled in.

* SEP-1034: since 2025-11-25 each field of an elicitation's ``requestedSchema`` may give
  a ``default`` for the client to pre-fill its form with. A callback that accepts the
  form without a field has left that field as the user was shown it: at its default.
  ``with_form_defaults`` puts it in, by one rule: a field the answer leaves out (a field
  given, even as null, is the host's) gets its ``default`` when that default is a value
  elicitation content can carry (a primitive, or a list of strings for a multi-select)
  and is valid for the field's own schema. So every host answers as the spec's clients
  do, whether or not its callback reads the defaults.
* Nothing in the SDK checks that ``content`` fits the ``requestedSchema``; toolmesh checks
  the answer (defaults filled in) with the same RE2-safe validator the rows' schemas use
  (``_core.schema``). A wrong answer is the callback's fault: it fails the request with an
  error naming the field, instead of reaching a tool that trusts the schema.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import mcp_types

from toolmesh._core.errors import ErrorKind, ToolExecutionError
from toolmesh._core.schema import SchemaUnusableError, compile_schema

from .requests import ElicitationRequest

__all__ = ["check_form_answer", "form_defaults", "with_form_defaults"]

logger = logging.getLogger("toolmesh")

_Value = str | int | float | bool | list[str] | None


def _carried(value: Any) -> bool:
    """A value elicitation content may carry: a primitive, or a list of strings (multi-select)."""
    if isinstance(value, str | int | float | bool):
        return True
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def form_defaults(
    requested_schema: mcp_types.ElicitRequestedSchema | Mapping[str, Any], *, server: str = "?", tool: str = "?"
) -> dict[str, _Value]:
    """The ``default`` of each top-level property of an elicitation's requested schema that an answer may
    carry: content can hold it, and it is valid for the property's schema (``server`` and ``tool`` name the
    asker in the warning about a property schema that cannot be used; its default is then not carried)."""
    properties = requested_schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    dialect = requested_schema.get("$schema")
    defaults: dict[str, _Value] = {}
    for name, field in properties.items():
        if not isinstance(field, Mapping) or "default" not in field or not _carried(field["default"]):
            continue
        own = {**field, "$schema": dialect} if isinstance(dialect, str) else field
        validator = compile_schema(own, server=server, tool=tool, what=f"requestedSchema property {name!r}")
        try:
            valid = validator is not None and not validator.problems(field["default"])
        except SchemaUnusableError:
            valid = False
        if valid:
            defaults[name] = field["default"]
    return defaults


def with_form_defaults(
    params: mcp_types.ElicitRequestFormParams | mcp_types.ElicitRequestURLParams,
    result: mcp_types.ElicitResult,
    *,
    server: str = "?",
    tool: str = "?",
) -> mcp_types.ElicitResult:
    """``result`` with the schema's defaults (``form_defaults``) added for the fields an accepted form left out.

    A declined or cancelled answer, a URL-mode elicitation and a field the host did give
    (even as null) are left as they are; the host's own answer is never changed.
    """
    if result.action != "accept" or not isinstance(params, mcp_types.ElicitRequestFormParams):
        return result
    content = result.content or {}
    missing = {
        name: value
        for name, value in form_defaults(params.requested_schema, server=server, tool=tool).items()
        if name not in content
    }
    if not missing:
        return result
    return result.model_copy(update={"content": {**content, **missing}})


def check_form_answer(
    request: ElicitationRequest, result: mcp_types.ElicitResult, note: dict[str, Any]
) -> mcp_types.ElicitResult:
    """The answer as it goes on: an accepted form with its defaults filled in (SEP-1034), refused
    when the content does not fit the requested schema.

    Args:
        request: What was asked (a URL elicitation, or an answer that is no ``accept``, is neither filled nor checked).
        result: The callback's answer.
        note: The request's ``mcp.asked`` note, marked unanswered (with the reason) when refused.

    Raises:
        ToolExecutionError: ``internal``: the content does not fit; the message names the
            fields and what is wrong with each.
    """
    params = request.params
    if result.action != "accept" or not isinstance(params, mcp_types.ElicitRequestFormParams):
        return result
    server, tool = request.server or "(native)", request.tool_name or "?"
    answer = with_form_defaults(params, result, server=server, tool=tool)
    validator = compile_schema(params.requested_schema, server=server, tool=tool, what="requestedSchema")
    if validator is None:
        return answer
    try:
        problems = validator.problems(answer.content or {})
    except SchemaUnusableError:
        return answer
    if not problems:
        return answer
    shown = "; ".join(problems[:5])
    note.update(answered=False, reason=f"the answer does not match the requested schema ({shown})")
    who = f"MCP server {request.server!r}" if request.server else f"tool {request.tool_name!r}"
    logger.warning("the host's elicitation callback answered %s with an invalid form: %s", who, shown)
    raise ToolExecutionError(
        f"the host's elicitation callback accepted the form of {who} ({params.message!r}) with content that does "
        f"not match its requested schema: {shown}; fix the callback's answer",
        kind=ErrorKind.INTERNAL,
        model_feedback=f"The tool {request.tool_name!r} asked the user for input, and the answer was not valid.",
    )
