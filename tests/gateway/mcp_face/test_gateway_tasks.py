"""A tool that runs as a task upstream is served by the gateway as a plain tool: the gateway runs the task."""

from __future__ import annotations

import mcp
import pytest

from _servers import FIXTURES, fixture_server
from toolmesh import TaskSupport, ToolRegistry
from toolmesh.gateway import McpGateway
from toolmesh.mcp import McpServer

TASKS = FIXTURES / "task_server.py"


@pytest.mark.parametrize("upstream", ["2025-11-25", "2026-07-28"])
async def test_a_task_only_upstream_tool_is_listed_without_execution_and_called_directly(upstream: str) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(
            McpServer.in_process("t", fixture_server(TASKS), protocol=upstream, include=["research"])  # type: ignore[arg-type]
        )
        expected = TaskSupport.REQUIRED if upstream == "2025-11-25" else None  # 2026-07-28: the server decides
        assert registry["t__research"].capabilities.task_support is expected
        async with mcp.Client(McpGateway(registry).server(), mode="legacy") as downstream:
            (listed,) = (await downstream.list_tools()).tools
            assert listed.name == "t__research" and listed.execution is None
            result = await downstream.call_tool("t__research", {"topic": "tides", "steps": 1})
    assert not result.is_error
    assert result.structured_content is not None and result.structured_content["topic"] == "tides"
