"""CallMetrics: OpenTelemetry instruments of calls, read back through the SDK's in-memory reader."""

from __future__ import annotations

from typing import Any

import anyio
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from _calls import call
from _mcp import demo_in_process
from toolmesh import ToolRegistry, run_tool_calls
from toolmesh.hooks import CallMetrics
from toolmesh.policy import DenyTools


def points(reader: InMemoryMetricReader) -> dict[str, list[Any]]:
    """Every data point of every metric collected now, by metric name."""
    found: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def count(found: dict[str, list[Any]], name: str, **attributes: str) -> int:
    """The histogram count of ``name`` over the points whose attributes include ``attributes``."""
    return sum(p.count for p in found.get(name, []) if all(p.attributes.get(k) == v for k, v in attributes.items()))


async def test_calls_errors_durations_in_flight_and_session_health() -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    async with ToolRegistry() as registry:

        @registry.tool
        async def add(a: int, b: int) -> int:
            """Add."""
            return a + b

        await registry.connect(demo_in_process("demo"))
        metrics = CallMetrics(meter_provider=provider, registry=registry, rows=registry.get)
        calls = [
            call("c1", "add", a=1, b=2),
            call("c2", "add", a=3, b=4),
            call("c3", "demo__echo", text="hi"),
            call("c4", "demo__fail", reason="no"),
            call("c5", "demo__delete_item", item_id="x"),
            call("c6", "invented_name"),
        ]
        with anyio.fail_after(20):
            await run_tool_calls(registry, calls, hooks=[metrics, DenyTools("demo__delete_item")])
        found = points(reader)
    duration = "toolmesh.tool.call.duration"
    assert count(found, duration) == 6
    assert count(found, duration, **{"gen_ai.tool.name": "add", "toolmesh.disposition": "succeeded"}) == 2
    assert count(found, duration, **{"error.type": "upstream_error", "toolmesh.server": "demo"}) == 1
    assert count(found, duration, **{"error.type": "refused", "gen_ai.tool.name": "demo__delete_item"}) == 1
    unknown = [p for p in found[duration] if p.attributes.get("error.type") == "not_found"]
    assert len(unknown) == 1 and "gen_ai.tool.name" not in unknown[0].attributes  # invented names add no series
    assert all(p.attributes["gen_ai.operation.name"] == "execute_tool" for p in found[duration])
    upstream = "mcp.client.operation.duration"
    assert (
        count(found, upstream, **{"mcp.method.name": "tools/call", "toolmesh.server": "demo"}) == 2
    )  # the refused one was not sent
    assert count(found, upstream, **{"gen_ai.tool.name": "echo"}) == 1
    assert count(found, upstream, **{"gen_ai.tool.name": "fail", "error.type": "upstream_error"}) == 1
    assert {p.attributes["gen_ai.tool.name"]: p.value for p in found["toolmesh.tool.call.active"]} == {
        "add": 0,
        "demo__echo": 0,
        "demo__fail": 0,
    }
    assert [(p.attributes["toolmesh.server"], p.value) for p in found["toolmesh.mcp.server.up"]] == [("demo", 1)]
    assert [p.value for p in found["toolmesh.mcp.server.reconnects"]] == [0]
    provider.shutdown()


async def test_a_call_in_flight_is_counted_until_it_ends() -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    started, release = anyio.Event(), anyio.Event()
    registry = ToolRegistry()

    @registry.tool
    async def wait() -> str:
        """Waits to be released."""
        started.set()
        await release.wait()
        return "released"

    metrics = CallMetrics(meter_provider=provider)
    async with registry, anyio.create_task_group() as group:

        async def turn() -> None:
            await run_tool_calls(registry, [call("c1", "wait")], hooks=[metrics])

        group.start_soon(turn)
        with anyio.fail_after(10):
            await started.wait()
        assert [p.value for p in points(reader)["toolmesh.tool.call.active"]] == [1]
        release.set()
    assert [p.value for p in points(reader)["toolmesh.tool.call.active"]] == [0]
    provider.shutdown()


async def test_without_a_meter_provider_nothing_is_recorded_and_calls_run() -> None:
    metrics = CallMetrics()
    assert metrics.instruments() is None  # no global provider in the test process
    async with ToolRegistry() as registry:

        @registry.tool
        async def add(a: int, b: int) -> int:
            """Add."""
            return a + b

        turn = await run_tool_calls(registry, [call("c1", "add", a=1, b=1)], hooks=[metrics])
    assert turn[0].ok
