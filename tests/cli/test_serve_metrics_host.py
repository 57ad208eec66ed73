"""The Prometheus scrape listener checks `Host` and `Origin` as the gateway's endpoints do (DNS rebinding)."""

from __future__ import annotations

import anyio
import httpx2

from toolmesh._cli.announce import serve_metrics
from toolmesh.gateway._config.observing import MetricsSettings
from toolmesh.hooks import PrometheusMetrics


async def test_the_scrape_listener_refuses_a_host_that_is_not_its_own() -> None:
    settings = MetricsSettings("127.0.0.1", 0, allowed_hosts=("metrics.internal:*",))
    urls: list[str] = []
    ready = anyio.Event()

    def listening(base: str) -> None:
        urls.append(base)
        ready.set()

    with PrometheusMetrics() as prometheus:
        async with anyio.create_task_group() as group:
            group.start_soon(serve_metrics, prometheus, settings, True, listening)
            with anyio.fail_after(60):
                await ready.wait()
            url = urls[0] + "/metrics"
            port = url.split(":")[2].split("/")[0]
            async with httpx2.AsyncClient(timeout=30) as http:
                own = await http.get(url)
                rebound = await http.get(url, headers={"Host": f"attacker.example.com:{port}"})
                listed = await http.get(url, headers={"Host": "metrics.internal:9464"})
                page = await http.get(url, headers={"Origin": "http://attacker.example.com"})
            group.cancel_scope.cancel()
    assert own.status_code == 200 and "text/plain" in own.headers["content-type"]
    assert rebound.status_code == 421 and "Invalid Host header" in rebound.text  # a rebound name reads nothing
    assert listed.status_code == 200  # serve.metrics.prometheus.allowedHosts
    assert page.status_code == 403  # a web page's request (its Origin) neither
