"""The server-sent events of a streamed response, as the ``openai`` SDK types them, numbered in order.

``Events`` is what the turn tells as it goes (an item added, text arriving, a call
running, an item done). Non-streamed, it tells nobody; streamed, each becomes one
``ResponseStreamEvent`` with the next ``sequence_number``, sent to the client's stream.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["Events", "sse"]


def sse(event: dict[str, Any]) -> bytes:
    """One event in the SSE framing the SDK reads (``event:`` line and ``data:`` JSON)."""
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()


class Events:
    """Tells a streamed response's client what happens; a no-op when ``send`` is None."""

    def __init__(self, send: Callable[[dict[str, Any]], Awaitable[None]] | None = None) -> None:
        self._send = send
        self._sequence = 0

    @property
    def streaming(self) -> bool:
        return self._send is not None

    async def emit(self, kind: str, **fields: Any) -> None:
        """Send one event of type ``kind`` (nothing when not streaming)."""
        if self._send is None:
            return
        event = {"type": kind, "sequence_number": self._sequence, **fields}
        self._sequence += 1
        await self._send(event)

    async def response(self, kind: str, response: dict[str, Any]) -> None:
        """``response.created`` / ``in_progress`` / ``completed`` / ``incomplete`` / ``failed``."""
        if self._send is not None:
            await self.emit(f"response.{kind}", response=copy.deepcopy(response))

    async def added(self, index: int, item: dict[str, Any]) -> None:
        if self._send is not None:
            await self.emit("response.output_item.added", output_index=index, item=copy.deepcopy(item))

    async def done(self, index: int, item: dict[str, Any]) -> None:
        if self._send is not None:
            await self.emit("response.output_item.done", output_index=index, item=copy.deepcopy(item))

    async def text_started(self, index: int, item_id: str) -> None:
        if self._send is not None:
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            await self.emit(
                "response.content_part.added", item_id=item_id, output_index=index, content_index=0, part=part
            )

    async def text_delta(self, index: int, item_id: str, delta: str) -> None:
        await self.emit(
            "response.output_text.delta", item_id=item_id, output_index=index, content_index=0, delta=delta, logprobs=[]
        )

    async def text_done(self, index: int, item_id: str, text: str) -> None:
        if self._send is not None:
            await self.emit(
                "response.output_text.done",
                item_id=item_id,
                output_index=index,
                content_index=0,
                text=text,
                logprobs=[],
            )
            part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
            await self.emit(
                "response.content_part.done", item_id=item_id, output_index=index, content_index=0, part=part
            )

    async def arguments(self, kind: str, index: int, item: dict[str, Any]) -> None:
        """``response.{function_call,mcp_call}_arguments.delta`` then ``.done`` for a whole call."""
        if self._send is None:
            return
        arguments = item["arguments"]
        await self.emit(f"response.{kind}_arguments.delta", item_id=item["id"], output_index=index, delta=arguments)
        done: dict[str, Any] = {"item_id": item["id"], "output_index": index, "arguments": arguments}
        if kind == "function_call":
            done["name"] = item["name"]
        await self.emit(f"response.{kind}_arguments.done", **done)

    async def phase(self, kind: str, index: int, item_id: str) -> None:
        """``response.mcp_call.in_progress`` and the like: an item's progress, by id."""
        await self.emit(f"response.{kind}", item_id=item_id, output_index=index)
