"""The SDK's ``EventStore`` on Redis, for one 2025-11-25 session: SSE streams any replica can resume.

Every message the session's transport sends on an SSE stream is stored first (that is
the SDK's contract: ``store_event`` before sending) in a Redis stream per SSE stream.
An event id is ``<redis stream id>/<SSE stream id>``; ids are only ever looked up under
the session this store is bound to, so a ``Last-Event-ID`` naming another session's
stream finds nothing.

Replaying does not stop at the events stored so far: it follows the Redis stream until
the SSE stream is complete, because the replica writing it may be another one.

* A request's stream is complete with the request's response: a client that resumes a
  call's stream on another replica (``Last-Event-ID``) receives its progress and its result
  from the replica running the call.
* The standalone stream (``_GET_stream``) is never complete: it is followed as long as
  the client keeps it open. The manager opens every GET stream this way (from "now"),
  so a notification or request any replica sends on the session's standalone channel
  reaches the replica holding the client's GET stream.
"""

from __future__ import annotations

import re

from mcp.server.streamable_http import GET_STREAM_KEY, EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCError, JSONRPCMessage, JSONRPCResponse, jsonrpc_message_adapter
from pydantic import ValidationError

from .store import SessionStore

__all__ = ["SharedEventStore", "event_id"]

_ENTRY_ID = re.compile(r"\d{1,20}-\d{1,20}")
_MAX_STREAM_ID = 256
"""Characters of an SSE stream id (a request id, chosen by the client) accepted in an event id."""

_ALIVE_CHECK = 10
"""Every this many waits without an event, a follower checks that the session still exists."""


def event_id(entry_id: str, stream_id: str) -> str:
    return f"{entry_id}/{stream_id}"


class SharedEventStore(EventStore):
    """The events of one session's SSE streams, in Redis (see the module docstring)."""

    def __init__(self, store: SessionStore, session_id: str) -> None:
        self._store = store
        self._session = session_id

    def __repr__(self) -> str:
        return f"SharedEventStore(profile={self._store.profile!r})"

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        data = "" if message is None else message.model_dump_json(by_alias=True, exclude_none=True)
        entry = await self._store.add_event(self._session, str(stream_id), data)
        return event_id(entry, str(stream_id))

    async def start_of_now(self) -> str:
        """An event id of the standalone stream after which only events from now on follow."""
        return event_id(await self._store.now(), GET_STREAM_KEY)

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        entry, _, stream_id = str(last_event_id).partition("/")
        if not _ENTRY_ID.fullmatch(entry) or not stream_id or len(stream_id) > _MAX_STREAM_ID:
            return None
        if stream_id != GET_STREAM_KEY and not await self._store.has_events(self._session, stream_id):
            return None  # no such stream in this session (or it expired): nothing to resume
        after = entry
        quiet = 0
        while True:
            events = await self._store.read_events(self._session, stream_id, after, self._store.wait_ms)
            quiet = 0 if events else quiet + 1
            if quiet >= _ALIVE_CHECK:
                quiet = 0
                if await self._store.ended(self._session):
                    return stream_id  # the session ended (deleted or expired): nothing more will come
            for entry_id, data in events:
                after = entry_id
                if not data:
                    continue  # a priming event
                try:
                    message = jsonrpc_message_adapter.validate_json(data)
                except ValidationError:
                    continue
                await send_callback(EventMessage(message, event_id(entry_id, stream_id)))
                if stream_id != GET_STREAM_KEY and isinstance(message, JSONRPCResponse | JSONRPCError):
                    return stream_id  # the request's response: its stream is complete
