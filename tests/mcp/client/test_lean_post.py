"""The lean client path (``toolmesh.mcp._client.lean_post``): 2026-07-28 ``tools/call`` over Streamable HTTP.

The same calls go to the same real fixture server (tests/fixtures/demo_server.py, the SDK's
``MCPServer``, over Streamable HTTP on 127.0.0.1) through two registries: one whose calls take
the lean path, one whose connection sends them through the SDK's session
(``McpConnection.lean = False``). Everything a host sees must be the same: the disposition, the
output blocks, the raw ``CallToolResult``, the error (kind, message, feedback, retryability,
code, HTTP status), the progress and log messages a call received, and the request headers the
server saw. A real HAProxy in front of the server drops one call's connection while others are
in flight: only that call fails.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

import anyio
import pytest

from _mcp import DEMO, demo_http, wait_until
from _servers import http_server
from _services import haproxy
from toolmesh import ErrorKind, ToolContext, ToolRegistry, ToolResult
from toolmesh.mcp import MCP_RESULT
from toolmesh.mcp._client import lean_post

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"text": "hello"}),
    ("add", {"a": 2, "b": 3}),
    ("search", {"query": "q", "limit": 2, "tags": ["x", "y"]}),
    ("image", {}),
    ("fail", {"reason": "no luck"}),
    ("crash", {}),
    ("protocol_error", {}),
    ("protocol_error", {"code": -32601, "message": "gone"}),
    ("bad_output", {}),
    ("ephemeral", {}),
    ("progress", {"steps": 3}),
    ("chatty", {"text": "said"}),
]
"""Text, structured output, an image, isError results, JSON-RPC errors, an outputSchema mismatch,
an unknown tool, progress and log messages (answered on an SSE stream)."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def registries() -> AsyncIterator[dict[bool, ToolRegistry]]:
    async with http_server(DEMO, FIXTURE_CHATTY="1") as url, AsyncExitStack() as stack:
        found: dict[bool, ToolRegistry] = {}
        for lean in (True, False):
            registry = await stack.enter_async_context(ToolRegistry())
            connection = await registry.connect(demo_http(url, call_timeout=20))
            assert connection.protocol_version == "2026-07-28"
            connection.lean = lean
            found[lean] = registry
        yield found


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tool names of the calls that went out on the lean path."""
    sent: list[str] = []
    original = lean_post.LeanPost.send

    async def send(self: lean_post.LeanPost, params: Any, *args: Any) -> Any:
        sent.append(params.name)
        return await original(self, params, *args)

    monkeypatch.setattr(lean_post.LeanPost, "send", send)
    return sent


async def dispatch(registry: ToolRegistry, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Everything the host sees of one call, in comparable form."""
    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[tuple[str, Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def on_log(message: Any) -> None:
        logs.append((message.level, message.data))

    ctx: ToolContext[Any] = ToolContext(call_id="c1", progress=on_progress, on_log=on_log)
    with anyio.fail_after(60):
        result = await registry.dispatch(f"web__{tool}", arguments, ctx=ctx)
    return {
        "disposition": result.disposition,
        "output": [repr(block) for block in result.output] if result.output is not None else None,
        "raw": raw_result(result),
        "error": error_of(result),
        "progress": progress,
        "logs": logs,
    }


def raw_result(result: ToolResult) -> Any:
    raw = result.metadata.get(MCP_RESULT)
    return None if raw is None else raw.model_dump(mode="json", by_alias=True)


def error_of(result: ToolResult) -> Any:
    error = result.error
    if error is None:
        return None
    return (error.kind, error.message, error.model_feedback, error.retryable, error.code, error.http_status)


@pytest.mark.parametrize(("tool", "arguments"), CALLS, ids=[f"{tool}-{i}" for i, (tool, _) in enumerate(CALLS)])
async def test_the_lean_path_answers_as_the_sdk_path(
    registries: dict[bool, ToolRegistry], tool: str, arguments: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = counting(monkeypatch)
    lean = await dispatch(registries[True], tool, arguments)
    assert sent == [tool]
    sdk = await dispatch(registries[False], tool, arguments)
    assert sent == [tool]  # the SDK registry's call did not go lean
    assert lean == sdk


async def test_the_lean_path_takes_the_calls_it_should(
    registries: dict[bool, ToolRegistry], monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = counting(monkeypatch)
    assert (await registries[True].dispatch("web__echo", {"text": "a"})).ok
    assert (await registries[False].dispatch("web__echo", {"text": "b"})).ok
    assert sent == ["echo"]


async def test_the_server_sees_the_same_request_headers(registries: dict[bool, ToolRegistry]) -> None:
    seen: dict[bool, dict[str, str]] = {}
    for lean, registry in registries.items():
        result = await registry.dispatch("web__headers")
        assert result.ok, result.error
        headers = json.loads(result.output.as_text())
        headers.pop("content-length")  # the same JSON, written with other whitespace
        seen[lean] = headers
    assert seen[True] == seen[False]
    assert seen[True]["mcp-method"] == "tools/call" and seen[True]["mcp-name"] == "headers"
    assert seen[True]["mcp-protocol-version"] == "2026-07-28"


def dropping_front(upstream_port: int) -> Callable[[int], str]:
    """An HAProxy config that closes the connection of any request whose body holds "drop-me"."""

    def config(port: int) -> str:
        return f"""
global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 1m
    timeout server 1m
frontend front
    bind 127.0.0.1:{port}
    option http-buffer-request
    http-request reject if {{ req.body -m sub drop-me }}
    default_backend demo
backend demo
    server demo 127.0.0.1:{upstream_port}
"""

    return config


async def test_a_dropped_post_fails_only_its_own_call(monkeypatch: pytest.MonkeyPatch) -> None:
    in_flight = 6
    async with (
        http_server(DEMO) as url,
        haproxy([], config=dropping_front(url.port)) as front,
        ToolRegistry() as registry,
    ):
        connection = await registry.connect(demo_http(f"{front}/mcp", call_timeout=30))
        assert connection.protocol_version == "2026-07-28"
        sent = counting(monkeypatch)
        slow: list[ToolResult] = []

        async def call_slow() -> None:
            slow.append(await registry.dispatch("web__slow", {"seconds": 1.5}))

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                for _ in range(in_flight):
                    group.start_soon(call_slow)
                await wait_until(lambda: len(sent) == in_flight, seconds=30)  # each is on its POST
                dropped = await registry.dispatch("web__echo", {"text": "drop-me"})
        assert dropped.error is not None and dropped.error.kind is ErrorKind.UNAVAILABLE
        assert dropped.error.retryable
        assert [result.ok for result in slow] == [True] * in_flight, [r.error for r in slow]
        assert connection.state == "connected" and connection.reconnects == 0
        after = await registry.dispatch("web__echo", {"text": "after"})
        assert after.ok and after.output.as_text() == "after"
