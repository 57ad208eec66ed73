"""An accepted elicitation form is checked against the schema it was asked with.

The host's callback answers a form with ``ElicitResult(action="accept", content=...)``;
nothing in the SDK checks that ``content`` fits the ``requestedSchema``. toolmesh checks it
where it hands the answer on: to an MCP server (``mcp._in_flight``) and to a native
tool's ``ctx.elicit`` (``_asking``), with the same RE2-safe validator the rows' schemas
use (``mcp._schema``). A field the answer leaves out counts as its schema ``default``
(SEP-1034). A wrong answer is the callback's fault: it fails the request with an error
naming the field, instead of reaching a tool that trusts the schema.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import mcp_types

from ._context import ElicitationRequest
from ._errors import ErrorKind, ToolExecutionError
from .mcp._schema import SchemaUnusableError, compile_schema

__all__ = ["check_form_answer"]

logger = logging.getLogger("toolmesh")


def check_form_answer(request: ElicitationRequest, result: mcp_types.ElicitResult, note: dict[str, Any]) -> None:
    """Refuse an accepted form whose content does not fit the requested schema.

    Args:
        request: What was asked (a URL elicitation, or an answer that is no ``accept``, is not checked).
        result: The callback's answer.
        note: The request's ``mcp.asked`` note, marked unanswered (with the reason) when refused.

    Raises:
        ToolExecutionError: ``internal``: the content does not fit; the message names the
            fields and what is wrong with each.
    """
    params = request.params
    if result.action != "accept" or not isinstance(params, mcp_types.ElicitRequestFormParams):
        return
    schema: Mapping[str, Any] = params.requested_schema
    validator = compile_schema(
        schema, server=request.server or "(native)", tool=request.tool_name or "?", what="requestedSchema"
    )
    if validator is None:
        return
    properties = schema.get("properties")
    defaults = (
        {
            name: field["default"]
            for name, field in properties.items()
            if isinstance(field, Mapping) and "default" in field
        }
        if isinstance(properties, Mapping)
        else {}
    )
    try:
        problems = validator.problems({**defaults, **(result.content or {})})
    except SchemaUnusableError:
        return
    if not problems:
        return
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
