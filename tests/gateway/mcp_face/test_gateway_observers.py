"""Audit lines and Prometheus metrics of calls made through the real gateway over HTTP, by a real MCP client."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx2

from _audit import Audited
from _gateway import client, serving
from _mcp import demo_stdio, wait_until
from toolmesh import ErrorKind, ToolExecutionError, ToolRegistry
from toolmesh.gateway import BearerToken, HttpSettings, McpGateway
from toolmesh.gateway._mcp_face.lifecycle import serve
from toolmesh.hooks import AuditLog, CallMetrics, PrometheusMetrics
from toolmesh.policy import RateLimit

TOKEN = "gateway-bearer-token-0123456789"
SERVER_SECRET = "upstream-env-secret-9876543210"


def natives(registry: ToolRegistry) -> None:
    @registry.tool
    async def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @registry.tool
    async def lookup(key: str) -> str:
        """Fails on purpose."""
        raise ToolExecutionError(f"no entry {key}", kind=ErrorKind.NOT_FOUND)


@asynccontextmanager
async def scrape_endpoint(prometheus: PrometheusMetrics) -> AsyncIterator[str]:
    """``prometheus.app()`` on a free loopback port for the block; yields its /metrics URL."""
    urls: list[str] = []
    ready = anyio.Event()

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    async with anyio.create_task_group() as group:
        group.start_soon(serve, prometheus.app(), None, "127.0.0.1", 0, on_ready)
        with anyio.fail_after(30):
            await ready.wait()
        try:
            yield urls[0] + "/metrics"
        finally:
            group.cancel_scope.cancel()


def sample(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels`` (Prometheus text format)."""
    total = 0.0
    for line in text.splitlines():
        found = re.match(r"^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$", line)
        if found is None or found.group(1) != name:
            continue
        given = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', found.group(3) or ""))
        if all(given.get(k) == v for k, v in labels.items()):
            total += float(found.group(4))
    return total


async def test_audit_and_metrics_after_a_known_sequence_of_calls(
    audit_lines: Audited,
) -> None:
    logger, lines = audit_lines
    with PrometheusMetrics() as prometheus:
        async with ToolRegistry() as registry:
            natives(registry)
            await registry.connect(demo_stdio("demo", env={"DEMO_API_KEY": SERVER_SECRET}))
            gateway = McpGateway(
                registry,
                profiles={"adder": lambda row: row.name == "add"},
                hooks=[RateLimit(1, per=3600, tools=["demo__echo"])],
                observers=[
                    AuditLog(logger, include_arguments=True, secrets=[TOKEN]),
                    CallMetrics(meter_provider=prometheus.meter_provider, registry=registry),
                ],
            )
            settings = HttpSettings(port=0, tokens=(BearerToken(TOKEN, name="alice"),))
            async with serving(gateway, settings) as base, scrape_endpoint(prometheus) as metrics_url:
                with anyio.fail_after(60):
                    async with client(f"{base}/mcp", token=TOKEN) as session:
                        ok = await session.call_tool("add", {"a": 2, "b": 3})
                        tool_error = await session.call_tool("lookup", {"key": "k"})
                        upstream = await session.call_tool("demo__fail", {"reason": f"leak {SERVER_SECRET}"})
                        echoed = await session.call_tool("demo__echo", {"text": f"{SERVER_SECRET} {TOKEN}"})
                        limited = await session.call_tool("demo__echo", {"text": "again"})
                        unknown = await session.call_tool("no_such_tool", {})
                    async with client(f"{base}/adder/mcp", token=TOKEN) as session:
                        through_profile = await session.call_tool("add", {"a": 1, "b": 1})
                    async with httpx2.AsyncClient(timeout=30) as http:
                        answer = await http.get(metrics_url)
    assert not ok.is_error and not echoed.is_error and not through_profile.is_error
    assert tool_error.is_error and upstream.is_error and limited.is_error and unknown.is_error

    records = [json.loads(line) for line in lines.lines]
    assert [(r["profile"], r["tool"], r["disposition"], r["error_kind"]) for r in records] == [
        ("default", "add", "succeeded", None),
        ("default", "lookup", "failed", "not_found"),
        ("default", "demo__fail", "failed", "upstream_error"),
        ("default", "demo__echo", "succeeded", None),
        ("default", "demo__echo", "refused", "rate_limited"),
        ("default", "no_such_tool", "failed", "not_found"),
        ("adder", "add", "succeeded", None),
    ]
    assert [(r["server"], r["wire_name"]) for r in records[2:5]] == [
        ("demo", "fail"),
        ("demo", "echo"),
        ("demo", "echo"),
    ]
    assert records[0]["arguments"] == '{"a":2,"b":3}' and records[0]["kind"] == "native"
    assert records[3]["arguments"] == '{"text":"*** ***"}'
    assert records[5]["kind"] == "unknown" and records[5]["server"] is None
    assert records[2]["duration_ms"] > 0 and records[4]["duration_ms"] == 0
    assert {(r["subject"], r["client_id"], r["issuer"]) for r in records} == {("alice", None, None)}
    for line in lines.lines:
        assert SERVER_SECRET not in line and TOKEN not in line

    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    text = answer.text
    assert SERVER_SECRET not in text and TOKEN not in text
    calls = "toolmesh_tool_call_duration_seconds_count"
    assert sample(text, calls) == 7
    assert sample(text, calls, gen_ai_tool_name="add", toolmesh_profile="default") == 1
    assert sample(text, calls, gen_ai_tool_name="add", toolmesh_profile="adder") == 1
    assert sample(text, calls, error_type="not_found") == 2
    assert sample(text, calls, error_type="upstream_error", toolmesh_server="demo") == 1
    assert sample(text, calls, error_type="rate_limited", toolmesh_disposition="refused") == 1
    upstream_calls = "mcp_client_operation_duration_seconds_count"
    assert sample(text, upstream_calls, mcp_method_name="tools/call", toolmesh_server="demo") == 2
    assert sample(text, upstream_calls, gen_ai_tool_name="fail", error_type="upstream_error") == 1
    assert sample(text, "toolmesh_tool_call_duration_seconds_bucket", le="+Inf") == 7
    assert sample(text, "toolmesh_tool_call_active") == 0
    assert sample(text, "toolmesh_mcp_server_up", toolmesh_server="demo") == 1


async def test_a_call_the_client_cancels_is_audited_as_cancelled(
    audit_lines: Audited,
) -> None:
    logger, lines = audit_lines
    started, cancelled = anyio.Event(), anyio.Event()
    registry = ToolRegistry()

    @registry.tool
    async def hang() -> str:
        """Runs until cancelled."""
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "unreachable"

    async with registry:
        gateway = McpGateway(registry, observers=[AuditLog(logger)])
        async with serving(gateway) as base, client(f"{base}/mcp") as session:
            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:

                    async def call() -> None:
                        await session.call_tool("hang", {})

                    group.start_soon(call)
                    await started.wait()
                    group.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
                await cancelled.wait()
                await wait_until(lambda: bool(lines.lines), 30)  # written as the cancelled handler unwinds
    (record,) = [json.loads(line) for line in lines.lines]
    assert (record["tool"], record["disposition"], record["error_kind"]) == ("hang", "cancelled", "cancelled")
    assert record["profile"] == "default" and record["duration_ms"] > 0
