"""Server log messages (`notifications/message`) become records on `toolmesh.server.<label>`."""

from __future__ import annotations

import logging

import pytest

from _mcp import demo_in_process, demo_stdio, lowlevel_in_process
from toolmesh import ToolRegistry

SECRET = "s3cr3t-token-value-42"
CHATTY = {"FIXTURE_CHATTY": "1"}
LEVELS = [
    ("debug", logging.DEBUG),
    ("info", logging.INFO),
    ("notice", logging.INFO),
    ("warning", logging.WARNING),
    ("error", logging.ERROR),
    ("alert", logging.CRITICAL),
]


def _server_records(caplog: pytest.LogCaptureFixture, label: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == f"toolmesh.server.{label}"]


async def test_in_process_log_messages_arrive_at_their_levels(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmesh.server.demo")
    async with ToolRegistry() as registry:
        connection = await registry.connect(demo_in_process("demo", env=CHATTY, include=["chatty"]))
        assert connection.protocol_version == "2025-11-25"
        result = await registry.dispatch("demo__chatty", {"text": "hi"})
    assert result.ok and result.output.as_text() == "logged"
    records = _server_records(caplog, "demo")
    got = [(r.getMessage(), r.levelno, r.mcp_level, r.mcp_logger) for r in records]  # type: ignore[attr-defined]
    expected = [(f"{name}: hi", level, name, "chatty") for name, level in LEVELS]
    assert got == [*expected, ('{"text": "hi"}', logging.INFO, "info", None)]
    assert capfd.readouterr().out == ""


async def test_stdio_log_messages_follow_the_level_the_host_sets_and_hide_secrets(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmesh.server.demo")
    async with ToolRegistry() as registry:
        connection = await registry.connect(
            demo_stdio("demo", env={**CHATTY, "FIXTURE_API_TOKEN": SECRET}, include=["chatty"])
        )
        assert connection.protocol_version == "2026-07-28"  # log delivery: the per-request _meta opt-in
        await registry.set_server_log_level("demo", "debug")
        assert (await registry.dispatch("demo__chatty", {"text": f"key={SECRET}"})).ok
        everything = [(r.getMessage(), r.levelno) for r in _server_records(caplog, "demo")]
        assert everything[:6] == [(f"{name}: key=***", level) for name, level in LEVELS]
        caplog.clear()
        await registry.set_server_log_level("demo", "warning")
        assert (await registry.dispatch("demo__chatty", {"text": "later"})).ok
        warnings = [r.getMessage() for r in _server_records(caplog, "demo")]
        assert warnings == ["warning: later", "error: later", "alert: later"]
    assert SECRET not in caplog.text
    assert capfd.readouterr().out == ""


async def test_an_unknown_log_level_is_refused_by_name() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process("demo", include=["echo"]))
        with pytest.raises(ValueError, match="unknown MCP log level 'verbose'; use one of debug, info"):
            await registry.set_server_log_level("demo", "verbose")
        assert (await registry.dispatch("demo__echo", {"text": "still here"})).ok


async def test_on_2025_11_25_the_level_is_a_logging_set_level_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmesh.server.low")
    async with ToolRegistry() as registry:
        spec = lowlevel_in_process("low", env={"FIXTURE_LOGGING": "1"}, include=["log"])
        connection = await registry.connect(spec)
        assert connection.protocol_version == "2025-11-25" and connection.capabilities.logging is not None
        assert (await registry.dispatch("low__log", {"text": "a"})).ok
        assert [r.getMessage() for r in _server_records(caplog, "low")] == ["debug: a", "info: a", "warning: a"]
        caplog.clear()
        await registry.set_server_log_level("low", "info")
        assert (await registry.dispatch("low__log", {"text": "b"})).ok
        assert [(r.getMessage(), r.levelno) for r in _server_records(caplog, "low")] == [
            ("info: b", logging.INFO),
            ("warning: b", logging.WARNING),
        ]
