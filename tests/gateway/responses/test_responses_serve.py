"""``toolmesh serve --responses-upstream URL``: a real process serving ``/v1/responses`` beside ``/mcp``;
the endpoint sits behind the gateway's tokens and Host checks; the config's ``responses`` section."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import openai
import pytest
from anyio.streams.text import TextReceiveStream
from openai import AsyncOpenAI

from _responses import Reply, ScriptedUpstream, calc_server, mcp_tool, serve_asgi, strict_response
from _servers import ROOT, stop_process, toolmesh_env
from toolmesh import ToolRegistry, tool
from toolmesh.gateway import (
    BearerToken,
    GatewayConfig,
    HttpSettings,
    McpGateway,
    ResponsesEndpoint,
    ResponsesSettings,
)
from toolmesh.gateway._responses.settings import settings_from_config

ENV = toolmesh_env()
TOKEN = "responses-test-token-0123456789"


async def _line(lines: Any, pattern: str, seen: list[str]) -> re.Match[str]:
    async for line in lines:
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"the gateway ended before printing {pattern!r}: {''.join(seen)}")


async def _lines(stream: Any) -> Any:
    buffer = ""
    async for text in TextReceiveStream(stream):
        buffer += text
        while "\n" in buffer:
            line, buffer = buffer.split("\n", 1)
            yield line + "\n"


async def test_toolmesh_serve_with_a_responses_upstream_runs_a_turn_for_the_sdk(tmp_path: Path) -> None:
    config = tmp_path / "toolmesh.json"
    native = [f"{ROOT / 'examples' / 'tools.py'}:registry"]
    config.write_text(json.dumps({"native": native, "serve": {"port": 0}, "responses": {"offerCatalog": True}}))
    replies = [
        Reply(tool_calls=[("forecast", '{"city": "Oslo"}'), ("calc__add", '{"a": 1, "b": 2}')]),
        Reply(text="Cold, and 3."),
    ]
    upstream = ScriptedUpstream(replies)
    async with serve_asgi(upstream.app) as model, serve_asgi(calc_server().streamable_http_app()) as mcp_base:
        command = [sys.executable, "-m", "toolmesh", "serve", "--config", str(config)]
        process = await anyio.open_process(
            [*command, "--responses-upstream", model + "/v1"], env=ENV, cwd=tmp_path, stderr=subprocess.DEVNULL
        )
        try:
            assert process.stdout is not None
            lines, seen = _lines(process.stdout), []
            with anyio.fail_after(90):
                found = await _line(lines, r"responses: (http://127\.0\.0\.1:\d+)/v1/responses", seen)
                offers = await _line(lines, r"offers the profile 'default' \((\d+) tools\)", seen)
                assert "WITHOUT approval" in offers.string
                assert "approval secret: per-process" in (await _line(lines, "approval secret", seen)).string
            async with AsyncOpenAI(base_url=found.group(1) + "/v1", api_key="x", max_retries=0, timeout=60) as client:
                with anyio.fail_after(60):
                    response = await client.responses.create(
                        model="m", input="weather and sum", tools=[mcp_tool("calc", mcp_base + "/mcp")]
                    )
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(60):
                assert await process.wait() == 0
        finally:
            await stop_process(process)
    strict_response(response)
    calls = [item for item in response.output if item.type == "mcp_call"]
    assert [(c.server_label, c.name, c.status) for c in calls] == [
        ("toolmesh", "forecast", "completed"),
        ("calc", "add", "completed"),
    ]
    assert calls[1].output == "3" and "Oslo" in (calls[0].output or "")
    assert response.output_text == "Cold, and 3."
    offered = [t["function"]["name"] for t in upstream.requests[0]["tools"]]
    assert "forecast" in offered and "calc__add" in offered


async def test_the_endpoint_is_behind_the_gateways_tokens_and_host_checks() -> None:
    @tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    upstream = ScriptedUpstream([Reply(text="hello")])
    async with serve_asgi(upstream.app) as model, ToolRegistry() as registry:
        registry.register(ping)
        gateway = McpGateway(registry)
        endpoint = ResponsesEndpoint.for_gateway(gateway, ResponsesSettings(upstream=model + "/v1"))
        settings = HttpSettings(port=0, tokens=(BearerToken(TOKEN),))
        async with serve_asgi(gateway.http_app(settings, responses=endpoint)) as base:
            async with AsyncOpenAI(base_url=base + "/v1", api_key="wrong", max_retries=0) as client:
                with pytest.raises(openai.AuthenticationError):
                    await client.responses.create(model="m", input="hi")
            async with AsyncOpenAI(base_url=base + "/v1", api_key=TOKEN, max_retries=0) as client:
                response = await client.responses.create(model="m", input="hi")
            async with httpx2.AsyncClient() as http:
                rebinding = await http.post(
                    base + "/v1/responses",
                    json={"model": "m", "input": "hi"},
                    headers={"Authorization": f"Bearer {TOKEN}", "Host": "evil.example.com"},
                )
    assert response.output_text == "hello"
    assert rebinding.status_code == 421 and len(upstream.requests) == 1


def test_the_config_responses_section_gives_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "toolmesh.json"
    section = {
        "upstream": "http://127.0.0.1:8000/v1",
        "allowedHosts": ["mcp.example.com"],
        "apiKeyEnv": "RESPONSES_TEST_KEY",
        "secretEnv": "RESPONSES_TEST_SECRET",
        "maxRounds": 3,
        "maxBodyBytes": 1000,
        "maxJsonDepth": 16,
        "maxReplyBytes": 2000,
    }
    path.write_text(json.dumps({"responses": section}))
    monkeypatch.setenv("RESPONSES_TEST_KEY", "sk-local")
    monkeypatch.setenv("RESPONSES_TEST_SECRET", "s" * 32)
    settings = settings_from_config(GatewayConfig.load(path).responses)
    assert settings is not None
    assert (settings.upstream, settings.allowed_hosts, settings.max_rounds) == (
        "http://127.0.0.1:8000/v1",
        ("mcp.example.com",),
        3,
    )
    assert (settings.max_body_bytes, settings.max_json_depth, settings.max_reply_bytes) == (1000, 16, 2000)
    assert settings.api_key == "sk-local" and settings.secret == b"s" * 32
    assert "sk-local" not in repr(settings)
    override = settings_from_config(GatewayConfig.load(path).responses, "http://127.0.0.1:9/v1")
    assert override is not None and override.upstream == "http://127.0.0.1:9/v1"
    path.write_text(json.dumps({"responses": {"upstreem": "x"}}))
    with pytest.raises(Exception, match="upstream"):
        GatewayConfig.load(path)
