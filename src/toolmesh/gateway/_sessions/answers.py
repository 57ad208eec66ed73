"""A client's answer to a server-to-client request, routed to the replica that asked.

On 2025-11-25 a tool that elicits or samples mid-call sends a request to the client on
the call's SSE stream; the client answers with a new POST, which the load balancer may
send to any replica. The replica that asked is named in the request's id: a session's
outgoing requests are renamed ``tm~<replica>~<n>`` on their way out (``TaggedWrites``),
where ``n`` is the id the SDK's dispatcher gave them. An incoming answer
(``UntaggedReads``) whose id names this replica is renamed back to ``n`` and goes to the
dispatcher waiting for it; one naming another replica is published on that replica's
answers channel (``SessionStore.forward_answer``), and the manager there posts it to its
own copy of the session.

Both wrappers keep the SDK's stream protocols (``ReadStream`` / ``WriteStream`` of
``mcp.shared``), including the sender's ``contextvars`` context the reader exposes as
``last_context``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

__all__ = ["TaggedWrites", "UntaggedReads", "answer_owner"]

_TAG = "tm~"


def _tagged(replica: str, request_id: Any) -> str:
    return f"{_TAG}{replica}~{request_id}"


def answer_owner(request_id: Any) -> tuple[str, int] | None:
    """(replica, the dispatcher's own id) of a tagged id; None for any other id."""
    if not isinstance(request_id, str) or not request_id.startswith(_TAG):
        return None
    replica, _, number = request_id[len(_TAG) :].partition("~")
    if not replica or not number.isdigit() or len(number) > 18:
        return None
    return replica, int(number)


class _Wrapped:
    """A transport stream wrapped: closing (and leaving ``async with``) closes the stream inside."""

    def __init__(self, inner: Any, replica: str) -> None:
        self._inner = inner
        self._replica = replica

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


class TaggedWrites(_Wrapped):
    """The transport's write stream, with this replica's name put into outgoing requests' ids."""

    async def send(self, item: SessionMessage, /) -> None:
        message = item.message
        if isinstance(message, JSONRPCRequest) and isinstance(message.id, int):
            message = message.model_copy(update={"id": _tagged(self._replica, message.id)})
            item = SessionMessage(message, metadata=item.metadata)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            params = dict(message.params or {})
            if isinstance(params.get("requestId"), int):  # the server cancels only requests of its own
                params["requestId"] = _tagged(self._replica, params["requestId"])
                item = SessionMessage(message.model_copy(update={"params": params}), metadata=item.metadata)
        await self._inner.send(item)


class UntaggedReads(_Wrapped):
    """The transport's read stream, with answers to this replica's requests renamed back, and others forwarded."""

    def __init__(self, inner: Any, replica: str, forward: Callable[[str, str], Awaitable[None]]) -> None:
        """Args:
        inner: The transport's read stream.
        replica: This replica's name.
        forward: Sends (replica, the answer as JSON) to the replica that asked.
        """
        super().__init__(inner, replica)
        self._forward = forward
        self.last_context = None

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item: SessionMessage | Exception = await self._inner.receive()
            self.last_context = getattr(self._inner, "last_context", None)
            if not isinstance(item, SessionMessage):
                return item
            message = item.message
            if not isinstance(message, JSONRPCResponse | JSONRPCError):
                return item
            owner = answer_owner(message.id)
            if owner is None:
                return item
            replica, number = owner
            if replica == self._replica:
                return SessionMessage(message.model_copy(update={"id": number}), metadata=item.metadata)
            await self._forward(replica, message.model_dump_json(by_alias=True, exclude_none=True))

    def __aiter__(self) -> UntaggedReads:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
