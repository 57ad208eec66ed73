"""One Chat Completions call to the upstream model, streamed or not, read into one ``Completion``.

Streamed, the text is handed to ``on_text`` piece by piece as the upstream sends it (so
the endpoint can relay it), and tool calls are assembled from their deltas. Leaving
early (the client went away) closes the upstream response, which stops the model.

The request goes out with the SDK client's ``post`` (its auth, headers and errors for
error statuses) rather than ``chat.completions.create``, whose per-call transformation
of the parameters (the messages and every tool schema walked against the SDK's
TypedDicts) costs ~3 ms a call here: the body is built by the gateway already in the
wire shape.

The upstream is untrusted like any peer: the reply is taken from the SDK unread and read
here within ``max_bytes`` (the whole answer, or every event of a stream, which httpx2's
``EventSource`` splits with a bound per event), each JSON document is refused unparsed
when nested deeper than ``max_depth``, and only strings, numbers and lists of the
expected places are taken from it. Anything else is an ``UpstreamReplyError``, which the
endpoint answers as an upstream failure (a 502, or a ``response.failed`` event).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2
import openai
import pydantic
from openai import AsyncOpenAI
from openai.types import CompletionUsage

from toolmesh._core.json_limits import JsonTooDeep, parse_json

from .request import RequestError

__all__ = [
    "Completion",
    "ReplyLimits",
    "UpstreamReplyError",
    "bound_reply",
    "bounded_client",
    "complete",
    "upstream_failure",
]

logger = logging.getLogger("toolmesh.gateway")


class UpstreamReplyError(Exception):
    """A reply of the upstream model server the gateway refuses: too large, nested too deeply, not JSON, broken off."""


@dataclass(frozen=True, slots=True)
class ReplyLimits:
    """How much of an upstream reply is read."""

    max_bytes: int
    """Bytes of one reply: the whole answer, or every event of a streamed one together."""
    max_depth: int
    """Levels of nested arrays and objects in one JSON document of the reply."""


@dataclass
class Completion:
    """The upstream's answer: text, tool calls (``{id, name, arguments}``), finish reason, usage."""

    text: str = ""
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: CompletionUsage | None = None

    def assistant_message(self) -> dict[str, Any]:
        """The assistant message to send back in the next call's ``messages``."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in self.tool_calls
            ]
        return message


async def complete(
    client: AsyncOpenAI,
    params: dict[str, Any],
    on_text: Callable[[str], Awaitable[None]] | None,
    limits: ReplyLimits,
) -> Completion:
    """``POST /chat/completions`` with ``params``; streamed when ``on_text`` is given.

    Raises:
        openai.APIError: as the SDK raises it (an error status, no connection).
        UpstreamReplyError: for a reply over ``limits``, not JSON, or broken off.
    """
    response = await client.post(
        "/chat/completions",
        body=params if on_text is None else {**params, "stream": True, "stream_options": {"include_usage": True}},
        cast_to=httpx2.Response,
        stream=True,  # the response as it arrives, unread (the SDK has checked its status)
        stream_cls=None,
    )
    bound_reply(response, limits.max_bytes)
    try:
        if on_text is None:
            completion = _whole(_document(await _read(response, limits.max_bytes), limits.max_depth))
        else:
            completion = await _streamed(response, on_text, limits)
    except httpx2.TimeoutException:
        raise UpstreamReplyError("the reply stopped arriving (timed out)") from None
    except httpx2.TransportError as exc:
        raise UpstreamReplyError(f"the reply broke off ({type(exc).__name__})") from None
    finally:
        await response.aclose()
    _ensure_ids(completion.tool_calls)
    return completion


def _ensure_ids(calls: list[dict[str, str]]) -> None:
    """Give every call a distinct id: some servers send none, or the same one for every call."""
    seen: set[str] = set()
    for call in calls:
        if not call["id"] or call["id"] in seen:
            call["id"] = f"call_{secrets.token_hex(8)}"
        seen.add(call["id"])


# -- bounding the bytes ---------------------------------------------------------------------


class _Bounded(httpx2.AsyncByteStream):
    """A response body that raises ``UpstreamReplyError`` once more than ``limit`` bytes arrived."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._limit:
                raise UpstreamReplyError(_too_large(self._limit))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _too_large(limit: int) -> str:
    return f"the reply is larger than {limit:,} bytes (responses.maxReplyBytes)"


def bound_reply(response: httpx2.Response, limit: int) -> None:
    """Make reading ``response``'s body raise ``UpstreamReplyError`` past ``limit`` bytes as sent."""
    if isinstance(response.stream, httpx2.AsyncByteStream) and not isinstance(response.stream, _Bounded):
        response.stream = _Bounded(response.stream, limit)


def bounded_client(limit: int) -> httpx2.AsyncClient:
    """The SDK's default HTTP client, with every response body bounded (also the error bodies the SDK reads)."""

    async def on_response(response: httpx2.Response) -> None:
        bound_reply(response, limit)

    return openai.DefaultAsyncHttpxClient(event_hooks={"response": [on_response]})


async def _read(response: httpx2.Response, limit: int) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_bytes():  # decoded: a compressed reply is bounded as it unpacks
        body += chunk
        if len(body) > limit:
            raise UpstreamReplyError(_too_large(limit))
    return bytes(body)


# -- reading the JSON -----------------------------------------------------------------------


def _document(text: bytes | str, max_depth: int) -> dict[str, Any]:
    """One JSON object of the reply, refused unparsed when nested deeper than ``max_depth``."""
    try:
        data = parse_json(text, max_depth=max_depth)
    except JsonTooDeep:
        raise UpstreamReplyError(
            f"the reply is nested more than {max_depth} levels deep (responses.maxJsonDepth)"
        ) from None
    except ValueError:
        raise UpstreamReplyError("the reply is not JSON") from None
    if not isinstance(data, dict):
        raise UpstreamReplyError("the reply is not a JSON object")
    error = data.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else None
        raise UpstreamReplyError(f"it reported an error: {message if isinstance(message, str) else 'no message'}")
    return data


def _objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _usage(value: Any) -> CompletionUsage | None:
    if not isinstance(value, dict):
        return None
    try:
        return CompletionUsage.model_validate(value)
    except pydantic.ValidationError:
        logger.debug("responses: the upstream's usage record has an unexpected shape; ignored")
        return None


def _whole(data: dict[str, Any]) -> Completion:
    out = Completion(usage=_usage(data.get("usage")))
    choices = _objects(data.get("choices"))
    if not choices:
        return out
    choice = choices[0]
    finish = choice.get("finish_reason")
    out.finish_reason = finish if isinstance(finish, str) else None
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}
    out.text = _text(message.get("content"))
    for call in _objects(message.get("tool_calls")):
        function = call.get("function")
        if isinstance(function, dict):
            name, arguments = _text(function.get("name")), _text(function.get("arguments"))
            out.tool_calls.append({"id": _text(call.get("id")), "name": name, "arguments": arguments})
    return out


async def _streamed(
    response: httpx2.Response, on_text: Callable[[str], Awaitable[None]], limits: ReplyLimits
) -> Completion:
    out = Completion()
    calls: dict[int, dict[str, str]] = {}
    seen = 0
    done = False
    try:
        async for event in httpx2.EventSource(response, max_event_size=limits.max_bytes):
            seen += len(event.data)
            if seen > limits.max_bytes:
                raise UpstreamReplyError(_too_large(limits.max_bytes))
            if done or not event.data:
                continue  # read to the end, so the connection can serve the next call
            if event.data.startswith("[DONE]"):
                done = True
                continue
            chunk = _document(event.data, limits.max_depth)
            if chunk.get("usage") is not None:
                out.usage = _usage(chunk["usage"])
            for choice in _objects(chunk.get("choices")):
                await _delta(out, calls, choice, on_text)
    except httpx2.SSEError as exc:
        raise UpstreamReplyError(f"the streamed reply is not a readable event stream ({exc})") from None
    out.tool_calls = [calls[index] for index in sorted(calls)]
    return out


async def _delta(
    out: Completion,
    calls: dict[int, dict[str, str]],
    choice: dict[str, Any],
    on_text: Callable[[str], Awaitable[None]],
) -> None:
    if isinstance(choice.get("finish_reason"), str):
        out.finish_reason = choice["finish_reason"]
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return
    content = delta.get("content")
    if isinstance(content, str) and content:
        out.text += content
        await on_text(content)
    for piece in _objects(delta.get("tool_calls")):
        index = piece.get("index")
        call = calls.setdefault(index if type(index) is int else 0, {"id": "", "name": "", "arguments": ""})
        if isinstance(piece.get("id"), str) and piece["id"]:
            call["id"] = piece["id"]
        function = piece.get("function")
        if isinstance(function, dict):
            call["name"] += _text(function.get("name"))
            call["arguments"] += _text(function.get("arguments"))


def upstream_failure(exc: openai.APIError | UpstreamReplyError, upstream: str) -> RequestError:
    """The client's error for a failed upstream call, also logged (``toolmesh.gateway``) for the operator.

    A 404 usually means the base URL lacks ``/v1``; a connection failure names the URL. The
    URL is shown without userinfo and nothing carries the API key.
    """
    shown = _without_userinfo(upstream)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code if 400 <= exc.status_code < 500 else 502
        message = f"the upstream model server answered {exc.status_code} at {shown}/chat/completions: {exc.message}"
        if exc.status_code == 404:
            message += " (does --responses-upstream end in /v1? or is the model name one it serves?)"
    elif isinstance(exc, UpstreamReplyError):
        status = 502
        message = f"the upstream model server at {shown} sent a reply the gateway does not read: {exc}"
    elif isinstance(exc, openai.APIConnectionError):
        status = 502
        message = f"cannot reach the upstream model server at {shown} ({exc}); is it running, and is the URL right?"
    else:
        status = 502
        message = f"the upstream model server at {shown} failed: {exc}"
    logger.warning("responses: %s", message)
    return RequestError(message, status=status)


def _without_userinfo(url: str) -> str:
    parts = urlsplit(url.rstrip("/"))
    if "@" not in parts.netloc:
        return url.rstrip("/")
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
