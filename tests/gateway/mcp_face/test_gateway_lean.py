"""The lean path (``_mcp_face.lean``) answers ``tools/call`` and ``tools/list`` exactly as the SDK's server does.

The same raw 2026-07-28 HTTP requests go to the gateway served through the SDK alone
(``lean=False``) and as served; every answer (status, content type, JSON body) must be the
same. The hot requests must be answered without the SDK's per-request entry (``serve_one``
never runs for them); the others (streaming, a rejected header, other methods, bad bodies)
step aside to the SDK with their body intact.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest
from mcp.server import _streamable_http_modern as sdk_entry

from _gateway import serving
from toolmesh import ToolExecutionError, ToolRegistry, tool
from toolmesh.gateway import McpGateway
from toolmesh.gateway._mcp_face import lean

VERSION = "2026-07-28"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
}


@tool
async def echo(text: str) -> str:
    """Echo the text."""
    return text


@tool
async def total(a: int, b: int) -> dict[str, int]:
    """Add two integers."""
    return {"sum": a + b}


@tool
async def slow(seconds: float) -> str:
    """Take its time, as a tool waiting on an API does."""
    await anyio.sleep(seconds)
    return "done"


@tool
async def refuse(reason: str) -> str:
    """Always fails, on purpose."""
    raise ToolExecutionError(f"refused: {reason}")


async def _noop(arguments: dict[str, Any]) -> str:
    return "ok"


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    for row in (echo, total, slow, refuse):
        registry.register(row)
    for index in range(520):  # more than one page of tools/list
        registry.register_dynamic(f"row_{index}", {"type": "object", "properties": {}}, _noop)
    return registry


def _request(method: str, params: dict[str, Any], *, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": {**ENVELOPE, **(meta or {})}}}


def _headers(body: dict[str, Any], **extra: str) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": VERSION,
        "mcp-method": str(body.get("method", "")),
    }
    name = body.get("params", {}).get("name")
    if isinstance(name, str):
        headers["mcp-name"] = name
    return {**headers, **extra}


def _call(name: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return _request("tools/call", {"name": name, "arguments": arguments}, meta=meta)


LEAN = {
    "tools/list": _request("tools/list", {}),
    "tools/list, page 2": _request("tools/list", {"cursor": "500"}),
    "tools/list, a cursor not handed out": _request("tools/list", {"cursor": "nope"}),
    "tools/call": _call("echo", {"text": "hello"}),
    "tools/call, structured": _call("total", {"a": 1, "b": 2}),
    "tools/call, unknown tool": _call("nope", {}),
    "tools/call, invalid arguments": _call("echo", {"text": 5}),
    "tools/call, the tool fails": _call("refuse", {"reason": "no"}),
    "tools/call, a trace context": _call(
        "echo", {"text": "traced"}, traceparent="00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    ),
}
"""Requests the lean path answers itself."""

STEPS_ASIDE: dict[str, tuple[bytes, dict[str, str]]] = {
    "a progress token": (
        json.dumps(body := _call("echo", {"text": "p"}, progressToken="t1")).encode(),
        _headers(body),
    ),
    "a log level": (
        json.dumps(body := _call("echo", {"text": "l"}, **{"io.modelcontextprotocol/logLevel": "info"})).encode(),
        _headers(body),
    ),
    "Mcp-Name disagreeing with the body": (
        json.dumps(body := _call("echo", {"text": "x"})).encode(),
        _headers(body, **{"mcp-name": "total"}),
    ),
    "accepting JSON only": (
        json.dumps(body := _call("echo", {"text": "j"})).encode(),
        _headers(body, accept="application/json"),
    ),
    "another method": (json.dumps(body := _request("prompts/list", {})).encode(), _headers(body)),
    "no envelope": (
        json.dumps(body := {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode(),
        _headers(body),
    ),
    "params the surface refuses": (
        json.dumps(body := _request("tools/call", {"arguments": {}})).encode(),
        _headers(body),
    ),
    "not JSON": (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/li', _headers({"method": "tools/list"})),
    "nested too deeply": (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":' + b"[" * 3000 + b"]" * 3000 + b"}}",
        _headers({"method": "tools/list"}),
    ),
    "a notification": (
        json.dumps(body := {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}).encode(),
        _headers(body),
    ),
}
"""Requests the lean path leaves to the SDK: the answers must still be the SDK's own."""


async def _answers(lean: bool, requests: dict[str, tuple[bytes, dict[str, str]]]) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    async with (
        _registry() as registry,
        serving(McpGateway(registry), lean=lean) as base,
        httpx2.AsyncClient(timeout=60) as http,
    ):
        with anyio.fail_after(120):
            for label, (body, headers) in requests.items():
                answer = await http.post(f"{base}/mcp", content=body, headers=headers)
                kind = answer.headers.get("content-type")
                answers[label] = (answer.status_code, kind, _parsed(kind, answer.content.decode()))
    return answers


def _parsed(kind: str | None, text: str) -> Any:
    if kind == "text/event-stream":  # its JSON-RPC messages, in order (pings are comments: their number varies)
        return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    return json.loads(text) if text else None


def _raw(requests: dict[str, dict[str, Any]]) -> dict[str, tuple[bytes, dict[str, str]]]:
    return {label: (json.dumps(body).encode(), _headers(body)) for label, body in requests.items()}


async def test_the_lean_path_answers_as_the_sdk_does_without_its_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = await _answers(False, _raw(LEAN))
    entered: list[str] = []
    serve_one = sdk_entry.serve_one

    async def counted(*args: Any, **kwargs: Any) -> Any:
        entered.append(args[2])
        return await serve_one(*args, **kwargs)

    monkeypatch.setattr(sdk_entry, "serve_one", counted)
    assert await _answers(True, _raw(LEAN)) == expected
    assert entered == []
    assert expected["tools/call"][0:2] == (200, "application/json")
    assert expected["tools/call"][2]["result"]["content"] == [{"type": "text", "text": "hello"}]
    assert expected["tools/list, page 2"][2]["result"]["tools"][0]["name"] == "row_496"
    assert expected["tools/list, a cursor not handed out"][2]["error"]["code"] == -32602


async def test_what_the_lean_path_leaves_is_answered_by_the_sdk_as_before() -> None:
    assert await _answers(True, STEPS_ASIDE) == await _answers(False, STEPS_ASIDE)


async def test_a_long_call_is_answered_on_a_kept_alive_stream_as_the_sdk_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdk_entry, "_SSE_PING_INTERVAL", 0.2)
    monkeypatch.setattr(lean, "PING_SECONDS", 0.2)
    requests = _raw({"a call past the ping interval": _call("slow", {"seconds": 1.0})})
    expected = await _answers(False, requests)
    assert await _answers(True, requests) == expected
    status, kind, messages = expected["a call past the ping interval"]
    assert (status, kind) == (200, "text/event-stream")
    assert messages[-1]["result"]["content"] == [{"type": "text", "text": "done"}]
