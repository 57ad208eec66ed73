"""What toolmesh checks on the wire of an MCP session, in both directions, for every transport.

Outbound, a message that cannot be encoded (text that is not valid Unicode, such as a
lone surrogate) must cost only the call that carries it: ``GuardedWriteStream.send``
encodes in the caller's task and raises ``UnsendableMessage`` there, before the
transport sees the message (the SDK's writers would crash and take the whole session
down with every call in flight).

Inbound, the SDK drops a message it cannot parse (at DEBUG level), and the request it
answered waits out its whole timeout. ``Inbound`` keeps the ids of the requests sent and
not yet answered, so an unreadable answer fails its own request at once with a
local error (``invalid_answer``) saying what was wrong; what cannot be tied to a request
is reported as a fault of the session.

A request sent while its ``Exchange`` holds an ``AnswerGuard`` (a ``tools/list`` page) has
its answer checked here, before the SDK builds objects from it: its bytes against the
guard's ``max_bytes`` before it is parsed at all (the stdio reader, the HTTP response
hook), then its parsed ``result`` by the guard's ``inspect``, which may trim it or refuse
it. A refused answer fails its own request as ``invalid_answer`` does.
"""

from __future__ import annotations

import contextvars
import re
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Protocol, Self

import anyio
import anyio.abc
import mcp_types
import pydantic
from mcp.shared._stream_protocols import WriteStream
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.message import SessionMessage

__all__ = [
    "INVALID_ANSWER",
    "AnswerGuard",
    "Exchange",
    "GuardedReadStream",
    "GuardedWriteStream",
    "Inbound",
    "UnsendableMessage",
    "SCAN_BYTES",
    "TAIL_BYTES",
    "describe_unreadable",
    "encode",
    "exchange",
    "inspected",
    "invalid_answer",
    "top_level",
    "trailing_id",
]

INVALID_ANSWER = "toolmesh: the server's answer could not be read: "
"""Prefix of the local JSON-RPC error that answers a request whose real answer was unreadable."""

_PER_EXCHANGE = 8
"""How many request ids one exchange remembers (a call may send a tools/list before its tools/call)."""

_TRACKED = 4096
"""How many sent-but-unanswered (or cancelled) request ids are remembered per session."""


class AnswerGuard(Protocol):
    """What the sender of a request checks of its answer on the wire, before the SDK reads it."""

    @property
    def max_bytes(self) -> int:
        """The most bytes the answer may have; a longer one is refused before it is parsed."""
        ...

    def too_large(self) -> str:
        """Note that the answer went over ``max_bytes``; the reason its request fails with."""
        ...

    def inspect(self, result: dict[str, Any]) -> str | None:
        """Check (and possibly trim, in place) the parsed ``result``; the reason to refuse it, or None."""
        ...


@dataclass(slots=True)
class Exchange:
    """What the transport saw of one request: kept per call, never per session.

    Set as a context variable by the caller before it sends (``exchange()``); the SDK
    runs each request's HTTP POST in a task that inherits the sender's context, so the
    HTTP layer finds the caller's own ``Exchange`` even with hundreds of calls in flight.
    """

    request_ids: list[mcp_types.RequestId] = field(default_factory=list)
    """The JSON-RPC ids of the requests sent in this exchange (the last few), oldest first."""
    http_status: int | None = None
    """The status of an HTTP error answer (the SDK turns it into a generic error)."""
    too_large: int | None = None
    """The limit (bytes) the answer's body went over, when it did."""
    guard: AnswerGuard | None = None
    """While set, the guard of each request sent in this exchange."""
    own_post: bool = False
    """Set when the request went out on a POST of its own (``lean_post``): its failure is its own,
    never the session's."""


_EXCHANGE: ContextVar[Exchange | None] = ContextVar("toolmesh_mcp_exchange", default=None)


@contextmanager
def exchange() -> Iterator[Exchange]:
    """One request's ``Exchange``, visible to the transport while the block runs in this task."""
    current = Exchange()
    token = _EXCHANGE.set(current)
    try:
        yield current
    finally:
        _EXCHANGE.reset(token)


class UnsendableMessage(ValueError):
    """A message toolmesh refused to send because it cannot be encoded as UTF-8 JSON."""


def encode(message: mcp_types.JSONRPCMessage) -> bytes:
    """The message as UTF-8 JSON (one line: JSON text never holds a raw newline).

    Raises:
        UnsendableMessage: when it holds text that is not valid Unicode (a lone surrogate).
    """
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
    except (ValueError, UnicodeError) as exc:
        what = f"{message.method} request" if isinstance(message, mcp_types.JSONRPCRequest) else "message"
        raise UnsendableMessage(
            f"the {what} cannot be sent: it holds text that is not valid Unicode ({_first_line(exc)})"
        ) from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__


class _ClosesOnExit:
    """``async with stream:`` closes it, as the SDK's streams do."""

    __slots__ = ()

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class GuardedWriteStream(_ClosesOnExit):
    """A transport's write stream that refuses unencodable messages in the sender's task.

    ``send`` runs in the task of whoever sends (the caller of ``call_tool``), so the
    ``UnsendableMessage`` it raises fails only that call; the transport and every other
    call in flight are untouched. Given ``lines``, it hands the encoded line to that
    stream (a transport of toolmesh's own) instead of the message to ``inner``.
    """

    __slots__ = ("_inbound", "_inner", "_lines")

    def __init__(
        self,
        inner: WriteStream[SessionMessage] | None = None,
        inbound: Inbound | None = None,
        lines: anyio.abc.ObjectSendStream[bytes] | None = None,
    ) -> None:
        self._inner = inner
        self._inbound = inbound
        self._lines = lines

    async def send(self, item: SessionMessage, /) -> None:
        """Check that ``item`` can be encoded, then pass it on.

        Raises:
            UnsendableMessage: when it cannot be encoded; nothing is sent.
        """
        data = encode(item.message)
        if self._inbound is not None:
            current = _EXCHANGE.get()
            self._inbound.sent(item.message, current.guard if current is not None else None)
            if current is not None and isinstance(item.message, mcp_types.JSONRPCRequest):
                current.request_ids.append(item.message.id)
                del current.request_ids[:-_PER_EXCHANGE]
        if self._lines is not None:
            await self._lines.send(data + b"\n")
        else:
            assert self._inner is not None
            await self._inner.send(item)

    async def aclose(self) -> None:
        """Close the underlying stream."""
        if self._lines is not None:
            await self._lines.aclose()
        if self._inner is not None:
            await self._inner.aclose()


class GuardedReadStream(_ClosesOnExit):
    """An SDK transport's read stream that ties an answer with a wrong id to its request.

    Over HTTP an answer arrives on the POST of its request, in a task that runs in the
    sender's context; so an answer whose id was never sent is the answer to the request
    of that context's ``Exchange``, which then fails at once instead of waiting out its
    timeout.
    """

    __slots__ = ("_inbound", "_inner")

    def __init__(self, inner: Any, inbound: Inbound) -> None:
        self._inner = inner
        self._inbound = inbound

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last item (the SDK's dispatcher reads it)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        """The next item, with an answer to an id never sent turned into its request's error,
        and a guarded request's answer inspected (``AnswerGuard.inspect``)."""
        item: SessionMessage | Exception = await self._inner.receive()
        if isinstance(item, Exception) or not isinstance(
            item.message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError
        ):
            return item
        wrong = item.message.id
        guard = self._inbound.guard(wrong)
        if self._inbound.answered(wrong) is not False or wrong is None:
            if guard is not None and isinstance(item.message, mcp_types.JSONRPCResponse):
                return inspected(item, guard)
            return item
        context = self.last_context
        sent = context.get(_EXCHANGE) if context is not None else None
        for request_id in reversed(sent.request_ids if sent is not None else ()):
            if self._inbound.method(request_id) is not None:
                self._inbound.answered(request_id)
                return invalid_answer(request_id, f"it answered with id {wrong!r}, not the id of the request")
        return item

    def __aiter__(self) -> GuardedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        """Close the transport's stream."""
        await self._inner.aclose()


def invalid_answer(request_id: mcp_types.RequestId, reason: str) -> SessionMessage:
    """The local error that answers ``request_id`` when its real answer could not be read."""
    error = mcp_types.ErrorData(code=mcp_types.PARSE_ERROR, message=INVALID_ANSWER + reason)
    return SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def inspected(item: SessionMessage, guard: AnswerGuard) -> SessionMessage:
    """A guarded request's answer after its guard's ``inspect``: as it is (perhaps trimmed), or refused."""
    message = item.message
    assert isinstance(message, mcp_types.JSONRPCResponse)
    reason = guard.inspect(message.result)
    return item if reason is None else invalid_answer(message.id, reason)


class Inbound:
    """The requests a session sent and is waiting for, to tie unreadable answers to them, with their guards."""

    __slots__ = ("_cancelled", "_guards", "_outstanding")

    def __init__(self) -> None:
        self._outstanding: OrderedDict[mcp_types.RequestId, str] = OrderedDict()
        self._cancelled: OrderedDict[mcp_types.RequestId, None] = OrderedDict()
        self._guards: dict[mcp_types.RequestId, AnswerGuard] = {}

    @property
    def waiting(self) -> bool:
        """Whether any request sent on the session is still unanswered."""
        return bool(self._outstanding)

    @property
    def guarded(self) -> bool:
        """Whether any request still waiting has a guard."""
        return bool(self._guards)

    @property
    def tightest(self) -> int:
        """The smallest bound of the guarded requests still waiting (asked only while ``guarded``)."""
        return min(guard.max_bytes for guard in self._guards.values())

    def sent(self, message: mcp_types.JSONRPCMessage, guard: AnswerGuard | None = None) -> None:
        """Note an outbound message: a request now waits (with ``guard`` on its answer); a cancellation ends a wait."""
        if isinstance(message, mcp_types.JSONRPCRequest):
            request_id = coerce_request_id(message.id)
            _remember(self._outstanding, request_id, message.method)
            if guard is not None:
                self._guards[request_id] = guard
        elif isinstance(message, mcp_types.JSONRPCNotification) and message.method == "notifications/cancelled":
            cancelled = (message.params or {}).get("requestId")
            if isinstance(cancelled, str | int):
                cancelled = coerce_request_id(cancelled)
                self._guards.pop(cancelled, None)
                if self._outstanding.pop(cancelled, None) is not None:
                    _remember(self._cancelled, cancelled, None)

    def answered(self, request_id: mcp_types.RequestId | None) -> bool | None:
        """Note an answer: True for a waiting request, None for a late one (cancelled), False otherwise."""
        if request_id is None:
            return False
        request_id = coerce_request_id(request_id)
        self._guards.pop(request_id, None)
        if self._outstanding.pop(request_id, None) is not None:
            return True
        if request_id in self._cancelled:  # its value is None: ``pop(..., None)`` could not tell
            del self._cancelled[request_id]
            return None
        return False

    def guard(self, request_id: object) -> AnswerGuard | None:
        """The guard of a request still waiting, or None."""
        if not self._guards or not isinstance(request_id, str | int):
            return None
        return self._guards.get(coerce_request_id(request_id))

    def line_bound(self, line: bytes, default: int) -> tuple[int, bool]:
        """The most bytes the message starting with ``line`` may have, and whether that is known for sure.

        An answer to a guarded request may have its guard's ``max_bytes``; anything else
        ``default``. The id is read from the start of the line (``top_level``); while it
        has not come, and the line is no request or notification of the server's, the line
        can only answer a request still waiting: when each of them is guarded, the largest
        of their bounds holds (not for sure: the id may yet name another).
        """
        request_id, has_method = top_level(line)
        if has_method:
            return default, True
        if request_id is not None:
            guard = self.guard(request_id)
            return (default if guard is None else guard.max_bytes), True
        if self._outstanding and all(key in self._guards for key in self._outstanding):
            return max(guard.max_bytes for guard in self._guards.values()), False
        return default, False

    def method(self, request_id: object) -> str | None:
        """The method of a request still waiting, or None."""
        return self._outstanding.get(coerce_request_id(request_id)) if isinstance(request_id, str | int) else None


def _remember(table: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    table[key] = value
    if len(table) > _TRACKED:
        table.popitem(last=False)


SCAN_BYTES = 64 * 1024
"""Bytes of a line ``top_level`` reads (every JSON-RPC writer puts ``id`` and ``method`` first, or last)."""
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]')
_SCALAR = re.compile(rb'\s*:\s*(-?\d+|"[^"\\]*(?:\\.[^"\\]*)*")')


def top_level(line: bytes) -> tuple[object, bool]:
    """The top-level ``id`` (or None) of a JSON object in ``line``, and whether it has a ``method``.

    Works on text that is not valid JSON, not valid UTF-8, nested too deep for a parser,
    or cut short: it only tracks nesting and the strings at the first level, in the first
    64 KiB (where every JSON-RPC writer puts ``id`` and ``method``, before the payload).
    """
    depth = 0
    found: object = None
    method = False
    for token in _TOKEN.finditer(line, 0, SCAN_BYTES):
        text = token.group()
        if text in (b"{", b"["):
            depth += 1
        elif text in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                break
        elif depth == 1 and text in (b'"id"', b'"method"'):
            value = _SCALAR.match(line, token.end())
            if value is None:
                continue
            if text == b'"method"':
                method = True
            elif found is None:
                raw = value.group(1)
                found = raw[1:-1].decode("utf-8", "replace") if raw.startswith(b'"') else int(raw)
    return found, method


_TRAILING_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$')
TAIL_BYTES = 256
"""Bytes kept of the end of a line too long to keep whole: enough for an ``id`` written last."""


def trailing_id(tail: bytes) -> object:
    """The ``id`` of an answer whose writer put it last, read from the end of its line (or None).

    The TypeScript SDK writes ``{"result": ..., "jsonrpc": "2.0", "id": 2}``. A key right
    before the line's one closing brace belongs to the top-level object: a nested
    object's end would need two.
    """
    match = _TRAILING_ID.search(tail)
    if match is None:
        return None
    raw = match.group(1)
    return raw[1:-1].decode("utf-8", "replace") if raw.startswith(b'"') else int(raw)


def describe_unreadable(line: bytes, exc: ValueError) -> str:
    """What is wrong with a line that is not JSON (``pydantic_core.from_json``'s error) or that the
    SDK's message model rejected (a ``pydantic.ValidationError``), in a few words."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        return f"it is not valid UTF-8 (byte 0x{line[bad.start]:02x} at offset {bad.start})"
    errors = exc.errors(include_url=False, include_input=False) if isinstance(exc, pydantic.ValidationError) else None
    if errors is None or (errors and errors[0]["type"] == "json_invalid"):
        problem = str(exc) if errors is None else errors[0]["msg"].removeprefix("Invalid JSON: ")
        if "recursion limit" in problem:
            return f"it is nested deeper than the JSON parser allows ({problem})"
        return f"it is not JSON ({problem}): {_excerpt(line)}"
    return f"it is not a JSON-RPC response (a `result` object or an `error`): {_excerpt(line)}"


def _excerpt(line: bytes, limit: int = 120) -> str:
    text = line[:limit].decode("utf-8", "replace")
    return repr(text + ("..." if len(line) > limit else ""))
