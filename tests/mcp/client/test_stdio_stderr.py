"""A stdio server's stderr: to the host's stderr by default, or appended to the spec's ``stderr`` file."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from _mcp import child_pids, demo_stdio
from toolmesh import ServerConnectionError, ToolRegistry
from toolmesh.mcp import McpServer, ServerConfigError


async def test_a_server_s_stderr_is_appended_to_its_stderr_file(tmp_path: Path) -> None:
    log = tmp_path / "demo.log"
    log.write_text("kept\n")
    before = child_pids()
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(demo_stdio(stderr=log, env={"FIXTURE_LOG_LEVEL": "DEBUG"}))
            assert (await registry.dispatch("demo__echo", {"text": "x"})).ok
    text = log.read_text()
    assert text.startswith("kept\n") and "DEBUG" in text  # appended: what was there stays
    assert child_pids() - before == set()


async def test_a_stderr_file_that_cannot_be_opened_fails_connect_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no such folder" / "demo.log"
    async with ToolRegistry() as registry:
        with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(demo_stdio(stderr=missing))
        assert str(caught.value) == (
            f"MCP server 'demo': cannot open its stderr file {str(missing)!r} (No such file or directory); "
            "fix the path (stderr on the server spec), or leave it out to use the host's stderr"
        )
        assert registry.names() == []


def test_stderr_is_a_stdio_key_relative_to_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"fs": {"command": "npx", "stderr": "logs/fs.log"}}}))
    [spec] = McpServer.from_config(config)
    assert spec.stderr == str(tmp_path / "logs" / "fs.log")
    with pytest.raises(ServerConfigError, match="'stderr'"):
        McpServer.http("web", "https://example.com/mcp", stderr="x.log")  # type: ignore[call-arg]
    with pytest.raises(ServerConfigError, match="stderr"):
        McpServer.from_config({"mcpServers": {"web": {"url": "https://example.com/mcp", "stderr": "x.log"}}})


def test_a_stderr_path_is_made_absolute_when_the_spec_is_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = McpServer.stdio("fs", "npx", stderr="logs/fs.log")
    assert spec.stderr == str(tmp_path / "logs" / "fs.log")
    assert McpServer.stdio("fs", "npx", stderr="~/fs.log").stderr == str(Path.home() / "fs.log")
    with pytest.raises(ServerConfigError, match=r"'stderr'.*is empty"):
        McpServer.stdio("fs", "npx", stderr=" ")
