"""Per-call logs: a server's log messages during a call also reach that call's `on_log`, as `LogMessage`s."""

from __future__ import annotations

import logging

import anyio
import pytest

from _asking import ASKING, PROTOCOLS, asking_http, asking_in_process, asking_stdio
from _servers import http_server
from toolmesh import LogMessage, ToolContext, ToolRegistry, tool

SECRET = "s3cr3t-log-token-77"
EXPECTED = [
    ("debug", "debug t"),
    ("info", "info t"),
    ("warning", "warning t"),
    ("error", "error t"),
    ("info", {"tag": "t"}),
]


class Inbox:
    """An `on_log` callback that keeps what it receives."""

    def __init__(self) -> None:
        self.messages: list[LogMessage] = []

    async def __call__(self, message: LogMessage) -> None:
        self.messages.append(message)


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_call_s_log_messages_reach_its_on_log_in_process(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmesh.server.ask")
    inbox = Inbox()
    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process(protocol))
        result = await registry.dispatch("ask__chatty", {}, ToolContext(call_id="l1", on_log=inbox))
    assert result.ok
    assert [(m.level, m.data) for m in inbox.messages] == EXPECTED
    assert {(m.call_id, m.tool_name, m.server, m.logger) for m in inbox.messages} == {
        ("l1", "ask__chatty", "ask", "chatty")
    }
    assert len([r for r in caplog.records if r.name == "toolmesh.server.ask"]) == 5  # the logger still has them


async def test_without_on_log_a_2026_call_does_not_opt_in_to_log_messages(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolmesh.server.ask")
    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process("2026-07-28"))
        assert (await registry.dispatch("ask__chatty", {})).ok
    assert [r for r in caplog.records if r.name == "toolmesh.server.ask"] == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_over_stdio_one_call_s_logs_reach_it_with_secrets_masked(protocol: str) -> None:
    inbox = Inbox()
    async with ToolRegistry() as registry:
        await registry.connect(asking_stdio(protocol, env={"FIXTURE_API_TOKEN": SECRET}))
        result = await registry.dispatch("ask__chatty", {"tag": SECRET}, ToolContext(call_id="l2", on_log=inbox))
    assert result.ok
    assert [(m.level, m.data) for m in inbox.messages] == [
        ("debug", "debug ***"),
        ("info", "info ***"),
        ("warning", "warning ***"),
        ("error", "error ***"),
        ("info", {"tag": "***"}),
    ]
    assert all(m.call_id == "l2" for m in inbox.messages)


async def _log_pair(registry: ToolRegistry) -> dict[str, Inbox]:
    inboxes = {tag: Inbox() for tag in ("a", "b")}

    async def one(tag: str) -> None:
        ctx = ToolContext(call_id=f"call-{tag}", on_log=inboxes[tag])
        assert (await registry.dispatch("ask__chatty_pair", {"tag": tag}, ctx)).ok

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(one, "a")
            group.start_soon(one, "b")
    return inboxes


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_over_http_two_calls_each_receive_only_their_own_logs(protocol: str) -> None:
    async with http_server(ASKING) as url, ToolRegistry() as registry:
        await registry.connect(asking_http(url, protocol))
        inboxes = await _log_pair(registry)
    for tag, inbox in inboxes.items():
        assert [(m.data, m.call_id) for m in inbox.messages] == [(f"pair {tag}", f"call-{tag}")]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_in_process_two_calls_each_receive_only_their_own_logs(protocol: str) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process(protocol))
        inboxes = await _log_pair(registry)
    for tag, inbox in inboxes.items():
        assert [(m.data, m.call_id) for m in inbox.messages] == [(f"pair {tag}", f"call-{tag}")]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_over_stdio_logs_of_two_calls_at_once_go_to_neither_call(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Over stdio a log message says nothing of its call: with two in flight it is not guessed."""
    caplog.set_level(logging.INFO, logger="toolmesh.server.ask")
    async with ToolRegistry() as registry:
        await registry.connect(asking_stdio(protocol))
        await registry.set_server_log_level("ask", "info")
        inboxes = await _log_pair(registry)
    assert inboxes["a"].messages == [] and inboxes["b"].messages == []
    assert sorted(r.getMessage() for r in caplog.records if r.name == "toolmesh.server.ask") == ["pair a", "pair b"]


async def test_a_native_tool_logs_to_on_log_and_to_its_logger(caplog: pytest.LogCaptureFixture) -> None:
    @tool
    async def noisy(ctx: ToolContext) -> str:
        """Log twice."""
        await ctx.log("info", "starting")
        await ctx.log("error", {"failed": 1}, logger="sub")
        return "done"

    registry = ToolRegistry()
    registry.register(noisy)
    inbox = Inbox()
    caplog.set_level(logging.DEBUG, logger="toolmesh.tool.noisy")
    result = await registry.dispatch("noisy", {}, ToolContext(call_id="n1", on_log=inbox))
    assert result.ok
    assert inbox.messages == [
        LogMessage("info", "starting", None, "n1", "noisy", None),
        LogMessage("error", {"failed": 1}, "sub", "n1", "noisy", None),
    ]
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "toolmesh.tool.noisy"]
    assert records == [(logging.INFO, "starting"), (logging.ERROR, "{'failed': 1}")]
    assert (await registry.dispatch("noisy", {})).ok  # no on_log: the logger only


async def test_a_native_tool_s_unknown_level_is_a_clear_error() -> None:
    @tool
    async def loud(ctx: ToolContext) -> str:
        """Log at a level MCP does not have."""
        await ctx.log("shout", "hi")
        return "never"

    registry = ToolRegistry(show_error_details=True)
    registry.register(loud)
    result = await registry.dispatch("loud", {})
    assert result.error is not None and "unknown log level 'shout'" in result.error.message
