"""Calling MCP rows over real transports: the demo fixture server over stdio and Streamable HTTP.

One registry (one stdio child, one HTTP server) serves the whole module; tests that
break a session make their own servers (test_mcp_faults.py).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest

from _mcp import DEMO, count_in, demo_http, demo_stdio, wait_until
from _servers import http_server
from toolmesh import (
    Disposition,
    ErrorKind,
    Image,
    Json,
    McpEntry,
    Text,
    ToolContext,
    ToolRegistry,
)
from toolmesh.mcp import MCP_ARGUMENTS, MCP_META, MCP_RESULT, MCP_SERVER_LABEL, MCP_WIRE_NAME
from toolmesh.providers.openai_responses import mcp_call_item

TRANSPORTS = ["demo", "web"]
"""Row prefixes: ``demo`` is the stdio server, ``web`` the Streamable HTTP one."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def cancel_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mcp") / "cancel.log"


@pytest.fixture(scope="module")
async def registry(cancel_log: Path) -> AsyncIterator[ToolRegistry]:
    env = {"FIXTURE_CANCEL_LOG": str(cancel_log)}
    async with http_server(DEMO, env) as url, ToolRegistry() as registry:
        await registry.connect_all([demo_stdio(env=env, call_timeout=10), demo_http(url, call_timeout=10)])
        yield registry


@pytest.fixture(params=TRANSPORTS)
def server(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_rows_are_typed_and_in_server_order(registry: ToolRegistry) -> None:
    names = registry.names()
    demo = [n for n in names if n.startswith("demo__")]
    web = [n for n in names if n.startswith("web__")]
    assert names == demo + web  # servers in connection order
    assert demo[:4] == ["demo__echo", "demo__add", "demo__search", "demo__image"]  # the server's order
    assert [n.removeprefix("demo__") for n in demo] == [n.removeprefix("web__") for n in web]
    row = registry["demo__search"]
    assert isinstance(row, McpEntry)
    assert (row.server, row.wire_name, row.kind) == ("demo", "search", "mcp")
    assert isinstance(row.tool, mcp_types.Tool)
    assert row.definition.name == "demo__search"
    assert row.definition.parameters == row.tool.input_schema
    assert set(row.definition.parameters["properties"]) == {"query", "limit", "tags"}
    assert row.definition.parameters["required"] == ["query"]
    assert row.timeout == 10


async def test_capabilities_come_from_the_tool(registry: ToolRegistry) -> None:
    row = registry["demo__delete_item"]
    caps = row.capabilities
    assert caps.title == "Delete an item"  # title wins over annotations.title
    assert caps.annotations is not None
    assert caps.annotations.title == "Delete an item (annotation title)"
    assert (caps.annotations.read_only, caps.annotations.destructive) == (False, True)
    assert (caps.annotations.idempotent, caps.annotations.open_world) == (True, False)
    assert caps.meta == {"fixture": "demo"}
    assert caps.task_support is None  # listed on 2026-07-28 ("auto"): tools do not say, the server decides
    add = registry["demo__add"]
    assert add.capabilities.output_schema is not None
    assert add.definition.output_schema == add.capabilities.output_schema
    assert add.capabilities.title == "add"  # no title anywhere: the name


async def test_connection_records_the_session(registry: ToolRegistry) -> None:
    for label in ("demo", "web"):
        connection = registry.connection(label)
        assert connection.state == "connected"
        assert connection.protocol_version in ("2026-07-28", "2025-11-25")
        assert connection.server_info is not None and connection.server_info.name == "demo"
        assert connection.instructions == "Demo fixture server."
        assert connection.capabilities is not None and connection.capabilities.tools is not None
    assert [c.label for c in registry.connections()] == ["demo", "web"]


async def test_text_call_sends_the_wire_name(registry: ToolRegistry, server: str) -> None:
    result = await registry.dispatch(f"{server}__echo", '{"text": "hello"}', ToolContext(call_id="c1"))
    assert result.ok, result.error
    assert result.kind == "mcp"
    assert list(result.output) == [Text("hello")]
    assert result.metadata[MCP_SERVER_LABEL] == server
    assert result.metadata[MCP_WIRE_NAME] == "echo"
    assert result.metadata[MCP_ARGUMENTS] == {"text": "hello"}
    raw = result.metadata[MCP_RESULT]
    assert isinstance(raw, mcp_types.CallToolResult) and raw is result.mcp_result


async def test_optional_arguments(registry: ToolRegistry, server: str) -> None:
    result = await registry.dispatch(f"{server}__search", {"query": "q", "tags": ["a", "b"]})
    assert list(result.output) == [Text("query=q limit=None tags=a,b")]
    result = await registry.dispatch(f"{server}__search", {"query": "q", "limit": 3})
    assert list(result.output) == [Text("query=q limit=3 tags=None")]


async def test_structured_content_is_one_json_block(registry: ToolRegistry, server: str) -> None:
    result = await registry.dispatch(f"{server}__add", {"a": 2, "b": 3})
    assert result.ok, result.error
    # The server sends structuredContent and a text block repeating it: the host keeps the
    # value as one JSON block, the model is shown the server's text only (issue 7 #2).
    raw = result.mcp_result
    assert raw.structured_content == {"sum": 5}
    assert [c.type for c in raw.content] == ["text"]
    assert list(result.output) == [Json({"sum": 5}), Text(raw.content[0].text)]
    assert result.output.structured == {"sum": 5}
    assert list(result.presentation) == [Text(raw.content[0].text)]


async def test_image_and_text_keep_their_order(registry: ToolRegistry, server: str) -> None:
    result = await registry.dispatch(f"{server}__image")
    blocks = list(result.output)
    assert [b.type for b in blocks] == ["image", "text"]
    image = blocks[0]
    assert isinstance(image, Image) and image.mime_type == "image/png"
    assert image.data.startswith(b"\x89PNG")
    assert blocks[1] == Text("a red pixel")


@pytest.mark.parametrize("arguments", [None, "", "null", {}])
async def test_absent_arguments_are_sent_as_none(registry: ToolRegistry, arguments: Any) -> None:
    result = await registry.dispatch("web__image", arguments)
    assert result.ok, result.error
    assert result.metadata[MCP_ARGUMENTS] is None


@pytest.mark.parametrize("arguments", ["[1, 2]", "3", '"text"', "true"])
async def test_arrays_and_scalars_never_reach_the_wire(registry: ToolRegistry, arguments: str) -> None:
    result = await registry.dispatch("web__echo", arguments)
    assert result.error is not None and result.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert "JSON object" in result.error.model_feedback
    assert MCP_RESULT not in result.metadata  # no tools/call was sent


async def test_is_error_is_upstream_error_with_the_servers_text(registry: ToolRegistry, server: str) -> None:
    result = await registry.dispatch(f"{server}__fail", {"reason": "the disk is full"})
    assert result.disposition is Disposition.FAILED
    assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
    assert "the disk is full" in result.error.model_feedback
    assert list(result.presentation) == [Text(result.error.model_feedback)]
    assert result.mcp_result.is_error is True  # the raw result is kept
    assert not result.error.retryable


async def test_unexpected_server_exception_is_upstream_error(registry: ToolRegistry) -> None:
    result = await registry.dispatch("demo__crash")
    assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
    assert "secret internal detail" not in result.error.model_feedback  # the server hid it


async def test_output_schema_mismatch_is_upstream_error(registry: ToolRegistry, server: str) -> None:
    result = await registry.dispatch(f"{server}__bad_output")
    assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
    assert "output schema" in result.error.model_feedback
    assert "outputSchema" in result.error.message
    assert f"{server}__bad_output" in result.error.model_feedback  # the row's name, not the wire name


async def test_tool_the_server_no_longer_offers_is_not_found(registry: ToolRegistry, server: str) -> None:
    # "ephemeral" is listed, but the server answers exactly as it does for an unknown tool.
    result = await registry.dispatch(f"{server}__ephemeral")
    assert result.error is not None and result.error.kind is ErrorKind.NOT_FOUND
    assert "no longer offer" in result.error.model_feedback
    assert "no longer offers" in result.error.message and repr(server) in result.error.message


async def test_json_rpc_error_response(registry: ToolRegistry, server: str) -> None:
    result = await registry.dispatch(f"{server}__protocol_error", {"code": -32603, "message": "db down"})
    assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
    assert result.error.code == -32603
    assert "db down" in result.error.model_feedback
    result = await registry.dispatch(f"{server}__protocol_error", {"code": -32602, "message": "bad q"})
    assert result.error is not None and result.error.kind is ErrorKind.INVALID_ARGUMENTS


async def test_progress_reaches_the_context(registry: ToolRegistry, server: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    result = await registry.dispatch(f"{server}__progress", {"steps": 3}, ToolContext(progress=progress))
    assert result.ok, result.error
    assert list(result.output) == [Text("progressed 3")]
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_hanging_call_times_out_and_is_cancelled_on_the_wire(
    registry: ToolRegistry, server: str, cancel_log: Path
) -> None:
    before = count_in(cancel_log, "slow cancelled")
    with anyio.fail_after(10):
        result = await registry.dispatch(f"{server}__slow", {"seconds": 30}, ToolContext(timeout=0.5))
    assert result.error is not None and result.error.kind is ErrorKind.TIMEOUT
    assert result.error.retryable
    await wait_until(lambda: count_in(cancel_log, "slow cancelled") > before)
    # The session is still usable.
    assert (await registry.dispatch(f"{server}__echo", {"text": "still here"})).ok


async def test_call_timeout_of_the_spec_bounds_a_hanging_call(registry: ToolRegistry, cancel_log: Path) -> None:
    url = registry.connection("web").spec.url
    assert url is not None
    before = count_in(cancel_log, "slow cancelled")
    await registry.connect(demo_http(url, "quick", call_timeout=0.5, include=["slow"]))
    try:
        assert registry["quick__slow"].timeout == 0.5
        with anyio.fail_after(5):
            result = await registry.dispatch("quick__slow", {"seconds": 30})
        assert result.error is not None and result.error.kind is ErrorKind.TIMEOUT
        assert "0.5" in result.error.model_feedback
        await wait_until(lambda: count_in(cancel_log, "slow cancelled") > before)
    finally:
        await registry.disconnect("quick")


async def test_cancelling_dispatch_cancels_the_request(registry: ToolRegistry, server: str, cancel_log: Path) -> None:
    before = count_in(cancel_log, "slow cancelled")
    with anyio.move_on_after(0.5):
        await registry.dispatch(f"{server}__slow", {"seconds": 30})
    await wait_until(lambda: count_in(cancel_log, "slow cancelled") > before)


async def test_concurrent_calls_share_one_session(registry: ToolRegistry, server: str) -> None:
    results: list[Any] = [None] * 20

    async def call(i: int) -> None:
        results[i] = await registry.dispatch(f"{server}__add", {"a": i, "b": 1})

    async with anyio.create_task_group() as group:
        for i in range(20):
            group.start_soon(call, i)
    assert [r.output.structured for r in results] == [{"sum": i + 1} for i in range(20)]


async def test_result_meta_is_on_the_metadata(registry: ToolRegistry) -> None:
    result = await registry.dispatch("web__echo", {"text": "x"})
    raw = result.mcp_result
    if raw.meta:
        assert result.metadata[MCP_META] == raw.meta
    else:
        assert MCP_META not in result.metadata


async def test_read_resource_passes_through(registry: ToolRegistry, server: str) -> None:
    text = await registry.read_resource(server, "demo://readme")
    assert [(b.type, b.uri, b.mime_type, b.text) for b in text] == [
        ("resource", "demo://readme", "text/plain", "Demo fixture README.")
    ]
    blob = await registry.read_resource(server, "demo://pixel.png")
    (block,) = list(blob)
    assert block.type == "resource" and block.mime_type == "image/png"
    assert block.blob is not None and block.blob.startswith(b"\x89PNG")


async def test_read_unknown_resource_is_not_found(registry: ToolRegistry, server: str) -> None:
    from toolmesh import ToolExecutionError

    with pytest.raises(ToolExecutionError) as info:
        await registry.read_resource(server, "demo://missing")
    assert info.value.kind is ErrorKind.NOT_FOUND
    with pytest.raises(ToolExecutionError) as info:
        await registry.read_resource("nope", "demo://readme")
    assert info.value.kind is ErrorKind.NOT_FOUND and "'nope'" in str(info.value)


async def test_mcp_call_item_matches_openai(registry: ToolRegistry, server: str) -> None:
    from openai.types.responses.response_output_item import McpCall

    ok = await registry.dispatch(f"{server}__add", '{"a": 1, "b": 2}', ToolContext(call_id="mcp_1"))
    item = mcp_call_item(ok)
    assert item == {
        "type": "mcp_call",
        "id": "mcp_1",
        "server_label": server,
        "name": "add",
        "arguments": json.dumps({"a": 1, "b": 2}),
        "output": ok.mcp_result.content[0].text,  # the server's text, shown once
        "error": None,
        "status": "completed",
    }
    McpCall.model_validate(item)

    failed = await registry.dispatch(f"{server}__fail", {"reason": "no"}, ToolContext(call_id="mcp_2"))
    item = mcp_call_item(failed)
    assert item["status"] == "failed" and item["output"] is None
    assert item["error"]["type"] == "mcp_tool_execution_error"
    assert item["error"]["content"][0]["type"] == "text" and "no" in item["error"]["content"][0]["text"]
    assert McpCall.model_validate(item).error is not None

    refused = await registry.dispatch(f"{server}__add", "[1, 2]", ToolContext(call_id="mcp_3"))
    item = mcp_call_item(refused)
    assert (item["server_label"], item["name"], item["arguments"], item["status"]) == (
        server,
        "add",
        "[1, 2]",
        "failed",
    )
    McpCall.model_validate(item)

    protocol = await registry.dispatch(f"{server}__protocol_error", {"code": -32603, "message": "x"})
    item = mcp_call_item(protocol)
    assert item["error"] == {"type": "mcp_protocol_error", "code": -32603, "message": protocol.error.model_feedback}
    McpCall.model_validate(item)


async def test_mcp_call_item_needs_an_mcp_result() -> None:
    registry = ToolRegistry()

    async def handler(arguments: dict[str, Any]) -> str:
        return "x"

    registry.register_dynamic("dyn", {"type": "object"}, handler)
    result = await registry.dispatch("dyn")
    with pytest.raises(ValueError, match="server_label"):
        mcp_call_item(result)
    item = mcp_call_item(result, server_label="local", name="dyn", arguments="{}")
    assert (item["server_label"], item["name"], item["output"]) == ("local", "dyn", "x")
