"""A 2026-07-28 client's retry of a parked call, handed to the replica that holds the call.

A call parked between input rounds (``rounds``) lives in the task of the replica that
started it; the client's retry carries the call's ``requestState`` and may reach any
replica. With a shared state backend, a ``requestState`` starts with the name of the
replica that holds the call (``<replica>.<secret>``). A retry reaching another replica is
published on the holder's channel ``rounds:<replica>`` with a reply channel of its own;
the holder resumes the call as if the retry had come to it, and publishes the call's next
event (its next question, or its result) or the error on the reply channel.

The holder acknowledges a retry at once; without an acknowledgment within ``ACK_TIMEOUT``
seconds (the replica is gone, and the call with it), the retry is refused and the client
calls the tool again, as it must after any lost call. A retry the client drops on the
replica it reached is dropped on the holder too (a ``cancel`` message), which cancels
the call, as dropping the retry on the holder itself would.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import mcp_types
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from toolmesh._state.backend import Resync, StateBackend
from toolmesh._state.errors import StateUnavailableError

__all__ = ["ACK_TIMEOUT", "Handoff"]

logger = logging.getLogger("toolmesh.gateway")

ACK_TIMEOUT = 5.0
"""Seconds the holder of a parked call has to acknowledge a retry handed to it."""
_Outcome = mcp_types.CallToolResult | mcp_types.InputRequiredResult
_Resume = Callable[[mcp_types.CallToolRequestParams], Awaitable[_Outcome]]
_GONE = "the replica holding this call is gone (or the call ended): call the tool again without requestState"


class Handoff:
    """This replica's side of handing retries of parked calls between replicas (module docstring)."""

    def __init__(self, state: StateBackend, replica: str, round_timeout: float) -> None:
        self._state = state
        self.replica = replica
        self._round_timeout = round_timeout
        self._handed: dict[str, anyio.CancelScope] = {}
        """Reply channel -> the scope of the handed retry being answered here."""

    def __repr__(self) -> str:
        return f"Handoff(replica={self.replica!r})"

    def token(self) -> str:
        """A new ``requestState`` naming this replica."""
        return f"{self.replica}.{secrets.token_urlsafe(32)}"

    def holder(self, token: str) -> str | None:
        """The replica a ``requestState`` names, when it is another one than this."""
        replica, dot, _ = token.partition(".")
        return replica if dot and replica and replica != self.replica and len(replica) <= 64 else None

    async def forward(self, replica: str, params: mcp_types.CallToolRequestParams) -> _Outcome:
        """Hand the retry ``params`` to ``replica`` and return the call's next event from there."""
        reply = f"rounds-reply:{secrets.token_hex(16)}"
        request = {"reply": reply, "params": params.model_dump(mode="json", by_alias=True, exclude_none=True)}
        try:
            async with self._state.subscribe(reply) as messages:
                await self._state.publish(f"rounds:{replica}", json.dumps(request).encode())
                try:
                    return await self._wait(messages)
                except anyio.get_cancelled_exc_class():
                    with anyio.CancelScope(shield=True), anyio.move_on_after(ACK_TIMEOUT):
                        await self._state.publish(f"rounds:{replica}", json.dumps({"cancel": reply}).encode())
                    raise
        except StateUnavailableError as exc:
            raise MCPError(mcp_types.INTERNAL_ERROR, f"{exc}: retry shortly") from exc

    async def _wait(self, messages: AsyncIterator[bytes | Resync]) -> _Outcome:
        """The holder's acknowledgment, then its answer."""
        acknowledged = False
        with anyio.move_on_after(ACK_TIMEOUT) as ack_wait:
            async for message in messages:
                if not isinstance(message, bytes):
                    raise MCPError(mcp_types.INTERNAL_ERROR, _GONE)  # RESYNC: the reply may be lost
                data = json.loads(message)
                if data.get("ack") and not acknowledged:
                    acknowledged = True
                    ack_wait.deadline = anyio.current_time() + self._round_timeout + ACK_TIMEOUT
                    continue
                return _outcome(data)
        raise MCPError(mcp_types.INVALID_PARAMS, _GONE)

    async def serve(self, resume: _Resume, group: anyio.abc.TaskGroup) -> None:
        """Take the retries other replicas hand to this one, each in a task of ``group``; runs until cancelled."""
        while True:
            try:
                async with self._state.subscribe(f"rounds:{self.replica}") as messages:
                    async for message in messages:
                        if isinstance(message, bytes):
                            group.start_soon(self._answer, resume, message, name="toolmesh gateway: a handed retry")
            except StateUnavailableError as exc:
                logger.warning("%s", exc)
                await anyio.sleep(1.0)

    async def _answer(self, resume: _Resume, message: bytes) -> None:
        try:
            data = json.loads(message)
            if "cancel" in data:  # the client dropped the retry on the replica it reached
                scope = self._handed.get(str(data["cancel"]))
                if scope is not None:
                    scope.cancel()
                return
            reply = str(data["reply"])
            params = mcp_types.CallToolRequestParams.model_validate(data["params"], by_name=False)
        except (ValueError, KeyError, TypeError, ValidationError):
            return
        if not reply.startswith("rounds-reply:"):
            return
        answer: dict[str, Any]
        scope = self._handed[reply] = anyio.CancelScope()
        try:
            with scope:  # cancelled: the call is cancelled, as a dropped retry cancels it here
                await self._state.publish(reply, b'{"ack": true}')
                outcome = await resume(params)
                kind = "input" if isinstance(outcome, mcp_types.InputRequiredResult) else "result"
                answer = {kind: outcome.model_dump(mode="json", by_alias=True, exclude_none=True)}
            if scope.cancelled_caught:
                return
        except MCPError as exc:
            answer = {"error": {"code": exc.error.code, "message": exc.error.message}}
        except StateUnavailableError as exc:
            logger.warning("a handed retry could not be answered: %s", exc)
            return
        finally:
            self._handed.pop(reply, None)
        try:
            await self._state.publish(reply, json.dumps(answer).encode())
        except StateUnavailableError as exc:
            logger.warning("a handed retry's answer could not be sent: %s", exc)


def _outcome(data: dict[str, Any]) -> _Outcome:
    """The call's next event from the holder's reply (raises its error)."""
    if "input" in data:
        return mcp_types.InputRequiredResult.model_validate(data["input"], by_name=False)
    if "result" in data:
        return mcp_types.CallToolResult.model_validate(data["result"], by_name=False)
    error = data.get("error") or {}
    raise MCPError(int(error.get("code", mcp_types.INTERNAL_ERROR)), str(error.get("message", _GONE)))
