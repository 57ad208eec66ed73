"""Each dispatch is one OpenTelemetry span, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from toolmesh import ToolContext, ToolExecutionError, ToolRegistry, tool


@tool
async def add(x: int, y: int) -> int:
    return x + y


def traced_registry() -> tuple[ToolRegistry, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    registry = ToolRegistry(tracer_provider=provider)
    registry.register(add)
    return registry, exporter


async def test_successful_dispatch_is_one_span_with_tool_attributes() -> None:
    registry, exporter = traced_registry()
    await registry.dispatch("add", '{"x": 1, "y": 2}', ctx=ToolContext(call_id="call-1"))
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool add"
    assert span.attributes is not None
    assert dict(span.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "call-1",
        "toolmesh.row.kind": "native",
        "toolmesh.disposition": "succeeded",
    }
    assert span.status.status_code is StatusCode.UNSET


async def test_failed_dispatch_records_disposition_and_error_kind() -> None:
    registry, exporter = traced_registry()
    await registry.dispatch("add", '{"x": "a"}', ctx=ToolContext(call_id="call-2"))
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["toolmesh.disposition"] == "failed"
    assert span.attributes["error.type"] == "invalid_arguments"
    assert span.status.status_code is StatusCode.ERROR


async def test_a_name_no_row_has_is_one_failed_span_too() -> None:
    registry, exporter = traced_registry()
    await registry.dispatch("ad", "{}", ctx=ToolContext(call_id="call-3"))
    await registry.dispatch("x" * 5000, "{}")
    await registry.dispatch(["not", "a", "name"], "{}")  # type: ignore[arg-type]
    typo, long, odd = exporter.get_finished_spans()
    assert typo.name == "execute_tool ad" and typo.attributes is not None
    assert typo.attributes["gen_ai.tool.call.id"] == "call-3" and typo.attributes["toolmesh.row.kind"] == "unknown"
    assert typo.attributes["error.type"] == "not_found" and typo.status.status_code is StatusCode.ERROR
    assert long.name == "execute_tool " + "x" * 128 and odd.name == "execute_tool "


async def test_dispatch_native_is_traced_too() -> None:
    registry, exporter = traced_registry()
    assert await registry.dispatch_native(add, 1, 2) == 3
    with pytest.raises(ToolExecutionError):
        await registry.dispatch_native(add, "a", 2)
    ok, failed = exporter.get_finished_spans()
    assert ok.attributes is not None and ok.attributes["toolmesh.disposition"] == "succeeded"
    assert failed.attributes is not None and failed.attributes["error.type"] == "invalid_arguments"


async def test_argument_values_never_reach_span_attributes() -> None:
    registry, exporter = traced_registry()
    await registry.dispatch("add", '{"x": 424242, "y": 1}')
    (span,) = exporter.get_finished_spans()
    assert span.attributes is not None
    assert all("424242" not in str(value) for value in span.attributes.values())


async def test_no_span_without_a_real_tracer_provider() -> None:
    registry = ToolRegistry()
    registry.register(add)
    assert registry._settings.tracer() is None
