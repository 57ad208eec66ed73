"""The pydantic-ai bridge inside pydantic-ai's own agent loop, driven by its ``FunctionModel``.

The scripted model calls a native row and a row of the demo fixture server (a real process
over stdio), then a call with bad arguments and one a policy refuses, then one that needs
approval; each test checks what pydantic-ai hands back to its model.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    BinaryContent,
    BinaryImage,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from pydantic_ai.usage import RunUsage

from _mcp import demo_stdio
from _servers import fixture_module
from toolmesh import (
    Audio,
    ErrorKind,
    Image,
    Json,
    Text,
    ToolCall,
    ToolContext,
    ToolExecutionError,
    ToolRegistry,
    ToolResult,
    UnsupportedToolError,
    tool,
)
from toolmesh.bridges.pydantic_ai import ToolmeshToolset, ToolPartialEvent, ToolProgressEvent, tool_context, toolset
from toolmesh.hooks import Hook, Keep, Proceed, RewritePresentation, ToolCallAction, ToolResultAction
from toolmesh.policy import DenyTools, RequireApproval

PNG = fixture_module("demo_server.py").TINY_PNG
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@tool
async def add(x: int, y: int) -> int:
    """Add two integers.

    Args:
        x: The first addend.
        y: The second addend.
    """
    return x + y


@tool
async def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@pytest.fixture(scope="module")
async def registry() -> AsyncIterator[ToolRegistry]:
    """Native rows and the demo fixture server, a real process over stdio (one per module)."""
    async with ToolRegistry() as registry:
        registry.register(add)
        registry.register(delete)
        with anyio.fail_after(90):
            await registry.connect(demo_stdio("demo"))
        yield registry


Respond = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


@dataclass
class Script:
    """A model that answers with the next scripted response and keeps what it was sent."""

    responses: list[list[ToolCallPart] | str]
    seen: list[list[ModelMessage]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        self.tools.append({t.name: t for t in info.function_tools})
        step = self.responses.pop(0)
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(parts=list(step))

    def returns(self, step: int) -> dict[str, ToolReturnPart]:
        """The tool returns the model was sent before its ``step``-th response, by call id."""
        request = self.seen[step][-1]
        assert isinstance(request, ModelRequest)
        return {p.tool_call_id: p for p in request.parts if isinstance(p, ToolReturnPart)}


def call(name: str, args: dict[str, Any], call_id: str) -> ToolCallPart:
    return ToolCallPart(name, args, tool_call_id=call_id)


class Recorder(Hook):
    """Records every result a turn produced (a toolmesh hook that has to run)."""

    def __init__(self) -> None:
        self.results: list[ToolResult] = []

    async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
        self.results.append(result)
        return Keep()


def agent(script: Script, bridged: ToolmeshToolset[Any], **kwargs: Any) -> Agent[Any, Any]:
    return Agent(FunctionModel(script), toolsets=[bridged], output_type=[str, DeferredToolRequests], **kwargs)


async def test_a_scripted_run_through_native_and_mcp_rows_bad_arguments_a_refusal_and_an_approval(
    registry: ToolRegistry,
) -> None:
    recorder = Recorder()
    hooks = [
        recorder,
        DenyTools("demo__fail"),
        RequireApproval(when=lambda row: row.name == "demo__delete_item"),
    ]
    script = Script(
        [
            [call("add", {"x": 1, "y": 2}, "c1"), call("demo__add", {"a": 2, "b": 3}, "c2")],
            [call("add", {"x": "one"}, "c3"), call("demo__fail", {"reason": "x"}, "c4")],
            [call("demo__delete_item", {"item_id": "42"}, "c5")],
            "done",
        ]
    )
    run_agent = agent(script, toolset(registry, hooks=hooks))
    with anyio.fail_after(60):
        first = await run_agent.run("go")

    returned = script.returns(1)
    assert returned["c1"].content == 3 and returned["c1"].outcome == "success"
    assert json.loads(returned["c2"].content) == {"sum": 5}  # over stdio, the server's own text
    returned = script.returns(2)
    assert returned["c3"].outcome == "retried"
    assert "Invalid arguments for tool 'add'" in str(returned["c3"].content)
    assert "Expected parameters: x (integer, required), y (integer, required)" in str(returned["c3"].content)
    assert returned["c4"].outcome == "failed"
    assert returned["c4"].content == "The tool 'demo__fail' is not allowed here."

    deferred = first.output
    assert isinstance(deferred, DeferredToolRequests)
    assert [(p.tool_name, p.tool_call_id) for p in deferred.approvals] == [("demo__delete_item", "c5")]
    assert all(result.name != "demo__delete_item" for result in recorder.results)

    with anyio.fail_after(60):
        second = await run_agent.run(
            message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={"c5": True})
        )
    assert second.output == "done"
    assert script.returns(3)["c5"].content == "deleted 42"
    assert [(r.name, r.disposition) for r in recorder.results] == [
        ("add", "succeeded"),
        ("demo__add", "succeeded"),
        ("add", "failed"),
        ("demo__fail", "refused"),
        ("demo__delete_item", "succeeded"),
    ]


async def test_definitions_come_from_the_rows(registry: ToolRegistry) -> None:
    script = Script(["done"])
    policy = [RequireApproval(when=lambda row: row.name == "delete")]
    bridged = toolset(registry, hooks=policy, strict_schemas=False)
    await agent(script, bridged).run("go")
    listed = script.tools[0]
    assert list(listed)[:2] == ["add", "delete"]
    assert listed["add"].description == "Add two integers."
    assert listed["add"].parameters_json_schema == dict(registry["add"].definition.parameters)
    assert listed["add"].kind == "function" and listed["delete"].kind == "unapproved"
    assert listed["add"].strict is False
    mcp_add = listed["demo__add"]
    assert mcp_add.parameters_json_schema["required"] == ["a"]
    # the output schema is there for pydantic-ai to send when asked to (IncludeToolReturnSchemas)
    tools = await bridged.get_tools(RunContext(deps=None, model=TestModel(), usage=RunUsage()))
    return_schema = tools["demo__add"].tool_def.return_schema
    assert return_schema is not None and "sum" in return_schema["properties"]
    assert mcp_add.metadata == {"toolmesh": {"kind": "mcp", "server": "demo", "wire_name": "add"}}
    hints = listed["demo__delete_item"].metadata["toolmesh"]["annotations"]
    assert hints["destructive"] is True and hints["read_only"] is False


async def test_the_run_context_becomes_the_tool_context() -> None:
    seen: list[tuple[str, Any, int]] = []
    registry = ToolRegistry()

    @registry.tool
    async def flaky(ctx: ToolContext[dict[str, str]]) -> str:
        """Fail once with a retryable error, then answer."""
        seen.append((ctx.call_id, ctx.deps, ctx.retry))
        if len(seen) == 1:
            raise ToolExecutionError("the backend is restarting", kind=ErrorKind.UNAVAILABLE)
        return "ok"

    script = Script([[call("flaky", {}, "a1")], [call("flaky", {}, "a2")], "done"])
    run_agent = Agent(FunctionModel(script), toolsets=[toolset(registry)], deps_type=dict)
    result = await run_agent.run("go", deps={"user": "ada"})
    assert result.output == "done"
    assert seen == [("a1", {"user": "ada"}, 0), ("a2", {"user": "ada"}, 1)]
    retried = script.returns(1)["a1"]
    assert retried.outcome == "retried" and "the backend is restarting" in str(retried.content)


async def test_failures_follow_the_retry_or_the_failure_path() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def gone(name: str) -> str:
        """A tool that fails on purpose, not retryably."""
        raise ToolExecutionError(f"no record named {name}", kind=ErrorKind.NOT_FOUND)

    @registry.tool
    async def broken() -> str:
        """A tool with a bug."""
        raise ValueError("secret internal detail")

    script = Script([[call("gone", {"name": "zed"}, "f1"), call("broken", {}, "f2")], "done"])
    await Agent(FunctionModel(script), toolsets=[toolset(registry)]).run("go")
    returned = script.returns(1)
    assert (returned["f1"].outcome, returned["f1"].content) == ("failed", "no record named zed")
    assert returned["f2"].outcome == "failed"
    assert returned["f2"].content == ErrorKind.INTERNAL.default_feedback  # the detail stays with the operator


async def test_a_call_that_keeps_timing_out_ends_the_run_as_pydantic_ai_does() -> None:
    registry = ToolRegistry()

    @registry.tool(timeout=0.01)
    async def slow() -> str:
        """Never finishes in time."""
        await anyio.sleep(10)
        return "late"

    script = Script([[call("slow", {}, "t1")], [call("slow", {}, "t2")], "done"])
    with anyio.fail_after(30), pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 1"):
        await Agent(FunctionModel(script), toolsets=[toolset(registry, max_retries=1)]).run("go")
    assert "did not finish within 0.01 seconds" in str(script.returns(1)["t1"].content)


async def test_a_denied_call_never_runs_and_an_approval_can_change_the_arguments() -> None:
    registry = ToolRegistry()
    registry.register(delete)
    script = Script(
        [[call("delete", {"path": "/"}, "d1"), call("delete", {"path": "/tmp/a"}, "d2")], "done"],
    )
    recorder = Recorder()
    run_agent = agent(script, toolset(registry, hooks=[recorder, RequireApproval()]))
    first = await run_agent.run("go")
    assert isinstance(first.output, DeferredToolRequests) and len(first.output.approvals) == 2
    decisions = DeferredToolResults(
        approvals={"d1": ToolDenied("Not the root."), "d2": ToolApproved(override_args={"path": "/tmp/b"})}
    )
    second = await run_agent.run(message_history=first.all_messages(), deferred_tool_results=decisions)
    assert second.output == "done"
    returned = script.returns(1)
    assert (returned["d1"].outcome, returned["d1"].content) == ("denied", "Not the root.")
    assert returned["d2"].content == "deleted /tmp/b"
    assert [r.call_id for r in recorder.results] == ["d2"]


async def test_approval_waits_for_valid_arguments_and_is_not_asked_for_a_refused_row() -> None:
    registry = ToolRegistry()
    registry.register(add)
    registry.register(delete)
    policy = [DenyTools("delete"), RequireApproval()]
    script = Script(
        [[call("add", {"x": "one", "y": 2}, "v1"), call("delete", {"path": "/"}, "v2")], "done"],
    )
    result = await agent(script, toolset(registry, hooks=policy)).run("go")
    assert result.output == "done"  # nothing was deferred
    assert script.tools[0]["add"].kind == "unapproved" and script.tools[0]["delete"].kind == "function"
    returned = script.returns(1)
    assert returned["v1"].outcome == "retried" and "Invalid arguments for tool 'add'" in str(returned["v1"].content)
    assert (returned["v2"].outcome, returned["v2"].content) == ("failed", "The tool 'delete' is not allowed here.")


async def test_images_audio_json_and_text_reach_the_model_in_order(registry: ToolRegistry) -> None:
    local = ToolRegistry()

    @local.tool
    async def mixed() -> list[Any]:
        """Every kind of block."""
        return [Text("caption"), Json({"k": 1}), Image(PNG, "image/png"), Audio(WAV, "audio/wav")]

    script = Script([[call("mixed", {}, "m1")], "done"])
    await Agent(FunctionModel(script), toolsets=[toolset(local)]).run("go")
    content = script.returns(1)["m1"].content
    assert content[:2] == ["caption", {"k": 1}]
    assert isinstance(content[2], BinaryImage) and content[2].data == PNG
    assert isinstance(content[3], BinaryContent) and content[3].media_type == "audio/wav" and content[3].data == WAV

    script = Script([[call("demo__image", {}, "m2")], "done"])
    await Agent(FunctionModel(script), toolsets=[toolset(registry)]).run("go")
    image, caption = script.returns(1)["m2"].content
    assert isinstance(image, BinaryImage) and image.data == PNG and caption == "a red pixel"


async def test_a_result_hook_rewrites_what_the_model_is_shown() -> None:
    class Shorten(Hook):
        async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
            return RewritePresentation(result.presentation.as_text()[:5])

    local = ToolRegistry()
    local.register(delete)
    script = Script([[call("delete", {"path": "/tmp/long"}, "h1")], "done"])
    await Agent(FunctionModel(script), toolsets=[toolset(local, hooks=[Shorten()])]).run("go")
    assert script.returns(1)["h1"].content == "delet"


async def test_a_catalog_change_shows_at_the_next_run_step_and_a_snapshot_stays_put() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def grow() -> str:
        """Add a tool to the catalog."""

        @registry.tool
        async def fresh() -> str:
            """A tool that did not exist when the run started."""
            return "fresh answer"

        return "grown"

    frozen = registry.snapshot()
    script = Script([[call("grow", {}, "g1")], [call("fresh", {}, "g2")], "done"])
    await Agent(FunctionModel(script), toolsets=[toolset(registry)]).run("go")
    assert "fresh" not in script.tools[0] and "fresh" in script.tools[1]
    assert script.returns(2)["g2"].content == "fresh answer"

    script = Script(["done"])
    await Agent(FunctionModel(script), toolsets=[toolset(frozen)]).run("go")
    assert list(script.tools[0]) == ["grow"]


@pytest.fixture
def bridge_log(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """The ``toolmesh.bridges`` logger's records, with the once-per-process memory of warnings emptied."""
    monkeypatch.setattr("toolmesh.bridges._common._warned", set())
    caplog.set_level(logging.WARNING, logger="toolmesh.bridges")
    return caplog


def test_a_hosted_row_cannot_cross_and_the_bridge_says_so(bridge_log: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    registry.register(add)
    registry.register_hosted("web", {"type": "web_search"}, provider="openai")
    bridged = toolset(registry)
    [warned] = [record.getMessage() for record in bridge_log.records]
    assert warned.startswith("hosted tool 'web' cannot cross into pydantic-ai whole: it is a provider-executed")
    assert warned.endswith("It is left out.")
    assert isinstance(bridged, ToolmeshToolset)
    with pytest.raises(UnsupportedToolError, match=r"hosted tool 'web' cannot cross into pydantic-ai"):
        toolset(registry, strict=True)


async def test_a_hosted_row_that_appears_later_is_said_at_the_step_that_lists_it(
    bridge_log: pytest.LogCaptureFixture,
) -> None:
    registry = ToolRegistry()
    registry.register(add)
    bridged, strict = toolset(registry), toolset(registry, strict=True)
    registry.register_hosted("search", {"type": "web_search"})
    script = Script(["done"])
    await Agent(FunctionModel(script), toolsets=[bridged]).run("go")
    assert list(script.tools[0]) == ["add"]
    assert ["hosted tool 'search'" in record.getMessage() for record in bridge_log.records] == [True]
    with pytest.raises(UnsupportedToolError, match="hosted tool 'search'"):
        await Agent(FunctionModel(Script(["done"])), toolsets=[strict]).run("go")


async def test_streaming_and_task_rows_cross_whole(bridge_log: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()

    @registry.tool
    async def parts() -> AsyncIterator[str]:
        """Stream two parts."""
        yield "a"
        yield "b"

    script = Script(["done"])
    await Agent(FunctionModel(script), toolsets=[toolset(registry, strict=True)]).run("go")
    assert list(script.tools[0]) == ["parts"] and bridge_log.records == []


async def test_progress_and_partial_outputs_reach_the_event_stream() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def count(ctx: ToolContext[Any]) -> AsyncIterator[str]:
        """Count to two, reporting progress."""
        for n in (1, 2):
            await ctx.report_progress(n, 2, f"step {n}")
            yield f"part {n}"

    events: list[Any] = []
    script = Script([[call("count", {}, "p1")], "done"])
    run_agent = Agent(FunctionModel(script), toolsets=[toolset(registry)])
    async with run_agent.iter("go") as run:
        async for node in run:
            if Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as stream:
                    events.extend([e async for e in stream if isinstance(e, ToolProgressEvent | ToolPartialEvent)])
    assert script.returns(1)["p1"].content == ["part 1", "part 2"]
    assert [(type(e).__name__, e.tool_call_id) for e in events] == [
        ("ToolProgressEvent", "p1"),
        ("ToolPartialEvent", "p1"),
    ] * 2
    assert [(e.progress, e.total, e.message) for e in events if isinstance(e, ToolProgressEvent)] == [
        (1, 2, "step 1"),
        (2, 2, "step 2"),
    ]
    assert [e.content for e in events if isinstance(e, ToolPartialEvent)] == ["part 1", "part 2"]


async def test_hooks_see_the_calls_arguments_as_canonical_json() -> None:
    class SeesArguments(Hook):
        async def on_tool_call(self, call: ToolCall, entry: Any, ctx: ToolContext[Any]) -> ToolCallAction:
            arguments = json.loads(call.arguments)
            assert arguments == {"x": 2, "y": 3}
            return Proceed()

    local = ToolRegistry()
    local.register(add)
    script = Script([[call("add", {"y": 3, "x": 2}, "o1")], "done"])
    await Agent(FunctionModel(script), toolsets=[toolset(local, hooks=[SeesArguments()])]).run("go")
    assert script.returns(1)["o1"].content == 5


def test_toolset_takes_a_registry_or_a_snapshot_only() -> None:
    rows: Sequence[Any] = []
    with pytest.raises(TypeError, match="ToolRegistry or a ToolSnapshot"):
        toolset(rows)  # type: ignore[arg-type]


async def test_a_wrapper_that_drops_the_approval_mark_still_cannot_skip_approval() -> None:
    registry = ToolRegistry()
    registry.register(delete)
    unmarked = toolset(registry, hooks=[RequireApproval()]).prepared(
        lambda ctx, definitions: [replace(d, kind="function") for d in definitions]
    )
    script = Script([[call("delete", {"path": "/"}, "w1")], "done"])
    run_agent = Agent(FunctionModel(script), toolsets=[unmarked], output_type=[str, DeferredToolRequests])
    first = await run_agent.run("go")
    assert isinstance(first.output, DeferredToolRequests)
    assert [p.tool_call_id for p in first.output.approvals] == ["w1"]
    second = await run_agent.run(
        message_history=first.all_messages(), deferred_tool_results=DeferredToolResults(approvals={"w1": True})
    )
    assert second.output == "done" and script.returns(1)["w1"].content == "deleted /"


async def test_an_approval_with_a_callback_decides_inside_the_call() -> None:
    asked: list[str] = []

    async def approve_small(call: ToolCall, row: Any) -> bool | str:
        asked.append(call.id)
        return len(call.arguments) < 20 or "That path is too long to delete."

    registry = ToolRegistry()
    registry.register(delete)
    script = Script(
        [[call("delete", {"path": "/a"}, "k1"), call("delete", {"path": "/a/very/long/path"}, "k2")], "done"]
    )
    bridged = toolset(registry, hooks=[RequireApproval(approve_small)])
    result = await agent(script, bridged).run("go")
    assert result.output == "done" and sorted(asked) == ["k1", "k2"]
    assert script.tools[0]["delete"].kind == "function"
    returned = script.returns(1)
    assert returned["k1"].content == "deleted /a"
    assert (returned["k2"].outcome, returned["k2"].content) == ("failed", "That path is too long to delete.")


def test_importing_toolmesh_imports_no_framework() -> None:
    code = (
        "import sys, toolmesh, toolmesh.bridges, toolmesh.policy, toolmesh.providers\n"
        "loaded = sorted(m for m in ('pydantic_ai', 'agents', 'langchain_core', 'langgraph') if m in sys.modules)\n"
        "assert not loaded, loaded\n"
        "import toolmesh.bridges.pydantic_ai\n"
        "assert 'pydantic_ai' in sys.modules and 'agents' not in sys.modules and 'langchain_core' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


async def test_a_context_factory_builds_each_calls_context_from_the_run_context() -> None:
    seen: list[tuple[str, Any, float | None]] = []
    registry = ToolRegistry()

    @registry.tool
    async def who(ctx: ToolContext[Any]) -> str:
        """Say who asks."""
        seen.append((ctx.call_id, ctx.deps, ctx.timeout))
        return "ok"

    def factory(run_context: RunContext[Any]) -> ToolContext[Any]:
        ctx = tool_context(run_context)
        ctx.deps, ctx.timeout, ctx.call_id = {"user": run_context.deps}, 30.0, "ignored"
        return ctx

    script = Script([[call("who", {}, "x1")], "done"])
    await Agent(FunctionModel(script), toolsets=[toolset(registry, ctx_factory=factory)], deps_type=str).run(
        "go", deps="ada"
    )
    assert seen == [("x1", {"user": "ada"}, 30.0)]
