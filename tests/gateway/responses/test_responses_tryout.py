"""What a new user meets first with ``serve --responses-upstream``: a missing ``openai`` package, the catalog
offered by default, upstream errors, approval secrets and the allowlist (issue 12's tryout)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import anyio
import openai
import pytest

from _responses import Reply, ScriptedUpstream, mcp_tool, responses_gateway, scene, serve_asgi
from _servers import free_port, toolmesh_env
from toolmesh import ToolRegistry, tool
from toolmesh._core.errors import ConfigurationError
from toolmesh.gateway import GatewayConfig, ResponsesSettings
from toolmesh.gateway._responses.request import RequestError
from toolmesh.gateway._responses.settings import settings_from_config
from toolmesh.gateway._responses.urls import UrlPolicy

ENV = toolmesh_env()
NO_OPENAI = (
    "import sys; sys.modules['openai'] = None; sys.argv = ['toolmesh', *sys.argv[1:]]; "
    "from toolmesh._cli.main import main; main()"
)


def test_serve_without_the_openai_package_exits_2_with_the_install_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_OPENAI, "serve", "--port", "0", "--responses-upstream", "http://127.0.0.1:9/v1"],
        env=ENV,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "the Responses endpoint needs the openai package: pip install 'toolmesh[responses]'" in done.stderr


async def test_the_catalog_is_not_offered_unless_the_operator_opts_in() -> None:
    @tool
    def wipe(path: str) -> str:
        """Delete a path (a tool no request should get unasked)."""
        return path

    registry = ToolRegistry()
    registry.register(wipe)
    assert ResponsesSettings(upstream="http://127.0.0.1:9/v1").offer_catalog is False
    async with scene([Reply(text="ok")], registry=registry) as (client, upstream, _):
        response = await client.responses.create(model="m", input="hi")
    assert response.output_text == "ok"
    assert "wipe" not in json.dumps(upstream.requests[0].get("tools", []))


async def test_an_upstream_404_names_the_url_and_asks_about_v1(caplog: pytest.LogCaptureFixture) -> None:
    upstream = ScriptedUpstream([Reply(text="never")])
    caplog.set_level(logging.WARNING, logger="toolmesh.gateway")
    async with serve_asgi(upstream.app) as model, responses_gateway(model, api_key="sk-secret-key") as (client, _):
        with anyio.fail_after(60), pytest.raises(openai.NotFoundError) as raised:
            await client.responses.create(model="m", input="hi")
    message = raised.value.message
    assert f"answered 404 at {model}/chat/completions" in message
    assert "does --responses-upstream end in /v1?" in message
    logged = [r.getMessage() for r in caplog.records if r.name == "toolmesh.gateway"]
    assert any("answered 404" in line for line in logged)
    assert not any("sk-secret-key" in line for line in logged)


async def test_an_unreachable_upstream_is_a_502_naming_its_url(caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    caplog.set_level(logging.WARNING, logger="toolmesh.gateway")
    async with responses_gateway(url) as (client, _):
        with anyio.fail_after(60), pytest.raises(openai.InternalServerError) as raised:
            await client.responses.create(model="m", input="hi")
    assert raised.value.status_code == 502
    assert f"cannot reach the upstream model server at {url}" in raised.value.message
    assert any(url in r.getMessage() for r in caplog.records if r.name == "toolmesh.gateway")


async def test_an_approval_from_a_gateway_with_another_secret_says_to_set_secret_env() -> None:
    replies = [Reply(tool_calls=[("calc__add", '{"a": 1, "b": 1}')])]
    async with scene(replies) as (client, _, url):
        tool = mcp_tool("calc", url)
        del tool["require_approval"]
        first = await client.responses.create(model="m", input="1+1", tools=[tool])
    history = [{"role": "user", "content": "1+1"}, *(item.model_dump(exclude_none=True) for item in first.output)]
    answer = {"type": "mcp_approval_response", "approval_request_id": first.output[1].id, "approve": True}
    async with scene([Reply(text="never")]) as (restarted, upstream, url):
        tool = mcp_tool("calc", url)
        del tool["require_approval"]
        with pytest.raises(openai.BadRequestError) as refused:
            await restarted.responses.create(model="m", input=[*history, answer], tools=[tool])
    assert isinstance(refused.value.body, dict)
    assert "or the gateway restarted / has another secret" in refused.value.body["message"]
    assert "set responses.secretEnv so approvals survive restarts" in refused.value.body["message"]
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("*", "not a hostname"),
        ("mcp.example.com:8443", "has a port"),
        ("https://mcp.example.com/mcp", "list only its host"),
        ("0.0.0.0/0", "allows every address"),
        ("::/0", "allows every address"),
    ],
)
def test_a_bad_allowed_hosts_entry_is_refused_at_load_naming_the_key(tmp_path: Path, entry: str, said: str) -> None:
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"responses": {"upstream": "http://127.0.0.1:9/v1", "allowedHosts": ["ok.org", entry]}}))
    with pytest.raises(ConfigurationError, match=r"responses\.allowedHosts\[1\]") as refused:
        settings_from_config(GatewayConfig.load(path).responses)
    assert said in str(refused.value)


async def test_a_metadata_address_is_reached_only_when_listed_by_itself() -> None:
    wide = UrlPolicy(("169.254.0.0/16", "fd00:ec2::/32"))
    for url in ("http://169.254.169.254/mcp", "https://[fd00:ec2::254]/mcp"):
        with pytest.raises(RequestError, match=r"responses\.allowedHosts") as refused:
            await wide.check(url, "tools[0].server_url")
        assert "allowed_hosts" not in refused.value.message
    listed = UrlPolicy(("169.254.169.254", "fd00:ec2::254"))
    assert (await listed.check("https://169.254.169.254/mcp", "u")).address == "169.254.169.254"
    assert (await listed.check("https://[fd00:ec2::254]/mcp", "u")).address == "fd00:ec2::254"
    assert (await wide.check("https://169.254.10.1/mcp", "u")).address == "169.254.10.1"


def test_config_errors_name_the_config_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"responses": {"upstream": "127.0.0.1:8000/v1", "secretEnv": "TRYOUT_SECRET"}}))
    monkeypatch.setenv("TRYOUT_SECRET", "short")
    with pytest.raises(ConfigurationError, match=r"responses\.secretEnv: \$TRYOUT_SECRET holds 5 bytes.*at least 16"):
        settings_from_config(GatewayConfig.load(path).responses, "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("TRYOUT_SECRET", "s" * 16)
    with pytest.raises(ConfigurationError, match=r"--responses-upstream, responses\.upstream"):
        settings_from_config(GatewayConfig.load(path).responses)
