"""The LangChain bridge inside LangGraph's own loop: create_react_agent driven by LangChain's fake chat model.

The scripted model calls a native row and an MCP row of the demo fixture server over
stdio, then a row with bad arguments, then one that needs approval. Each test checks
what LangGraph hands back to the model, as the model receives it.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import ToolNode, create_react_agent
from langgraph.types import Command
from pydantic import Field

from _servers import DEMO, FIXTURES, fixture_server, stdio_params
from toolmesh import (
    ErrorKind,
    Image,
    Text,
    ToolContext,
    ToolExecutionError,
    ToolOutput,
    ToolRegistry,
    UnsupportedToolError,
    tool,
)
from toolmesh.bridges.langchain import ResultArtifact, ToolmeshTool, interrupt_for_approval, tools
from toolmesh.hooks import Hook, RewritePresentation
from toolmesh.mcp import McpServer
from toolmesh.policy import DenyTools, RequireApproval

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


@tool
async def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, recording the tools it was bound to and every prompt it was given."""

    bound: list[dict[str, Any]] = Field(default_factory=list)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bound = [convert_to_openai_tool(t) for t in tools]
        return self.bind(tools=self.bound, **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(list(messages))
        return super()._generate(messages, *args, **kwargs)

    def tool_messages(self, step: int) -> list[ToolMessage]:
        """The tool results the model was shown in its ``step``-th prompt (0 is the first)."""
        prompt = self.prompts[step]
        last_ai = max(i for i, message in enumerate(prompt) if isinstance(message, AIMessage))
        return [message for message in prompt[last_ai + 1 :] if isinstance(message, ToolMessage)]


def calls(*items: tuple[str, dict[str, Any], str]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in items])


def agent(model: ScriptedModel, bridged: list[ToolmeshTool], **options: Any) -> Any:
    return create_react_agent(model, bridged, checkpointer=InMemorySaver(), **options)


class Recorder(Hook):
    """A toolmesh hook: records every result it sees (name, disposition)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def on_tool_result(self, call: Any, result: Any, ctx: Any) -> Any:
        self.seen.append((result.name, result.disposition.value))
        return await super().on_tool_result(call, result, ctx)


def demo_stdio() -> McpServer:
    command, args, env = stdio_params(DEMO)
    return McpServer.stdio("demo", command, args, env=env)


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the warnings already given in this process (each is given once)."""
    monkeypatch.setattr("toolmesh.bridges._common._warned", set())


@pytest.fixture
async def registry() -> AsyncIterator[ToolRegistry]:
    """The native ``add`` and the demo fixture server over stdio."""
    async with ToolRegistry() as reg:
        reg.register(add)
        with anyio.fail_after(60):
            await reg.connect(demo_stdio())
        yield reg


THREAD = {"configurable": {"thread_id": "t1"}}


async def test_native_mcp_bad_arguments_and_approval_in_one_agent_run(registry: ToolRegistry) -> None:
    recorder = Recorder()
    approval = RequireApproval(interrupt_for_approval, when=lambda row: row.name == "demo__delete_item")
    bridged = tools(registry, hooks=[recorder, approval])
    model = ScriptedModel(
        messages=iter(
            [
                calls(("add", {"x": 1, "y": 2}, "c1"), ("demo__echo", {"text": "hello"}, "c2")),
                calls(("add", {"x": "one", "y": 2}, "c3")),
                calls(("add", {"x": 1, "y": 2}, "c4"), ("demo__delete_item", {"item_id": "42"}, "c5")),
                AIMessage("all done"),
            ]
        )
    )
    graph = agent(model, bridged)
    with anyio.fail_after(60):
        paused = await graph.ainvoke({"messages": [("user", "go")]}, THREAD)

    # the model was bound to the rows' own schemas
    declared = {d["function"]["name"]: d["function"]["parameters"] for d in model.bound}
    assert declared["add"]["properties"] == dict(registry["add"].definition.parameters)["properties"]
    assert set(declared) == {row.name for row in registry.entries()}

    first = model.tool_messages(1)
    assert [(m.tool_call_id, m.content, m.status) for m in first] == [
        ("c1", "3", "success"),
        ("c2", "hello", "success"),
    ]
    assert [m.artifact["kind"] for m in first] == ["native", "mcp"]
    assert first[0].artifact.result.output.structured == 3

    [bad] = model.tool_messages(2)
    assert bad.status == "error" and bad.tool_call_id == "c3"
    assert bad.content.startswith("Invalid arguments for tool 'add': x: Input should be a valid integer")
    assert bad.artifact["error_kind"] == "invalid_arguments" and bad.artifact["disposition"] == "failed"

    # the approval pauses the run at c5 only: c4 already ran, delete_item did not
    [pending] = paused["__interrupt__"]
    assert pending.value == {
        "type": "toolmesh_approval",
        "call_id": "c5",
        "tool": "demo__delete_item",
        "arguments": {"item_id": "42"},
        "description": "Delete an item by id.",
    }
    assert ("demo__delete_item", "succeeded") not in recorder.seen
    with anyio.fail_after(60):
        done = await graph.ainvoke(Command(resume=True), THREAD)

    assert done["messages"][-1].content == "all done"
    third = model.tool_messages(3)
    assert [(m.tool_call_id, m.content, m.status) for m in third] == [
        ("c4", "3", "success"),
        ("c5", "deleted 42", "success"),
    ]
    # the toolmesh hook saw every call once: the paused pass of c5 left no result behind
    assert recorder.seen == [
        ("add", "succeeded"),
        ("demo__echo", "succeeded"),
        ("add", "failed"),
        ("add", "succeeded"),
        ("demo__delete_item", "succeeded"),
    ]


async def test_a_refused_approval_and_a_policy_refusal_reach_the_model_as_errors(registry: ToolRegistry) -> None:
    approval = RequireApproval(interrupt_for_approval, when=lambda row: row.name == "demo__delete_item")
    bridged = tools(registry, hooks=[DenyTools("demo__crash"), approval])
    model = ScriptedModel(
        messages=iter(
            [
                calls(("demo__crash", {}, "c1"), ("demo__delete_item", {"item_id": "7"}, "c2")),
                AIMessage("understood"),
            ]
        )
    )
    graph = agent(model, bridged)
    with anyio.fail_after(60):
        paused = await graph.ainvoke({"messages": [("user", "go")]}, THREAD)
        [pending] = paused["__interrupt__"]
        assert pending.value["call_id"] == "c2"
        await graph.ainvoke(Command(resume="The user keeps item 7."), THREAD)

    denied, declined = model.tool_messages(1)
    assert (denied.status, denied.content) == ("error", "The tool 'demo__crash' is not allowed here.")
    assert (declined.status, declined.content) == ("error", "The user keeps item 7.")
    assert [denied.artifact["disposition"], declined.artifact["disposition"]] == ["refused", "refused"]
    assert declined.artifact["error_kind"] == "refused"


async def test_approval_outside_a_graph_fails_closed_and_says_why(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    ran: list[str] = []

    @registry.tool
    async def wipe(path: str) -> str:
        """Wipe a path."""
        ran.append(path)
        return "wiped"

    [bridged] = tools(registry, hooks=[RequireApproval(interrupt_for_approval)])
    with caplog.at_level(logging.ERROR, logger="toolmesh"):
        message = await bridged.ainvoke({"name": "wipe", "args": {"path": "/"}, "id": "c1", "type": "tool_call"})
    assert (message.status, message.artifact["error_kind"]) == ("error", "internal")
    assert "needs a graph run" not in message.content and ran == []
    assert "interrupt_for_approval asks through LangGraph's interrupt, which needs a graph run" in caplog.text


async def test_a_resume_value_that_is_no_answer_fails_the_call_closed() -> None:
    registry = ToolRegistry()
    ran: list[str] = []

    @registry.tool
    async def wipe(path: str) -> str:
        """Wipe a path."""
        ran.append(path)
        return "wiped"

    model = ScriptedModel(messages=iter([calls(("wipe", {"path": "/"}, "c1")), AIMessage("ok")]))
    graph = agent(model, tools(registry, hooks=[RequireApproval(interrupt_for_approval)]))
    with anyio.fail_after(30):
        await graph.ainvoke({"messages": [("user", "go")]}, THREAD)
        await graph.ainvoke(Command(resume={"approve": "maybe"}), THREAD)
    [message] = model.tool_messages(1)
    assert (message.status, message.artifact["error_kind"]) == ("error", "internal")
    assert ran == []


async def test_a_failing_mcp_tool_shows_toolmesh_feedback_and_the_model_retries() -> None:
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(demo_stdio())
        model = ScriptedModel(
            messages=iter(
                [
                    calls(("demo__fail", {"reason": "the disk is full"}, "c1"), ("demo__crash", {}, "c2")),
                    calls(("demo__echo", {"text": "retried"}, "c3")),
                    AIMessage("ok"),
                ]
            )
        )
        with anyio.fail_after(60):
            await agent(model, tools(registry)).ainvoke({"messages": [("user", "go")]}, THREAD)
    failed, crashed = model.tool_messages(1)
    assert (failed.status, failed.content) == ("error", "Error executing tool fail: the disk is full")
    assert crashed.status == "error" and "secret internal detail" not in crashed.content
    assert model.tool_messages(2)[0].content == "retried"


async def test_a_retryable_error_is_marked_on_the_artifact() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def flaky() -> str:
        """Times out."""
        raise ToolExecutionError("the backend timed out", kind=ErrorKind.TIMEOUT)

    model = ScriptedModel(messages=iter([calls(("flaky", {}, "c1")), AIMessage("ok")]))
    with anyio.fail_after(30):
        await agent(model, tools(registry)).ainvoke({"messages": [("user", "go")]}, THREAD)
    [message] = model.tool_messages(1)
    assert (message.status, message.content) == ("error", "the backend timed out")
    assert (message.artifact["error_kind"], message.artifact["retryable"]) == ("timeout", True)


async def test_images_and_text_reach_the_model_as_standard_blocks_in_order(registry: ToolRegistry) -> None:
    model = ScriptedModel(messages=iter([calls(("demo__image", {}, "c1")), AIMessage("a pixel")]))
    with anyio.fail_after(60):
        await agent(model, tools(registry)).ainvoke({"messages": [("user", "go")]}, THREAD)
    [message] = model.tool_messages(1)
    image, caption = message.content
    assert image["type"] == "image" and image["mime_type"] == "image/png" and image["base64"].startswith("iVBOR")
    assert caption == {"type": "text", "text": "a red pixel"}


async def test_a_result_hook_rewrites_what_the_model_sees_and_the_artifact_keeps_the_raw_output() -> None:
    class Shorten(Hook):
        async def on_tool_result(self, call: Any, result: Any, ctx: Any) -> Any:
            return RewritePresentation(result.presentation.as_text()[:5])

    registry = ToolRegistry()

    @registry.tool
    async def shout(text: str) -> ToolOutput:
        """Shout, with a picture."""
        return ToolOutput([Text(text.upper()), Image(PNG, "image/png")])

    [bridged] = tools(registry, hooks=[Shorten()])
    message = await bridged.ainvoke({"name": "shout", "args": {"text": "hello world"}, "id": "c1", "type": "tool_call"})
    assert message.content == "HELLO"
    assert message.artifact.result.output.blocks == [Text("HELLO WORLD"), Image(PNG, "image/png")]


async def test_tools_run_in_toolnode_with_deps_from_the_graph_context() -> None:
    registry = ToolRegistry()
    seen: list[Any] = []

    @registry.tool
    async def whoami(ctx: ToolContext[dict[str, str]]) -> str:
        """Who is asking."""
        seen.append(ctx.call_id)
        return ctx.deps["user"]

    model = ScriptedModel(messages=iter([calls(("whoami", {}, "c1")), AIMessage("ok")]))
    graph = create_react_agent(model, ToolNode(tools(registry)), context_schema=dict)
    with anyio.fail_after(30):
        await graph.ainvoke({"messages": [("user", "go")]}, context={"user": "ada"})
    assert model.tool_messages(1)[0].content == "ada"
    assert seen == ["c1"]


async def test_ctx_factory_builds_the_context_from_the_call_and_the_config() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def tenant(ctx: ToolContext[str]) -> str:
        """The tenant."""
        return f"{ctx.call_id}:{ctx.deps}"

    def factory(call: Any, config: Any) -> ToolContext[str]:
        return ToolContext(call_id="ignored", deps=config["configurable"]["tenant"])

    [bridged] = tools(registry, ctx_factory=factory)
    config = {"configurable": {"tenant": "acme"}}
    message = await bridged.ainvoke({"name": "tenant", "args": {}, "id": "c9", "type": "tool_call"}, config)
    assert message.content == "c9:acme"


async def test_the_artifact_is_a_dict_a_checkpointer_stores() -> None:
    registry = ToolRegistry()
    registry.register(add)
    model = ScriptedModel(messages=iter([calls(("add", {"x": 2, "y": 3}, "c1")), AIMessage("5")]))
    graph = agent(model, tools(registry))
    with anyio.fail_after(30):
        live = await graph.ainvoke({"messages": [("user", "go")]}, THREAD)
        stored = await graph.aget_state(THREAD)
    in_memory, read_back = live["messages"][2].artifact, stored.values["messages"][2].artifact
    assert isinstance(in_memory, ResultArtifact) and in_memory.ok and in_memory.result is not None
    assert read_back == dict(in_memory)
    assert read_back["structured"] == 5 and read_back["disposition"] == "succeeded"


async def test_direct_invocation_answers_content_or_feedback_as_langchain_tools_do() -> None:
    registry = ToolRegistry()
    registry.register(add)
    [bridged] = tools(registry)
    assert await bridged.ainvoke({"x": 1, "y": 2}) == "3"
    assert await bridged.ainvoke('{"x": 1, "y": 5}') == "6"
    feedback = await bridged.ainvoke({"x": "one"})
    assert feedback.startswith("Invalid arguments for tool 'add': x: Input should be a valid integer")
    bridged.handle_tool_error = False
    with pytest.raises(ToolException) as failure:
        await bridged.ainvoke({"x": "one"})
    assert str(failure.value) == feedback
    assert isinstance(failure.value.__cause__, ToolExecutionError)
    assert failure.value.__cause__.kind is ErrorKind.INVALID_ARGUMENTS
    with pytest.raises(NotImplementedError, match="ainvoke"):
        bridged.invoke({"x": 1, "y": 2})


def test_the_tool_declares_the_rows_schema_as_it_is() -> None:
    registry = ToolRegistry()
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string", "pattern": "^[a-z]+$"}, "n": {"type": "integer", "minimum": 1}},
        "required": ["q"],
        "additionalProperties": False,
    }

    async def handler(arguments: dict[str, Any]) -> str:
        return "found"

    registry.register_dynamic("find", schema, handler, description="Find things.")
    registry.register_dynamic("noargs", {"type": "object"}, handler)
    find, noargs = tools(registry)
    assert find.args_schema == schema and find.description == "Find things."
    assert convert_to_openai_tool(find)["function"] == {
        "name": "find",
        "description": "Find things.",
        "parameters": schema,
    }
    assert noargs.args_schema == {"type": "object", "properties": {}}
    assert find.row is registry["find"]


def test_a_hosted_row_is_left_out_with_a_warning_and_strict_refuses_it(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    registry.register(add)
    registry.register_hosted("web_search", {"type": "web_search"}, provider="openai")
    with caplog.at_level(logging.WARNING, logger="toolmesh.bridges"):
        bridged = tools(registry)
    assert [t.name for t in bridged] == ["add"]
    [warning] = caplog.records
    assert warning.getMessage().startswith(
        "hosted tool 'web_search' cannot cross into LangChain whole: it is a provider-executed (hosted) tool"
    )
    assert warning.getMessage().endswith("It is left out.")
    with pytest.raises(UnsupportedToolError, match="hosted tool 'web_search' cannot cross into LangChain"):
        tools(registry, strict=True)


def test_a_streaming_row_crosses_with_a_warning_and_strict_refuses_it(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()

    @registry.tool
    async def count(n: int) -> AsyncIterator[str]:
        """Count up."""
        for i in range(n):
            yield str(i)

    with caplog.at_level(logging.WARNING, logger="toolmesh.bridges"):
        [bridged] = tools(registry)
    assert bridged.name == "count"
    assert "'count' (" in caplog.records[0].getMessage()
    assert "cannot cross into LangChain whole: it streams partial outputs" in caplog.records[0].getMessage()
    assert caplog.records[0].getMessage().endswith("It is exported anyway.")
    with pytest.raises(UnsupportedToolError, match=r"native tool 'count' .*: it streams"):
        tools(registry, strict=True)


def test_a_warning_is_given_once_and_strict_names_every_row(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    registry.register(add)
    registry.register_hosted("web_search", {"type": "web_search"})
    registry.register_dynamic("tree", TREE, _echo)
    with caplog.at_level(logging.WARNING, logger="toolmesh.bridges"):
        assert [t.name for t in tools(registry)] == ["add", "tree"]
        assert len(caplog.records) == 2
        caplog.clear()
        assert [t.name for t in tools(registry)] == ["add", "tree"]
    assert caplog.records == []  # tools built again (per run): said once is enough
    with pytest.raises(UnsupportedToolError, match=r"hosted tool 'web_search' .*; dynamic tool 'tree' .*refuses them"):
        tools(registry, strict=True)


async def test_a_streaming_row_gives_the_model_its_whole_output(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()

    @registry.tool
    async def count(n: int) -> AsyncIterator[str]:
        """Count up."""
        for i in range(n):
            yield str(i)

    with caplog.at_level(logging.ERROR, logger="toolmesh.bridges"):
        [bridged] = tools(registry)
    message = await bridged.ainvoke({"name": "count", "args": {"n": 3}, "id": "c1", "type": "tool_call"})
    assert message.content == "0\n1\n2"


async def test_a_task_only_row_crosses_with_a_warning_and_runs_to_its_result(caplog: pytest.LogCaptureFixture) -> None:
    server = McpServer.in_process("t", fixture_server(FIXTURES / "task_server.py"), protocol="2025-11-25")
    async with ToolRegistry() as registry:
        with anyio.fail_after(30):
            await registry.connect(server)
        with caplog.at_level(logging.WARNING, logger="toolmesh.bridges"):
            bridged = {t.name: t for t in tools(registry)}
        assert "cannot cross into LangChain whole: it runs only as an MCP task, which LangChain" in caplog.text
        with pytest.raises(UnsupportedToolError, match=r"'research'.*: it runs only as an MCP task"):
            tools(registry, strict=True)
        call = {"name": "t__research", "args": {"topic": "owls", "steps": 1}, "id": "c1", "type": "tool_call"}
        with anyio.fail_after(30):
            message = await bridged["t__research"].ainvoke(call)
    assert message.status == "success" and message.artifact["structured"]["topic"] == "owls"


TREE = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/Node"}},
    "$defs": {
        "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
    },
}


async def _echo(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments)


def test_a_self_referring_schema_crosses_with_a_warning_about_bind_tools(caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    registry.register_dynamic("tree", TREE, _echo)
    defs = {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}}
    registry.register_dynamic("flat", defs, _echo)
    with caplog.at_level(logging.WARNING, logger="toolmesh.bridges"):
        tree, flat = tools(registry)
    assert tree.args_schema == TREE and flat.args_schema == defs
    [warning] = caplog.records  # a reference that is no cycle is no caveat
    assert warning.getMessage().startswith(
        "dynamic tool 'tree' cannot cross into LangChain whole: "
        "its parameters schema refers to itself (#/$defs/Node -> #/$defs/Node)"
    )
    # what the warning is about: LangChain's own conversion cuts the cycle
    assert convert_to_openai_tool(tree)["function"]["parameters"]["properties"]["root"]["properties"]["children"] == {
        "type": "array",
        "items": {},
    }
    with pytest.raises(UnsupportedToolError, match="'tree' cannot cross into LangChain whole: its parameters schema"):
        tools(registry, strict=True)


@pytest.mark.parametrize(
    ("ref", "why"),
    [("https://example.com/node.json", "points outside the schema"), ("#/$defs/Missing", "does not resolve")],
)
def test_a_schema_bind_tools_cannot_read_is_left_out(ref: str, why: str, caplog: pytest.LogCaptureFixture) -> None:
    registry = ToolRegistry()
    registry.register(add)
    registry.register_dynamic("linked", {"type": "object", "properties": {"a": {"$ref": ref}}}, _echo)
    with caplog.at_level(logging.WARNING, logger="toolmesh.bridges"):
        bridged = tools(registry)
    assert [t.name for t in bridged] == ["add"]
    message = caplog.records[0].getMessage()
    assert message.startswith(
        "dynamic tool 'linked' cannot cross into LangChain whole: "
        f"LangChain's bind_tools cannot read its parameters schema: $ref {ref!r} {why}"
    )
    assert message.endswith("It is left out.")


def test_the_tools_are_made_from_one_snapshot() -> None:
    registry = ToolRegistry()
    registry.register(add)
    bridged = tools(registry)

    @registry.tool
    async def later() -> str:
        """Registered after the bridge was built."""
        return "later"

    assert [t.name for t in bridged] == ["add"]
    assert [t.name for t in tools(registry)] == ["add", "later"]


def test_a_bad_source_or_hook_is_refused_when_the_bridge_is_built() -> None:
    with pytest.raises(TypeError, match="ToolRegistry or a ToolSnapshot"):
        tools([add])  # type: ignore[arg-type]
    with pytest.raises(Exception, match="is not a hook"):
        tools(ToolRegistry(), hooks=[object()])  # type: ignore[list-item]


def test_importing_toolmesh_imports_no_framework() -> None:
    code = (
        "import sys, toolmesh, toolmesh.bridges\n"
        "loaded = sorted(m for m in ('langchain_core', 'langgraph', 'pydantic_ai', 'agents') if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
