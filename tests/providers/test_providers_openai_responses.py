"""OpenAI Responses API: declarations, function calls and function call outputs, checked against the SDK's types."""

from __future__ import annotations

import base64

import pytest
from _provider_support import PNG, assert_sdk_shape, make_registry
from openai.types.responses import Response, ResponseInputItemParam, ToolParam

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
from toolmesh.providers import openai_responses as responses


def response(*calls: tuple[str, str, str]) -> Response:
    """A recorded response: a reasoning-free message and the ``(call_id, name, arguments)`` calls."""
    return Response.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1_760_000_000,
            "model": "gpt-test",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "web_search_call",
                    "id": "ws_1",
                    "status": "completed",
                    "action": {"type": "search", "query": "x"},
                },
                *(
                    {
                        "type": "function_call",
                        "id": f"fc_{call_id}",
                        "call_id": call_id,
                        "name": name,
                        "arguments": arguments,
                        "status": "completed",
                    }
                    for call_id, name, arguments in calls
                ),
            ],
        }
    )


async def test_round_trip_with_an_image_an_error_and_invalid_json() -> None:
    registry = make_registry()
    registry.register_hosted("web_search", {"type": "web_search"}, provider="openai")
    snapshot = registry.snapshot()
    declared = responses.tools(snapshot)
    for item in declared:
        assert_sdk_shape(ToolParam, item)
    assert [item.get("name", item["type"]) for item in declared] == [
        "add",
        "search",
        "screenshot",
        "explode",
        "web_search",
    ]
    assert declared[0] == {
        "type": "function",
        "name": "add",
        "description": "Add two integers.",
        "parameters": snapshot["add"].definition.parameters,
        "strict": False,
    }
    assert declared[-1] == {"type": "web_search"}

    recorded = response(
        ("call_a", "add", '{"x": 1, "y": 2}'),
        ("call_s", "screenshot", '{"label": "home"}'),
        ("call_e", "explode", "{}"),
        ("call_j", "add", "{not json"),
    )
    calls = responses.parse_tool_calls(recorded)
    assert [call.id for call in calls] == ["call_a", "call_s", "call_e", "call_j"]
    assert calls[0].arguments == '{"x":1,"y":2}'
    assert calls[3].problem is not None

    results = await run_tool_calls(snapshot, calls)
    items = responses.tool_results(results)
    for item in items:
        assert_sdk_shape(ResponseInputItemParam, item)
    assert [item["call_id"] for item in items] == ["call_a", "call_s", "call_e", "call_j"]
    assert items[0] == {"type": "function_call_output", "call_id": "call_a", "output": "3"}
    assert items[1]["output"] == [
        {"type": "input_text", "text": "screenshot of home"},
        {
            "type": "input_image",
            "image_url": "data:image/png;base64," + base64.b64encode(PNG).decode(),
            "detail": "auto",
        },
    ]
    assert items[2]["output"] == "The tool failed with an internal error."
    assert "not valid JSON" in str(items[3]["output"])


def test_parse_accepts_output_lists_and_dicts() -> None:
    recorded = response(("c", "add", '{"x": 1, "y": 1}'))
    assert responses.parse_tool_calls(recorded.output) == responses.parse_tool_calls(recorded)
    as_dicts = [item.model_dump() for item in recorded.output]
    assert responses.parse_tool_calls({"output": as_dicts}) == [ToolCall("c", "add", '{"x":1,"y":1}')]
    custom = {"type": "custom_tool_call", "call_id": "x", "name": "grammar", "input": "text"}
    assert responses.parse_tool_calls([custom]) == []


def test_strict_is_always_sent_and_only_true_for_compatible_schemas() -> None:
    free_form = ToolDefinition(
        "tag", "", {"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": True}}}
    )
    snapshot = make_registry().snapshot(active=["search"])
    declared = responses.tools([*snapshot.entries(), free_form], strict=True)
    for item in declared:
        assert_sdk_shape(ToolParam, item)
    assert [item.get("strict") for item in declared] == [True, False]
    strict_search = declared[0]
    assert strict_search["type"] == "function"
    assert strict_search["parameters"] is not None
    assert strict_search["parameters"]["required"] == ["query", "limit"]

    recorded = response(("s", "search", '{"query": "tea", "limit": null}'))
    assert responses.parse_tool_calls(recorded, catalog=snapshot)[0].arguments == '{"query":"tea"}'


def test_pdf_resources_become_input_files_and_audio_is_refused() -> None:
    pdf = ToolResult(
        "c1",
        "report",
        "native",
        Disposition.SUCCEEDED,
        ToolOutput(),
        ToolOutput([EmbeddedResource("file:///r/report.pdf", mime_type="application/pdf", blob=b"%PDF-1.4")]),
    )
    (item,) = responses.tool_results([pdf])
    assert_sdk_shape(ResponseInputItemParam, item)
    assert item["output"] == [
        {
            "type": "input_file",
            "file_data": "data:application/pdf;base64," + base64.b64encode(b"%PDF-1.4").decode(),
            "filename": "report.pdf",
        }
    ]
    audio = ToolResult(
        "c2", "say", "native", Disposition.SUCCEEDED, ToolOutput(), ToolOutput([Audio(b"RIFF", "audio/wav")])
    )
    with pytest.raises(UnsupportedContentError, match="audio"):
        responses.tool_results([audio])
    (described,) = responses.tool_results([audio], describe_unsupported=True)
    assert described["output"] == "[audio: audio/wav]"


def test_another_providers_hosted_tool_is_refused() -> None:
    registry = ToolRegistry()
    registry.register_hosted("web_search", {"type": "web_search_20250305", "name": "web_search"}, provider="anthropic")
    with pytest.raises(UnsupportedToolError, match="'anthropic'"):
        responses.tools(registry.snapshot())
