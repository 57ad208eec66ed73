"""What a new user's tryout of elicitation, sampling, tasks and logs found (issue 10's follow-ups)."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pydantic
import pytest

from _asking import PROTOCOLS, Recorder, answer_of, asking_in_process, asking_stdio
from _mcp import wait_until
from _servers import FIXTURES, fixture_server
from toolmesh import (
    ElicitationRequest,
    ErrorKind,
    LogMessage,
    NoCallbackError,
    ServerConfigError,
    TaskSupport,
    ToolContext,
    ToolRegistry,
    ToolResult,
    tool,
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


class Contact(pydantic.BaseModel):
    name: str
    email: str
    newsletter: bool = False


@tool
async def sign_up(ctx: ToolContext) -> str:
    """Sign the user up."""
    answer = await ctx.elicit("Who are you?", Contact)
    if answer.action != "accept":
        return "not signed up"
    contact = Contact.model_validate(answer.content)  # checked already: this cannot fail
    return f"{contact.name} <{contact.email}> newsletter={contact.newsletter}"


def _accepting(content: dict[str, Any]) -> Any:
    async def answer(request: ElicitationRequest) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content=content)

    return answer


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_an_accepted_form_that_does_not_fit_the_schema_never_reaches_the_server(protocol: str) -> None:
    async with ToolRegistry(elicitation=_accepting({"name": 5})) as registry:
        await registry.connect(asking_in_process(protocol, include=["ask_form"]))
        result = await registry.dispatch("ask__ask_form", {})
    assert not result.ok  # the server got an error answer (2025-11-25) or the call failed (2026-07-28)
    [note] = result.metadata[MCP_ASKED]
    assert note["answered"] is False
    assert note["reason"].startswith("the answer does not match the requested schema (name: 5 is not of type")
    if protocol == "2026-07-28":
        assert result.error is not None and result.error.kind is ErrorKind.INTERNAL
        assert "name: 5 is not of type 'string'" in result.error.message and "fix the callback" in result.error.message


async def test_a_native_tool_s_form_answer_is_checked_and_reads_back_as_its_model() -> None:
    registry = ToolRegistry(elicitation=_accepting({"name": "Ada"}))
    registry.register(sign_up)
    failed = await registry.dispatch("sign_up", {})
    assert failed.error is not None and failed.error.kind is ErrorKind.INTERNAL
    assert "email: missing required field" in failed.error.message
    good = ToolRegistry(elicitation=_accepting({"name": "Ada", "email": "ada@example.com"}))
    good.register(sign_up)
    assert (await good.dispatch("sign_up", {})).output.as_text() == "Ada <ada@example.com> newsletter=False"


def test_a_plain_def_callback_is_refused_where_it_is_given() -> None:
    def plain(request: ElicitationRequest) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="decline")

    with pytest.raises(TypeError, match=r"ToolRegistry\(elicitation=...\) must be an async function.*plain"):
        ToolRegistry(elicitation=plain)
    with pytest.raises(TypeError, match=r"ToolRegistry\(sampling=...\) must be an async function"):
        ToolRegistry(sampling=plain)  # type: ignore[arg-type]


async def test_a_plain_callback_on_the_context_fails_the_call_naming_it() -> None:
    registry = ToolRegistry()
    registry.register(sign_up)
    result = await registry.dispatch(
        "sign_up", {}, ToolContext(elicitation=lambda request: mcp_types.ElicitResult(action="decline"))
    )
    assert (
        result.error is not None
        and "<lambda>' is not async: it returned a value of type ElicitResult" in result.error.message
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_callback_answering_the_wrong_type_is_named(protocol: str) -> None:
    async def confused(request: ElicitationRequest) -> Any:
        return {"action": "accept"}

    async with ToolRegistry(elicitation=confused) as registry:
        await registry.connect(asking_in_process(protocol, include=["ask_form"]))
        result = await registry.dispatch("ask__ask_form", {})
        registry.register(sign_up)
        native = await registry.dispatch("sign_up", {})
    wanted = "callback 'test_a_callback_answering_the_wrong_type_is_named.<locals>.confused' answered with a dict"
    assert native.error is not None and wanted in native.error.message
    assert not result.ok and result.metadata[MCP_ASKED][0]["reason"] == "callback answered with the wrong type"
    if protocol == "2026-07-28":
        assert result.error is not None and wanted in result.error.message


def test_an_async_on_change_listener_is_refused() -> None:
    async def listener(change: object) -> None:
        pass

    with pytest.raises(TypeError, match=r"on_change takes a plain function.*'.*listener' is async.*changes\(\)"):
        ToolRegistry().on_change(listener)  # type: ignore[arg-type]


@tool
async def noisy(ctx: ToolContext, level: str) -> str:
    """Log at `level`."""
    await ctx.log(level, "hello")
    return "ok"


async def test_ctx_log_reads_python_s_level_names_and_names_the_levels_for_an_unknown_one() -> None:
    seen: list[LogMessage] = []

    async def on_log(message: LogMessage) -> None:
        seen.append(message)

    registry = ToolRegistry()
    registry.register(noisy)
    for level in ("warn", "WARNING", "Fatal", "info"):
        assert (await registry.dispatch("noisy", {"level": level}, ToolContext(on_log=on_log))).ok
    assert [m.level for m in seen] == ["warning", "warning", "critical", "info"]
    failed = await registry.dispatch("noisy", {"level": "loud"})
    assert failed.error is not None
    assert "unknown log level 'loud'; use one of debug, info, notice, warning" in failed.error.message


TASKS = FIXTURES / "task_server.py"


@pytest.mark.parametrize(("protocol", "expected"), [("2025-11-25", TaskSupport.FORBIDDEN), ("2026-07-28", None)])
async def test_a_tool_that_says_nothing_of_tasks_is_forbidden_on_2025_and_unknown_on_2026(
    protocol: str, expected: TaskSupport | None
) -> None:
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("t", fixture_server(TASKS), protocol=protocol))  # type: ignore[arg-type]
        assert registry["t__research"].capabilities.task_support is (
            TaskSupport.REQUIRED if protocol == "2025-11-25" else None
        )
        assert registry["t__cancelled"].capabilities.task_support is expected


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_task_s_statuses_after_its_input_was_given_still_reach_progress(protocol: str) -> None:
    statuses: list[str | None] = []

    async def progress(n: float, total: float | None, message: str | None) -> None:
        statuses.append(message)

    async with ToolRegistry(elicitation=_accepting({"name": "Ada"})) as registry:
        await registry.connect(McpServer.in_process("t", fixture_server(TASKS), protocol=protocol))  # type: ignore[arg-type]
        with anyio.fail_after(60):
            result = await registry.dispatch("t__ask", {}, ToolContext(progress=progress))
    assert result.ok, result.error
    assert "input_required" in [s.split(":")[0] for s in statuses if s]
    after = statuses[[s.split(":")[0] if s else s for s in statuses].index("input_required") + 1 :]
    assert after and after[-1] is not None and after[-1].startswith("completed"), statuses
