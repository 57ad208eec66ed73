"""Elicitation and sampling of an upstream server reach the downstream client that made the call, and back."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp
import mcp_types
import pytest

from _asking import ASKING, PROTOCOLS, asking_in_process
from _gateway import client, serving
from _servers import stdio_params
from toolmesh import ToolRegistry
from toolmesh.gateway import GatewayConfig, McpGateway

MODES = ["legacy", "2026-07-28"]


async def _elicit(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
    return mcp_types.ElicitResult(action="accept", content={"name": "downstream user"})


async def _sample(context: Any, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
    return mcp_types.CreateMessageResult(
        role="assistant", content=mcp_types.TextContent(type="text", text="hi from downstream"), model="down"
    )


async def _unreachable(request: Any) -> Any:
    raise AssertionError("the gateway sets each call's own callbacks: the registry's defaults are not used")


@pytest.mark.parametrize("upstream", PROTOCOLS)
@pytest.mark.parametrize("mode", MODES)
async def test_an_upstream_elicitation_is_answered_by_the_downstream_client(mode: Any, upstream: str) -> None:
    async with ToolRegistry(elicitation=_unreachable, sampling=_unreachable) as registry:
        await registry.connect(asking_in_process(upstream))
        async with (
            serving(McpGateway(registry)) as url,
            client(url + "/mcp", mode, elicitation_callback=_elicit, sampling_callback=_sample) as downstream,
        ):
            with anyio.fail_after(60):
                asked = await downstream.call_tool("ask__ask_form", {})
                sampled = await downstream.call_tool("ask__ask_sample", {})
    assert not asked.is_error, asked
    assert json.loads(asked.content[0].text) == {"action": "accept", "content": {"name": "downstream user"}}  # type: ignore[union-attr]
    assert json.loads(sampled.content[0].text)["text"] == "hi from downstream"  # type: ignore[union-attr]


@pytest.mark.parametrize("upstream", PROTOCOLS)
@pytest.mark.parametrize("mode", MODES)
async def test_an_upstream_servers_call_logs_reach_the_downstream_client(mode: Any, upstream: str) -> None:
    heard: list[Any] = []

    async def on_log(params: Any) -> None:
        heard.append((params.level, params.data))

    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process(upstream))
        options: dict[str, Any] = {"logging_callback": on_log}
        if mode == "2026-07-28":
            options["log_level"] = "debug"
        async with serving(McpGateway(registry)) as url, client(url + "/mcp", mode, **options) as downstream:
            with anyio.fail_after(60):
                result = await downstream.call_tool("ask__chatty", {"tag": "t1"})
    assert not result.is_error, result
    assert ("warning", "warning t1") in heard and ("error", "error t1") in heard


async def test_a_config_files_registry_lets_upstream_servers_ask_the_downstream_client(tmp_path: Any) -> None:
    command, args, env = stdio_params(ASKING, None)
    config = tmp_path / "toolmesh.json"
    config.write_text(json.dumps({"mcpServers": {"ask": {"command": command, "args": args, "env": env}}}))
    async with GatewayConfig.load(config).registry() as registry:
        await registry.connect_all(GatewayConfig.load(config).servers)
        async with mcp.Client(McpGateway(registry).server(), mode="legacy", elicitation_callback=_elicit) as downstream:
            with anyio.fail_after(60):
                asked = await downstream.call_tool("ask__ask_form", {})
        assert not asked.is_error, asked
        assert json.loads(asked.content[0].text)["action"] == "accept"  # type: ignore[union-attr]
        # a call that is not the gateway's has no client to ask: refused at once, saying what was wanted
        direct = await registry.dispatch("ask__ask_form")
        assert not direct.ok and "needs input from the user" in direct.presentation.as_text()


@pytest.mark.parametrize("upstream", PROTOCOLS)
async def test_a_client_that_declared_no_elicitation_is_named_as_the_reason(upstream: str) -> None:
    async with ToolRegistry(elicitation=_unreachable, sampling=_unreachable) as registry:
        await registry.connect(asking_in_process(upstream))
        async with serving(McpGateway(registry)) as url, client(url + "/mcp", "legacy") as downstream:
            with anyio.fail_after(60):
                asked = await downstream.call_tool("ask__ask_form", {})
    assert asked.is_error
    text = asked.content[0].text  # type: ignore[union-attr]
    assert "the client connected to the gateway did not declare the elicitation capability" in text, (
        text
    )  # both upstream versions
    assert "callback failed" not in text
    # the registry stays usable: a client that can answer gets its call through
    async with ToolRegistry(elicitation=_unreachable, sampling=_unreachable) as registry:
        await registry.connect(asking_in_process(upstream))
        async with (
            serving(McpGateway(registry)) as url,
            client(url + "/mcp", "legacy", elicitation_callback=_elicit) as downstream,
        ):
            with anyio.fail_after(60):
                answered = await downstream.call_tool("ask__ask_form", {})
    assert not answered.is_error, answered
