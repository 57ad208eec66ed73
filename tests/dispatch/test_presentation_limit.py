"""A server's long text is cut in what the model is shown (``max_presentation_chars``), never in the output."""

from __future__ import annotations

import re

import anyio
import pytest

from _servers import FIXTURES, stdio_params
from toolmesh import EmbeddedResource, Json, McpEntry, Text, ToolOutput, ToolRegistry, tool
from toolmesh._core.output import truncate_presentation
from toolmesh.mcp import McpServer, ServerConfigError
from toolmesh.mcp._spec.defaults import DEFAULT_MAX_PRESENTATION_CHARS

ECHO = FIXTURES / "echo_server.py"
NOTE = re.compile(r"\n\[truncated: ([\d,]+) of ([\d,]+) characters not shown; the full output was kept for the host\]$")


def echo_stdio(label: str = "echo", **options: object) -> McpServer:
    command, args, env = stdio_params(ECHO)
    return McpServer.stdio(label, command, args, env=env, **options)  # type: ignore[arg-type]


async def test_long_text_is_truncated_for_the_model_and_kept_whole_for_the_host() -> None:
    async with ToolRegistry() as registry:
        with anyio.fail_after(30):
            await registry.connect(echo_stdio(max_presentation_chars=1_000))
            long = await registry.dispatch("echo__big", {"chars": 5_000})
            short = await registry.dispatch("echo__big", {"chars": 1_000})
            failed = await registry.dispatch("echo__big_error", {"chars": 5_000})
    assert long.ok
    (full,) = long.output.blocks
    assert isinstance(full, Text) and len(full.text) == 5_000 and full.text.endswith("END")
    (shown,) = long.presentation.blocks
    assert isinstance(shown, Text)
    assert shown.text.startswith("a" * 1_000) and "END" not in shown.text
    note = NOTE.search(shown.text)
    assert note is not None and note.groups() == ("4,000", "5,000")
    assert len(shown.text) == 1_000 + len(note.group(0))
    assert short.presentation is short.output  # at the limit: nothing cut, nothing copied
    assert failed.error is not None and failed.error.kind == "upstream_error"
    assert NOTE.search(failed.error.model_feedback) is not None
    assert failed.presentation.as_text() == failed.error.model_feedback
    assert failed.error.message.endswith("END")  # the operator's message keeps the server's whole text


async def test_the_limit_defaults_to_100_000_characters_and_none_lifts_it() -> None:
    assert DEFAULT_MAX_PRESENTATION_CHARS == 100_000
    bounded, unbounded = echo_stdio(), echo_stdio("open", max_presentation_chars=None)
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(bounded)
            await registry.connect(unbounded)
            row = registry["echo__big"]
            assert isinstance(row, McpEntry) and row.max_presentation_chars == 100_000
            cut = await registry.dispatch("echo__big", {"chars": 150_000})
            whole = await registry.dispatch("open__big", {"chars": 150_000})
    assert NOTE.search(cut.presentation.as_text()) is not None
    assert len(cut.output.as_text()) == 150_000
    assert whole.presentation.as_text() == whole.output.as_text()
    assert len(whole.presentation.as_text()) == 150_000


def test_the_limit_is_read_from_the_mcp_servers_json() -> None:
    (spec,) = McpServer.from_config(
        {"mcpServers": {"echo": {"command": "python", "args": ["s.py"], "maxPresentationChars": 2_000}}}
    )
    assert spec.max_presentation_chars == 2_000


async def test_native_tools_are_not_truncated() -> None:
    @tool
    async def huge() -> str:
        return "n" * 200_000

    registry = ToolRegistry()
    registry.register(huge)
    result = await registry.dispatch("huge", {})
    assert result.presentation.as_text() == "n" * 200_000


def test_truncation_cuts_text_and_embedded_text_only_and_keeps_block_order() -> None:
    output = ToolOutput(
        [
            Text("x" * 50),
            Json({"big": "y" * 50}),
            EmbeddedResource("file:///a", mime_type="text/plain", text="z" * 50),
            Text("short"),
        ]
    )
    shown = truncate_presentation(output, 10)
    first, data, resource, last = shown.blocks
    assert isinstance(first, Text) and first.text.startswith("x" * 10 + "\n[truncated: 40 of 50")
    assert data == output.blocks[1]
    assert isinstance(resource, EmbeddedResource) and resource.text is not None
    assert resource.text.startswith("z" * 10 + "\n[truncated: 40 of 50") and resource.uri == "file:///a"
    assert last == Text("short")
    assert [b.type for b in output.blocks] == ["text", "json", "resource", "text"]
    assert output.blocks[0] == Text("x" * 50)  # the host's output is untouched


@pytest.mark.parametrize("bad", [0, -5, True, 1.5, "100"])
def test_a_bad_limit_is_a_config_error(bad: object) -> None:
    with pytest.raises(ServerConfigError, match="max_presentation_chars"):
        echo_stdio(max_presentation_chars=bad)


async def test_toolmesh_own_feedback_is_never_cut() -> None:
    """The limit bounds the server's text; what toolmesh tells the model about a bad call stays whole."""
    async with ToolRegistry() as registry:
        with anyio.fail_after(30):
            await registry.connect(echo_stdio(max_presentation_chars=20))
            bad = await registry.dispatch("echo__big", {"chars": "many"})
    assert bad.error is not None and bad.error.kind == "invalid_arguments"
    assert NOTE.search(bad.error.model_feedback) is None
    assert "chars" in bad.error.model_feedback and len(bad.error.model_feedback) > 20
