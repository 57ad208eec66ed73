"""The guard on toolmesh's one reach into the `mcp` SDK's internals (`_tasks._send_unchecked`).

The SDK (mcp 2.3.0) has no call API for a task-augmented `tools/call` on 2025-11-25, and its
public `send_request` checks a `tools/call` answer as a `CallToolResult`, which a
`CreateTaskResult` is not. These tests fail loudly when the SDK changes either fact: when the
internals move (fix `_send_unchecked`), or when the public path starts accepting a task answer
(then drop the reach and use `send_request`).
"""

from __future__ import annotations

import anyio
import mcp_types
import pytest
from mcp import Client
from pydantic import ValidationError

from _servers import FIXTURES, fixture_server
from toolmesh.mcp._client import tasks as _tasks
from toolmesh.mcp._client.tasks import TasksExtension

TASKS = FIXTURES / "task_server.py"


def _task_call() -> mcp_types.CallToolRequest:
    params = mcp_types.CallToolRequestParams(name="research", arguments={"topic": "x"}, task=mcp_types.TaskMetadata())
    return mcp_types.CallToolRequest(params=params)


async def test_the_sdk_internals_for_a_task_augmented_call_still_work() -> None:
    with anyio.fail_after(30):
        async with Client(fixture_server(TASKS), mode="legacy", extensions=[TasksExtension()]) as client:
            raw = await _tasks._send_unchecked(client.session, _task_call(), None)
    created = mcp_types.CreateTaskResult.model_validate(raw, by_name=False)
    assert created.task.task_id == "task-1" and created.task.status == "working"


async def test_the_sdks_public_send_request_still_refuses_a_task_answer() -> None:
    with anyio.fail_after(30):
        async with Client(fixture_server(TASKS), mode="legacy") as client:
            with pytest.raises(ValidationError, match="content"):
                await client.session.send_request(_task_call(), mcp_types.CallToolResult)


async def test_the_sdk_itself_resolves_a_2026_task_through_the_extensions_claim() -> None:
    # Client.call_tool finishes a claimed `resultType: "task"` answer with the claim's resolver.
    with anyio.fail_after(30):
        async with Client(fixture_server(TASKS), mode="2026-07-28", extensions=[TasksExtension()]) as client:
            result = await client.call_tool("research", {"topic": "x"})
    assert result.structured_content == {"topic": "x", "steps": 3}
