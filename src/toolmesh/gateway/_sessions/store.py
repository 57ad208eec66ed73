"""What the replicas of one deployment share about 2025-11-25 sessions, in Redis.

Keys (``P`` is the deployment's key prefix, ``F`` the profile, ``S`` a session id):

* ``Psession:F:S`` — the session record (JSON): the negotiated protocol version, the
  client's ``initialize`` params (capabilities, client info), its log level and who owns
  it. Its TTL is the session's idle timeout, renewed by every request (``GETEX``).
* ``Pevents:F:S:<stream>`` — a Redis stream per SSE stream of the session (a request's
  response stream, or ``_GET_stream``): the SDK's ``EventStore`` (``events.py``). Each
  entry has a TTL too, and the stream is capped in length.
* ``Panswers:F:<replica>`` — a pub/sub channel: a client's answer to a server-to-client
  request (elicitation, sampling) that reached another replica than the one that asked.
* ``Psessions:F`` — a pub/sub channel to every replica: a client's ``resources/unsubscribe``
  or ``DELETE`` that the replicas holding a copy of its session act on (``relay.py``).

A profile is part of every key: a session opened on one profile's endpoint is unknown on
another's, as it is in one process.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolmesh._state.backend import StateBackend

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["SESSION_TTL", "SessionRecord", "SessionStore"]

SESSION_TTL = 30 * 60
"""Seconds a session lives without a request (the SDK's own idle timeout for a session)."""
EVENT_TTL = 10 * 60
"""Seconds an SSE stream's events are kept for a client to resume it (``Last-Event-ID``)."""
EVENTS_PER_STREAM = 1000
"""At most this many events are kept per SSE stream (approximately: ``MAXLEN ~``)."""


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """What a replica needs to continue a 2025-11-25 session it did not open."""

    protocol_version: str
    client: dict[str, Any] | None
    """The client's ``initialize`` params as sent (JSON), or None."""
    owner: str | None
    """A digest of the credential that opened it (a request with another one is told the session does not exist)."""
    log_level: str | None = None
    """The level of the client's last ``logging/setLevel``."""
    ended: bool = False
    """The client deleted the session: every replica answers 404 for it (a tombstone, until it expires)."""

    def dump(self) -> str:
        data = {"v": self.protocol_version, "client": self.client, "owner": self.owner, "log": self.log_level}
        return json.dumps({**data, "ended": True} if self.ended else data, separators=(",", ":"))

    @classmethod
    def load(cls, raw: bytes | str) -> SessionRecord | None:
        """The record, or None for anything that is not one (never trusted to have a shape)."""
        try:
            data = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("v"), str):
            return None
        client, owner, level = data.get("client"), data.get("owner"), data.get("log")
        return cls(
            data["v"],
            client if isinstance(client, dict) else None,
            owner if isinstance(owner, str) else None,
            level if isinstance(level, str) else None,
            data.get("ended") is True,
        )


class SessionStore:
    """The Redis keys of one profile's sessions (see the module docstring)."""

    def __init__(self, state: StateBackend, redis: Redis, profile: str, *, session_ttl: int = SESSION_TTL) -> None:
        """Args:
        state: The deployment's shared state (its key prefix, its pub/sub).
        redis: Its Redis client.
        profile: The profile whose sessions these are.
        session_ttl: Seconds a session lives without a request.
        """
        self.state = state
        self.redis = redis
        self.profile = profile
        self._session_ttl = session_ttl
        timeout = redis.connection_pool.connection_kwargs.get("socket_timeout")
        self.wait_ms = int(1000 * min(1.0, timeout / 2)) if isinstance(timeout, int | float) and timeout > 0 else 1000
        """How long one blocking read of events waits: within the client's socket timeout, or it would fail."""

    def __repr__(self) -> str:
        return f"SessionStore(profile={self.profile!r})"

    def _key(self, kind: str, *parts: str) -> str:
        return self.state.key(":".join((kind, self.profile, *parts)))

    async def save(self, session_id: str, record: SessionRecord) -> None:
        await self.redis.set(self._key("session", session_id), record.dump(), ex=self._session_ttl)

    async def load(self, session_id: str) -> SessionRecord | None:
        """The session's record, its TTL renewed; None when no replica knows the session (or it expired)."""
        raw = await self.redis.getex(self._key("session", session_id), ex=self._session_ttl)
        return SessionRecord.load(raw) if raw is not None else None

    async def ended(self, session_id: str) -> bool:
        """Whether the client deleted the session, or no replica knows it any more."""
        raw = await self.redis.get(self._key("session", session_id))
        record = SessionRecord.load(raw) if raw is not None else None
        return record is None or record.ended

    async def end(self, session_id: str, record: SessionRecord) -> None:
        """The client deleted the session: a tombstone, so that no replica's copy brings it back."""
        await self.save(session_id, dataclasses.replace(record, ended=True))

    # -- SSE events ----------------------------------------------------------------

    def events_key(self, session_id: str, stream_id: str) -> str:
        return self._key("events", session_id, stream_id)

    async def add_event(self, session_id: str, stream_id: str, data: str) -> str:
        """Append one event (``data``: a JSON-RPC message, or "" for a priming event); its Redis stream id."""
        key = self.events_key(session_id, stream_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.xadd(key, {"m": data}, maxlen=EVENTS_PER_STREAM, approximate=True)
            pipe.expire(key, EVENT_TTL)
            added, _ = await pipe.execute()
        return added.decode() if isinstance(added, bytes) else str(added)

    async def has_events(self, session_id: str, stream_id: str) -> bool:
        return bool(await self.redis.exists(self.events_key(session_id, stream_id)))

    async def read_events(self, session_id: str, stream_id: str, after: str, block_ms: int) -> list[tuple[str, str]]:
        """The events after Redis stream id ``after`` (waiting up to ``block_ms`` for one): (id, data) pairs."""
        key = self.events_key(session_id, stream_id)
        found: Any = await self.redis.xread({key: after}, count=100, block=block_ms)
        events: list[tuple[str, str]] = []
        for _, entries in found or ():
            for entry_id, fields in entries:
                data = fields.get(b"m", fields.get("m", b""))
                events.append((_text(entry_id), _text(data)))
        return events

    async def now(self) -> str:
        """Redis's clock as a stream id: reading after it returns the events added from now on.

        It is the end of the millisecond before: an event added within the current one is
        read too (one added just before is at worst read again; none added after is missed).
        """
        seconds, micros = await self.redis.time()
        return f"{int(seconds) * 1000 + int(micros) // 1000 - 1}-{2**64 - 1}"

    # -- answers to server-to-client requests ----------------------------------------

    def answers_channel(self, replica: str) -> str:
        """The channel name (under the deployment's prefix) of ``replica``'s answers."""
        return f"answers:{self.profile}:{replica}"

    async def forward_answer(self, replica: str, session_id: str, message: str) -> None:
        """Hand a client's answer (a JSON-RPC response, as JSON) to the replica whose request it answers."""
        payload = json.dumps({"session": session_id, "message": message}, separators=(",", ":"))
        await self.state.publish(self.answers_channel(replica), payload.encode())


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
