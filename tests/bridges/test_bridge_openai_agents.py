"""The OpenAI Agents SDK bridge: toolmesh rows as the SDK's FunctionTools, run by the SDK's own loop.

The model is the SDK's own scripted test model (``agents.testing.ScriptedModel``); what it
was shown is read back from the inputs it recorded. Nothing touches the network.
"""

from __future__ import annotations

import base64
import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from agents import Agent, FunctionTool, RunConfig, Runner, ToolApprovalItem
from agents.testing import ScriptedModel, assistant_message, function_call

from _mcp import demo_in_process, demo_stdio
from toolmesh import (
    Audio,
    Disposition,
    ErrorKind,
    Image,
    Text,
    ToolCall,
    ToolContext,
    ToolExecutionError,
    ToolOutput,
    ToolRegistry,
    ToolResult,
    UnsupportedContentError,
    UnsupportedToolError,
    tool,
)
from toolmesh.bridges import openai_agents as bridge
from toolmesh.hooks import Hook, Keep, Proceed, StopTurn, ToolCallAction, ToolResultAction
from toolmesh.policy import DenyTools, RequireApproval

NO_TRACING = RunConfig(tracing_disabled=True)
SDK_BLANKET = "An error occurred while running the tool"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")


@tool
async def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


class Recorder(Hook):
    """A toolmesh hook that notes every result it sees (name, disposition)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
        self.seen.append((result.name, result.disposition.value))
        return Keep()


def outputs(model: ScriptedModel) -> dict[str, Any]:
    """Every function_call_output the model was given, by call id (the last call's input holds them all)."""
    last = model.last_call
    assert last is not None
    return {
        item["call_id"]: item["output"]
        for item in last.input
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    }


async def run(agent: Agent[Any], start: Any, context: Any = None) -> Any:
    with anyio.fail_after(60):
        return await Runner.run(agent, start, context=context, run_config=NO_TRACING)


def by_name(made: list[FunctionTool]) -> dict[str, FunctionTool]:
    return {tool.name: tool for tool in made}


# -- the whole round, over stdio --------------------------------------------------------


async def test_an_agent_runs_native_and_mcp_rows_with_feedback_policy_hooks_and_approval() -> None:
    recorder = Recorder()
    hooks = [recorder, DenyTools("demo__crash"), RequireApproval(when=lambda row: "delete" in row.name)]
    model = ScriptedModel(
        [
            [
                function_call("add", {"x": 1, "y": 2}, call_id="c1"),
                function_call("demo__echo", {"text": "hi"}, call_id="c2"),
            ],
            [
                function_call("add", {"x": "one"}, call_id="c3"),
                function_call("demo__fail", {"reason": "disk full"}, call_id="c4"),
                function_call("demo__crash", {}, call_id="c5"),
            ],
            [function_call("add", {"x": 1, "y": 1}, call_id="c6")],  # the model's retry
            [function_call("demo__delete_item", {"item_id": "42"}, call_id="c7")],
            [assistant_message("all done")],
        ]
    )
    async with ToolRegistry() as registry:
        registry.register(add)
        with anyio.fail_after(60):
            await registry.connect(demo_stdio())
        agent = Agent(name="assistant", model=model, tools=bridge.tools(registry, hooks=hooks))

        first = await run(agent, "go")

        # what the model was shown: the rows' names, descriptions and (strict) schemas
        shown = by_name(model.calls[0].tools)  # type: ignore[arg-type]
        assert list(shown)[:3] == ["add", "demo__echo", "demo__add"]
        assert shown["add"].description == "Add two integers."
        assert shown["add"].params_json_schema["required"] == ["x", "y"]
        assert shown["demo__echo"].strict_json_schema is True
        assert [shown[name].needs_approval for name in ("add", "demo__echo", "demo__delete_item")] == [
            False,
            False,
            True,
        ]

        # the run stops for approval before the call runs
        assert [type(item) for item in first.interruptions] == [ToolApprovalItem]
        pending = first.interruptions[0]
        assert pending.tool_name == "demo__delete_item" and pending.arguments == '{"item_id":"42"}'
        assert ("demo__delete_item", "succeeded") not in recorder.seen

        state = first.to_state()
        state.approve(pending)
        second = await run(agent, state)

    assert second.final_output == "all done"
    seen = outputs(model)
    assert seen["c1"] == "3"  # a native row
    assert seen["c2"] == "hi"  # an MCP row of a real server over stdio
    assert seen["c3"].startswith("Invalid arguments for tool 'add': x: Input should be a valid integer")
    assert "y: missing required field" in seen["c3"]
    assert "disk full" in seen["c4"]  # the server's isError text, as toolmesh presents it
    assert seen["c5"] == "The tool 'demo__crash' is not allowed here."  # a toolmesh policy refused
    assert seen["c6"] == "2"
    assert seen["c7"] == "deleted 42"  # approved: the same call ran
    assert not any(SDK_BLANKET in str(text) for text in seen.values())
    # the toolmesh hook saw every call that ran or was refused (calls of one model turn run concurrently)
    assert sorted(recorder.seen) == sorted(
        [
            ("add", "succeeded"),
            ("demo__echo", "succeeded"),
            ("add", "failed"),
            ("demo__fail", "failed"),
            ("demo__crash", "refused"),
            ("add", "succeeded"),
            ("demo__delete_item", "succeeded"),
        ]
    )
    assert recorder.seen[-1] == ("demo__delete_item", "succeeded")


async def test_a_tool_that_raises_shows_toolmesh_feedback_and_keeps_its_detail_from_the_model() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def lookup(key: str) -> str:
        """Look a key up."""
        if key == "retry":
            raise ToolExecutionError("The index is rebuilding; try again in a minute.", kind=ErrorKind.UNAVAILABLE)
        raise KeyError(f"secret table name for {key}")

    model = ScriptedModel(
        [
            [
                function_call("lookup", {"key": "a"}, call_id="k1"),
                function_call("lookup", {"key": "retry"}, call_id="k2"),
            ],
            [assistant_message("ok")],
        ]
    )
    result = await run(Agent(name="a", model=model, tools=bridge.tools(registry)), "go")
    assert result.final_output == "ok"  # the run goes on
    assert outputs(model) == {
        "k1": ErrorKind.INTERNAL.default_feedback,  # toolmesh's text for an unexpected error, no detail
        "k2": "The index is rebuilding; try again in a minute.",  # raised on purpose: shown as written
    }


# -- approval ------------------------------------------------------------------------------


@pytest.fixture
def deleted() -> list[str]:
    """The paths the ``delete`` row of ``registry`` was run with."""
    return []


@pytest.fixture
def registry(deleted: list[str]) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(add)

    @registry.tool
    async def delete(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    return registry


async def test_a_rejected_call_never_runs_and_the_model_is_told_why(registry: ToolRegistry, deleted: list[str]) -> None:
    recorder = Recorder()
    hooks = [recorder, RequireApproval(when=lambda row: row.name == "delete")]
    model = ScriptedModel([[function_call("delete", {"path": "/etc"}, call_id="d1")], [assistant_message("ok")]])
    agent = Agent(name="a", model=model, tools=bridge.tools(registry, hooks=hooks))

    first = await run(agent, "go")
    state = first.to_state()
    state.reject(first.interruptions[0], rejection_message="The user said no.")
    second = await run(agent, state)

    assert second.final_output == "ok"
    assert outputs(model) == {"d1": "The user said no."}
    assert deleted == [] and recorder.seen == []


async def test_a_rule_before_the_approval_refuses_without_asking(registry: ToolRegistry) -> None:
    hooks = [DenyTools("delete"), RequireApproval()]
    made = by_name(bridge.tools(registry, hooks=hooks))
    assert made["delete"].needs_approval is False  # refused anyway: nobody is asked
    assert made["add"].needs_approval is True

    model = ScriptedModel([[function_call("delete", {"path": "x"}, call_id="d1")], [assistant_message("ok")]])
    result = await run(Agent(name="a", model=model, tools=list(made.values())), "go")
    assert result.interruptions == []
    assert outputs(model) == {"d1": "The tool 'delete' is not allowed here."}


async def test_an_approval_with_a_callback_stays_a_hook_inside_the_call(
    registry: ToolRegistry, deleted: list[str]
) -> None:
    asked: list[str] = []

    async def approve(call: ToolCall, entry: Any) -> bool | str:
        asked.append(call.name)
        return "Only on weekdays." if call.name == "delete" else True

    made = bridge.tools(registry, hooks=[RequireApproval(approve)])
    assert not any(tool.needs_approval for tool in made)
    model = ScriptedModel(
        [
            [
                function_call("add", {"x": 2, "y": 2}, call_id="a1"),
                function_call("delete", {"path": "x"}, call_id="d1"),
            ],
            [assistant_message("ok")],
        ]
    )
    result = await run(Agent(name="a", model=model, tools=made), "go")
    assert result.interruptions == []
    assert outputs(model) == {"a1": "4", "d1": "Only on weekdays."}
    assert sorted(asked) == ["add", "delete"]
    assert deleted == []


# -- context, hooks, snapshot ----------------------------------------------------------------


async def test_the_sdk_call_id_and_run_context_reach_the_tool() -> None:
    registry = ToolRegistry()
    seen: list[tuple[str, Any]] = []

    @registry.tool
    async def whoami(ctx: ToolContext[dict[str, str]]) -> str:
        """Say who is asking."""
        seen.append((ctx.call_id, ctx.deps))
        return ctx.deps["user"]

    model = ScriptedModel([[function_call("whoami", {}, call_id="call_abc")], [assistant_message("ok")]])
    await run(Agent(name="a", model=model, tools=bridge.tools(registry)), "go", context={"user": "ada"})
    assert seen == [("call_abc", {"user": "ada"})]
    assert outputs(model) == {"call_abc": "ada"}


async def test_a_ctx_factory_builds_the_toolmesh_context_from_the_sdks() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def whoami(ctx: ToolContext[str]) -> str:
        """Say who is asking."""
        return f"{ctx.deps} ({ctx.call_id})"

    def factory(sdk_ctx: Any) -> ToolContext[str]:
        return ToolContext(call_id="ignored", deps=f"{sdk_ctx.tool_name} for {sdk_ctx.context}")

    model = ScriptedModel([[function_call("whoami", {}, call_id="c9")], [assistant_message("ok")]])
    await run(Agent(name="a", model=model, tools=bridge.tools(registry, ctx_factory=factory)), "go", context="ada")
    assert outputs(model) == {"c9": "whoami for ada (c9)"}  # the call id is always the SDK's


async def test_a_stop_turn_skips_only_its_own_call(registry: ToolRegistry) -> None:
    class StopOnDelete(Hook):
        async def on_tool_call(self, call: ToolCall, entry: Any, ctx: ToolContext[Any]) -> ToolCallAction:
            return StopTurn("deleting is for humans") if call.name == "delete" else Proceed()

    model = ScriptedModel(
        [
            [
                function_call("delete", {"path": "x"}, call_id="d1"),
                function_call("add", {"x": 1, "y": 2}, call_id="a1"),
            ],
            [assistant_message("ok")],
        ]
    )
    await run(Agent(name="a", model=model, tools=bridge.tools(registry, hooks=[StopOnDelete()])), "go")
    assert outputs(model) == {
        "d1": "This call was not run because the turn was stopped: deleting is for humans",
        "a1": "3",
    }


async def test_tools_built_from_a_registry_run_the_rows_they_showed(registry: ToolRegistry) -> None:
    made = bridge.tools(registry)
    registry.unregister("add")

    @registry.tool(name="add")
    async def add_wrongly(x: int, y: int) -> int:
        """Subtract, under the old name."""
        return x - y

    model = ScriptedModel([[function_call("add", {"x": 5, "y": 2}, call_id="a1")], [assistant_message("ok")]])
    await run(Agent(name="a", model=model, tools=made), "go")
    assert outputs(model) == {"a1": "7"}  # the row the model was shown, not the one registered since
    assert by_name(bridge.tools(registry))["add"].description == "Subtract, under the old name."


# -- schemas, content, namespaces --------------------------------------------------------------


async def test_strict_schemas_take_nulls_for_optional_parameters_and_leave_them_out() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process())
        made = by_name(bridge.tools(registry))
        schema = made["demo__add"].params_json_schema
        assert made["demo__add"].strict_json_schema is True
        assert schema["required"] == ["a", "b"] and schema["properties"]["b"]["type"] == ["integer", "null"]
        loose = by_name(bridge.tools(registry, strict_json_schema=False))["demo__add"]
        assert loose.strict_json_schema is False and loose.params_json_schema["required"] == ["a"]

        model = ScriptedModel(
            [[function_call("demo__add", {"a": 4, "b": None}, call_id="s1")], [assistant_message("ok")]]
        )
        await run(Agent(name="a", model=model, tools=list(made.values())), "go")
    assert json.loads(outputs(model)["s1"]) == {"sum": 4}  # null meant "left out": the server's default applied


async def test_images_reach_the_model_as_sdk_image_parts_in_order() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process())
        model = ScriptedModel([[function_call("demo__image", {}, call_id="i1")], [assistant_message("ok")]])
        await run(Agent(name="a", model=model, tools=bridge.tools(registry)), "go")
    parts = outputs(model)["i1"]
    assert [part["type"] for part in parts] == ["input_image", "input_text"]
    assert parts[0]["image_url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert parts[1]["text"] == "a red pixel"


def test_sdk_output_maps_each_block_kind() -> None:
    def result(*blocks: Any) -> ToolResult:
        output = ToolOutput(list(blocks))
        return ToolResult("c", "t", "native", Disposition.SUCCEEDED, output, output)

    assert bridge.sdk_output(result(Text("a"), Text("b"))) == "a\nb"
    parts = bridge.sdk_output(result(Text("look"), Image(PNG, "image/png")))
    assert [type(part).__name__ for part in parts] == ["ToolOutputText", "ToolOutputImage"]
    with pytest.raises(UnsupportedContentError, match="describe_unsupported=True"):
        bridge.sdk_output(result(Audio(b"RIFF", "audio/wav")))
    assert bridge.sdk_output(result(Audio(b"RIFF", "audio/wav")), describe_unsupported=True) == "[audio: audio/wav]"


async def test_audio_fails_the_run_unless_described() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def chime() -> ToolOutput:
        """Play a chime."""
        return ToolOutput([Audio(b"RIFF", "audio/wav")])

    model = ScriptedModel([[function_call("chime", {}, call_id="a1")], [assistant_message("ok")]])
    with pytest.raises(Exception) as failure:
        await run(Agent(name="a", model=model, tools=bridge.tools(registry)), "go")
    assert isinstance(failure.value.__cause__, UnsupportedContentError)

    model = ScriptedModel([[function_call("chime", {}, call_id="a1")], [assistant_message("ok")]])
    await run(Agent(name="a", model=model, tools=bridge.tools(registry, describe_unsupported=True)), "go")
    assert outputs(model) == {"a1": "[audio: audio/wav]"}


async def test_namespaces_group_each_servers_rows_and_calls_still_dispatch() -> None:
    async with ToolRegistry() as registry:
        registry.register(add)
        await registry.connect(demo_in_process())
        made = bridge.tools(registry, namespaces={"demo": "The demo fixture's tools."})
        named = by_name(made)
        assert named["add"].qualified_name == "add"
        assert named["demo__echo"].qualified_name == "demo.demo__echo"
        assert [tool.name for tool in made] == [row.name for row in registry.entries()]

        model = ScriptedModel(
            [[function_call("demo__echo", {"text": "ns"}, call_id="n1", namespace="demo")], [assistant_message("ok")]]
        )
        await run(Agent(name="a", model=model, tools=made), "go")
    assert outputs(model) == {"n1": "ns"}


# -- what cannot cross ---------------------------------------------------------------------------


def streaming_and_hosted() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(add)

    @registry.tool
    async def count(n: int) -> AsyncIterator[int]:
        """Count up to n, one part at a time."""
        for i in range(n):
            yield i

    registry.register_hosted("web_search", {"type": "web_search"}, provider="openai")
    return registry


@pytest.fixture
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the warnings already given in this process (each is given once)."""
    monkeypatch.setattr("toolmesh.bridges._common._warned", set())


@pytest.mark.usefixtures("fresh_warnings")
def test_what_cannot_cross_is_named_when_the_tools_are_built(caplog: pytest.LogCaptureFixture) -> None:
    registry = streaming_and_hosted()
    with caplog.at_level(logging.WARNING, logger="toolmesh.bridges"):
        made = bridge.tools(registry)
    assert [tool.name for tool in made] == ["add", "count"]
    warned = [record.getMessage() for record in caplog.records]
    assert len(warned) == 2
    assert "native tool 'count'" in warned[0] and "partial outputs" in warned[0] and "exported anyway" in warned[0]
    assert "hosted tool 'web_search'" in warned[1] and "left out" in warned[1]

    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolmesh.bridges"):
        assert [tool.name for tool in bridge.tools(registry)] == ["add", "count"]
    assert caplog.records == []  # tools built again (per run): said once is enough


def test_strict_makes_each_such_row_an_error() -> None:
    with pytest.raises(UnsupportedToolError, match=r"native tool 'count'.*strict=True"):
        bridge.tools(streaming_and_hosted(), strict=True)


@pytest.mark.usefixtures("fresh_warnings")
def test_a_name_the_openai_rule_refuses_is_left_out_or_refused(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    registry.register(add)
    registry.register_dynamic("files.read", {"type": "object"}, _echo)
    with caplog.at_level(logging.WARNING, logger="toolmesh.bridges"):
        assert [tool.name for tool in bridge.tools(registry)] == ["add"]
    assert "'files.read'" in caplog.text and "NamePolicy(provider='openai')" in caplog.text
    with pytest.raises(UnsupportedToolError, match=r"files\.read"):
        bridge.tools(registry, strict=True)


async def _echo(arguments: dict[str, Any]) -> dict[str, Any]:
    return arguments


def test_importing_toolmesh_imports_no_framework() -> None:
    code = (
        "import sys, toolmesh, toolmesh.bridges; "
        "assert not {'agents', 'pydantic_ai', 'langchain_core', 'langgraph'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
