"""What a new user's tryout of elicitation, sampling, tasks and logs found (issue 10's follow-ups)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pytest

from _asking import PROTOCOLS, Recorder, answer_of, asking_in_process, asking_stdio
from _mcp import wait_until
from toolmesh import (
    ElicitationRequest,
    ErrorKind,
    NoCallbackError,
    ServerConfigError,
    ToolContext,
    ToolRegistry,
    ToolResult,
)
from toolmesh.mcp import MCP_ASKED, McpServer


async def test_a_classic_python_sdk_elicitation_on_2026_says_to_pin_2025_11_25() -> None:
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        connection = await registry.connect(asking_stdio("auto", include=["ask_classic"]))
        assert connection.protocol_version == "2026-07-28"
        failed = await registry.dispatch("ask__ask_classic")
        assert failed.error is not None and failed.error.kind is ErrorKind.UPSTREAM_ERROR
        assert "no back-channel" in failed.error.message
        assert 'set protocol="2025-11-25"' in failed.error.message
        await registry.connect(asking_stdio("2025-11-25", "legacy", include=["ask_classic"]))
        answered = await registry.dispatch("legacy__ask_classic")
    assert answer_of(answered)["name"].startswith("host:")


async def _two_pairs(registry: ToolRegistry) -> dict[str, ToolResult]:
    results: dict[str, ToolResult] = {}

    async def one(tag: str) -> None:
        ctx = ToolContext(call_id=f"call-{tag}", elicitation=Recorder(tag).elicit)
        results[tag] = await registry.dispatch("ask__ask_pair", {"tag": tag}, ctx)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(one, "a")
            group.start_soon(one, "b")
    return results


async def test_a_call_failed_by_an_ambiguous_stdio_request_is_retryable_with_a_plain_model_text() -> None:
    async with ToolRegistry(elicitation=Recorder("host").elicit) as registry:
        await registry.connect(asking_stdio("2025-11-25", include=["ask_pair"]))
        results = await _two_pairs(registry)
    for result in results.values():
        assert result.error is not None and result.error.retryable
        assert result.error.model_feedback == "The server asked for input while other calls were running; try again."
        assert "2 calls are in flight" in result.error.message and "max_concurrent_calls=1" in result.error.message


async def test_max_concurrent_calls_runs_a_stdio_server_s_calls_one_at_a_time_so_each_can_ask() -> None:
    release = anyio.Event()
    first_asked = anyio.Event()

    async def slow_first(request: ElicitationRequest) -> mcp_types.ElicitResult:
        first_asked.set()
        await release.wait()
        return mcp_types.ElicitResult(action="accept", content={"name": f"slow:{request.call_id}"})

    async with ToolRegistry(elicitation=Recorder("host").elicit) as registry:
        connection = await registry.connect(asking_stdio("2025-11-25", include=["ask_form"], max_concurrent_calls=1))
        assert connection.spec.max_concurrent_calls == 1
        results: dict[str, ToolResult] = {}

        async def one(call_id: str, callback: Any) -> None:
            ctx = ToolContext(call_id=call_id, elicitation=callback)
            results[call_id] = await registry.dispatch("ask__ask_form", {}, ctx)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(one, "c1", slow_first)
                await first_asked.wait()
                group.start_soon(one, "c2", Recorder("fast").elicit)
                # c2 waits for its turn instead of going out while c1's question is open
                await wait_until(lambda: connection._session.turns.statistics().tasks_waiting == 1, 30)  # type: ignore[union-attr]
                release.set()
    assert answer_of(results["c1"])["content"] == {"name": "slow:c1"}
    assert answer_of(results["c2"])["content"] == {"name": "fast:c2"}
    assert all(note["answered"] for r in results.values() for note in r.metadata[MCP_ASKED])


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "2"])
def test_max_concurrent_calls_must_be_a_positive_whole_number(value: object) -> None:
    with pytest.raises(ServerConfigError, match=r"max_concurrent_calls.*at least 1"):
        McpServer.stdio("x", "python", max_concurrent_calls=value)  # type: ignore[arg-type]


def test_a_config_file_sets_max_concurrent_calls() -> None:
    [spec] = McpServer.from_config({"mcpServers": {"x": {"command": "python", "maxConcurrentCalls": 1}}})
    assert spec.max_concurrent_calls == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_callback_still_open_at_the_call_timeout_is_noted_as_unanswered(protocol: str) -> None:
    async def never(request: ElicitationRequest) -> mcp_types.ElicitResult:
        await anyio.sleep_forever()
        raise AssertionError

    async with ToolRegistry(elicitation=never) as registry:
        await registry.connect(asking_in_process(protocol, include=["ask_form"], call_timeout=1))
        with anyio.fail_after(30):
            result = await registry.dispatch("ask__ask_form", {})
    assert result.error is not None and result.error.kind is ErrorKind.TIMEOUT
    assert result.metadata[MCP_ASKED] == [
        {
            "kind": "elicitation",
            "mode": "form",
            "message": "Your name?",
            "answered": False,
            "reason": "the call ended first",
        }
    ]


async def test_a_per_call_callback_without_a_registry_default_is_named_as_unreachable_on_2026() -> None:
    mine = Recorder("mine")
    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process("2026-07-28", include=["ask_form"]))
        result = await registry.dispatch("ask__ask_form", {}, ToolContext(elicitation=mine.elicit))
    assert isinstance(result.error, NoCallbackError) and mine.asked == []
    message = result.error.message
    assert "the call's ToolContext.elicitation answers MCP servers only when the registry has a default" in message
    assert "capabilities are declared at connect" in message and "has no elicitation callback" not in message


async def test_without_any_callback_the_message_still_says_to_set_one() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process("2026-07-28", include=["ask_form"]))
        result = await registry.dispatch("ask__ask_form", {})
    assert isinstance(result.error, NoCallbackError)
    assert "has no elicitation callback (set ToolRegistry(elicitation=...) or ToolContext.elicitation)" in (
        result.error.message
    )
