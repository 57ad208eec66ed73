"""A global meter provider installed before serving (as opentelemetry-instrument does) gets the calls' metrics.

The global provider can be set once per process, so this runs in a child process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from _servers import toolmesh_env

SCRIPT = textwrap.dedent(
    """
    import anyio
    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from toolmesh import ToolCall, ToolRegistry, run_tool_calls, tool
    from toolmesh._core.slots import global_meter_provider
    from toolmesh.gateway._config.observing import observing
    from toolmesh.hooks import CallMetrics

    @tool
    async def add(a: int, b: int) -> int:
        return a + b

    async def main() -> None:
        assert global_meter_provider() is None
        reader = InMemoryMetricReader()
        provider = MeterProvider(metric_readers=[reader])
        metrics.set_meter_provider(provider)
        assert global_meter_provider() is provider
        async with ToolRegistry() as registry:
            registry.register(add)
            with observing(None, None, registry) as found:  # no serve.metrics: the global provider decides
                (observer,) = found.observers
                assert isinstance(observer, CallMetrics) and observer.meter_provider is None
                calls = [ToolCall.from_arguments(f"c{i}", "add", {"a": i, "b": 1}) for i in range(3)]
                await run_tool_calls(registry, calls, hooks=[observer])
        data = reader.get_metrics_data()
        counts = {
            metric.name: sum(getattr(p, "count", 0) for p in metric.data.data_points)
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        }
        print(counts["toolmesh.tool.call.duration"])

    anyio.run(main)
    """
)


def test_the_global_meter_provider_receives_the_metrics_when_serve_metrics_is_absent() -> None:
    env = toolmesh_env()
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "3"
