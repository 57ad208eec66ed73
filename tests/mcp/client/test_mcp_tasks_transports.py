"""MCP tasks over real transports: tests/fixtures/task_server.py over stdio and Streamable HTTP.

On each protocol version: a task-only tool runs to its result, and cancelling the dispatch of a
task that never ends sends `tasks/cancel` (the server records it, and says so through a tool).
The logic (progress, failures, timeouts, optional tasks) is in test_mcp_tasks.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from _servers import FIXTURES, http_server, stdio_params
from toolmesh import Text, ToolContext, ToolRegistry
from toolmesh.mcp import MCP_RESULT, MCP_TASK_ID, McpServer

TASKS = FIXTURES / "task_server.py"


@asynccontextmanager
async def task_server(transport: str, protocol: str) -> AsyncIterator[McpServer]:
    if transport == "stdio":
        command, args, env = stdio_params(TASKS)
        yield McpServer.stdio("t", command, args, env=env, protocol=protocol)  # type: ignore[arg-type]
        return
    async with http_server(TASKS) as url:
        yield McpServer.http("t", url, protocol=protocol)  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_task_runs_to_its_result_and_a_cancelled_one_is_cancelled_on_the_server(
    transport: str, protocol: str
) -> None:
    started = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    with anyio.fail_after(120):
        async with task_server(transport, protocol) as spec, ToolRegistry() as registry:
            connection = await registry.connect(spec)
            assert connection.protocol_version == protocol
            result = await registry.dispatch("t__research", {"topic": "owls"})
            assert result.ok, result.error
            assert result.output.structured == {"topic": "owls", "steps": 3}
            assert result.metadata[MCP_TASK_ID] == "task-1"

            async with anyio.create_task_group() as tg:
                tg.start_soon(registry.dispatch, "t__wait_forever", None, ToolContext(progress=progress))
                await started.wait()
                tg.cancel_scope.cancel()
            cancelled = await registry.dispatch("t__cancelled")
            assert list(cancelled.output) == [Text("task-2")]


async def test_a_task_result_and_a_task_failure_are_redacted_like_a_direct_call() -> None:
    # A value of the spec's env is a secret: starred out of the output, the raw result and errors.
    command, args, env = stdio_params(TASKS)
    spec = McpServer.stdio("t", command, args, env={**env, "FIXTURE_SECRET": "hunter2-9f3a"}, protocol="2025-11-25")
    with anyio.fail_after(120):
        async with ToolRegistry() as registry:
            await registry.connect(spec)
            result = await registry.dispatch("t__research", {"topic": "owls"})
            failed = await registry.dispatch("t__doomed")
    assert result.ok, result.error
    assert result.output.as_text().endswith("(***)") and "hunter2" not in str(result.metadata[MCP_RESULT])
    assert failed.error is not None and failed.error.message.endswith("(***)")
    assert "hunter2" not in failed.error.message + str(failed.error.model_feedback)
