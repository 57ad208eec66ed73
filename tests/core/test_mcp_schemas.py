"""Server-supplied schemas and model-written arguments for MCP rows (issues 7 and 8).

Against the "schemas" fixture server (tests/fixtures/schema_server.py) over stdio and
Streamable HTTP; it counts the tools/call requests it receives, so a test can prove a
call never reached the wire.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from _mcp import child_pids, everything_stdio
from _servers import FIXTURES, http_server, stdio_params
from toolmesh import (
    ErrorKind,
    Json,
    McpEntry,
    Text,
    ToolAnnotations,
    ToolCall,
    ToolCapabilities,
    ToolContext,
    ToolRegistry,
    run_tool_calls,
)
from toolmesh.hooks import Hook, InvalidCall, InvalidToolCallAction, Repair
from toolmesh.mcp import MCP_RESULT, McpServer
from toolmesh.policy import DenyAnnotated
from toolmesh.providers import openai as openai_chat

SCHEMA = FIXTURES / "schema_server.py"
EVIL = "a" * 40 + "b"
TRANSPORTS = ["sch", "web"]
UNUSABLE = ("ref_cycle", "self_anyof", "bad_properties", "bad_required", "bad_output_schema")


def schema_stdio(label: str, env: dict[str, str] | None = None, **options: Any) -> McpServer:
    command, args, child_env = stdio_params(SCHEMA, env)
    return McpServer.stdio(label, command, args, env=child_env, **options)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def registry() -> AsyncIterator[ToolRegistry]:
    before = child_pids()
    async with http_server(SCHEMA) as url, ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect_all(
                [schema_stdio("sch", call_timeout=20), McpServer.http("web", url, call_timeout=20)]
            )
        yield registry
    assert child_pids() - before == set()


@pytest.fixture(params=TRANSPORTS)
def server(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def calls(registry: ToolRegistry, server: str) -> int:
    """How many tools/call requests the fixture received so far."""
    result = await registry.dispatch(f"{server}__calls")
    assert result.ok, result.error
    return int(result.output.as_text())


# -- issue 7 #1: arguments checked locally against the inputSchema ------------------------


async def test_invalid_arguments_never_reach_the_wire(registry: ToolRegistry, server: str) -> None:
    before = await calls(registry, server)
    with anyio.fail_after(30):
        bad = await registry.dispatch(f"{server}__typed", {"n": "two", "name": "Bob1"})
        missing = await registry.dispatch(f"{server}__echo", "{}")
    assert bad.error is not None and bad.error.kind is ErrorKind.INVALID_ARGUMENTS
    feedback = bad.error.model_feedback
    assert f"Invalid arguments for tool '{server}__typed'" in feedback
    assert "n: 'two' is not of type 'integer'" in feedback
    assert "name: does not match the pattern '^[a-z]+$'" in feedback
    assert "Expected parameters: n (integer, required), name (string)." in feedback
    assert missing.error is not None and missing.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert "text: missing required field" in missing.error.model_feedback
    assert MCP_RESULT not in bad.metadata and MCP_RESULT not in missing.metadata
    assert await calls(registry, server) == before  # nothing went on the wire
    good = await registry.dispatch(f"{server}__typed", {"n": 2, "name": "bob"})
    assert good.ok, good.error
    assert await calls(registry, server) == before + 1


class FixText(Hook):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_invalid_tool_call(
        self, call: ToolCall, problem: InvalidCall, ctx: ToolContext[Any]
    ) -> InvalidToolCallAction:
        self.seen.append(problem.error.model_feedback)
        return Repair(arguments={"text": "repaired"})


async def test_repair_hooks_run_for_mcp_rows(registry: ToolRegistry, server: str) -> None:
    before = await calls(registry, server)
    hook = FixText()
    with anyio.fail_after(30):
        (result,) = await run_tool_calls(
            registry.snapshot(), [ToolCall.from_arguments("c1", f"{server}__echo", {"text": 7})], hooks=[hook]
        )
    assert result.ok, result.error
    assert result.output.as_text() == "repaired"
    assert len(hook.seen) == 1 and "text: 7 is not of type 'string'" in hook.seen[0]
    assert await calls(registry, server) == before + 1  # only the repaired call was sent


async def test_validate_arguments_can_be_turned_off() -> None:
    async with ToolRegistry() as registry:
        with anyio.fail_after(30):
            await registry.connect(schema_stdio("off", validate_arguments=False, call_timeout=20))
            row = registry["off__echo"]
            assert isinstance(row, McpEntry) and row.input_validator is None
            result = await registry.dispatch("off__echo", {"text": 7})
            assert result.ok, result.error  # the server got it as is
            assert result.output.as_text() == "7"
            assert await calls(registry, "off") == 1


# -- issue 8 #3: server patterns run on RE2 -------------------------------------------------


async def test_a_catastrophic_input_pattern_is_checked_in_linear_time(registry: ToolRegistry, server: str) -> None:
    before = await calls(registry, server)
    with anyio.fail_after(30):  # on a backtracking engine this takes about 2**40 steps
        result = await registry.dispatch(f"{server}__redos_in", {"s": EVIL})
    assert result.error is not None and result.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert "s: does not match the pattern '^(a+)+$'" in result.error.model_feedback
    assert await calls(registry, server) == before
    ok = await registry.dispatch(f"{server}__redos_in", {"s": "aaaa"})
    assert ok.ok, ok.error


async def test_a_catastrophic_output_pattern_is_checked_in_linear_time(registry: ToolRegistry, server: str) -> None:
    with anyio.fail_after(30):
        result = await registry.dispatch(f"{server}__redos_out")
    assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
    assert result.error.model_feedback == (
        f"The tool '{server}__redos_out' returned a result that does not match its declared output schema."
    )
    assert "does not match the pattern '^(a+)+$'" in result.error.message
    assert result.mcp_result.structured_content == {"s": EVIL}


# -- issue 8 #6 and 7 #1: schemas that cannot be used -----------------------------------------


async def test_unusable_schemas_are_reported_once_at_the_first_call(caplog: pytest.LogCaptureFixture) -> None:
    """Schemas compile at a row's first call (issue 13): connecting warns of nothing, the
    first calls warn once per unusable schema and run unchecked, a refresh and later calls
    never warn again."""
    caplog.set_level(logging.WARNING, logger="toolmesh")
    calls_ = [
        ("once__bad_properties", {}),  # unusable: the call goes out unchecked
        ("once__bad_properties", "[1, 2]"),
        ("once__bad_required", {"anything": 1}),
        ("once__ref_cycle", {"x": {"y": 1}}),
        ("once__self_anyof", {}),
        ("once__bad_output_schema", None),
        ("once__backref", {"s": "zz", "x1": "y"}),  # its patterns are skipped
    ]
    async with ToolRegistry() as registry:
        with anyio.fail_after(30):
            await registry.connect(schema_stdio("once", call_timeout=20))
        assert "cannot be used" not in caplog.text and "RE2 cannot run" not in caplog.text  # nothing compiled yet
        with anyio.fail_after(30):
            first = [await registry.dispatch(name, arguments) for name, arguments in calls_]
        for tool in UNUSABLE:
            found = [r for r in caplog.records if f"'once', tool {tool!r}" in r.getMessage()]
            assert len(found) == 1, tool
            assert "cannot be used" in found[0].getMessage() and found[0].levelno == logging.WARNING
        assert "'(a)\\\\1'" in caplog.text and "RE2 cannot run" in caplog.text  # backref: skipped, named
        warned = len(caplog.records)
        with anyio.fail_after(30):
            await registry.refresh("once")
        assert len(caplog.records) == warned  # a refresh with the same schemas does not repeat them
        for tool in UNUSABLE[:4]:
            row = registry[f"once__{tool}"]
            assert isinstance(row, McpEntry) and row.input_validator is None
        row = registry["once__bad_output_schema"]
        assert isinstance(row, McpEntry) and row.output_validator is None
        with anyio.fail_after(30):
            results = [await registry.dispatch(name, arguments) for name, arguments in calls_]
        assert len(caplog.records) == warned  # nor do later calls
    for outcome in (first, results):
        kinds = [r.error.kind if r.error is not None else None for r in outcome]
        assert kinds == [None, ErrorKind.INVALID_ARGUMENTS, None, None, None, None, None]
        assert "Expected parameters: none." in outcome[1].presentation.as_text()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_huge_integers_and_deep_nesting_are_invalid_arguments(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)

    async def handler(arguments: dict[str, Any]) -> str:
        return "ran"

    registry.register_dynamic("dyn", {"type": "object"}, handler)
    deep_text = '{"x": ' + "[" * 1000 + "]" * 1000 + "}"
    deep_value: Any = []
    for _ in range(1000):
        deep_value = [deep_value]
    huge = '{"x": ' + "7" * 5000 + "}"
    try:
        before = await calls(registry, "sch")
        for name in ("dyn", "sch__echo"):
            for arguments in (huge, deep_text, {"x": deep_value}):
                result = await registry.dispatch(name, arguments)
                assert result.error is not None and result.error.kind is ErrorKind.INVALID_ARGUMENTS, (name, result)
                feedback = result.error.model_feedback
                assert "too many digits" in feedback or "nested too deeply" in feedback
        assert await calls(registry, "sch") == before
    finally:
        registry.unregister("dyn")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# -- issue 8 #1: arguments that cannot be sent ------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        ('{"text": "\\ud800"}', "text"),
        ({"text": "ok", "extra": ["\udfff"]}, "extra[0]"),
        ({"n": float("nan")}, "n"),
        ('{"n": Infinity}', "arguments are not valid JSON"),
        ({"n": 2**53}, "n"),
        ('{"n": -9007199254740993}', "n"),
    ],
)
async def test_unsendable_arguments_are_invalid_before_the_wire(
    registry: ToolRegistry, server: str, arguments: Any, path: str
) -> None:
    connection = registry.connection(server)
    reconnects = connection.reconnects
    before = await calls(registry, server)
    with anyio.fail_after(30):
        result = await registry.dispatch(f"{server}__typed", arguments)
    assert result.error is not None and result.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert f"'{server}__typed': {path}" in result.error.model_feedback
    assert await calls(registry, server) == before
    assert connection.state == "connected" and connection.reconnects == reconnects  # the session lives on
    fine = await registry.dispatch(f"{server}__typed", {"n": 2**53 - 1})
    assert fine.ok, fine.error


# -- issue 7 #2: the model never sees the same content twice ---------------------------------


async def test_a_wrapped_primitive_is_shown_once(registry: ToolRegistry, server: str) -> None:
    result = await registry.dispatch(f"{server}__wrapped")
    assert result.ok, result.error
    assert list(result.presentation) == [Text("next")]
    assert result.output.structured == {"result": "next"}
    assert list(result.output) == [Json({"result": "next"}), Text("next")]
    (message,) = openai_chat.tool_results([result])
    assert message["content"] == "next"


async def test_structured_content_beside_deeply_nested_text(registry: ToolRegistry, server: str) -> None:
    result = await registry.dispatch(f"{server}__deep_text")
    assert result.ok, result.error  # the text is never parsed
    assert result.output.structured == {"a": 1}
    (block,) = result.presentation
    assert isinstance(block, Text) and block.text.startswith("[[[")


# -- issue 7 #3: failures name the tool the model called -------------------------------------


async def test_failure_text_names_the_row_not_the_wire_name(tmp_path: Path) -> None:
    down = tmp_path / "down"
    spec = schema_stdio("x", {"FIXTURE_DOWN_FILE": str(down)}, call_timeout=30, timeout=10, aliases={"echo": "shout"})
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(spec)
            timeout = await registry.dispatch("x__slow", ctx=ToolContext(timeout=0.5))
            died = await registry.dispatch("x__die")
            down.write_text("stay down")
            failed = await registry.dispatch("shout", {"text": "hi"})
            backing_off = await registry.dispatch("shout", {"text": "hi"})
            invalid = await registry.dispatch("shout", {"text": 1})
    for result, kind, row, wire in [
        (timeout, ErrorKind.TIMEOUT, "x__slow", "slow"),
        (died, ErrorKind.UNAVAILABLE, "x__die", "die"),
        (failed, ErrorKind.UNAVAILABLE, "shout", "echo"),
        (backing_off, ErrorKind.UNAVAILABLE, "shout", "echo"),
        (invalid, ErrorKind.INVALID_ARGUMENTS, "shout", "echo"),
    ]:
        assert result.error is not None and result.error.kind is kind, (row, result.error)
        feedback = result.error.model_feedback
        assert f"'{row}'" in feedback and f"'{wire}'" not in feedback, feedback


# -- issue 7 #4: a reconnect never waits on a hidden tools/list ------------------------------


async def test_after_a_reconnect_a_call_never_waits_on_tools_list(tmp_path: Path) -> None:
    hang = tmp_path / "hang"
    spec = schema_stdio("re", {"FIXTURE_HANG_FILE": str(hang)}, call_timeout=40, timeout=30)  # a busy machine
    async with ToolRegistry() as registry:
        with anyio.fail_after(120):
            await registry.connect(spec)
            hang.write_text("tools/list never answers from now on")
            died = await registry.dispatch("re__die")
            assert died.error is not None and died.error.kind is ErrorKind.UNAVAILABLE
            result = await registry.dispatch("re__wrapped")  # a new process; its tools/list hangs
        assert result.ok, result.error
        assert result.output.structured == {"result": "next"}
        assert registry.connection("re").reconnects == 1


# -- issue 7 #6, changed by issue 10: task-only tools are offered (their calls run as tasks) --


async def test_task_only_tools_are_in_definitions_and_exports_without_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="toolmesh")
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(everything_stdio("evt", call_timeout=20))
        assert "evt__simulate-research-query" in [d.name for d in registry.definitions()]
        assert "evt__simulate-research-query" in [d.name for d in registry.snapshot().definitions()]
        exported = [tool["function"]["name"] for tool in openai_chat.tools(registry)]
        assert "evt__echo" in exported and "evt__simulate-research-query" in exported
    assert not [r for r in caplog.records if "simulate-research-query" in r.getMessage()]


# -- issue 7 #7: DenyAnnotated follows the MCP defaults --------------------------------------


async def test_deny_annotated_counts_unannotated_mcp_tools_as_destructive(registry: ToolRegistry) -> None:
    @registry.tool
    async def local_note() -> str:
        """An unannotated native tool."""
        return "noted"

    @registry.tool(capabilities=ToolCapabilities(annotations=ToolAnnotations(destructive=True)))
    async def local_wipe() -> str:
        """A destructive native tool."""
        return "wiped"

    try:
        calls_ = [
            ToolCall.from_arguments("1", "sch__plain", {}),
            ToolCall.from_arguments("2", "sch__read_only", {}),
            ToolCall.from_arguments("3", "local_note", {}),
            ToolCall.from_arguments("4", "local_wipe", {}),
        ]
        with anyio.fail_after(30):
            destructive = await run_tool_calls(registry.snapshot(), calls_, hooks=[DenyAnnotated(destructive=True)])
            open_world = await run_tool_calls(registry.snapshot(), calls_, hooks=[DenyAnnotated(open_world=True)])
    finally:
        registry.unregister("local_note")
        registry.unregister("local_wipe")
    assert [r.disposition.value for r in destructive] == ["refused", "succeeded", "succeeded", "refused"]
    assert destructive[0].presentation.as_text() == (
        "The tool 'sch__plain' is not allowed here (it counts as destructive=true: its server does not say otherwise)."
    )
    assert destructive[3].presentation.as_text() == (
        "The tool 'local_wipe' is not allowed here (it is marked destructive=true)."
    )
    assert [r.disposition.value for r in open_world] == ["refused", "refused", "succeeded", "succeeded"]
