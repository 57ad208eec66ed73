"""Against a peer written with another SDK: @modelcontextprotocol/server-everything (npm 2026.8.31) over stdio.

`make test` installs it into .npm-tools/ (scripts/install_npm_tools.sh); without node or
the package these tests are skipped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from _mcp import child_pids, everything_stdio
from _servers import everything_available
from toolmesh import (
    EmbeddedResource,
    ErrorKind,
    Image,
    Json,
    McpEntry,
    ResourceLink,
    TaskSupport,
    Text,
    ToolContext,
    ToolRegistry,
)
from toolmesh.mcp import MCP_TASK_ID
from toolmesh.providers.openai_responses import mcp_call_item


def test_server_everything_is_installed() -> None:
    """`make test` installs it; its absence is a failure, never a silent skip."""
    assert everything_available(), "server-everything is missing: run scripts/install_npm_tools.sh (make test does)"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def registry() -> AsyncIterator[ToolRegistry]:
    before = child_pids()
    async with ToolRegistry() as registry:
        await registry.connect(everything_stdio("ev", {"TOOLMESH_PROBE": "from-the-spec"}, call_timeout=20))
        yield registry
    assert child_pids() - before == set()


async def test_lists_its_tools_as_rows(registry: ToolRegistry) -> None:
    connection = registry.connection("ev")
    assert connection.server_info is not None and connection.server_info.name == "mcp-servers/everything"
    assert connection.protocol_version == "2025-11-25"  # a handshake-era server: auto mode fell back
    names = registry.names()
    for wire in ("echo", "get-sum", "get-structured-content", "get-tiny-image", "get-resource-links"):
        assert f"ev__{wire}" in names
    # Sampling and elicitation tools are listed only for clients that declare those capabilities.
    assert "ev__trigger-sampling-request" not in names
    row = registry["ev__get-sum"]
    assert isinstance(row, McpEntry) and row.wire_name == "get-sum"
    assert row.definition.parameters["required"] == ["a", "b"]
    assert row.capabilities.title == "Get Sum Tool"
    assert row.capabilities.annotations is not None and row.capabilities.annotations.read_only is True
    assert registry["ev__get-structured-content"].capabilities.output_schema is not None
    assert registry["ev__simulate-research-query"].capabilities.task_support is TaskSupport.REQUIRED
    assert registry["ev__echo"].capabilities.task_support is TaskSupport.FORBIDDEN


async def test_echo(registry: ToolRegistry) -> None:
    result = await registry.dispatch("ev__echo", '{"message": "hello"}')
    assert result.ok, result.error
    assert list(result.output) == [Text("Echo: hello")]


async def test_structured_content(registry: ToolRegistry) -> None:
    result = await registry.dispatch("ev__get-structured-content", {"location": "New York"})
    assert result.ok, result.error
    # Issue 7 #2: the host keeps the structured value, the model is shown the server's content once.
    block, *shown = list(result.output)
    assert isinstance(block, Json)
    assert block.value == result.mcp_result.structured_content
    assert set(block.value) == {"temperature", "conditions", "humidity"}
    assert shown == [Text(c.text) for c in result.mcp_result.content]
    assert list(result.presentation) == shown and not any(isinstance(b, Json) for b in result.presentation)


async def test_tiny_image_between_texts(registry: ToolRegistry) -> None:
    result = await registry.dispatch("ev__get-tiny-image")
    assert [b.type for b in result.output] == ["text", "image", "text"]
    image = result.output[1]
    assert isinstance(image, Image) and image.mime_type == "image/png"
    assert image.data.startswith(b"\x89PNG\r\n\x1a\n")


async def test_resource_links(registry: ToolRegistry) -> None:
    result = await registry.dispatch("ev__get-resource-links", {"count": 3})
    blocks = list(result.output)
    assert [b.type for b in blocks] == ["text", "resource_link", "resource_link", "resource_link"]
    links = [b for b in blocks if isinstance(b, ResourceLink)]
    assert all(link.uri.startswith("demo://resource/") and link.name for link in links)
    raw_links = [c for c in result.mcp_result.content if c.type == "resource_link"]
    assert [(link.uri, link.name, link.mime_type) for link in links] == [
        (str(c.uri), c.name, c.mime_type) for c in raw_links
    ]


@pytest.mark.parametrize(("kind", "field"), [("Text", "text"), ("Blob", "blob")])
async def test_resource_reference(registry: ToolRegistry, kind: str, field: str) -> None:
    result = await registry.dispatch("ev__get-resource-reference", {"resourceType": kind, "resourceId": 2})
    assert [b.type for b in result.output] == ["text", "resource", "text"]
    resource = result.output[1]
    assert isinstance(resource, EmbeddedResource)
    assert resource.uri == f"demo://resource/dynamic/{kind.lower()}/2"
    assert getattr(resource, field) is not None
    if field == "blob":
        assert resource.blob is not None and resource.blob.startswith(b"Resource 2")
    # The embedded resource is readable through resources/read as well.
    read = await registry.read_resource("ev", resource.uri)
    (block,) = list(read)
    assert isinstance(block, EmbeddedResource) and block.uri == resource.uri


async def test_get_sum_with_bad_arguments_is_an_error_the_model_can_read(registry: ToolRegistry) -> None:
    result = await registry.dispatch("ev__get-sum", {"a": "one", "b": 2}, ToolContext(call_id="c9"))
    # Issue 7 #1: checked against the discovered inputSchema before the wire.
    assert result.error is not None and result.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert "a: 'one' is not of type 'number'" in result.error.model_feedback
    assert result.mcp_result is None  # nothing was sent
    item = mcp_call_item(result)
    assert item["name"] == "get-sum" and item["error"]["type"] == "mcp_protocol_error"
    assert item["error"]["code"] == -32602
    good = await registry.dispatch("ev__get-sum", {"a": 1, "b": 2})
    assert good.output.as_text() == "The sum of 1 and 2 is 3."


async def test_progress_from_a_long_running_operation(registry: ToolRegistry) -> None:
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    result = await registry.dispatch(
        "ev__trigger-long-running-operation", {"duration": 0.3, "steps": 3}, ToolContext(progress=progress)
    )
    assert result.ok, result.error
    assert seen == [1, 2, 3]


async def test_the_spec_env_reaches_the_process(registry: ToolRegistry) -> None:
    result = await registry.dispatch("ev__get-env")
    assert result.ok, result.error
    # the process has the spec's value: echoed back, a configured env value is starred out (issue 8)
    assert '"TOOLMESH_PROBE": "***"' in result.output.as_text()
    assert "from-the-spec" not in result.output.as_text() + result.presentation.as_text()


async def test_simulate_research_query_runs_as_a_task_to_its_result(registry: ToolRegistry) -> None:
    # taskSupport "required": a task-augmented tools/call, tasks/get polls, tasks/result.
    seen: list[str | None] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(message)

    with anyio.fail_after(120):
        result = await registry.dispatch(
            "ev__simulate-research-query", {"topic": "owls"}, ToolContext(progress=progress, timeout=120)
        )
    assert result.ok, result.error
    assert "Research Report: owls" in result.output.as_text()
    assert result.metadata[MCP_TASK_ID]
    assert seen[0] is not None and seen[0].startswith("working") and seen[-1] is not None
    assert seen[-1].startswith("completed")
