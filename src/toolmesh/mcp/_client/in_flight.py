"""The calls in flight on one MCP session, and routing a server's requests and logs to the right one.

A server asks the client for user input (``elicitation/create``) or a completion
(``sampling/createMessage``) and sends log messages (``notifications/message``) while a
call runs; toolmesh hands each to the callbacks of the call that caused it, with its call
id and row name. How the call is found:

* the call's own context: each call runs its ``tools/call`` inside ``InFlight.enter``,
  which sets a context variable. The SDK handles an incoming message in a copy of the
  context of the task that put it on the read stream; over Streamable HTTP that is the
  task of the call's POST (a copy of the caller's), so whatever the server sends on the
  call's own SSE stream belongs to that call, exactly, however many calls are in flight.
  The same holds in-process (the server handles the call in a copy of the caller's context);
* otherwise (stdio, where the JSON-RPC messages say nothing of the call they belong to;
  the HTTP GET stream) the session's table: with one call in flight it is that call; with
  none or several, a request is refused with an error saying why (never guessed), and a
  log message goes to the server's logger only.

On 2026-07-28 a server asks inside the call's own result (``InputRequiredResult``), which
``_input_rounds`` answers in the call's own task: always exact.

A callback that raises, or that is still running when its call ends (timeout,
cancellation), gives the server an error answer; the call is not broken by it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import anyio
import mcp_types
import pydantic

from toolmesh._context.asking import describe_elicitation, no_callback, run_callback, wrong_answer
from toolmesh._context.context import ElicitationRequest, LogMessage, SamplingRequest
from toolmesh._context.forms import check_form_answer
from toolmesh._core.errors import ErrorKind, NoCallbackError, ToolExecutionError
from toolmesh._core.metadata import MCP_ASKED

if TYPE_CHECKING:
    from mcp.client.session import ClientRequestContext

    from toolmesh._context.context import ElicitationCallback, LogCallback, SamplingCallback
    from toolmesh.mcp._spec.secrets import Secrets

__all__ = ["InFlight", "InFlightCall", "call_wants_logs", "no_current_call"]

logger = logging.getLogger("toolmesh.mcp")

_P = TypeVar("_P", bound=pydantic.BaseModel)
_KINDS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling"}
_KIND_OF = {ElicitationRequest: "elicitation", SamplingRequest: "sampling"}
_CURRENT: ContextVar[InFlightCall | None] = ContextVar("toolmesh_mcp_call", default=None)


def no_current_call() -> None:
    """Make this task's context (and the tasks it starts) belong to no call: for a session's supervisor."""
    _CURRENT.set(None)


def call_wants_logs() -> bool:
    """Whether the call sending a request from this task has an ``on_log`` callback."""
    call = _CURRENT.get()
    return call is not None and call.on_log is not None


@dataclass(eq=False, slots=True)
class InFlightCall:
    """One ``tools/call`` in flight: who made it and which callbacks answer its server."""

    call_id: str
    tool_name: str
    server: str
    elicitation: ElicitationCallback | None
    sampling: SamplingCallback | None
    on_log: LogCallback | None
    metadata: dict[str, Any]
    """The call's ``ctx.metadata``: what the server asked is noted under ``mcp.asked``."""
    table: InFlight | None = None
    unreachable: tuple[str, ...] = ()
    """Kinds (``elicitation``, ``sampling``) of the call's own callbacks its server cannot reach:
    the registry has no default, so the capability was not declared."""
    refused: str | None = None
    """Why a request of the server was refused while this call was one of several in flight."""
    _answering: set[anyio.CancelScope] = field(default_factory=set)

    def note(self, note: dict[str, Any]) -> None:
        """Record on the call's metadata (``mcp.asked``) what its server asked."""
        self.metadata.setdefault(MCP_ASKED, []).append(note)

    async def answer(
        self, request: mcp_types.ElicitRequest | mcp_types.CreateMessageRequest | mcp_types.ListRootsRequest
    ) -> mcp_types.ElicitResult | mcp_types.CreateMessageResult:
        """The call's callback's answer to one request of its server (its text redacted first).

        Raises:
            NoCallbackError: the call has no callback for it.
            ToolExecutionError: the callback raised, answered with the wrong type, or was
                still running when the call ended; or the server asked for roots.
        """
        if isinstance(request, mcp_types.ListRootsRequest):
            self.note({"kind": "roots", "answered": False, "reason": "toolmesh offers no roots"})
            raise ToolExecutionError(
                f"MCP server {self.server!r} asked for roots (roots/list), which toolmesh does not offer",
                kind=ErrorKind.UPSTREAM_ERROR,
                model_feedback=f"The tool {self.tool_name!r} asked for something this host does not offer.",
            )
        if isinstance(request, mcp_types.ElicitRequest):
            params = self._redacted(request.params)
            note: dict[str, Any] = {"kind": "elicitation", "mode": params.mode, "message": params.message}
            if isinstance(params, mcp_types.ElicitRequestURLParams):
                note["url"] = params.url
            asked: ElicitationRequest | SamplingRequest = ElicitationRequest(
                params, self.call_id, self.tool_name, self.server
            )
            callback: Any = self.elicitation
            expected: type[Any] = mcp_types.ElicitResult
            what = f"an elicitation ({describe_elicitation(params)})"
        else:
            sampling = self._redacted(request.params)
            note = {"kind": "sampling", "message": _first_text(sampling)}
            asked = SamplingRequest(sampling, self.call_id, self.tool_name, self.server)
            callback, expected, what = self.sampling, mcp_types.CreateMessageResult, "a sampling request"
        self.note(note)
        if callback is None:
            note.update(answered=False, reason="no callback")
            raise no_callback(asked, per_call_only=note["kind"] in self.unreachable)
        result = await self._run(callback, asked, what, note)
        if not isinstance(result, expected):
            note.update(answered=False, reason="callback answered with the wrong type")
            raise wrong_answer(callback, note["kind"], result, expected)
        if isinstance(asked, ElicitationRequest):
            # SEP-1034: a field the host left out is at its default; checked before the answer reaches the server
            result = check_form_answer(asked, result, note)

        note["answered"] = True
        if isinstance(result, mcp_types.ElicitResult):
            note["action"] = result.action
            return result
        note["model"] = result.model
        return cast("mcp_types.CreateMessageResult", result)

    def _redacted(self, params: _P) -> _P:
        """A request's params with the spec's secrets starred out (they go to the user or a model)."""
        secrets = self.table.secrets if self.table is not None else None
        if secrets is None:
            return params
        try:
            return secrets.redact_model(params)
        except ValueError as exc:
            raise ToolExecutionError(
                f"MCP server {self.server!r}: {exc}", kind=ErrorKind.UPSTREAM_ERROR, cause=exc
            ) from exc

    async def _run(self, callback: Any, asked: Any, what: str, note: dict[str, Any]) -> Any:
        """Run a callback, bounded by the call: when the call ends, a running callback is cancelled."""
        scope = anyio.CancelScope()
        self._answering.add(scope)
        try:
            with scope:
                return await run_callback(callback, asked, _KIND_OF[type(asked)])
        except anyio.get_cancelled_exc_class():
            note.update(answered=False, reason="the call ended first")  # its timeout, or the caller cancelled
            raise
        except NoCallbackError:  # the callback says no one can answer: its own words, not "the callback failed"
            note.update(answered=False, reason="no callback")
            raise
        except Exception as exc:
            note.update(answered=False, reason=f"callback raised {type(exc).__name__}")
            logger.warning("the host's callback for %s of MCP server %r failed", what, self.server, exc_info=exc)
            raise ToolExecutionError(
                f"the host's callback for {what} of MCP server {self.server!r} raised {type(exc).__name__}: {exc}",
                kind=ErrorKind.INTERNAL,
                model_feedback=f"The tool {self.tool_name!r} asked the host for {what.split(' (')[0]}, "
                "and the host could not answer.",
                cause=exc,
            ) from exc
        finally:
            self._answering.discard(scope)
        note.update(answered=False, reason="the call ended first")
        raise ToolExecutionError(
            f"the call ended before the host answered {what} of MCP server {self.server!r}",
            kind=ErrorKind.CANCELLED,
        )

    def end(self) -> None:
        """The call is over: cancel callbacks still answering its server."""
        for scope in self._answering:
            scope.cancel()


def _first_text(params: mcp_types.CreateMessageRequestParams) -> str | None:
    for message in params.messages:
        content = message.content
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, mcp_types.TextContent):
                return block.text
    return None


class InFlight:
    """The calls in flight on one session, and the SDK callbacks that route to them."""

    def __init__(self, label: str, secrets: Secrets | None = None) -> None:
        self.label = label
        self.secrets = secrets if secrets else None
        self._calls: set[InFlightCall] = set()

    def __len__(self) -> int:
        return len(self._calls)

    @contextmanager
    def enter(self, call: InFlightCall) -> Iterator[InFlightCall]:
        """Hold ``call`` in flight (and current in this task's context) while the block runs."""
        call.table = self
        self._calls.add(call)
        token = _CURRENT.set(call)
        try:
            yield call
        finally:
            _CURRENT.reset(token)
            self._calls.discard(call)
            call.end()

    def find(self) -> InFlightCall | str:
        """The call a message from the server belongs to, or why it cannot be told."""
        current = _CURRENT.get()
        if current is not None and current.table is self:
            return current
        calls = self._calls
        if len(calls) == 1:
            return next(iter(calls))
        if not calls:
            return "no call to this server is in flight"
        return (
            f"{len(calls)} calls are in flight on this session and the request does not say which one it "
            "belongs to (a 2025-11-25 request over stdio carries no link to its call)"
        )

    async def on_elicitation(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """The SDK's elicitation callback (2025-11-25 server-to-client requests)."""
        answer = await self._route(mcp_types.ElicitRequest(params=params), "an elicitation")
        assert isinstance(answer, mcp_types.ElicitResult | mcp_types.ErrorData)
        return answer

    async def on_sampling(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        """The SDK's sampling callback (2025-11-25 server-to-client requests)."""
        answer = await self._route(mcp_types.CreateMessageRequest(params=params), "a sampling request")
        assert isinstance(answer, mcp_types.CreateMessageResult | mcp_types.ErrorData)
        return answer

    async def _route(
        self, request: mcp_types.ElicitRequest | mcp_types.CreateMessageRequest, what: str
    ) -> mcp_types.ElicitResult | mcp_types.CreateMessageResult | mcp_types.ErrorData:
        call = self.find()
        if isinstance(call, str):
            logger.warning("MCP server %r sent %s that toolmesh refused: %s", self.label, what, call)
            for candidate in self._calls:  # each may be the one that asked: tell them all it was refused
                candidate.note({"kind": _KINDS[request.method], "answered": False, "reason": call})
                candidate.refused = call
            return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=f"toolmesh: {call}")
        try:
            return await call.answer(request)
        except NoCallbackError as exc:
            return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=f"toolmesh: {exc.message}")
        except ToolExecutionError as exc:
            reason = "the call ended first" if exc.kind is ErrorKind.CANCELLED else "its callback failed"
            message = f"toolmesh: the host could not answer ({reason})"
            return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message=message)

    async def log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        """Hand a server's log message to the ``on_log`` of the call it belongs to, if known."""
        call = self.find()
        if isinstance(call, str) or call.on_log is None:
            return
        data: Any = params.data
        if self.secrets is not None:
            try:
                data = self.secrets.redact_model(params).data
            except ValueError:
                data = "(withheld: holds a configured secret too deeply nested to mask)"
        message = LogMessage(params.level, data, params.logger, call.call_id, call.tool_name, call.server)
        try:
            await call.on_log(message)
        except Exception:
            logger.warning("the on_log callback of call %r failed", call.call_id, exc_info=True)
