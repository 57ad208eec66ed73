"""The SDK's EventStore on Redis (one per 2025-11-25 session), against a real redis-server."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types
from mcp.server.streamable_http import GET_STREAM_KEY, EventMessage

from _services import redis_server
from toolmesh.gateway import RedisState
from toolmesh.gateway._sessions.events import SharedEventStore
from toolmesh.gateway._sessions.store import SessionRecord, SessionStore

ROOT = Path(__file__).resolve().parents[3]


def _note(n: int) -> mcp_types.JSONRPCNotification:
    return mcp_types.JSONRPCNotification(jsonrpc="2.0", method="notifications/progress", params={"n": n})


async def test_a_resumed_call_stream_follows_the_events_another_replica_stores_until_the_response() -> None:
    async with redis_server() as redis, RedisState(redis.url, prefix="t:") as state:
        store = SessionStore(state, state.client, "default")
        await store.save("s1", SessionRecord("2025-11-25", None, None))
        writer, reader = SharedEventStore(store, "s1"), SharedEventStore(store, "s1")  # two replicas' copies
        first = await writer.store_event("7", _note(1))
        replayed: list[EventMessage] = []

        async def resume() -> None:
            assert await reader.replay_events_after(first, _append) == "7"

        async def _append(event: EventMessage) -> None:
            replayed.append(event)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(resume)
                await writer.store_event("7", _note(2))
                await writer.store_event("7", mcp_types.JSONRPCResponse(jsonrpc="2.0", id=7, result={}))
    assert [type(event.message).__name__ for event in replayed] == ["JSONRPCNotification", "JSONRPCResponse"]
    assert all(event.event_id is not None and event.event_id.endswith("/7") for event in replayed)


async def test_a_get_stream_on_one_replica_hears_what_another_replica_sends_on_the_session() -> None:
    """The manager opens every GET stream as a replay from "now": it hears the session's standalone messages
    whichever replica sends them, until the client goes."""
    async with redis_server() as redis, RedisState(redis.url, prefix="t:") as state:
        store = SessionStore(state, state.client, "default")
        await store.save("s1", SessionRecord("2025-11-25", None, None))
        holder, other = SharedEventStore(store, "s1"), SharedEventStore(store, "s1")
        heard: list[EventMessage] = []
        enough = anyio.Event()

        async def hear(event: EventMessage) -> None:
            heard.append(event)
            if len(heard) == 2:
                enough.set()

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(holder.replay_events_after, await holder.start_of_now(), hear)
                await other.store_event(GET_STREAM_KEY, _note(1))
                await holder.store_event(GET_STREAM_KEY, _note(2))
                await enough.wait()
                group.cancel_scope.cancel()  # the client went away
    assert [event.message.params for event in heard] == [{"n": 1}, {"n": 2}]  # type: ignore[union-attr]


async def test_an_event_id_of_another_session_finds_nothing() -> None:
    async with redis_server() as redis, RedisState(redis.url, prefix="t:") as state:
        store = SessionStore(state, state.client, "default")
        theirs = await SharedEventStore(store, "victim").store_event("1", _note(1))
        await SharedEventStore(store, "victim").store_event("1", _note(2))
        sent: list[EventMessage] = []

        async def send(event: EventMessage) -> None:
            sent.append(event)

        with anyio.fail_after(30):
            assert await SharedEventStore(store, "attacker").replay_events_after(theirs, send) is None
            assert await SharedEventStore(store, "attacker").replay_events_after("garbage", send) is None
    assert sent == []


def test_the_deployment_guide_shows_the_haproxy_config_the_tests_use() -> None:
    guide = (ROOT / "docs" / "guides" / "deployment.md").read_text()
    assert (ROOT / "examples" / "deploy" / "haproxy.cfg").read_text() in guide
