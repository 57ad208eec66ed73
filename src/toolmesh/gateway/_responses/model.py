"""One Chat Completions call to the upstream model, streamed or not, read into one ``Completion``.

Streamed, the text is handed to ``on_text`` piece by piece as the upstream sends it (so
the endpoint can relay it), and tool calls are assembled from their deltas. Leaving
early (the client went away) closes the upstream response, which stops the model.

The request goes out with the SDK client's ``post`` (its retries, errors, auth and SSE
decoding, answers parsed into ``ChatCompletion``/``ChatCompletionChunk``) rather than
``chat.completions.create``, whose per-call transformation of the parameters (the
messages and every tool schema walked against the SDK's TypedDicts) costs ~3 ms a call
here: the body is built by the gateway already in the wire shape.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai
from openai import AsyncOpenAI, AsyncStream
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from .request import RequestError

__all__ = ["Completion", "complete", "upstream_failure"]

logger = logging.getLogger("toolmesh.gateway")


@dataclass
class Completion:
    """The upstream's answer: text, tool calls (``{id, name, arguments}``), finish reason, usage."""

    text: str = ""
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Any = None

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
) -> Completion:
    """Call ``chat.completions.create(**params)``; streamed when ``on_text`` is given.

    Raises:
        openai.APIError: as the SDK raises it (the endpoint turns it into a failed response).
    """
    completion = await (_whole(client, params) if on_text is None else _streamed(client, params, on_text))
    _ensure_ids(completion.tool_calls)
    return completion


def _ensure_ids(calls: list[dict[str, str]]) -> None:
    """Give every call a distinct id: some servers send none, or the same one for every call."""
    seen: set[str] = set()
    for call in calls:
        if not call["id"] or call["id"] in seen:
            call["id"] = f"call_{secrets.token_hex(8)}"
        seen.add(call["id"])


async def _whole(client: AsyncOpenAI, params: dict[str, Any]) -> Completion:
    completion = await client.post("/chat/completions", body=params, cast_to=ChatCompletion)
    choice = completion.choices[0] if completion.choices else None
    out = Completion(usage=completion.usage)
    if choice is not None:
        out.finish_reason = choice.finish_reason
        out.text = choice.message.content or ""
        for call in choice.message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is not None:
                out.tool_calls.append({"id": call.id, "name": function.name, "arguments": function.arguments})
    return out


async def _streamed(
    client: AsyncOpenAI, params: dict[str, Any], on_text: Callable[[str], Awaitable[None]]
) -> Completion:
    out = Completion()
    calls: dict[int, dict[str, str]] = {}
    body = {**params, "stream": True, "stream_options": {"include_usage": True}}
    stream = await client.post(
        "/chat/completions",
        body=body,
        cast_to=ChatCompletion,
        stream=True,
        stream_cls=AsyncStream[ChatCompletionChunk],
    )
    async with stream:
        async for chunk in stream:
            if chunk.usage is not None:
                out.usage = chunk.usage
            for choice in chunk.choices:
                if choice.finish_reason is not None:
                    out.finish_reason = choice.finish_reason
                delta = choice.delta
                if delta.content:
                    out.text += delta.content
                    await on_text(delta.content)
                for piece in delta.tool_calls or []:
                    call = calls.setdefault(piece.index, {"id": "", "name": "", "arguments": ""})
                    if piece.id:
                        call["id"] = piece.id
                    if piece.function is not None:
                        call["name"] += piece.function.name or ""
                        call["arguments"] += piece.function.arguments or ""
    out.tool_calls = [calls[index] for index in sorted(calls)]
    return out


def upstream_failure(exc: openai.APIError, upstream: str) -> RequestError:
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
