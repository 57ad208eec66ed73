"""The caller's identity on each call's context: static tokens name their caller, on both faces."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
from openai import AsyncOpenAI

from _gateway import ACCEPT, INIT, client, serving
from _responses import Reply, ScriptedUpstream, serve_asgi
from toolmesh import ToolContext, ToolRegistry, tool
from toolmesh.gateway import BearerToken, HttpSettings, McpGateway, ResponsesEndpoint, ResponsesSettings

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"


@tool
async def whoami(ctx: ToolContext[Any]) -> str:
    """Say who called."""
    who = ctx.identity
    return "nobody" if who is None else f"{who.subject} via {who.method}"


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(whoami)
    return registry


def _settings() -> HttpSettings:
    return HttpSettings(port=0, tokens=(BearerToken(ALICE, name="alice"), BearerToken(BOB)))


async def test_each_static_token_calls_as_its_named_identity() -> None:
    async with (
        serving(McpGateway(_registry()), _settings()) as url,
        client(url + "/mcp", token=ALICE) as alice,
        client(url + "/mcp", token=BOB) as bob,
    ):
        with anyio.fail_after(60):
            as_alice = (await alice.call_tool("whoami", {})).content[0]
            as_bob = (await bob.call_tool("whoami", {})).content[0]
    assert as_alice.text == "alice via token"  # type: ignore[union-attr]
    assert as_bob.text == "token 1 via token"  # type: ignore[union-attr]  # unnamed: its place in the settings


async def test_without_authentication_a_call_has_no_identity() -> None:
    async with serving(McpGateway(_registry())) as url, client(url + "/mcp") as anyone:
        with anyio.fail_after(60):
            answer = (await anyone.call_tool("whoami", {})).content[0]
    assert answer.text == "nobody"  # type: ignore[union-attr]


async def test_a_session_opened_by_one_token_cannot_be_used_with_another() -> None:
    async with serving(McpGateway(_registry()), _settings()) as url, httpx2.AsyncClient(timeout=60) as http:
        opened = await http.post(url + "/mcp", json=INIT, headers={**ACCEPT, "Authorization": f"Bearer {ALICE}"})
        session = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        stolen = await http.post(
            url + "/mcp",
            json=ping,
            headers={
                **ACCEPT,
                "Authorization": f"Bearer {BOB}",
                "Mcp-Session-Id": session,
                "Mcp-Protocol-Version": "2025-11-25",
            },
        )
    assert opened.status_code == 200
    assert stolen.status_code == 404  # the SDK binds a session to the principal that opened it


async def test_the_responses_endpoint_calls_as_the_same_identity() -> None:
    upstream = ScriptedUpstream([Reply(tool_calls=[("whoami", "{}")]), Reply(text="done")])
    async with serve_asgi(upstream.app) as model:
        gateway = McpGateway(_registry())
        endpoint = ResponsesEndpoint.for_gateway(gateway, ResponsesSettings(upstream=model + "/v1", offer_catalog=True))
        async with (
            serve_asgi(gateway.http_app(_settings(), responses=endpoint)) as base,
            AsyncOpenAI(base_url=base + "/v1", api_key=ALICE, max_retries=0, timeout=60) as openai_client,
        ):
            with anyio.fail_after(60):
                response = await openai_client.responses.create(model="m", input="who am I?")
    calls = [item for item in response.output if item.type == "mcp_call"]
    assert [call.output for call in calls] == ["alice via token"]
