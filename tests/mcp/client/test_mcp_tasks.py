"""MCP tasks: task-only and optional-task tools run as tasks, on 2025-11-25 and 2026-07-28.

Logic runs against tests/fixtures/task_server.py in-process (JSON-RPC over memory streams);
test_mcp_tasks_transports.py runs the same over stdio and Streamable HTTP.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client

from _servers import FIXTURES, fixture_server
from toolmesh import ErrorKind, TaskSupport, Text, ToolContext, ToolRegistry, tool
from toolmesh.mcp import MCP_RESULT, MCP_SERVER_LABEL, MCP_TASK_ID, MCP_WIRE_NAME, McpServer
from toolmesh.mcp._client import tasks as _tasks
from toolmesh.mcp._client.tasks import TasksExtension
from toolmesh.providers import anthropic, openai

TASKS = FIXTURES / "task_server.py"
PROTOCOLS = ["2025-11-25", "2026-07-28"]


def tasks_in_process(protocol: str, label: str = "t", **options: Any) -> McpServer:
    return McpServer.in_process(label, fixture_server(TASKS), protocol=protocol, **options)  # type: ignore[arg-type]


async def text_of(registry: ToolRegistry, name: str) -> str:
    result = await registry.dispatch(name)
    assert result.ok, result.error
    [block] = list(result.output)
    assert isinstance(block, Text)
    return block.text


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_task_only_tool_runs_to_its_result_like_a_direct_call(protocol: str) -> None:
    seen: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, message))

    async with ToolRegistry() as registry:
        await registry.connect(tasks_in_process(protocol))
        with anyio.fail_after(30):
            result = await registry.dispatch("t__research", {"topic": "owls"}, ToolContext(progress=progress))
    assert result.ok, result.error
    assert result.output.structured == {"topic": "owls", "steps": 3}
    assert result.metadata[MCP_TASK_ID] == "task-1"
    assert result.metadata[MCP_SERVER_LABEL] == "t" and result.metadata[MCP_WIRE_NAME] == "research"
    assert result.metadata[MCP_RESULT].structured_content == {"topic": "owls", "steps": 3}
    messages = [message for _, message in seen]
    assert messages[0] == "working: step 1 of 3" and "working: step 3 of 3" in messages
    assert [value for value, _ in seen] == list(range(1, len(seen) + 1))  # one report per new status


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_task_only_rows_are_offered_to_models(protocol: str, caplog: pytest.LogCaptureFixture) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(tasks_in_process(protocol))
        offered = {definition.name for definition in registry.definitions()}
        assert {"t__research", "t__wait_forever", "t__doomed"} <= offered
        assert "t__research" in {tool["function"]["name"] for tool in openai.tools(registry)}
        assert "t__research" in {tool["name"] for tool in anthropic.tools(registry)}
    assert not [r for r in caplog.records if "task" in r.getMessage()]


async def test_an_optional_task_tool_runs_as_a_task_only_when_asked() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(tasks_in_process("2025-11-25"))
        assert registry["t__convert"].capabilities.task_support is TaskSupport.OPTIONAL
        direct = await registry.dispatch("t__convert", {"text": "hi"})
        as_task = await registry.dispatch("t__convert", {"text": "hi"}, ToolContext(as_task=True))
    assert list(direct.output) == [Text("HI (direct)")] and MCP_TASK_ID not in direct.metadata
    assert list(as_task.output) == [Text("HI (task)")] and as_task.metadata[MCP_TASK_ID] == "task-1"


async def test_as_task_is_ignored_for_a_tool_that_forbids_tasks() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(tasks_in_process("2025-11-25"))
        assert registry["t__cancelled"].capabilities.task_support is TaskSupport.FORBIDDEN
        result = await registry.dispatch("t__cancelled", ctx=ToolContext(as_task=True))
    assert result.ok and list(result.output) == [Text("none")] and MCP_TASK_ID not in result.metadata


async def test_on_2026_the_server_decides_and_as_task_changes_nothing() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(tasks_in_process("2026-07-28"))
        result = await registry.dispatch("t__convert", {"text": "hi"}, ToolContext(as_task=True))
    assert list(result.output) == [Text("HI (direct)")] and MCP_TASK_ID not in result.metadata


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_failed_task_is_an_upstream_error_naming_the_row(protocol: str) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(tasks_in_process(protocol))
        with anyio.fail_after(30):
            result = await registry.dispatch("t__doomed")
    assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
    assert "'doomed'" in result.error.message and "task 'task-1' failed" in result.error.message
    assert "the archive is offline" in result.error.message
    assert result.error.model_feedback == "The tool 't__doomed' failed: the archive is offline"
    assert result.metadata[MCP_TASK_ID] == "task-1"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_cancelling_the_dispatch_cancels_the_task_on_the_server(protocol: str) -> None:
    started = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    async with ToolRegistry() as registry:
        await registry.connect(tasks_in_process(protocol))
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(registry.dispatch, "t__wait_forever", None, ToolContext(progress=progress))
                await started.wait()
                tg.cancel_scope.cancel()
            assert await text_of(registry, "t__cancelled") == "task-1"
            assert await registry.dispatch("t__research", {"topic": "x", "steps": 1}), "the session stays usable"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_call_timeout_covers_the_task_and_cancels_it(protocol: str) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(tasks_in_process(protocol, call_timeout=0.5))
        with anyio.fail_after(30):
            result = await registry.dispatch("t__wait_forever")
            assert result.error is not None and result.error.kind is ErrorKind.TIMEOUT
            assert await text_of(registry, "t__cancelled") == "task-1"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_polling_follows_the_servers_interval_within_bounds(protocol: str) -> None:
    async with ToolRegistry() as registry:
        # The server suggests 1 ms; toolmesh waits at least POLL_MIN (0.05 s) between polls.
        spec = McpServer.in_process(
            "t", fixture_server(TASKS, {"FIXTURE_POLL_MS": "1", "FIXTURE_STEP": "0.1"}), protocol=protocol
        )  # type: ignore[arg-type]
        await registry.connect(spec)
        with anyio.fail_after(30):
            before = anyio.current_time()
            result = await registry.dispatch("t__research", {"topic": "x", "steps": 3})
            elapsed = anyio.current_time() - before
            polls = int(await text_of(registry, "t__polls"))
    assert result.ok
    assert polls <= elapsed / 0.05 + 1  # a 1 ms suggestion would have polled hundreds of times


# -- a task that needs input (elicitation) ------------------------------------------------------


async def _name(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
    assert params.message == "Your name?"
    return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})


async def test_on_2026_a_tasks_input_request_is_answered_through_the_clients_callbacks() -> None:
    # inputRequests in tasks/get -> the SDK's elicitation callback -> tasks/update -> the result.
    with anyio.fail_after(30):
        async with Client(
            fixture_server(TASKS), mode="2026-07-28", extensions=[TasksExtension()], elicitation_callback=_name
        ) as client:
            result = await client.call_tool("ask", {})
    assert [block.text for block in result.content if isinstance(block, mcp_types.TextContent)] == ["Hello, Ada"]


async def test_on_2025_a_tasks_input_request_reaches_the_clients_callbacks_during_tasks_result() -> None:
    request = mcp_types.CallToolRequest(params=mcp_types.CallToolRequestParams(name="ask", arguments={}))
    with anyio.fail_after(30):
        async with Client(fixture_server(TASKS), mode="legacy", elicitation_callback=_name) as client:
            result = await _tasks._legacy(_tasks._Run(None, None, client.session), request, None)
    assert [block.text for block in result.content if isinstance(block, mcp_types.TextContent)] == ["Hello, Ada"]


async def test_on_2026_input_nobody_gives_fails_the_call_and_cancels_the_task() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(tasks_in_process("2026-07-28"))  # no elicitation callback installed
        with anyio.fail_after(30):
            result = await registry.dispatch("t__ask")
            assert await text_of(registry, "t__cancelled") == "task-1"
    assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
    assert "task 'task-1' was cancelled: it asked for input (elicitation/create) and got none" in result.error.message
    assert result.error.model_feedback == "The tool 't__ask' could not finish: it needed input that was not given."


def test_the_poll_wait_is_the_servers_suggestion_bounded() -> None:
    assert _tasks._wait(200) == 0.2
    assert _tasks._wait(1) == _tasks.POLL_MIN == 0.05
    assert _tasks._wait(600_000) == _tasks.POLL_MAX == 5.0
    assert _tasks._wait(None) == 0.5  # no suggestion


async def test_as_task_means_nothing_for_a_native_tool() -> None:
    @tool
    async def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    async with ToolRegistry() as registry:
        registry.register(add)
        assert registry["add"].capabilities.task_support is None
        result = await registry.dispatch("add", {"a": 1, "b": 2}, ToolContext(as_task=True))
    assert result.ok and result.output.structured == 3 and MCP_TASK_ID not in result.metadata
