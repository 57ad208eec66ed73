"""Both protocol versions on three `toolmesh serve` replicas sharing a real Redis, behind a real HAProxy.

One deployment serves the whole module: three replicas, each with the fixture's native tools,
an upstream server they share (`demo`, over HTTP), one of their own (`local`, over stdio), a
rate limit on `stamp`, and the Responses endpoint (a scripted model, one approval secret).
Each test starts by forgetting what the load balancer recorded before it.
"""

from __future__ import annotations

import itertools
import sys
import warnings
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import anyio
import mcp_types
import openai
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning
from openai import AsyncOpenAI

from _replicas import Mesh, replicas
from _responses import Reply, ScriptedUpstream, calc_server, mcp_tool, serve_asgi
from _servers import DEMO, http_server
from _services import redis_server

MODES = ["legacy", "2026-07-28"]
CALLS = 200
LIMIT = 10
QUIET = 3.0
"""Seconds a test waits for a notification that must not come (a duplicate arrives within milliseconds)."""
SECRET = "one-secret-for-every-replica-0123"
CALC_CALLS: list[str] = []
MODEL = ScriptedUpstream([Reply(tool_calls=[("calc__add", '{"a": 2, "b": 2}')]), Reply(text="4")])


@pytest.fixture(scope="module")
async def mesh() -> AsyncIterator[Mesh]:
    async with AsyncExitStack() as stack:
        redis = await stack.enter_async_context(redis_server())
        demo = await stack.enter_async_context(http_server(DEMO))
        model = await stack.enter_async_context(serve_asgi(MODEL.app))
        config = {
            "mcpServers": {"demo": {"url": demo}, "local": {"command": sys.executable, "args": [str(DEMO), "stdio"]}},
            "policy": {"rateLimits": [{"calls": LIMIT, "per": 600, "tools": ["stamp"]}]},
            "responses": {"upstream": f"{model}/v1", "secretEnv": "TOOLMESH_TEST_APPROVALS"},
        }
        env = {"TOOLMESH_TEST_APPROVALS": SECRET}
        yield await stack.enter_async_context(replicas(3, state=redis.url, config=config, env=env))


@pytest.fixture
def fresh(mesh: Mesh) -> Mesh:
    mesh.reset()
    return mesh


def _text(result: Any) -> str:
    assert not result.is_error, result
    return str(result.content[0].text)


@pytest.mark.parametrize("mode", MODES)
async def test_hundreds_of_calls_each_request_on_another_replica_without_a_session_error(
    fresh: Mesh, mode: Any
) -> None:
    with anyio.fail_after(100):
        async with fresh.client(mode) as client:
            ran_on = set()
            for n in range(CALLS):
                assert _text(await client.call_tool("add", {"a": n, "b": 1})) == str(n + 1)
                if n % 10 == 0:
                    ran_on.add(_text(await client.call_tool("whoami", {})))
    assert ran_on == {"replica1", "replica2", "replica3"}  # the tool ran where HAProxy says the request went
    assert all(status < 400 for status in fresh.statuses), fresh.statuses  # no "Session not found", no error
    assert len(fresh.served) >= CALLS
    assert sum(first == second for first, second in itertools.pairwise(fresh.served)) <= 2, fresh.served


async def test_a_deleted_session_is_not_found_on_any_replica(fresh: Mesh) -> None:
    with anyio.fail_after(100):
        async with fresh.client("legacy") as client:
            _text(await client.call_tool("add", {"a": 1, "b": 1}))
        (session,) = fresh.sessions  # the client deleted it on leaving
        headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25", "accept": "application/json"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        async with fresh.http_client() as http:
            replies = [await http.post(fresh.url, json=body, headers=headers) for _ in range(3)]
    assert [reply.status_code for reply in replies] == [404, 404, 404]
    assert {reply.headers["x-toolmesh-replica"] for reply in replies} == {"replica1", "replica2", "replica3"}


@pytest.mark.parametrize("mode", MODES)
async def test_an_elicitation_round_trip_crosses_replicas(fresh: Mesh, mode: Any) -> None:
    """2025-11-25: the answer POST is routed to the replica that asked; 2026-07-28: the retry carrying the
    answer is handed to the replica holding the parked call."""
    asked = 0

    async def answer(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        nonlocal asked
        asked += 1
        return mcp_types.ElicitResult(action="accept", content={"name": f"Ada {asked}"})

    with anyio.fail_after(100):
        async with fresh.client(mode, elicitation_callback=answer) as client:
            for n in range(1, 7):
                assert _text(await client.call_tool("ask_name", {})) == f"hello Ada {n}"
    calls = [replica for kind, replica in fresh.posts if kind == "call"]
    answers = [replica for kind, replica in fresh.posts if kind == "answer"]
    assert len(calls) == len(answers) == 6
    crossed = sum(asker != reached for asker, reached in zip(calls, answers, strict=True))
    assert crossed >= 5, fresh.posts  # round-robin: each answer reaches a replica that did not ask


async def test_the_log_level_a_legacy_client_set_holds_on_every_replica(fresh: Mesh) -> None:
    logged: list[Any] = []

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    with anyio.fail_after(100):
        async with fresh.client("legacy", logging_callback=on_log) as client:
            _text(await client.call_tool("chatty", {}))
            with warnings.catch_warnings():  # logging is deprecated in 2026-07-28, still served to 2025-11-25
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.set_logging_level("warning")
            for _ in range(6):
                _text(await client.call_tool("chatty", {}))
    assert logged == ["info", "warning"] + ["warning"] * 6
    assert len({replica for kind, replica in fresh.posts if kind == "call"}) == 3


async def test_a_rate_limit_holds_across_replicas_and_clients(fresh: Mesh) -> None:
    """10 calls per window means 10 in all: three replicas, two clients of both versions, one bucket."""
    with anyio.fail_after(100):
        async with fresh.client("legacy") as legacy, fresh.client("2026-07-28") as modern:
            results = [await (legacy, modern)[n % 2].call_tool("stamp", {"n": n}) for n in range(LIMIT + 5)]
            other = await modern.call_tool("add", {"a": 1, "b": 1})  # other tools are not limited
    assert [result.is_error for result in results] == [False] * LIMIT + [True] * 5
    assert "rate" in str(results[-1].content[0]).lower() and not other.is_error
    assert len({replica for kind, replica in fresh.posts if kind == "call"}) == 3


class _ListChanges:
    """A client's message handler counting the tool-list changes it hears."""

    def __init__(self) -> None:
        self.count = 0
        self._more = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.count += 1
            self._more.set()

    async def reach(self, count: int) -> None:
        """Wait until ``count`` changes were heard."""
        while self.count < count:
            await self._more.wait()
            self._more = anyio.Event()


async def test_a_change_made_through_any_replica_reaches_the_legacy_clients_get_stream(fresh: Mesh) -> None:
    """`local` is each replica's own stdio server: `grow` through one changes that replica's catalog; the
    client's one GET stream, on one replica, hears every change (told by a replica holding a copy of the
    session, whichever it is, through the session's events in Redis)."""
    heard = _ListChanges()
    with anyio.fail_after(100):
        async with fresh.client("legacy", message_handler=heard) as client:
            while not fresh.gets:  # a change made before its notification stream is open reaches no one
                _text(await client.call_tool("add", {"a": 1, "b": 1}))
            for name in ("new_a", "new_b", "new_c"):
                _text(await client.call_tool("local__grow", {"name": name}))
            await heard.reach(3)
    grown_on = {replica for kind, replica in fresh.posts if kind == "call"}
    assert len(set(fresh.gets)) == 1 and len(grown_on) >= 2 and grown_on - set(fresh.gets)


async def test_a_legacy_session_every_replica_holds_hears_one_list_changed_per_change(fresh: Mesh) -> None:
    """Each replica that served the session holds a copy of it, and each hears of every change (its own, or
    another's over Redis); the one that first swaps the change into the session's `told:` key tells the
    client, on the session's one GET stream. `local` changes one replica's catalog, `demo` every replica's."""
    heard = _ListChanges()
    with anyio.fail_after(100):
        async with fresh.client("legacy", message_handler=heard) as client:
            # until its notification stream is open and every replica holds a copy of the session
            while not fresh.gets or len({replica for kind, replica in fresh.posts if kind == "call"}) < 3:
                _text(await client.call_tool("add", {"a": 1, "b": 1}))
            for count, name in enumerate(("once_a", "once_b", "once_c", "once_d"), start=1):
                _text(await client.call_tool(("local__grow", "demo__grow")[count % 2], {"name": name}))
                await heard.reach(count)
            with anyio.move_on_after(QUIET):  # time for a second telling of any change to arrive
                await heard.reach(5)
    assert heard.count == 4


async def test_a_listen_stream_on_one_replica_hears_a_change_made_through_another(fresh: Mesh) -> None:
    """`demo` is shared: `grow` through one replica; the 2026-07-28 client's listen stream on another hears it,
    and then every replica lists the new tool."""
    with anyio.fail_after(100):
        async with fresh.client("2026-07-28") as client:
            async with client.listen(tools_list_changed=True) as subscription:
                _text(await client.call_tool("demo__grow", {"name": "fresh"}))
                async for _ in subscription:
                    break
            seen = []
            for _ in range(3):
                names = [tool.name for tool in (await client.list_tools(cache_mode="refresh")).tools]
                seen.append(("demo__fresh" in names, fresh.served[-1]))
    listening_on = [replica for kind, replica in fresh.posts if kind == "listen"]
    grown_on = next(replica for kind, replica in fresh.posts if kind == "call")
    assert len(listening_on) == 1 and listening_on[0] != grown_on
    assert {replica for _, replica in seen} == {"replica1", "replica2", "replica3"}
    assert all(listed for listed, _ in seen), seen


async def test_an_approval_replayed_through_the_load_balancer_is_refused(fresh: Mesh) -> None:
    """Ask (one replica), run the approved call (the next), replay the approval (the third): refused, ran once."""
    async with AsyncExitStack() as stack:
        calc = await stack.enter_async_context(serve_asgi(calc_server(calls=CALC_CALLS).streamable_http_app()))
        client = AsyncOpenAI(base_url=f"{fresh.front}/v1", api_key="test", max_retries=0, timeout=60)
        stack.push_async_callback(client.close)
        tool = mcp_tool("calc", f"{calc}/mcp")
        del tool["require_approval"]  # always
        with anyio.fail_after(90):
            first = await client.responses.with_raw_response.create(model="m", input="2+2", tools=[tool])
            asked = first.parse()
            request = asked.output[1]
            assert request.type == "mcp_approval_request"
            answer = {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}
            given = [item.model_dump(exclude_none=True) for item in asked.output]
            approved: Any = [{"role": "user", "content": "2+2"}, *given, answer]
            ran = await client.responses.with_raw_response.create(model="m", input=approved, tools=[tool])
            with pytest.raises(openai.ConflictError) as replayed:
                await client.responses.create(model="m", input=approved, tools=[tool])
    where = [first.headers["x-toolmesh-replica"], ran.headers["x-toolmesh-replica"]]
    where.append(replayed.value.response.headers["x-toolmesh-replica"])
    assert len(set(where)) == 3, where
    assert [item.type for item in ran.parse().output] == ["mcp_call", "message"] and CALC_CALLS == ["add"]
    assert "was already used to run its call" in replayed.value.message
