"""Elicitation and sampling for 2026-07-28 clients: a call parked between the client's input rounds.

On 2026-07-28 a server cannot send a request to the client; it answers ``tools/call``
with an ``InputRequiredResult`` (the questions, and an opaque ``requestState``) and
the client calls again with its answers. A tool behind the gateway asks in the middle
of its run (an upstream server's elicitation reaching ``ctx.elicitation``), so the
call cannot restart: it runs in a task of the gateway's, and each of the client's
requests waits for its next event, the call's result or its next question.

* A request waiting for the call is its lifeline: when the client drops it (or the
  request is cancelled), the call is cancelled, as any cancelled call is.
* Between rounds the call is parked under an unguessable ``requestState``, held in
  this process; with a shared state backend, a retry reaching another replica is handed
  to this one (``handoff``), else it is refused and the tool must be called again. A
  client that does not come back within ``ROUND_TIMEOUT`` seconds gets its question
  answered by a failure, which ends the call.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.exceptions import MCPError

from toolmesh._context.context import ElicitationRequest, SamplingRequest, ToolContext

from .handoff import Handoff

__all__ = ["ROUND_TIMEOUT", "InputRounds"]

ROUND_TIMEOUT = 300.0
"""Seconds a parked call waits for the client to answer its question."""

_Event = tuple[str, mcp_types.InputRequest | None, mcp_types.CallToolResult | None]
"""(question key, question, None) or ("", None, result)."""


@dataclass(eq=False)
class _Parked:
    """One call of a 2026-07-28 client that may ask it questions."""

    name: str
    send: MemoryObjectSendStream[_Event]
    receive: MemoryObjectReceiveStream[_Event]
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    answers: dict[str, anyio.Event] = field(default_factory=dict)
    given: dict[str, mcp_types.InputResponse] = field(default_factory=dict)
    asked: int = 0

    async def ask(self, question: mcp_types.InputRequest) -> mcp_types.InputResponse:
        self.asked += 1
        key = f"q{self.asked}"
        answered = self.answers[key] = anyio.Event()
        await self.send.send((key, question, None))
        with anyio.fail_after(ROUND_TIMEOUT):
            await answered.wait()
        return self.given.pop(key)


class InputRounds:
    """The parked calls of a gateway, and the task group their calls run in."""

    def __init__(self) -> None:
        self._parked: dict[str, _Parked] = {}
        self.group: anyio.abc.TaskGroup | None = None
        """Where calls run; set while the gateway runs (without it, 2026-07-28 clients are not asked)."""
        self.handoff: Handoff | None = None
        """Hands retries between replicas (a shared state backend); None: parked calls are this process's."""

    def __len__(self) -> int:
        return len(self._parked)

    async def call(
        self,
        params: mcp_types.CallToolRequestParams,
        run: Callable[[Callable[[ToolContext[Any]], None]], Awaitable[mcp_types.CallToolResult]],
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """Start a call (``run(arm)``, ``arm`` giving its context the asking callbacks), or resume a parked one."""
        if params.request_state is not None:
            holder = self.handoff.holder(params.request_state) if self.handoff is not None else None
            if holder is not None and params.request_state not in self._parked:
                return await self.handoff.forward(holder, params)  # type: ignore[union-attr]
            return await self.resume(params)
        assert self.group is not None
        send, receive = anyio.create_memory_object_stream[_Event](1)
        parked = _Parked(params.name, send, receive)
        token = self.handoff.token() if self.handoff is not None else secrets.token_urlsafe(32)
        self._parked[token] = parked

        def arm(ctx: ToolContext[Any]) -> None:
            ctx.elicitation = _elicitation(parked)
            ctx.sampling = _sampling(parked)

        async def runner() -> None:
            result = mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text="The call was cancelled.")], is_error=True
            )
            try:
                with parked.scope:
                    result = await run(arm)
            finally:
                self._parked.pop(token, None)
                with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                    send.send_nowait(("", None, result))  # for the request waiting, if one is
                send.close()

        self.group.start_soon(runner, name=f"toolmesh gateway call {params.name!r}")
        return await self._next(token, parked)

    async def resume(
        self, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """A retry (``params.request_state`` set) of a call parked here: its answers given, the call's next event."""
        token = params.request_state or ""
        parked = self._parked.get(token)
        if parked is None or parked.name != params.name:
            raise MCPError(
                mcp_types.INVALID_PARAMS,
                "unknown or expired requestState: call the tool again without it",
            )
        self._answer(parked, params.input_responses or {})
        return await self._next(token, parked)

    def _answer(self, parked: _Parked, responses: dict[str, mcp_types.InputResponse]) -> None:
        waiting = [key for key, event in parked.answers.items() if not event.is_set()]
        missing = [key for key in waiting if key not in responses]
        if missing:
            raise MCPError(mcp_types.INVALID_PARAMS, f"inputResponses lacks the answers to {missing!r}")
        for key in waiting:
            parked.given[key] = responses[key]
            parked.answers[key].set()

    async def _next(self, token: str, parked: _Parked) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        """Wait for the call's next question or its result; a cancelled wait cancels the call."""
        try:
            key, question, result = await parked.receive.receive()
        except anyio.get_cancelled_exc_class():
            parked.scope.cancel()
            raise
        except anyio.EndOfStream:
            raise MCPError(mcp_types.INVALID_PARAMS, "the call already ended: call the tool again") from None
        if result is not None:
            return result
        assert question is not None
        return mcp_types.InputRequiredResult(input_requests={key: question}, request_state=token)


def _elicitation(parked: _Parked) -> Callable[[ElicitationRequest], Awaitable[mcp_types.ElicitResult]]:
    async def elicit(asked: ElicitationRequest) -> mcp_types.ElicitResult:
        answer = await parked.ask(mcp_types.ElicitRequest(params=asked.params))
        if isinstance(answer, mcp_types.ElicitResult):
            return answer
        return mcp_types.ElicitResult.model_validate(answer.model_dump(by_alias=True, exclude_none=True))

    return elicit


def _sampling(parked: _Parked) -> Callable[[SamplingRequest], Awaitable[mcp_types.CreateMessageResult]]:
    async def sample(asked: SamplingRequest) -> mcp_types.CreateMessageResult:
        answer = await parked.ask(mcp_types.CreateMessageRequest(params=asked.params))
        if isinstance(answer, mcp_types.CreateMessageResult):
            return answer
        return mcp_types.CreateMessageResult.model_validate(answer.model_dump(by_alias=True, exclude_none=True))

    return sample
