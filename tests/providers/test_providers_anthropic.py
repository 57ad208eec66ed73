"""Anthropic Messages: declarations, tool_use blocks and tool_result messages, checked against the SDK's types."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from _provider_support import PNG, assert_sdk_shape, make_registry
from anthropic.types import Message, MessageParam, ToolUnionParam

from toolmesh import (
    Audio,
    Disposition,
    EmbeddedResource,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolRegistry,
    ToolResult,
    run_tool_calls,
)
from toolmesh.providers import UnsupportedContentError, UnsupportedToolError
from toolmesh.providers import anthropic as claude


def message(*blocks: dict[str, Any]) -> Message:
    """A recorded assistant message that stopped for tool use."""
    return Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
            "content": [{"type": "text", "text": "Let me check."}, *blocks],
        }
    )


def tool_use(id_: str, name: str, input_: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": name, "input": input_}


async def test_round_trip_with_an_image_and_an_error() -> None:
    registry = make_registry()
    registry.register_hosted(
        "web_search", {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}, provider="anthropic"
    )
    snapshot = registry.snapshot()
    declared = claude.tools(snapshot)
    for item in declared:
        assert_sdk_shape(ToolUnionParam, item)
    assert declared[0] == {
        "name": "add",
        "description": "Add two integers.",
        "input_schema": snapshot["add"].definition.parameters,
    }
    assert declared[-1] == {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}

    recorded = message(
        tool_use("toolu_1", "add", {"y": 2, "x": 1}),
        tool_use("toolu_2", "screenshot", {"label": "home"}),
        tool_use("toolu_3", "explode", {}),
        tool_use("toolu_4", "nope", {}),
    )
    calls = claude.parse_tool_calls(recorded)
    assert calls[0] == ToolCall("toolu_1", "add", '{"x":1,"y":2}')
    assert [call.id for call in calls] == ["toolu_1", "toolu_2", "toolu_3", "toolu_4"]

    results = await run_tool_calls(snapshot, calls)
    reply = claude.tool_results(results)
    assert_sdk_shape(MessageParam, reply)
    assert reply["role"] == "user"
    blocks = list(reply["content"])
    assert [block["tool_use_id"] for block in blocks] == ["toolu_1", "toolu_2", "toolu_3", "toolu_4"]  # type: ignore[index,typeddict-item]
    assert blocks[0] == {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"}
    assert blocks[1] == {
        "type": "tool_result",
        "tool_use_id": "toolu_2",
        "content": [
            {"type": "text", "text": "screenshot of home"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
            },
        ],
    }
    assert blocks[2] == {
        "type": "tool_result",
        "tool_use_id": "toolu_3",
        "content": "The tool failed with an internal error.",
        "is_error": True,
    }
    assert blocks[3]["is_error"] is True  # type: ignore[typeddict-item]
    assert "Unknown tool 'nope'" in blocks[3]["content"]  # type: ignore[typeddict-item,operator]


def test_parse_accepts_dicts_content_lists_and_string_input() -> None:
    recorded = message(tool_use("t1", "add", {"x": 1, "y": 1}))
    as_dict = recorded.model_dump()
    assert claude.parse_tool_calls(as_dict) == claude.parse_tool_calls(recorded)
    assert claude.parse_tool_calls(as_dict["content"]) == [ToolCall("t1", "add", '{"x":1,"y":1}')]
    server = {"type": "server_tool_use", "id": "srv", "name": "web_search", "input": {"query": "x"}}
    broken = {"type": "tool_use", "id": "t2", "name": "add", "input": '{"x": '}
    calls = claude.parse_tool_calls([server, broken])
    assert len(calls) == 1 and calls[0].id == "t2" and calls[0].problem is not None


def test_pdfs_become_documents_and_audio_is_refused() -> None:
    def result(output: ToolOutput) -> ToolResult:
        return ToolResult("t", "tool", "native", Disposition.SUCCEEDED, ToolOutput(), output)

    pdf = result(ToolOutput([EmbeddedResource("file:///a.pdf", mime_type="application/pdf", blob=b"%PDF")]))
    reply = claude.tool_results([pdf])
    assert_sdk_shape(MessageParam, reply)
    assert next(iter(reply["content"]))["content"][0]["type"] == "document"  # type: ignore[index,typeddict-item]
    audio = result(ToolOutput([Audio(b"RIFF", "audio/wav")]))
    with pytest.raises(UnsupportedContentError, match=r"audio/wav"):
        claude.tool_results([audio])
    described = claude.tool_results([audio], describe_unsupported=True)
    assert next(iter(described["content"]))["content"] == "[audio: audio/wav]"  # type: ignore[index,typeddict-item]
    empty = claude.tool_results([result(ToolOutput())])
    assert_sdk_shape(MessageParam, empty)
    assert list(empty["content"]) == [{"type": "tool_result", "tool_use_id": "t"}]


def test_invalid_names_and_other_providers_hosted_tools_are_refused() -> None:
    long_name = "x" * 129
    with pytest.raises(UnsupportedToolError, match="anthropic"):
        claude.tools([ToolDefinition(long_name, "", {"type": "object", "properties": {}})], invalid_names="raise")
    registry = ToolRegistry()
    registry.register_hosted("code", {"type": "code_execution"}, provider="gemini")
    with pytest.raises(UnsupportedToolError, match="'gemini'"):
        claude.tools(registry)
