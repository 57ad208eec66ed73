"""A tool asks the host: elicitation (user input), sampling (a completion) and per-call logs.

One shape for native and MCP rows: a native tool's ``ctx.elicit`` / ``ctx.sample`` /
``ctx.log`` build the same ``ElicitationRequest`` / ``SamplingRequest`` / ``LogMessage``
(with ``server=None``) that an MCP server's requests become, and reach the same callbacks:
the call's own (``ToolContext.elicitation`` / ``.sampling`` / ``.on_log``), else the
registry's defaults (``HostCallbacks``), which dispatch puts on the call's context.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types
import pydantic

from toolmesh._core.errors import ErrorKind, NoCallbackError, ToolExecutionError

from .forms import check_form_answer
from .requests import Asker, ElicitationCallback, ElicitationRequest, LogMessage, SamplingCallback, SamplingRequest

__all__ = [
    "LEVELS",
    "HostCallbacks",
    "check_async_callback",
    "describe_elicitation",
    "elicit",
    "log",
    "no_callback",
    "run_callback",
    "sample",
    "wrong_answer",
]

LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
"""MCP level -> Python level, for a tool's ``ctx.log`` and a server's log messages alike. Python has
no notice, alert or emergency: they take the nearest standard level below, and each record keeps
the MCP level as ``record.mcp_level``."""
_ALIASES = {"warn": "warning", "fatal": "critical"}
"""Python's other names of two levels, accepted by ``ctx.log`` (any case) and logged as the MCP level."""


@dataclass(frozen=True, slots=True)
class HostCallbacks:
    """The registry's default callbacks: every call that sets none of its own uses these."""

    elicitation: ElicitationCallback | None = None
    sampling: SamplingCallback | None = None

    def __post_init__(self) -> None:
        check_async_callback("ToolRegistry(elicitation=...)", self.elicitation)
        check_async_callback("ToolRegistry(sampling=...)", self.sampling)

    def fill(self, ctx: Asker) -> None:
        """Give a call's context the defaults it does not override (two attribute checks)."""
        if ctx.elicitation is None:
            ctx.elicitation = self.elicitation
        if ctx.sampling is None:
            ctx.sampling = self.sampling


def _name(callback: object) -> str:
    return str(getattr(callback, "__qualname__", None) or type(callback).__name__)


def check_async_callback(where: str, callback: object) -> None:
    """Refuse, where it is given, a callback that is a plain ``def`` (its answer cannot be awaited).

    Only what is surely synchronous is refused (a named function or method, also inside a
    ``functools.partial``); a lambda or a callable object is checked when it answers
    (``run_callback``).

    Raises:
        TypeError: ``callback`` is not callable, or is a plain function.
    """
    if callback is None:
        return
    if not callable(callback):
        raise TypeError(f"{where} must be an async function, not {type(callback).__name__}")
    function: Any = callback
    while isinstance(function, functools.partial):
        function = function.func
    plain = (inspect.isfunction(function) or inspect.ismethod(function)) and function.__name__ != "<lambda>"
    if plain and not inspect.iscoroutinefunction(function):
        raise TypeError(
            f"{where} must be an async function: {_name(function)!r} is a plain def; define it with async def"
        )


async def run_callback(callback: Any, request: Any, kind: str) -> Any:
    """The awaited answer of a host callback (``kind``: elicitation or sampling).

    Raises:
        ToolExecutionError: ``internal``: the callback answered without an awaitable (it is
            not async), naming it.
    """
    pending = callback(request)
    if not inspect.isawaitable(pending):
        raise ToolExecutionError(
            f"the {kind} callback {_name(callback)!r} is not async: it returned a value of type "
            f"{type(pending).__name__} instead of an awaitable; define it with async def",
            kind=ErrorKind.INTERNAL,
        )
    return await pending


def wrong_answer(callback: object, kind: str, result: object, expected: type[Any]) -> ToolExecutionError:
    """The error for a callback that answered with something else than ``expected``."""
    return ToolExecutionError(
        f"the {kind} callback {_name(callback)!r} answered with a {type(result).__name__}, "
        f"not a {expected.__name__} (of mcp_types)",
        kind=ErrorKind.INTERNAL,
    )


def describe_elicitation(params: mcp_types.ElicitRequestFormParams | mcp_types.ElicitRequestURLParams) -> str:
    """What an elicitation asks, in a few words (for errors and the model)."""
    if isinstance(params, mcp_types.ElicitRequestURLParams):
        return f"to open {params.url} ({params.message!r})"
    return f"input from the user ({params.message!r})"


def no_callback(
    request: ElicitationRequest | SamplingRequest, *, per_call_only: bool = False, caller: str | None = None
) -> NoCallbackError:
    """The error for a request no callback answers, saying what the tool wanted.

    ``per_call_only``: the call has its own callback, but an MCP server cannot reach it
    because the registry has no default (capabilities are declared at connect).
    ``caller``: who should have answered instead of the host's callbacks (the gateway's
    client, which did not declare the capability); the fix then speaks to that caller.
    """
    tool = request.tool_name or "the tool"
    who = f"MCP server {request.server!r} (tool {tool!r})" if request.server else f"tool {tool!r}"
    kind = "elicitation" if isinstance(request, ElicitationRequest) else "sampling"
    fix = (
        f"connect it with an {kind} handler, such as the MCP SDK's `{kind}_callback=`"
        if caller is not None
        else f"the call's ToolContext.{kind} answers MCP servers only when the registry has a default "
        f"(capabilities are declared at connect): set ToolRegistry({kind}=...), even one that declines, "
        "and connect again; the per-call callback then overrides it"
        if per_call_only
        else f"set ToolRegistry({kind}=...) or ToolContext.{kind}"
    )
    if isinstance(request, ElicitationRequest):
        wanted = describe_elicitation(request.params)
        return NoCallbackError(
            f"{who} asked for {wanted}, and " + _nobody(per_call_only, caller, kind) + f" ({fix})",
            request=request,
            model_feedback=f"The tool {tool!r} needs {wanted}, but "
            + (f"{caller} did not declare the elicitation capability." if caller else "this host cannot ask the user."),
        )
    return NoCallbackError(
        f"{who} asked the host's model for a completion (sampling), and "
        + _nobody(per_call_only, caller, kind)
        + f" ({fix})",
        request=request,
        model_feedback=f"The tool {tool!r} asked to use the host's model (sampling), "
        + (f"but {caller} did not declare the sampling capability." if caller else "which this host does not allow."),
    )


def _nobody(per_call_only: bool, caller: str | None, kind: str) -> str:
    if caller is not None:
        return f"{caller} did not declare the {kind} capability"
    return "no callback of the call can be reached" if per_call_only else f"the call has no {kind} callback"


def _form_schema(schema: type[pydantic.BaseModel] | Mapping[str, Any] | None) -> dict[str, Any]:
    if schema is None:
        return {"type": "object", "properties": {}}
    if isinstance(schema, type) and issubclass(schema, pydantic.BaseModel):
        return schema.model_json_schema()
    if isinstance(schema, Mapping):
        return dict(schema)
    raise TypeError(f"schema must be a pydantic model class or a JSON Schema dict, not {type(schema).__name__}")


async def elicit(
    ctx: Asker,
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
    result = await run_callback(ctx.elicitation, request, "elicitation")
    if not isinstance(result, mcp_types.ElicitResult):
        raise wrong_answer(ctx.elicitation, "elicitation", result, mcp_types.ElicitResult)
    check_form_answer(request, result, {})  # a native tool gets the host's answer as given (defaults not filled)
    return result


def _message(item: str | mcp_types.SamplingMessage) -> mcp_types.SamplingMessage:
    if isinstance(item, str):
        return mcp_types.SamplingMessage(role="user", content=mcp_types.TextContent(type="text", text=item))
    return item


async def sample(
    ctx: Asker,
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
    result = await run_callback(ctx.sampling, request, "sampling")
    if not isinstance(result, mcp_types.CreateMessageResult):
        raise wrong_answer(ctx.sampling, "sampling", result, mcp_types.CreateMessageResult)
    return result


async def log(ctx: Asker, level: str, data: Any, logger: str | None) -> None:
    """``ToolContext.log``: a record on ``toolmesh.tool.<name>``, and the message to ``ctx.on_log``.

    Raises:
        ValueError: ``level`` is not one of the eight MCP levels (in any case) or an alias.
    """
    asked = level
    level = level.lower() if isinstance(level, str) else level
    level = _ALIASES.get(level, level)
    python_level = LEVELS.get(level)
    if python_level is None:
        raise ValueError(f"ctx.log: unknown log level {asked!r}; use one of {', '.join(LEVELS)} (or warn, fatal)")
    records = logging.getLogger(f"toolmesh.tool.{ctx.tool_name or 'unnamed'}")
    if records.isEnabledFor(python_level):
        records.log(python_level, "%s", data, extra={"mcp_level": level, "mcp_logger": logger})
    if ctx.on_log is not None:
        await ctx.on_log(LogMessage(level, data, logger, ctx.call_id, ctx.tool_name, None))
