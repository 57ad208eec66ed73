"""Configured secrets never reach a span or a log record made while a session serves them.

The host installs a real OpenTelemetry SDK tracer provider as the global one (before the
registry, after it, or after the connection is open) and logs everything at DEBUG. The
fixture server (tests/fixtures/echo_server.py) requires the bearer token and the
``?token=`` query, and echoes them back (in results, ``isError`` texts and JSON-RPC
errors, which the SDK's own client spans take as their status). The session connects,
lists, calls, fails a call, loses its server and reconnects: no span name, attribute,
status, event or link, and no log record's message, arguments or exception text holds
any of the secrets.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator
from typing import Literal

import anyio
import httpx2
import mcp.shared._otel as sdk_otel
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from opentelemetry.util._once import Once

from _servers import FIXTURES, ServerURL, http_server, stdio_params
from toolmesh import ErrorKind, ToolRegistry
from toolmesh.mcp import McpServer

ECHO = FIXTURES / "echo_server.py"
BEARER = "bearer-Secret-5e7a9c1b3d"
QUERY_TOKEN = "query-Secret-8f0b2d4c6e"
PATH_TOKEN = "path-Secret-1a3c5e7b9d"
ENV_TOKEN = "env-Secret-6d8f0a2c4e"
HTTP_SECRETS = (BEARER, QUERY_TOKEN, PATH_TOKEN)

When = Literal["before the registry", "after the registry", "after connect"]


@pytest.fixture
def host_tracing(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    """A real SDK provider exporting to memory, for the test to install as the global one.

    OpenTelemetry lets a process set its global provider once, and the SDK's tracer (a
    proxy of the global provider's) binds to the first it sees. So the test gets a fresh
    slot (as OpenTelemetry's own test utilities do) and the SDK a fresh proxy, as in a new
    process; the suite's are put back after.
    """
    monkeypatch.setattr(trace, "_TRACER_PROVIDER_SET_ONCE", Once())
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.setattr(sdk_otel, "_tracer", trace.get_tracer("mcp-python-sdk"))
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def span_texts(span: ReadableSpan) -> list[str]:
    texts = [span.name, str(span.status.description)]
    texts += [f"{key}={value}" for key, value in (span.attributes or {}).items()]
    for event in span.events:
        texts.append(event.name)
        texts += [f"{key}={value}" for key, value in (event.attributes or {}).items()]
    for link in span.links:
        texts += [f"{key}={value}" for key, value in (link.attributes or {}).items()]
    return texts


def record_texts(record: logging.LogRecord) -> list[str]:
    texts = [record.getMessage(), str(record.msg), repr(record.args), str(record.exc_text)]
    if record.exc_info:
        texts.append(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        texts.append(record.stack_info)
    return texts


def leaks_in_spans(spans: list[ReadableSpan], secrets: tuple[str, ...]) -> list[str]:
    return [f"span {span.name!r}: {s}" for span in spans for s in secrets if any(s in t for t in span_texts(span))]


def leaks_in_logs(caplog: pytest.LogCaptureFixture, secrets: tuple[str, ...]) -> list[str]:
    found = [f"the captured log: {s}" for s in secrets if s in caplog.text]
    for record in caplog.records:
        found += [f"log record of {record.name!r}: {s}" for s in secrets if any(s in t for t in record_texts(record))]
    return found


def guarded_spec(url: ServerURL, protocol: Literal["2025-11-25", "2026-07-28"]) -> McpServer:
    base = url.removesuffix("/mcp")
    return McpServer.http(
        "echo",
        f"{base}/t/{PATH_TOKEN}/mcp?token={QUERY_TOKEN}",
        headers={"Authorization": f"Bearer {BEARER}"},
        protocol=protocol,
        call_timeout=30,
    )


@pytest.mark.parametrize(
    ("protocol", "when"),
    [
        ("2025-11-25", "before the registry"),
        ("2026-07-28", "after the registry"),
        ("2026-07-28", "after connect"),
    ],
)
async def test_http_session_secrets_reach_no_span_and_no_log_record(
    protocol: Literal["2025-11-25", "2026-07-28"],
    when: When,
    host_tracing: tuple[TracerProvider, InMemorySpanExporter],
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider, exporter = host_tracing
    caplog.set_level(logging.DEBUG)
    env = {"FIXTURE_REQUIRE_BEARER": BEARER, "FIXTURE_REQUIRE_TOKEN": QUERY_TOKEN}
    if when == "before the registry":
        trace.set_tracer_provider(provider)
    with anyio.fail_after(120):
        async with http_server(ECHO, **env) as url:
            registry = ToolRegistry()
            if when == "after the registry":
                trace.set_tracer_provider(provider)
            async with registry:
                connection = await registry.connect(guarded_spec(url, protocol))
                if when == "after connect":
                    trace.set_tracer_provider(provider)
                await registry.refresh("echo")  # a tools/list of its own
                shown = await registry.dispatch("echo__reveal", {})
                assert shown.ok and "/t/***/mcp?token=***" in shown.output.as_text()  # the server saw them
                refused = await registry.dispatch("echo__reveal_protocol_error", {})
                assert refused.error is not None and refused.error.kind is ErrorKind.UPSTREAM_ERROR
                assert not (await registry.dispatch("echo__reveal_error", {})).ok
                died = await registry.dispatch("echo__die", {})
                assert died.error is not None and died.error.kind is ErrorKind.UNAVAILABLE
                await url.process.wait()
                async with http_server(ECHO, port=url.port, **env):
                    back = await registry.dispatch("echo__reveal", {})
                    assert back.ok, back.error
                    assert connection.reconnects == 1
                    await registry.disconnect("echo")  # before the server stops: it waits for open streams
    spans = list(exporter.get_finished_spans())
    leaks = leaks_in_spans(spans, HTTP_SECRETS) + leaks_in_logs(caplog, HTTP_SECRETS)
    assert not leaks, "\n".join(leaks)
    # The SDK did trace the session and its logger did log the URL: both masked, not missing.
    (failed,) = [span for span in spans if span.name == "MCP send tools/call reveal_protocol_error"]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description is not None and "***" in failed.status.description
    assert any(span.name == "MCP send tools/list" for span in spans)
    connecting = [r.getMessage() for r in caplog.records if r.name == "mcp.client.streamable_http"]
    assert f"Connecting to StreamableHTTP endpoint: {url.removesuffix('/mcp')}/t/***/mcp?token=***" in connecting


async def test_stdio_session_env_reaches_no_span_and_no_log_record(
    host_tracing: tuple[TracerProvider, InMemorySpanExporter], caplog: pytest.LogCaptureFixture
) -> None:
    provider, exporter = host_tracing
    caplog.set_level(logging.DEBUG)
    command, args, env = stdio_params(ECHO, {"FIXTURE_SECRET_TOKEN": ENV_TOKEN})
    with anyio.fail_after(60):
        async with ToolRegistry() as registry:
            trace.set_tracer_provider(provider)
            await registry.connect(McpServer.stdio("echo", command, args, env=env))
            assert not (await registry.dispatch("echo__reveal_protocol_error", {})).ok
            assert not (await registry.dispatch("echo__reveal_error", {})).ok
    spans = list(exporter.get_finished_spans())
    leaks = leaks_in_spans(spans, (ENV_TOKEN,)) + leaks_in_logs(caplog, (ENV_TOKEN,))
    assert not leaks, "\n".join(leaks)
    (failed,) = [span for span in spans if span.name == "MCP send tools/call reveal_protocol_error"]
    assert failed.status.description is not None and "***" in failed.status.description


async def test_records_of_every_logger_are_redacted_while_a_session_is_up(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    command, args, env = stdio_params(ECHO, {"FIXTURE_SECRET_TOKEN": ENV_TOKEN})
    with anyio.fail_after(60):
        async with ToolRegistry() as registry:
            await registry.connect(McpServer.stdio("echo", command, args, env=env))
            made_later = logging.getLogger("mcp.client.made_after_connect")  # a module imported later
            made_later.debug("GET /x?token=%s", ENV_TOKEN)
            logging.getLogger("asyncio").error("Task exception was never retrieved: %s", f"key {ENV_TOKEN}")
            logging.getLogger("host.app").info("%(shown)s", {"shown": "an event", "hidden": ENV_TOKEN})
            try:
                try:
                    raise KeyError(f"no entry for {ENV_TOKEN}")
                except KeyError as cause:
                    raise RuntimeError(f"lookup of {ENV_TOKEN} failed") from cause
            except RuntimeError:
                logging.getLogger("httpx2").exception("request failed")
            logging.getLogger("host.app").warning("stack", stack_info=True, extra={"ignored": 1})
            held = len(caplog.records)
        # after the last session: records pass untouched, their arguments kept
        logging.getLogger("host.app").info("after %s", "close")
    leaks = leaks_in_logs(caplog, (ENV_TOKEN,))
    assert not leaks, "\n".join(leaks)
    messages = [record.getMessage() for record in caplog.records]
    assert "GET /x?token=***" in messages and "Task exception was never retrieved: key ***" in messages
    assert "an event" in messages
    (failed,) = [r for r in caplog.records if r.getMessage() == "request failed"]
    assert failed.exc_info is not None and str(failed.exc_info[1]) == "lookup of *** failed"
    assert str(failed.exc_info[1].__cause__) == "'no entry for ***'"
    (after,) = caplog.records[held:][-1:]
    assert after.args == ("close",)


async def test_credentials_an_auth_sends_are_secret_too(
    host_tracing: tuple[TracerProvider, InMemorySpanExporter], caplog: pytest.LogCaptureFixture
) -> None:
    provider, exporter = host_tracing
    trace.set_tracer_provider(provider)
    caplog.set_level(logging.DEBUG)
    password = "basic-Secret-3c5e7a9b1d"
    encoded = base64.b64encode(f"someone:{password}".encode()).decode()
    async with http_server(ECHO) as url:
        spec = McpServer.http("echo", url, auth=httpx2.BasicAuth("someone", password), call_timeout=30)
        with anyio.fail_after(60):
            async with ToolRegistry() as registry:
                await registry.connect(spec)
                shown = await registry.dispatch("echo__reveal", {})
                refused = await registry.dispatch("echo__reveal_protocol_error", {})
    assert shown.ok and '"authorization": "***"' in shown.output.as_text()  # it did reach the server
    assert refused.error is not None and password not in refused.error.message
    spans = list(exporter.get_finished_spans())
    assert any(span.name == "MCP send tools/call reveal_protocol_error" for span in spans)
    leaks = leaks_in_spans(spans, (password, encoded)) + leaks_in_logs(caplog, (password, encoded))
    assert not leaks, "\n".join(leaks)
