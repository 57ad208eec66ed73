"""``Relay``: what the replicas of a deployment tell each other about 2025-11-25 sessions, over pub/sub.

* **Answers** (channel ``answers:<profile>:<replica>``): a client's answer to a server-to-client
  request (elicitation, sampling) that reached another replica than the one that asked is
  published on the asker's channel, and posted there to its copy of the session.
* **News** (channel ``sessions:<profile>``, to every replica): what a client did on one replica
  that the others holding a copy of its session must act on. A ``resources/unsubscribe``: every
  other copy is sent the same request, so the replica holding the subscription lets go of it
  (upstream too). The session's end (``DELETE``): every other copy is dropped, and what it held
  (subscriptions, upstream) with it.

Both are posted to a copy as the client's own POST would be (an ASGI request to its transport),
so the server's handlers run as for any request. A message lost (Redis gone meanwhile) is not
replayed: an answer's question times out; a copy that missed news ends when it idles out.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER, StreamableHTTPServerTransport
from starlette.types import Message, Scope

from toolmesh._state.errors import StateUnavailableError

from .store import SessionStore

__all__ = ["Relay"]

logger = logging.getLogger("toolmesh.gateway")

_HEADERS = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]
_MAX_NEWS = 16 * 1024
"""Bytes of one news message (a session id and a resource URI) read at the most."""


class Relay:
    """Takes the answers and news other replicas send this one, and sends this replica's news."""

    def __init__(
        self,
        store: SessionStore,
        replica: str,
        transport_of: Callable[[str], StreamableHTTPServerTransport | None],
        drop: Callable[[str], Awaitable[None]],
    ) -> None:
        """Args:
        store: The profile's session keys (its shared state, its channels).
        replica: This replica's name.
        transport_of: This replica's copy of a session (its transport), or None.
        drop: Drops this replica's copy of a session.
        """
        self.store = store
        self.replica = replica
        self._transport_of = transport_of
        self._drop = drop
        self._ids = itertools.count(1)

    @property
    def news_channel(self) -> str:
        return f"sessions:{self.store.profile}"

    async def run(self) -> None:
        """Take answers and news until cancelled."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._take, self.store.answers_channel(self.replica), self._answer)
            await self._take(self.news_channel, self._news)

    async def tell(self, session_id: str, **news: Any) -> None:
        """Tell the other replicas holding a copy of ``session_id`` (``unsubscribe=URI``, ``ended=True``)."""
        message = json.dumps({"replica": self.replica, "session": session_id, **news}, separators=(",", ":"))
        try:
            await self.store.state.publish(self.news_channel, message.encode())
        except StateUnavailableError as exc:  # their copies go on until they idle out
            logger.warning("the other replicas were not told of a session's %s: %s", ", ".join(news), exc)

    async def _take(self, channel: str, handle: Callable[[bytes], Awaitable[None]]) -> None:
        while True:
            try:
                async with self.store.state.subscribe(channel) as messages:
                    async for message in messages:
                        if isinstance(message, bytes):  # not RESYNC: what was lost meanwhile is not replayed
                            await handle(message)
            except StateUnavailableError as exc:  # Redis was not there to subscribe to: try again
                logger.warning("%s", exc)
                await anyio.sleep(1.0)

    async def _answer(self, data: bytes) -> None:
        """Post an answer another replica forwarded here to this replica's copy of its session."""
        try:
            payload = json.loads(data)
            session_id, body = str(payload["session"]), str(payload["message"]).encode()
        except (ValueError, KeyError, TypeError):
            return
        await self._post(session_id, body)  # no copy: this replica's request ended with it

    async def _news(self, data: bytes) -> None:
        try:
            news = json.loads(data[:_MAX_NEWS]) if len(data) <= _MAX_NEWS else None
        except ValueError:
            news = None
        if not isinstance(news, dict) or news.get("replica") == self.replica:
            return
        session_id, uri = news.get("session"), news.get("unsubscribe")
        if not isinstance(session_id, str) or self._transport_of(session_id) is None:
            return
        if news.get("ended") is True:
            await self._drop(session_id)
        elif isinstance(uri, str):
            request = {"jsonrpc": "2.0", "id": f"relay-{next(self._ids)}", "method": "resources/unsubscribe"}
            await self._post(session_id, json.dumps({**request, "params": {"uri": uri}}).encode())

    async def _post(self, session_id: str, body: bytes) -> None:
        """POST ``body`` to this replica's copy of the session, as the client would; its answer is discarded."""
        transport = self._transport_of(session_id)
        if transport is None:
            return
        headers = [*_HEADERS, (b"host", b"127.0.0.1"), (MCP_SESSION_ID_HEADER.encode(), session_id.encode())]
        scope: Scope = {"type": "http", "method": "POST", "path": "/", "query_string": b"", "headers": headers}
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                await anyio.sleep_forever()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def discard(message: Message) -> None:
            return None

        await transport.handle_request(scope, receive, discard)
