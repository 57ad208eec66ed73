"""Opaque tokens the authorization server refused are remembered (by hash, for a bounded time, in a bounded map),
and requests carrying the same token at once share one introspection: counted at a real authorization server."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2

from _authserver import AuthServer, running_auth_server, tls
from _gateway import serving
from _oauth_gateway import USERS, oauth_scene, post_init, whoami_registry
from toolmesh._context.identity import Identity
from toolmesh.gateway import HttpSettings, Introspection, McpGateway, OAuthSettings
from toolmesh.gateway._auth.refusals import InvalidToken
from toolmesh.gateway._auth.remembered import Remembered
from toolmesh.gateway._auth.tokens import TokenChecker

RESOURCE = "http://127.0.0.1:1/mcp"
INTROSPECT = "/introspect"


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def introspecting(folder: Path, clock: Clock, **options: Any) -> AsyncIterator[tuple[AuthServer, TokenChecker]]:
    """A real authorization server whose ``/introspect`` knows ``opaque-good``, and a checker asking it."""
    certs = tls(folder)
    server = AuthServer(users={name: set(scopes) for name, scopes in USERS.items()}, login="alice")
    active = {"active": True, "sub": "dora", "scope": "mcp", "aud": RESOURCE, "exp": int(clock.now) + 3600}
    server.opaque = {"opaque-good": active, "opaque-revoked": {"active": False}}
    async with running_auth_server(server, certs) as issuer:
        client_id, secret = server.introspector
        endpoint = Introspection(url=issuer + INTROSPECT, client_id=client_id, client_secret=secret)
        fields: dict[str, Any] = {"issuer": issuer, "resource": RESOURCE, "introspection": endpoint}
        settings = OAuthSettings(**fields, verify=certs.trust, **options)
        yield server, TokenChecker(settings, clock=clock)


async def _refusal(checker: TokenChecker, token: str) -> str:
    try:
        await checker.identity(token, (RESOURCE,))
    except InvalidToken as refused:
        return refused.description
    raise AssertionError(f"{token} was not refused")


async def test_a_refused_opaque_token_sent_again_is_not_introspected_again(tmp_path: Path) -> None:
    async with oauth_scene(tmp_path) as first:
        client_id, secret = first.server.introspector
        endpoint = Introspection(url=first.issuer + INTROSPECT, client_id=client_id, client_secret=secret)
        settings = dataclasses.replace(first.settings, introspection=endpoint)
        first.server.opaque = {"opaque-revoked": {"active": False}}
        async with (
            serving(McpGateway(whoami_registry()), HttpSettings(port=0, oauth=settings)) as url,
            httpx2.AsyncClient(timeout=60) as http,
        ):
            answers = []
            for token in ["opaque-revoked"] * 5 + ["opaque-unknown"] * 5:
                answers.append(await post_init(http, url + "/mcp", token))
    assert [a.status_code for a in answers] == [401] * 10
    assert {a.json()["error_description"] for a in answers} == {"the token is not active"}
    assert first.server.hits[INTROSPECT] == 2  # one per distinct token, not one per request


async def test_a_refused_token_is_asked_about_again_after_refused_cache_seconds(tmp_path: Path) -> None:
    clock = Clock()
    async with introspecting(tmp_path, clock, refused_cache_seconds=30) as (server, checker):
        first = await _refusal(checker, "opaque-revoked")
        clock.now += 29
        again = await _refusal(checker, "opaque-revoked")
        asked_within = server.hits[INTROSPECT]
        clock.now += 2
        await _refusal(checker, "opaque-revoked")
    assert first == again == "the token is not active"
    assert asked_within == 1
    assert server.hits[INTROSPECT] == 2


async def test_with_refused_cache_seconds_0_every_request_asks(tmp_path: Path) -> None:
    async with introspecting(tmp_path, Clock(), refused_cache_seconds=0) as (server, checker):
        for _ in range(3):
            await _refusal(checker, "opaque-revoked")
    assert server.hits[INTROSPECT] == 3


async def test_an_introspection_that_failed_is_not_remembered_as_a_refusal(tmp_path: Path) -> None:
    async with introspecting(tmp_path, Clock()) as (server, checker):
        server.introspection_down = True
        failed = await _refusal(checker, "opaque-good")
        server.introspection_down = False
        identity = await checker.identity("opaque-good", (RESOURCE,))
    assert "could not be checked" in failed and "503" in failed
    assert identity.subject == "dora"


async def test_requests_with_the_same_token_at_once_share_one_introspection(tmp_path: Path) -> None:
    outcomes: list[Identity | str] = []

    async def ask(checker: TokenChecker, token: str) -> None:
        try:
            outcomes.append(await checker.identity(token, (RESOURCE,)))
        except InvalidToken as refused:
            outcomes.append(refused.description)

    async with introspecting(tmp_path, Clock(), cache_seconds=0, refused_cache_seconds=0) as (server, checker):
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                for token in ["opaque-good"] * 10 + ["opaque-revoked"] * 10:
                    group.start_soon(ask, checker, token)
    assert server.hits[INTROSPECT] == 2  # nothing is remembered: the requests at once shared the answers
    assert sum(isinstance(o, Identity) and o.subject == "dora" for o in outcomes) == 10
    assert outcomes.count("the token is not active") == 10


async def test_a_request_waiting_on_a_cancelled_introspection_asks_itself(tmp_path: Path) -> None:
    async with introspecting(tmp_path, Clock()) as (server, checker):
        server.introspection_held, server.introspection_waiting = anyio.Event(), anyio.Event()
        found: list[Identity] = []

        async def follow() -> None:
            found.append(await checker.identity("opaque-good", (RESOURCE,)))

        first = anyio.CancelScope()
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(_cancellable, checker, first)
                await server.introspection_waiting.wait()  # the first request's introspection is under way
                group.start_soon(follow)
                await anyio.wait_all_tasks_blocked()  # the second waits for the first one's answer
                first.cancel()  # its client went away: no answer comes from it
                await anyio.wait_all_tasks_blocked()
                server.introspection_held.set()
    assert [identity.subject for identity in found] == ["dora"]
    assert server.hits[INTROSPECT] == 2


async def _cancellable(checker: TokenChecker, scope: anyio.CancelScope) -> None:
    with scope:
        await checker.identity("opaque-good", (RESOURCE,))


def test_the_remembered_map_is_bounded_and_drops_the_oldest_first() -> None:
    seen = Remembered[str, int](4)
    for index in range(10_000):  # a flood of distinct tokens
        seen.put(f"token-{index}", index, until=100.0)
    assert len(seen) == 4
    assert seen.get("token-9995", now=0.0) is None and seen.get("token-9996", now=0.0) == 9996
    assert seen.get("token-9999", now=100.0) is None and len(seen) == 3  # expired: dropped when looked up
