"""Gemini: declarations, parsed function calls and function responses, checked against google-genai's types."""

from __future__ import annotations

import base64
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from _provider_support import PNG, make_registry
from google.genai import types

from toolmesh import (
    Audio,
    Disposition,
    Json,
    ToolCall,
    ToolDefinition,
    ToolOutput,
    ToolRegistry,
    ToolResult,
    run_tool_calls,
)
from toolmesh.providers import UnsupportedContentError, UnsupportedToolError, gemini


def generated(*parts: dict[str, Any]) -> types.GenerateContentResponse:
    """A recorded response whose first candidate holds ``parts``."""
    return types.GenerateContentResponse.model_validate(
        {
            "candidates": [{"content": {"role": "model", "parts": list(parts)}, "finish_reason": "STOP", "index": 0}],
            "model_version": "gemini-test",
        }
    )


def function_call(name: str, args: dict[str, Any], id_: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    if id_ is not None:
        call["id"] = id_
    return {"function_call": call}


def revalidate(model: types.Tool | types.Content) -> None:
    """The object survives the SDK's own JSON round trip unchanged."""
    assert type(model).model_validate_json(model.model_dump_json(exclude_none=True)) == model


async def test_round_trip_with_an_image_an_error_and_missing_ids() -> None:
    registry = make_registry()
    registry.register_hosted("google_search", {"type": "google_search"}, provider="gemini")
    snapshot = registry.snapshot()
    declared = gemini.tools(snapshot)
    for item in declared:
        revalidate(item)
    functions = declared[0].function_declarations or []
    assert [f.name for f in functions] == ["add", "search", "screenshot", "explode"]
    assert functions[0].description == "Add two integers."
    assert functions[0].parameters_json_schema == snapshot["add"].definition.parameters
    assert declared[1] == types.Tool(google_search=types.GoogleSearch())

    recorded = generated(
        {"text": "Working on it."},
        function_call("add", {"x": 1, "y": 2}, id_="fc-1"),
        function_call("screenshot", {"label": "home"}),
        function_call("explode", {}),
        function_call("search", {"query": "tea"}),
    )
    calls = gemini.parse_tool_calls(recorded)
    assert calls[0] == ToolCall("fc-1", "add", '{"x":1,"y":2}')
    assert calls[1].id.startswith("toolmesh-gemini-1-")
    assert calls[1].id != calls[2].id
    assert gemini.parse_tool_calls(recorded) == calls  # deterministic ids

    results = await run_tool_calls(snapshot, calls)
    content = gemini.tool_results(results)
    revalidate(content)
    assert content.role == "user"
    responses = [part.function_response for part in content.parts or []]
    assert all(response is not None for response in responses)
    add_r, shot_r, boom_r, search_r = (r for r in responses if r is not None)
    assert (add_r.id, add_r.name, add_r.response) == ("fc-1", "add", {"output": 3})
    assert shot_r.id is None and shot_r.name == "screenshot"
    assert shot_r.response == {"output": "screenshot of home"}
    assert shot_r.parts == [types.FunctionResponsePart.from_bytes(data=PNG, mime_type="image/png")]
    assert boom_r.response == {"error": "The tool failed with an internal error."}
    assert search_r.response == {"output": ["tea 1", "tea 2"]}


def test_parse_accepts_content_parts_and_dicts() -> None:
    recorded = generated(function_call("add", {"x": 1, "y": 1}, id_="a"))
    expected = [ToolCall("a", "add", '{"x":1,"y":1}')]
    assert recorded.candidates is not None
    content = recorded.candidates[0].content
    assert content is not None
    assert gemini.parse_tool_calls(content) == expected
    assert gemini.parse_tool_calls(content.parts) == expected
    assert gemini.parse_tool_calls(recorded.model_dump()) == expected
    assert (
        gemini.parse_tool_calls({"parts": [{"functionCall": {"id": "a", "name": "add", "args": {"x": 1, "y": 1}}}]})
        == expected
    )
    assert gemini.parse_tool_calls({"candidates": []}) == []
    bad = gemini.parse_tool_calls([{"function_call": {"id": "b", "name": "add", "args": "{oops"}}])
    assert bad[0].problem is not None


def test_structured_output_is_sent_as_json_and_audio_is_refused() -> None:
    def result(output: ToolOutput) -> ToolResult:
        return ToolResult("c", "tool", "native", Disposition.SUCCEEDED, ToolOutput(), output)

    content = gemini.tool_results([result(ToolOutput([Json({"temp": 14.5})]))])
    assert content.parts is not None and content.parts[0].function_response is not None
    assert content.parts[0].function_response.response == {"output": {"temp": 14.5}}
    with pytest.raises(UnsupportedContentError, match="audio/wav"):
        gemini.tool_results([result(ToolOutput([Audio(b"RIFF", "audio/wav")]))])


def test_refusals() -> None:
    with pytest.raises(UnsupportedToolError, match="gemini"):
        gemini.tools([ToolDefinition("1st-tool", "", {"type": "object", "properties": {}})], invalid_names="raise")
    wrong = ToolRegistry()
    wrong.register_hosted("web_search", {"type": "web_search"}, provider="openai")
    with pytest.raises(UnsupportedToolError, match="'openai'"):
        gemini.tools(wrong)
    unknown = ToolRegistry()
    unknown.register_hosted("magic", {"type": "magic_wand"}, provider="gemini")
    with pytest.raises(UnsupportedToolError, match="google_search"):
        gemini.tools(unknown)


def test_hosted_settings_are_passed_through() -> None:
    registry = ToolRegistry()
    registry.register_hosted("code", {"type": "code_execution"}, provider="gemini")
    registry.register_hosted("search", {"type": "google_search", "google_search": {"exclude_domains": ["x.com"]}})
    declared = gemini.tools(registry)
    assert declared == [
        types.Tool(code_execution=types.ToolCodeExecution()),
        types.Tool(google_search=types.GoogleSearch(exclude_domains=["x.com"])),
    ]


async def test_the_sdk_client_sends_declarations_and_responses() -> None:
    import json

    import httpx2
    from google import genai

    requests: list[dict[str, Any]] = []
    call = {"functionCall": {"name": "screenshot", "args": {"label": "home"}}}
    bodies = iter(
        [
            {"candidates": [{"content": {"role": "model", "parts": [call]}, "finishReason": "STOP"}]},
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "A green pixel."}]}}]},
        ]
    )

    def handle(request: httpx2.Request) -> httpx2.Response:
        requests.append(json.loads(request.content))
        return httpx2.Response(200, json=next(bodies))

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handle))
    client = genai.Client(api_key="test", http_options=types.HttpOptions(httpx_async_client=http))
    snapshot = make_registry().snapshot()
    config = types.GenerateContentConfig(tools=gemini.tools(snapshot))
    contents: list[types.Content] = [types.Content(role="user", parts=[types.Part(text="Screenshot home.")])]
    response = await client.aio.models.generate_content(model="gemini-test", contents=contents, config=config)
    assert response.candidates is not None and response.candidates[0].content is not None
    contents.append(response.candidates[0].content)
    contents.append(gemini.tool_results(await run_tool_calls(snapshot, gemini.parse_tool_calls(response))))
    final = await client.aio.models.generate_content(model="gemini-test", contents=contents, config=config)
    assert final.text == "A green pixel."

    # The SDK writes some fields in proto snake_case and bytes as URL-safe base64; the API takes both.
    declarations = requests[0]["tools"][0]["functionDeclarations"]
    assert declarations[0]["parameters_json_schema"] == snapshot["add"].definition.parameters
    sent = requests[1]["contents"][-1]["parts"][0]["functionResponse"]
    assert "id" not in sent
    assert sent["name"] == "screenshot"
    assert sent["response"] == {"output": "screenshot of home"}
    (blob,) = [part["inline_data"] for part in sent["parts"]]
    assert blob["mime_type"] == "image/png"
    assert base64.urlsafe_b64decode(blob["data"]) == PNG


def test_the_sdk_is_imported_with_the_module_so_the_first_export_imports_nothing() -> None:
    code = textwrap.dedent(
        """
        import sys
        import anyio
        from toolmesh import ToolDefinition
        from toolmesh.providers import gemini

        assert "google.genai.types" in sys.modules, "importing the module imports google-genai"

        async def first_turn() -> None:
            before = set(sys.modules)
            gemini.tools([ToolDefinition("ping", "", {"type": "object", "properties": {}})])
            imported = sorted(name for name in set(sys.modules) - before if name.startswith("google"))
            assert not imported, f"the first export imported {imported} on the event loop"

        anyio.run(first_turn)
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
