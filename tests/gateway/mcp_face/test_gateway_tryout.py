"""What a new user's tryout of the gateway found (issue 11): each fix, checked with real clients and commands."""

from __future__ import annotations

import importlib.metadata
import json
import queue
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from _gateway import client, look_and_wipe, only_look, serving
from _servers import DEMO, ROOT, toolmesh_env
from toolmesh.gateway import GatewayConfig, McpGateway
from toolmesh.policy import DenyAnnotated

MODES = ["legacy", "2026-07-28"]
EXAMPLES = ROOT / "examples"
ENV = toolmesh_env()
TOOLMESH = [sys.executable, "-m", "toolmesh"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_profile_is_also_served_at_a_url_ending_in_mcp(mode: Any) -> None:
    """Clients such as the MCP Inspector CLI rewrite a URL not ending in /mcp: /<profile>/mcp must be the profile."""
    gateway = McpGateway(look_and_wipe(), profiles={"readonly": only_look})
    async with (
        serving(gateway) as url,
        client(url + "/readonly/mcp", mode) as new,
        client(url + "/mcp/readonly", mode) as old,
    ):
        with anyio.fail_after(60):
            new_names = [t.name for t in (await new.list_tools()).tools]
            old_names = [t.name for t in (await old.list_tools()).tools]
    assert new_names == ["look"]
    assert old_names == ["look"]


async def test_serving_stdio_does_not_need_the_http_token_variable(tmp_path: Path) -> None:
    """serve.auth.tokens from an unset variable: stdio has no tokens, so `serve -t stdio` still serves."""
    config = {
        "native": [f"{EXAMPLES / 'tools.py'}:registry"],
        "serve": {"auth": {"tokens": [{"env": "TOOLMESH_TRYOUT_UNSET_TOKEN"}]}},
    }
    (tmp_path / "toolmesh.json").write_text(json.dumps(config), encoding="utf-8")
    env = {k: v for k, v in ENV.items() if k != "TOOLMESH_TRYOUT_UNSET_TOKEN"}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolmesh", "serve", "-t", "stdio", "-c", "toolmesh.json"],
        env=env,
        cwd=str(tmp_path),
    )
    with anyio.fail_after(60):
        async with mcp.Client(params, mode="legacy") as session:  # type: ignore[arg-type]
            names = [t.name for t in (await session.list_tools()).tools]
    assert "forecast" in names
    http = subprocess.run(  # noqa: ASYNC221 - the client above is done; this is the command's own run
        [*TOOLMESH, "check", "-c", "toolmesh.json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
    )
    assert http.returncode == 2 and "TOOLMESH_TRYOUT_UNSET_TOKEN" in http.stderr  # the file says http: check needs it


def test_check_and_serve_warn_of_patterns_that_match_nothing(tmp_path: Path) -> None:
    """A typo in a deny rule refuses nothing: check and serve say so, with the name meant; --strict refuses."""
    config = {
        "native": [f"{EXAMPLES / 'tools.py'}:registry"],
        "policy": {"denyTools": ["word-count", "swatch"], "denyServers": ["nots"]},
        "profiles": {"few": {"tools": ["forcast"]}},
    }
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    checked = subprocess.run([*TOOLMESH, "check", "-c", str(path)], capture_output=True, text=True, env=ENV, timeout=60)
    assert checked.returncode == 0, checked.stderr
    assert "key 'policy.denyTools[0]': 'word-count' matches no tool. Did you mean 'word_count'?" in checked.stderr
    assert "key 'policy.denyServers[0]': 'nots' matches no server." in checked.stderr
    assert "key 'profiles.few.tools[0]': 'forcast' matches no tool. Did you mean 'forecast'?" in checked.stderr
    assert "denyTools[1]" not in checked.stderr  # 'swatch' matched
    assert "policy: removes 1 of 3 tools" in checked.stdout
    served = subprocess.run(
        [*TOOLMESH, "serve", "-t", "stdio", "-c", str(path), "--strict"],
        input="",
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert served.returncode == 2
    assert "'word-count' matches no tool. Did you mean 'word_count'?" in served.stderr
    assert "--strict: 3 patterns match nothing" in served.stderr


async def test_deny_destructive_reads_native_tools_as_mcp_clients_do(tmp_path: Path) -> None:
    """A native tool stating no destructive hint is served without annotations, which MCP clients read as
    destructive: under denyDestructive the gateway leaves it out, and keeps the ones that say otherwise."""
    (tmp_path / "natives.py").write_text(
        "from toolmesh import ToolAnnotations, ToolCapabilities, tool\n\n\n"
        "@tool\ndef unsaid() -> str:\n    return 'x'\n\n\n"
        "@tool(capabilities=ToolCapabilities(annotations=ToolAnnotations(read_only=True)))\n"
        "def reads() -> str:\n    return 'x'\n\n\n"
        "@tool(capabilities=ToolCapabilities(annotations=ToolAnnotations(destructive=False)))\n"
        "def adds() -> str:\n    return 'x'\n\n\n"
        "@tool(capabilities=ToolCapabilities(annotations=ToolAnnotations(destructive=True)))\n"
        "def wipes() -> str:\n    return 'x'\n\n\n"
        "tools = [unsaid, reads, adds, wipes]\n",
        encoding="utf-8",
    )
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"native": ["natives.py:tools"], "policy": {"denyDestructive": True}}))
    config = GatewayConfig.load(path)
    async with config.registry() as registry:
        gateway = McpGateway(registry, hooks=config.hooks)
        with anyio.fail_after(60):
            async with mcp.Client(gateway.server(), mode="legacy") as session:
                names = sorted(t.name for t in (await session.list_tools()).tools)
                refused = await session.call_tool("unsaid", {})
    assert names == ["adds", "reads"]
    assert refused.is_error
    library_default = DenyAnnotated(destructive=True)  # the library's documented rule for natives is unchanged
    unsaid = next(row for row in registry.entries() if row.name == "unsaid")
    assert library_default.refusal(unsaid) is None


def test_a_server_crashing_at_startup_shows_the_end_of_its_stderr(tmp_path: Path) -> None:
    crash = "import sys; sys.stderr.write('boom: OPENWEATHER_KEY is not set\\n'); sys.exit(3)"
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"mcpServers": {"weather": {"command": "python", "args": ["-c", crash]}}}))
    checked = subprocess.run([*TOOLMESH, "check", "-c", str(path)], capture_output=True, text=True, env=ENV, timeout=60)
    assert checked.returncode == 1
    assert "the stdio servers' stderr ends with:\n  | [weather] boom: OPENWEATHER_KEY is not set" in checked.stderr
    assert "server stderr: " in checked.stderr  # where the whole log is
    served = subprocess.run(
        [*TOOLMESH, "serve", "-t", "stdio", "-c", str(path)],
        input="",
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert served.returncode == 2
    assert "the stdio servers' stderr ends with:\n  | [weather] boom: OPENWEATHER_KEY is not set" in served.stderr


def test_profile_over_http_is_not_silently_ignored(tmp_path: Path) -> None:
    crash = "import sys; sys.exit(3)"  # the gateway stops before listening: the warning comes first
    path = tmp_path / "toolmesh.json"
    config = {"mcpServers": {"gone": {"command": "python", "args": ["-c", crash]}}, "profiles": {"few": {}}}
    path.write_text(json.dumps(config))
    served = subprocess.run(
        [*TOOLMESH, "serve", "-c", str(path), "--port", "0", "--profile", "few"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert served.returncode == 2
    assert "warning: --profile picks the profile served over stdio" in served.stderr
    assert "('few' at /few/mcp)" in served.stderr


async def test_clients_are_told_toolmeshs_version() -> None:
    """serverInfo of the handshake (2026-07-28 clients are not sent one unless they ask)."""
    gateway = McpGateway(look_and_wipe())
    with anyio.fail_after(60):
        async with mcp.Client(gateway.server(), mode="legacy") as session:
            info = session.server_info
    assert info is not None and info.name == "toolmesh"
    assert info.version == importlib.metadata.version("toolmesh") != ""


def test_the_banner_says_when_the_gateway_runs_stateless(tmp_path: Path) -> None:
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"native": [f"{EXAMPLES / 'tools.py'}:registry"]}))
    gateway = subprocess.Popen(
        [*TOOLMESH, "serve", "-c", str(path), "--port", "0", "--stateless"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**ENV, "COLUMNS": "200"},
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in gateway.stdout or ()], daemon=True).start()
    try:
        line = ""
        while "listening on" not in line:
            line = lines.get(timeout=60)
        assert "(stateless: no per-client state" in line
    finally:
        gateway.send_signal(signal.SIGTERM)
        assert gateway.wait(timeout=60) == 0
        if gateway.stdout is not None:
            gateway.stdout.close()


def test_check_reports_every_native_module_that_fails(tmp_path: Path) -> None:
    path = tmp_path / "toolmesh.json"
    native = [f"{EXAMPLES / 'tools.py'}:nothing", f"{EXAMPLES / 'tools.py'}:registry", "no_such_module_xyz:tools"]
    path.write_text(json.dumps({"native": native}))
    checked = subprocess.run(
        [*TOOLMESH, "check", "-c", str(path)], capture_output=True, text=True, env={**ENV, "COLUMNS": "300"}, timeout=60
    )
    assert checked.returncode == 1
    assert "key 'native[0]'" in checked.stdout and "key 'native[2]'" in checked.stdout
    assert re.search(r"✓ native +ok  3 tools", checked.stdout), checked.stdout


@pytest.mark.parametrize("command", [["tools"], ["call", "forecast", '{"city": "Oslo"}'], ["export", "-p", "openai"]])
def test_the_catalog_commands_refuse_a_gateway_config(command: list[str]) -> None:
    """Read as an mcpServers file, toolmesh.json's natives, names and policy would be silently ignored."""
    config = str(EXAMPLES / "toolmesh.json")
    done = subprocess.run(
        [*TOOLMESH, *command, "-c", config], capture_output=True, text=True, env={**ENV, "COLUMNS": "300"}, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert "is a gateway config (it has 'native', 'policy', 'profiles', 'serve')" in done.stderr
    assert f"toolmesh check -c {config}" in done.stderr


async def test_serve_says_when_an_upstream_server_is_lost_and_when_it_is_back(tmp_path: Path) -> None:
    """An upstream server that dies on a call gets a stderr line when its session is lost (the failed call
    notices first), and another when the next call has restarted it."""
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"mcpServers": {"demo": {"command": "python", "args": [str(DEMO), "stdio"]}}}))
    command = ["-m", "toolmesh", "serve", "-t", "stdio", "-c", str(path)]
    params = StdioServerParameters(command=sys.executable, args=command, env=ENV)
    with (tmp_path / "stderr.log").open("w+", encoding="utf-8") as errlog:
        with anyio.fail_after(60):
            async with mcp.Client(stdio_client(params, errlog=errlog), mode="legacy") as session:
                died = await session.call_tool("demo__die", {})
                back = await session.call_tool("demo__echo", {"text": "back"})
        errlog.seek(0)
        err = errlog.read()
    assert died.is_error and not back.is_error
    lost, reconnected = "MCP server 'demo': session lost: ", "MCP server 'demo': reconnected (session 2)"
    assert err.count(lost) == 1 and reconnected in err, err
    assert err.index(lost) < err.index(reconnected), err
