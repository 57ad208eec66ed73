"""A tool asks the host: elicitation (user input), sampling (a completion) and per-call logs.

One shape for native and MCP rows: a native tool's ``ctx.elicit`` / ``ctx.sample`` /
``ctx.log`` build the same ``ElicitationRequest`` / ``SamplingRequest`` / ``LogMessage``
(with ``server=None``) that an MCP server's requests become, and reach the same callbacks:
the call's own (``ToolContext.elicitation`` / ``.sampling`` / ``.on_log``), else the
registry's defaults (``HostCallbacks``), which dispatch puts on the call's context.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types
import pydantic

from ._context import ElicitationRequest, LogMessage, SamplingRequest
from ._errors import NoCallbackError

if TYPE_CHECKING:
    from ._context import ElicitationCallback, SamplingCallback, ToolContext

__all__ = ["HostCallbacks", "describe_elicitation", "elicit", "log", "no_callback", "sample"]

_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
"""MCP level -> Python level (as for servers' log messages: ``mcp._server_log.LEVELS``)."""


@dataclass(frozen=True, slots=True)
class HostCallbacks:
    """The registry's default callbacks: every call that sets none of its own uses these."""

    elicitation: ElicitationCallback | None = None
    sampling: SamplingCallback | None = None

    def fill(self, ctx: ToolContext[Any]) -> None:
        """Give a call's context the defaults it does not override (two attribute checks)."""
        if ctx.elicitation is None:
            ctx.elicitation = self.elicitation
        if ctx.sampling is None:
            ctx.sampling = self.sampling


def describe_elicitation(params: mcp_types.ElicitRequestFormParams | mcp_types.ElicitRequestURLParams) -> str:
    """What an elicitation asks, in a few words (for errors and the model)."""
    if isinstance(params, mcp_types.ElicitRequestURLParams):
        return f"to open {params.url} ({params.message!r})"
    return f"input from the user ({params.message!r})"


def no_callback(request: ElicitationRequest | SamplingRequest, *, per_call_only: bool = False) -> NoCallbackError:
    """The error for a request no callback answers, saying what the tool wanted.

    ``per_call_only``: the call has its own callback, but an MCP server cannot reach it
    because the registry has no default (capabilities are declared at connect).
    """
    tool = request.tool_name or "the tool"
    who = f"MCP server {request.server!r} (tool {tool!r})" if request.server else f"tool {tool!r}"
    kind = "elicitation" if isinstance(request, ElicitationRequest) else "sampling"
    fix = (
        f"the call's ToolContext.{kind} answers MCP servers only when the registry has a default "
        f"(capabilities are declared at connect): set ToolRegistry({kind}=...), even one that declines, "
        "and connect again; the per-call callback then overrides it"
        if per_call_only
        else f"set ToolRegistry({kind}=...) or ToolContext.{kind}"
    )
    if isinstance(request, ElicitationRequest):
        wanted = describe_elicitation(request.params)
        return NoCallbackError(
            f"{who} asked for {wanted}, and "
            + ("no callback of the call can be reached" if per_call_only else "the call has no elicitation callback")
            + f" ({fix})",
            request=request,
            model_feedback=f"The tool {tool!r} needs {wanted}, but this host cannot ask the user.",
        )
    return NoCallbackError(
        f"{who} asked the host's model for a completion (sampling), and "
        + ("no callback of the call can be reached" if per_call_only else "the call has no sampling callback")
        + f" ({fix})",
        request=request,
        model_feedback=f"The tool {tool!r} asked to use the host's model (sampling), which this host does not allow.",
    )


def _form_schema(schema: type[pydantic.BaseModel] | Mapping[str, Any] | None) -> dict[str, Any]:
    if schema is None:
        return {"type": "object", "properties": {}}
    if isinstance(schema, type) and issubclass(schema, pydantic.BaseModel):
        return schema.model_json_schema()
    if isinstance(schema, Mapping):
        return dict(schema)
    raise TypeError(f"schema must be a pydantic model class or a JSON Schema dict, not {type(schema).__name__}")


async def elicit(
    ctx: ToolContext[Any],
    message: str | mcp_types.ElicitRequestFormParams | mcp_types.ElicitRequestURLParams,
    schema: type[pydantic.BaseModel] | Mapping[str, Any] | None,
    url: str | None,
    elicitation_id: str | None,
) -> mcp_types.ElicitResult:
    """``ToolContext.elicit``: build the request, then ask the call's (or the registry's) callback."""
    params: mcp_types.ElicitRequestFormParams | mcp_types.ElicitRequestURLParams
    if not isinstance(message, str):
        params = message
    elif url is not None:
        params = mcp_types.ElicitRequestURLParams(
            message=message, url=url, elicitation_id=elicitation_id or f"{ctx.call_id}-elicit"
        )
    else:
        params = mcp_types.ElicitRequestFormParams(message=message, requested_schema=_form_schema(schema))
    request = ElicitationRequest(params, ctx.call_id, ctx.tool_name, None)
    if ctx.elicitation is None:
        raise no_callback(request)
    return await ctx.elicitation(request)


def _message(item: str | mcp_types.SamplingMessage) -> mcp_types.SamplingMessage:
    if isinstance(item, str):
        return mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(type="text", text=item))
    return item


async def sample(
    ctx: ToolContext[Any],
    messages: str | Sequence[str | mcp_types.SamplingMessage] | mcp_types.CreateMessageRequestParams,
    max_tokens: int,
    system_prompt: str | None,
    temperature: float | None,
) -> mcp_types.CreateMessageResult:
    """``ToolContext.sample``: build the request, then ask the call's (or the registry's) callback."""
    if isinstance(messages, mcp_types.CreateMessageRequestParams):
        params = messages
    else:
        listed = [messages] if isinstance(messages, str) else list(messages)
        params = mcp_types.CreateMessageRequestParams(
            messages=[_message(item) for item in listed],
            max_tokens=max_tokens,
            system_prompt=system_prompt,
            temperature=temperature,
        )
    request = SamplingRequest(params, ctx.call_id, ctx.tool_name, None)
    if ctx.sampling is None:
        raise no_callback(request)
    return await ctx.sampling(request)


async def log(ctx: ToolContext[Any], level: str, data: Any, logger: str | None) -> None:
    """``ToolContext.log``: a record on ``toolmesh.tool.<name>``, and the message to ``ctx.on_log``.

    Raises:
        ValueError: ``level`` is not one of the eight MCP levels.
    """
    python_level = _LEVELS.get(level)
    if python_level is None:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(_LEVELS)}")
    records = logging.getLogger(f"toolmesh.tool.{ctx.tool_name or 'unnamed'}")
    if records.isEnabledFor(python_level):
        records.log(python_level, "%s", data, extra={"mcp_level": level, "mcp_logger": logger})
    if ctx.on_log is not None:
        await ctx.on_log(LogMessage(level, data, logger, ctx.call_id, ctx.tool_name, None))
