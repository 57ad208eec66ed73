"""What every provider module shares: catalogs, hosted rows, content rendering, and no SDK at import time."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from toolmesh import (
    ConfigurationError,
    Disposition,
    EmbeddedResource,
    ErrorKind,
    Json,
    ResourceLink,
    Text,
    ToolDefinition,
    ToolExecutionError,
    ToolmeshError,
    ToolOutput,
    ToolRegistry,
    ToolResult,
)
from toolmesh.providers import UnsupportedContentError, UnsupportedToolError, anthropic, gemini, openai_responses
from toolmesh.providers import openai as chat

EMPTY = {"type": "object", "properties": {}}


def test_definitions_rows_and_snapshots_are_all_accepted() -> None:
    registry = ToolRegistry()
    registry.register_dynamic("echo", {"type": "object", "properties": {"x": {"type": "string"}}}, _echo)
    definition = ToolDefinition("ping", "Ping.", EMPTY)
    expected = ["echo", "ping"]
    for source in ([*registry.entries(), definition], [*registry.definitions(), definition]):
        assert [t["function"]["name"] for t in chat.tools(source)] == expected
    assert [t["function"]["name"] for t in chat.tools(registry.snapshot())] == ["echo"]
    assert chat.tools([]) == []


async def _echo(arguments: dict[str, object]) -> object:
    return arguments


def test_duplicates_and_foreign_items_are_refused() -> None:
    with pytest.raises(UnsupportedToolError, match="declared twice"):
        anthropic.tools([ToolDefinition("a", "", EMPTY), ToolDefinition("a", "", EMPTY)])
    with pytest.raises(TypeError, match="ToolSnapshot"):
        anthropic.tools(["add"])  # type: ignore[list-item]
    assert issubclass(UnsupportedToolError, ConfigurationError)
    assert issubclass(UnsupportedContentError, ToolmeshError)


def test_a_hosted_row_without_provider_is_declared_to_any_provider_that_has_hosted_tools() -> None:
    registry = ToolRegistry()
    registry.register_hosted("web_search", {"type": "web_search"})
    assert openai_responses.tools(registry) == [{"type": "web_search"}]
    assert anthropic.tools(registry) == [{"type": "web_search"}]
    with pytest.raises(UnsupportedToolError):
        chat.tools(registry)


def _result(output: ToolOutput, disposition: Disposition = Disposition.SUCCEEDED) -> ToolResult:
    return ToolResult("c1", "t", "native", disposition, ToolOutput(), output)


def test_text_like_blocks_are_flattened_in_order() -> None:
    output = ToolOutput(
        [
            Text("hello"),
            Json({"b": 1, "a": [1, 2]}),
            ResourceLink("file:///notes.md", "notes"),
            EmbeddedResource("file:///x.txt", mime_type="text/plain", text="inline text"),
        ]
    )
    (message,) = chat.tool_results([_result(output)])
    assert message["content"] == 'hello\n{"b":1,"a":[1,2]}\n[resource link: notes <file:///notes.md>]\ninline text'


def test_failed_refused_and_skipped_results() -> None:
    refused = ToolResult.failure(
        "c1", "rm", "native", ToolExecutionError("policy", kind=ErrorKind.REFUSED, model_feedback="Not allowed.")
    )
    skipped = _result(ToolOutput.text("cached answer"), Disposition.SKIPPED)
    blocks = list(anthropic.tool_results([refused, skipped])["content"])
    assert blocks[0] == {"type": "tool_result", "tool_use_id": "c1", "content": "Not allowed.", "is_error": True}
    assert blocks[1] == {"type": "tool_result", "tool_use_id": "c1", "content": "cached answer"}
    assert chat.tool_results([refused])[0]["content"] == "Not allowed."
    parts = gemini.tool_results([refused, skipped]).parts or []
    assert [p.function_response.response for p in parts if p.function_response] == [
        {"error": "Not allowed."},
        {"output": "cached answer"},
    ]


def test_unsupported_content_error_names_the_call_and_the_fix() -> None:
    binary = EmbeddedResource("file:///a.bin", mime_type="application/octet-stream", blob=b"\x00")
    with pytest.raises(UnsupportedContentError) as caught:
        anthropic.tool_results([_result(ToolOutput([Text("x"), binary]))])
    error = caught.value
    assert (error.call_id, error.tool_name, error.block_type, error.mime_type) == (
        "c1",
        "t",
        "resource",
        "application/octet-stream",
    )
    assert "describe_unsupported=True" in str(error) and "on_tool_result" in str(error)


def test_modules_import_and_work_on_dicts_without_any_sdk() -> None:
    code = textwrap.dedent(
        """
        import sys
        for name in ("openai", "anthropic", "google", "google.genai"):
            sys.modules[name] = None  # importing them now fails
        import toolmesh
        from toolmesh.providers import openai, openai_responses, anthropic, gemini
        from toolmesh import ToolDefinition
        d = [ToolDefinition("ping", "", {"type": "object", "properties": {}})]
        assert openai.tools(d) == [{"type": "function", "function": {"name": "ping", "parameters": d[0].parameters}}]
        assert anthropic.tools(d)[0]["name"] == "ping"
        item = {"type": "function_call", "call_id": "c", "name": "ping", "arguments": "{}"}
        calls = openai_responses.parse_tool_calls([item])
        assert calls[0].id == "c"
        try:
            gemini.tools(d)
        except ImportError as exc:
            assert "pip install google-genai" in str(exc)
        else:
            raise AssertionError("gemini.tools needs google-genai")
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
