"""Calls through the gateway: progress and cancellation end to end, trace context into the dispatch span."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from _gateway import client, serving
from _mcp import demo_in_process
from toolmesh import LogMessage, McpServer, ToolContext, ToolRegistry, tool
from toolmesh.gateway import McpGateway

MODES = ["legacy", "2026-07-28"]


class Waiter:
    """An upstream MCP server whose ``wait`` tool says when it started and records its cancellation."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.cancelled = anyio.Event()
        self.server = MCPServer("up")

        @self.server.tool()
        async def wait() -> str:
            """Wait until cancelled."""
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.cancelled.set()
            return "never"  # pragma: no cover


@pytest.mark.parametrize("mode", MODES)
async def test_progress_of_an_upstream_tool_reaches_the_downstream_client(mode: Any) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process())
        async with serving(McpGateway(registry)) as url, client(url + "/mcp", mode) as downstream:
            with anyio.fail_after(60):
                result = await downstream.call_tool("demo__progress", {"steps": 3}, progress_callback=on_progress)
    assert result.content[0].text == "progressed 3"  # type: ignore[union-attr]
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("mode", MODES)
async def test_a_downstream_cancel_cancels_the_upstream_call(mode: Any) -> None:
    waiter = Waiter()
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("up", waiter.server))
        async with serving(McpGateway(registry)) as url, client(url + "/mcp", mode) as downstream:
            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    group.start_soon(downstream.call_tool, "up__wait", {})
                    await waiter.started.wait()
                    group.cancel_scope.cancel()  # the client cancels its request
                await waiter.cancelled.wait()  # ... and the upstream server's handler is cancelled
                assert (await downstream.list_tools()).tools  # the session stays usable


@pytest.mark.parametrize("mode", MODES)
async def test_a_requests_trace_context_is_the_parent_of_the_dispatch_span(mode: Any) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    registry = ToolRegistry(tracer_provider=provider)

    @tool
    async def hello() -> str:
        """Say hello."""
        return "hello"

    registry.register(hello)
    trace_id, span_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    async with serving(McpGateway(registry)) as url, client(url + "/mcp", mode) as downstream:
        with anyio.fail_after(60):
            await downstream.call_tool("hello", {}, meta={"traceparent": f"00-{trace_id}-{span_id}-01"})
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "execute_tool hello"]
    assert f"{span.context.trace_id:032x}" == trace_id
    assert span.parent is not None


@pytest.mark.parametrize("mode", MODES)
async def test_a_calls_log_messages_reach_the_client_on_the_calls_stream(mode: Any) -> None:
    heard: list[Any] = []

    async def on_log(params: Any) -> None:
        heard.append((params.level, params.data, params.logger))

    @tool
    async def noisy(ctx: ToolContext[Any]) -> str:
        """Log once, then answer."""
        assert ctx.on_log is not None
        await ctx.on_log(LogMessage("warning", {"disk": "low"}, "noisy", ctx.call_id, ctx.tool_name, None))
        return "done"

    registry = ToolRegistry()
    registry.register(noisy)
    options: dict[str, Any] = {"logging_callback": on_log}
    if mode == "2026-07-28":
        options["log_level"] = "info"  # a 2026-07-28 request opts in to log messages
    async with serving(McpGateway(registry)) as url, client(url + "/mcp", mode, **options) as downstream:
        with anyio.fail_after(60):
            assert (await downstream.call_tool("noisy", {})).content[0].text == "done"  # type: ignore[union-attr]
    assert heard == [("warning", {"disk": "low"}, "noisy")]
