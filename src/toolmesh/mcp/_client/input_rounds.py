"""Sending one ``tools/call``, with the server's requests answered by the call's own callbacks.

The request goes through the SDK session's ``send_request`` (``McpConnection.call_tool``
says why: no hidden ``tools/list``, outputs checked on RE2 by the row). While it is in
flight the call is in the session's ``InFlight`` table, so 2025-11-25 server-to-client
requests and log messages reach its callbacks.

On 2026-07-28 a server that needs input answers with an ``InputRequiredResult``; the
rounds are driven here, in the call's own task (so the callbacks are the call's, exactly,
and bounded by its timeout), the way ``mcp.Client.call_tool`` drives them: each round
answers every request of the result (one after the other, in the server's order) and
resends the call with the answers and the echoed ``requestState``; a result carrying only
state is resent after a short backoff. At most ``MAX_ROUNDS`` rounds: past that the call
fails (``upstream_error``) saying so. A request no callback answers, or whose callback
fails, fails the call at once (2026-07-28 has no way to answer one request with an
error). Unlike ``Client.call_tool``, a ``HEADER_MISMATCH`` rejection (the server's schema
of the tool differs from the one this session listed) is not followed by a re-listing and
resend inside the call: it fails the call like any protocol error and starts a refresh of
the server's rows (which also renews the session's listing), so later calls are sent right.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from toolmesh._core.errors import ErrorKind, ToolExecutionError
from toolmesh._rows import mcp_convert as _convert

from . import tasks as _tasks
from .in_flight import InFlightCall

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT

    from toolmesh._context.context import ToolContext
    from toolmesh._rows.rows import McpEntry

    from .lean_post import LeanPost
    from .session import Session

__all__ = ["MAX_ROUNDS", "send_call"]

MAX_ROUNDS = 8
"""Input-required rounds one call may take (the SDK's default is 10)."""

_NO_BACK_CHANNEL = "this transport context has no back-channel for server-initiated requests"
"""The one text recognized: the official Python SDK's server (``NoBackChannelError``) when a tool
asks the 2025-11-25 way (``ctx.elicit``, ``create_message``) on a 2026-07-28 request."""
_STATE_ONLY_DELAY = 0.05
_STATE_ONLY_DELAY_MAX = 0.25
_RESULT: TypeAdapter[mcp_types.CallToolResult | mcp_types.InputRequiredResult | _tasks.CreatedTask] = TypeAdapter(
    mcp_types.CallToolResult | mcp_types.InputRequiredResult | _tasks.CreatedTask
)


async def send_call(
    session: Session, entry: McpEntry, arguments: dict[str, Any] | None, ctx: ToolContext[Any], lean: bool = True
) -> mcp_types.CallToolResult:
    """The server's result of ``tools/call`` for ``entry``, its requests answered on the way.

    With ``lean`` (and a session that has it, ``Session.lean``), each ``tools/call`` of a
    2026-07-28 session goes out on the lean client path (``lean_post``).

    Raises:
        ToolExecutionError: a request of the server could not be answered, or the rounds
            went over ``MAX_ROUNDS``, or the call failed after a request of its server was
            refused as ambiguous (retryable).
        Exception: whatever the SDK raises for the request (mapped by the caller).
    """
    declared = session.callbacks
    elicits = declared is not None and declared.elicitation is not None
    samples = declared is not None and declared.sampling is not None
    call = InFlightCall(
        ctx.call_id,
        entry.name,
        session.label,
        ctx.elicitation if elicits else None,
        ctx.sampling if samples else None,
        ctx.on_log,
        ctx.metadata,
        unreachable=(("elicitation",) if not elicits and ctx.elicitation is not None else ())
        + (("sampling",) if not samples and ctx.sampling is not None else ()),
    )
    # ctx.progress has ProgressFnT's signature; the SDK types it as a Protocol.
    progress = cast("ProgressFnT | None", ctx.progress)
    post = session.lean if lean and session.lean is not None and session.lean.usable() else None
    if session.turns is None:
        return await _send(session, entry, arguments, ctx, call, progress, post)
    async with session.turns:  # max_concurrent_calls: wait for a turn (within the call's timeout)
        return await _send(session, entry, arguments, ctx, call, progress, post)


async def _send(
    session: Session,
    entry: McpEntry,
    arguments: dict[str, Any] | None,
    ctx: ToolContext[Any],
    call: InFlightCall,
    progress: ProgressFnT | None,
    post: LeanPost | None,
) -> mcp_types.CallToolResult:
    client = session.client
    assert client is not None
    with session.in_flight.enter(call):
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            request = mcp_types.CallToolRequest(
                params=mcp_types.CallToolRequestParams(name=entry.wire_name, arguments=arguments)
            )
            try:
                raw = await _tasks.send(client, request, entry, ctx, progress)  # a task runs to its result
            except MCPError as exc:
                if call.refused is not None:
                    raise _refused(session, entry, call.refused, exc.error.message) from exc
                raise
            if raw.is_error and call.refused is not None:
                raise _refused(session, entry, call.refused, _convert.error_text(raw))
            return raw
        try:
            return await _rounds(session, entry, arguments, call, ctx, progress, post)
        except MCPError as exc:
            if exc.code == mcp_types.HEADER_MISMATCH:
                session.on_tools_changed()  # the listing this session knows is stale: refresh it for later calls
            if _NO_BACK_CHANNEL in exc.error.message:
                raise _no_back_channel(session, entry, exc) from exc
            raise


async def _rounds(
    session: Session,
    entry: McpEntry,
    arguments: dict[str, Any] | None,
    call: InFlightCall,
    ctx: ToolContext[Any],
    progress: ProgressFnT | None,
    post: LeanPost | None,
) -> mcp_types.CallToolResult:
    client = session.client
    assert client is not None
    responses: mcp_types.InputResponses | None = None
    state: str | None = None
    delay = _STATE_ONLY_DELAY
    for rounds in range(MAX_ROUNDS + 1):
        params = mcp_types.CallToolRequestParams(
            name=entry.wire_name, arguments=arguments, input_responses=responses, request_state=state
        )
        if post is not None:  # one POST of its own (the lean client path)
            result = await post.send(params, _RESULT, progress)
        else:
            result = await client.session.send_request(
                mcp_types.CallToolRequest(params=params), _RESULT, progress_callback=progress
            )
        if isinstance(result, mcp_types.CallToolResult):
            return result
        if isinstance(result, _tasks.CreatedTask):  # the server runs the call as a task: poll it to its result
            return await _tasks.resolve(client, result, entry, ctx)
        if rounds == MAX_ROUNDS:
            break
        if result.input_requests:
            delay = _STATE_ONLY_DELAY
            responses = {key: await call.answer(asked) for key, asked in result.input_requests.items()}
        else:
            await anyio.sleep(delay)
            delay = min(delay * 2, _STATE_ONLY_DELAY_MAX)
            responses = None
        state = result.request_state
    raise ToolExecutionError(
        f"MCP server {session.label!r}, tool {entry.wire_name!r} still asked for input after {MAX_ROUNDS} rounds "
        "(InputRequiredResult); the call was given up",
        kind=ErrorKind.UPSTREAM_ERROR,
        model_feedback=f"The tool {entry.name!r} kept asking for more input and was stopped after {MAX_ROUNDS} rounds.",
    )


def _no_back_channel(session: Session, entry: McpEntry, exc: MCPError) -> ToolExecutionError:
    """The server's own error, plus the fix: its tool asks mid-call, which only 2025-11-25 carries."""
    return ToolExecutionError(
        f"MCP server {session.label!r}, tools/call {entry.wire_name!r}: {exc.error.message} The tool asks the "
        "host for input the 2025-11-25 way (as servers written with the official Python SDK do with ctx.elicit "
        'or create_message), which a 2026-07-28 session cannot carry: set protocol="2025-11-25" on its McpServer '
        "(protocolVersion in a config file)",
        kind=ErrorKind.UPSTREAM_ERROR,
        model_feedback=f"The tool {entry.name!r} could not ask for the input it needs: {exc.error.message}",
        cause=exc,
    )


def _refused(session: Session, entry: McpEntry, reason: str, answered: str) -> ToolExecutionError:
    """A call that failed after toolmesh refused its server's request as ambiguous: worth a retry."""
    return ToolExecutionError(
        f"MCP server {session.label!r}, tool {entry.wire_name!r} asked for input that toolmesh refused: {reason}; "
        f"the server answered: {answered}. Set max_concurrent_calls=1 on its McpServer to run its calls one "
        "at a time",
        kind=ErrorKind.UPSTREAM_ERROR,
        retryable=True,
        model_feedback="The server asked for input while other calls were running; try again.",
    )
