"""The pieces of the telemetry guard: redacting spans, the record factory, the credentials watch."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx2
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, Status, StatusCode

from toolmesh.mcp import McpServer
from toolmesh.mcp._client.connection_secrets import MAX_SENT_CREDENTIALS, ConnectionSecrets, CredentialsWatch
from toolmesh.mcp._client.sdk_spans import RedactingSpan, RedactingTracer, install
from toolmesh.mcp._client.telemetry import TELEMETRY_GUARD, TelemetryGuard, redact_record
from toolmesh.mcp._spec.secrets import Secrets

SECRET = "unit-Secret-0a2b4c6d8e"
SECRETS = Secrets.from_values([SECRET])


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    yield exporter
    exporter.shutdown()


def tracer_for(exporter: InMemorySpanExporter, secrets: Secrets = SECRETS) -> RedactingTracer:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return RedactingTracer(provider.get_tracer("test"), lambda: secrets)


def every_text(span: ReadableSpan) -> str:
    parts = [span.name, str(span.status.description), repr(dict(span.attributes or {}))]
    parts += [f"{event.name} {dict(event.attributes or {})}" for event in span.events]
    parts += [repr(dict(link.attributes or {})) for link in span.links]
    return "\n".join(parts)


# -- spans ----------------------------------------------------------------------------------


def test_a_redacting_span_stars_the_secrets_out_of_everything_set_on_it(exporter: InMemorySpanExporter) -> None:
    tracer = tracer_for(exporter)
    other = trace.NonRecordingSpan(trace.INVALID_SPAN_CONTEXT).get_span_context()
    with tracer.start_as_current_span(
        f"MCP send tools/call {SECRET}",
        attributes={"url": f"/t/{SECRET}/mcp", "list": [SECRET, "plain"], "n": 1},
        links=[Link(other, {"why": SECRET})],
    ) as span:
        assert isinstance(span, RedactingSpan) and trace.get_current_span() is span
        span.set_attribute("header", f"Bearer {SECRET}")
        span.set_attributes({"many": SECRET, "kept": "plain"})
        span.add_event(f"event {SECRET}", {"detail": SECRET})
        span.add_link(other, {"link": SECRET})
        span.record_exception(ValueError(f"refused {SECRET}"))
        span.set_status(Status(StatusCode.ERROR, f"refused {SECRET}"))
    (finished,) = exporter.get_finished_spans()
    text = every_text(finished)
    assert SECRET not in text
    assert finished.name == "MCP send tools/call ***" and finished.status.description == "refused ***"
    assert finished.attributes is not None and finished.attributes["list"] == ("***", "plain")
    assert finished.attributes["kept"] == "plain" and finished.attributes["n"] == 1
    (exception,) = [event for event in finished.events if event.name == "exception"]
    assert exception.attributes is not None and exception.attributes["exception.message"] == "refused ***"
    assert exception.attributes["exception.type"] == "ValueError"
    assert "refused ***" in str(exception.attributes["exception.stacktrace"])


def test_an_exception_leaving_the_span_is_recorded_starred_out(exporter: InMemorySpanExporter) -> None:
    tracer = tracer_for(exporter)
    with pytest.raises(RuntimeError), tracer.start_as_current_span("as current"):
        raise RuntimeError(f"connection to /t/{SECRET}/mcp lost")
    with pytest.raises(RuntimeError), tracer.start_span("plain span"):
        raise RuntimeError(f"again {SECRET}")
    current, plain = exporter.get_finished_spans()
    for span in (current, plain):
        assert SECRET not in every_text(span)
        assert span.status.status_code is StatusCode.ERROR and "***" in str(span.status.description)
        assert [event.name for event in span.events] == ["exception"]


def test_without_secrets_the_inner_span_is_handed_out_as_it_is(exporter: InMemorySpanExporter) -> None:
    tracer = tracer_for(exporter, Secrets())
    with tracer.start_as_current_span("plain", attributes={"a": "b"}) as span:
        assert not isinstance(span, RedactingSpan)
        span.record_exception(ValueError("no secret here"))
    (finished,) = exporter.get_finished_spans()
    assert finished.attributes is not None and dict(finished.attributes) == {"a": "b"}
    assert finished.events[0].attributes is not None
    assert finished.events[0].attributes["exception.message"] == "no secret here"


def test_install_wraps_the_sdks_tracer_once_and_again_after_a_replacement(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcp.shared._otel as sdk_otel

    original = trace.get_tracer("mcp-python-sdk")
    monkeypatch.setattr(sdk_otel, "_tracer", original)
    assert install(Secrets)
    wrapped = sdk_otel._tracer
    assert isinstance(wrapped, RedactingTracer) and wrapped.inner is original
    assert install(Secrets) and sdk_otel._tracer is wrapped
    replacement = trace.get_tracer("someone-else")
    monkeypatch.setattr(sdk_otel, "_tracer", replacement)
    assert install(Secrets)
    assert isinstance(sdk_otel._tracer, RedactingTracer) and sdk_otel._tracer.inner is replacement


# -- log records ----------------------------------------------------------------------------


def test_redact_record_freezes_a_message_that_showed_a_secret() -> None:
    logger = logging.getLogger("test.guard")
    shown = logger.makeRecord("test.guard", logging.INFO, __file__, 1, "GET /x?key=%s", (SECRET,), None)
    redact_record(shown, SECRETS)
    assert shown.getMessage() == "GET /x?key=***" and shown.args is None
    unshown = logger.makeRecord("test.guard", logging.INFO, __file__, 1, "%(a)s", ({"a": "x", "b": SECRET},), None)
    redact_record(unshown, SECRETS)
    assert unshown.getMessage() == "x" and unshown.args is None
    plain = logger.makeRecord("test.guard", logging.INFO, __file__, 1, "GET %s", ("/x",), None)
    redact_record(plain, SECRETS)
    assert plain.args == ("/x",)  # a record without a secret keeps its arguments


def test_the_guard_holds_per_owner_and_unions_what_is_held() -> None:
    guard = TelemetryGuard()
    first, second = object(), object()
    guard.hold(first, Secrets.from_values(["first-secret-1"]))
    guard.hold(first, Secrets.from_values(["first-secret-1"]))
    guard.hold(second, Secrets.from_values(["second-secret-2"]))
    assert {"first-secret-1", "second-secret-2"} <= set(guard.secrets.values)
    guard.update(second, Secrets.from_values(["second-secret-3"]))
    assert "second-secret-2" not in guard.secrets.values and "second-secret-3" in guard.secrets.values
    guard.release(second)
    guard.release(first)
    assert guard.secrets.values == ("first-secret-1",)  # held twice, released once
    guard.release(first)
    guard.release(first)  # more releases than holds: nothing
    assert not guard.secrets
    guard.update(first, SECRETS)  # not held: nothing
    assert not guard.secrets


def test_the_record_factory_is_put_back_in_front_of_one_that_replaced_it() -> None:
    owner = object()
    previous = logging.getLogRecordFactory()
    try:
        logging.setLogRecordFactory(logging.LogRecord)  # a host replacing the factory outright
        TELEMETRY_GUARD.hold(owner, SECRETS)
        try:
            record = logging.getLogger("host").makeRecord("host", logging.INFO, __file__, 1, "%s", (SECRET,), None)
            assert record.getMessage() == "***"
        finally:
            TELEMETRY_GUARD.release(owner)
        record = logging.getLogger("host").makeRecord("host", logging.INFO, __file__, 1, "%s", (SECRET,), None)
        assert record.getMessage() == SECRET  # nothing held: untouched
    finally:
        logging.setLogRecordFactory(previous)


# -- credentials an auth sends ----------------------------------------------------------------


def test_a_connection_keeps_the_last_credentials_its_auth_sent() -> None:
    spec = McpServer.http(
        "web",
        "https://example.com/mcp",
        headers={"Authorization": "Bearer configured-1"},
        auth=httpx2.BasicAuth("a", "b"),
    )
    secrets = ConnectionSecrets(spec)
    assert secrets and isinstance(secrets.spec.auth, CredentialsWatch) and spec.auth is not None
    tokens = [f"Bearer rotated-token-{i:02d}" for i in range(MAX_SENT_CREDENTIALS + 1)]
    for token in tokens:
        secrets.sent(token)
    secrets.sent(tokens[-1])
    values = set(secrets.secrets.values)
    assert "rotated-token-00" not in values  # the oldest is forgotten
    assert {token.removeprefix("Bearer ") for token in tokens[1:]} <= values
    assert "configured-1" in values  # what the spec configures stays
    assert not ConnectionSecrets(McpServer.http("web", "https://example.com/mcp"))  # nothing to star out


def test_the_credentials_watch_reports_what_each_request_was_signed_with() -> None:
    sent: list[str] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        if "authorization" not in request.headers:
            return httpx2.Response(401, headers={"www-authenticate": 'Digest realm="r", nonce="n", qop="auth"'})
        return httpx2.Response(200, text="ok")

    digest = CredentialsWatch(httpx2.DigestAuth("someone", "digest-password-1"), sent.append)
    with httpx2.Client(transport=httpx2.MockTransport(answer), auth=digest) as client:
        assert client.get("https://example.com/mcp").text == "ok"
    assert len(sent) == 1 and sent[0].startswith("Digest ")  # the challenged, then signed, request
    basic = CredentialsWatch(httpx2.BasicAuth("someone", "basic-password-1"), sent.append)
    with httpx2.Client(transport=httpx2.MockTransport(answer), auth=basic) as client:
        assert client.get("https://example.com/mcp").status_code == 200
    assert sent[-1].startswith("Basic ")


async def test_the_credentials_watch_follows_an_async_flow_of_several_requests() -> None:
    sent: list[str] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        if "authorization" not in request.headers:
            return httpx2.Response(401, headers={"www-authenticate": 'Digest realm="r", nonce="n", qop="auth"'})
        return httpx2.Response(200, text="ok")

    watch = CredentialsWatch(httpx2.DigestAuth("someone", "digest-password-1"), sent.append)
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer), auth=watch) as client:
        response = await client.get("https://example.com/mcp")
    assert response.text == "ok" and len(response.history) == 1
    assert len(sent) == 1 and sent[0].startswith("Digest ")
