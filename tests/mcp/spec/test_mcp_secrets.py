"""Configured secrets (headers, env, URL tokens) never reach the model, errors, logs or spans.

The fixture server (tests/fixtures/echo_server.py) echoes what reached it: the request
headers and URL over HTTP, its FIXTURE_SECRET* environment over stdio, in results,
isError texts, JSON-RPC errors, a failing tools/list and a refused handshake.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from _mcp import lowlevel_stdio
from _servers import FIXTURES, ServerURL, http_server, stdio_params
from toolmesh import ServerConnectionError, ToolRegistry, ToolResult
from toolmesh.mcp import McpServer
from toolmesh.mcp._client import session as _session
from toolmesh.mcp._client.telemetry import TELEMETRY_GUARD
from toolmesh.mcp._spec.secrets import MIN_SECRET_CHARS, Secrets
from toolmesh.providers.openai_responses import mcp_call_item

ECHO = FIXTURES / "echo_server.py"
HEADER_TOKEN = "hdr-Token-7f3a9c1e5b"
PATH_TOKEN = "path-Token-2d8e4f6a0c"
QUERY_TOKEN = "query-Token-9b1c3e5d7f"
ENV_TOKEN = "env-Token-4a6c8e0b2d"
SECRETS = (HEADER_TOKEN, PATH_TOKEN, QUERY_TOKEN)
ECHOING_TOOLS = ["reveal", "reveal_structured", "reveal_error", "reveal_protocol_error"]


def http_spec(url: ServerURL, *, reject: bool = False, **options: object) -> McpServer:
    base = url.removesuffix("/mcp")
    query = f"key={QUERY_TOKEN}" + ("&reject=1" if reject else "")
    return McpServer.http(
        "echo",
        f"{base}/t/{PATH_TOKEN}/mcp?{query}",
        headers={"Authorization": f"Bearer {HEADER_TOKEN}"},
        **options,  # type: ignore[arg-type]
    )


def stdio_spec(**env: str) -> McpServer:
    command, args, child_env = stdio_params(ECHO, {"FIXTURE_SECRET_TOKEN": ENV_TOKEN, **env})
    return McpServer.stdio("echo", command, args, env=child_env)


def traced_registry() -> tuple[ToolRegistry, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return ToolRegistry(tracer_provider=provider), exporter


def leaks(text: str, secrets: tuple[str, ...]) -> list[str]:
    return [secret for secret in secrets if secret in text]


def shown_texts(result: ToolResult) -> list[str]:
    texts = [result.presentation.as_text(), result.output.as_text(), repr(result.mcp_result)]
    if result.error is not None:
        texts += [result.error.message, result.error.model_feedback, str(result.error)]
        texts.append("".join(traceback.format_exception(result.error)))  # with its causes
    return texts


def span_texts(exporter: InMemorySpanExporter) -> list[str]:
    texts = []
    for span in exporter.get_finished_spans():
        texts += [span.name, str(span.status.description), *map(str, dict(span.attributes or {}).values())]
        texts += [str(event.attributes) for event in span.events]
    return texts


@asynccontextmanager
async def echo_http() -> AsyncIterator[ServerURL]:
    async with http_server(ECHO) as url:
        yield url


# -- the set of secrets -----------------------------------------------------------------------


def test_secrets_of_a_spec_are_header_values_tokens_env_url_parts_and_flagged_args() -> None:
    http = McpServer.http(
        "web",
        f"https://example.com/t/{PATH_TOKEN}/mcp?key={QUERY_TOKEN}&v=1",
        headers={"Authorization": f"Bearer {HEADER_TOKEN}", "X-Short": "abc"},
    )
    values = Secrets.of(http).values
    assert {f"Bearer {HEADER_TOKEN}", HEADER_TOKEN, PATH_TOKEN, QUERY_TOKEN} <= set(values)
    assert "abc" not in values and "1" not in values and "t" not in values  # too short to be secrets
    words = McpServer.http("web", "https://example.com/v1/servers/production/mcp?key=1")
    assert not Secrets.of(words).values  # path words and a short query value are no tokens
    stdio = McpServer.stdio(
        "fs",
        "server",
        ["--api-key", "argument-secret-1", "--token=argument-secret-2", "-v"],
        env={"API_KEY": ENV_TOKEN, "DEBUG": "true", "HOME": "/home/someone", "LC_ALL": "en_US.UTF-8"},
    )
    values = Secrets.of(stdio).values
    assert {ENV_TOKEN, "argument-secret-1", "argument-secret-2"} <= set(values)
    assert "true" not in values and "server" not in values
    assert "/home/someone" not in values and "en_US.UTF-8" not in values  # paths and locale are not secrets
    assert all(len(value) >= MIN_SECRET_CHARS for value in values)


def test_redact_replaces_every_form_and_keeps_text_without_secrets() -> None:
    secrets = Secrets.from_values([HEADER_TOKEN, 'quote"secret-value'])
    assert secrets.redact(f"token={HEADER_TOKEN}!") == "token=***!"
    assert secrets.redact('{"v": "quote\\"secret-value"}') == '{"v": "***"}'  # as JSON text carries it
    plain = "nothing to see"
    assert secrets.redact(plain) is plain
    assert "***" not in repr(secrets) and HEADER_TOKEN not in repr(secrets)


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ('{"t":"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln"}', '{"t":"***"}'),
        ("Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0. next", "Bearer *** next"),  # unsigned: empty signature
        ("jwe eyJhbGciOiJSU0EtT0FFUCJ9.a2V5.aXY.Y2lwaGVy.dGFn end", "jwe *** end"),  # five segments
        ("eyJhbGciOiJSUzI1NiJ9 alone", "eyJhbGciOiJSUzI1NiJ9 alone"),  # one segment: no token
        ("eyJhbGciOiJSUzI1NiJ9..c2ln", "eyJhbGciOiJSUzI1NiJ9..c2ln"),  # no payload
        ("xeyJa.eyJb.c and a.eyJa.b.c", "xeyJa.eyJb.c and a.eyJa.b.c"),  # inside a longer word
    ],
)
def test_with_jwts_strings_shaped_like_a_jwt_are_starred_out(text: str, redacted: str) -> None:
    assert Secrets(jwts=True).redact(text) == redacted
    assert Secrets(jwts=True).found_in(text) is (text != redacted)
    assert Secrets().redact(text) == text and not Secrets()


def test_basic_credentials_are_secret_decoded_too() -> None:
    import base64

    encoded = base64.b64encode(b"admin:basic-password-1").decode()
    spec = McpServer.http("web", "https://example.com/mcp", headers={"Authorization": f"Basic {encoded}"})
    assert {encoded, "admin:basic-password-1", "basic-password-1"} <= set(Secrets.of(spec).values)


# -- HTTP: headers and URL tokens --------------------------------------------------------------


async def test_http_echoed_secrets_never_reach_results_errors_logs_or_spans(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    registry, exporter = traced_registry()
    async with echo_http() as url, registry:
        with anyio.fail_after(30):
            await registry.connect(http_spec(url))
            results = {name: await registry.dispatch(f"echo__{name}", {}) for name in ECHOING_TOOLS}
    assert results["reveal"].ok and results["reveal_structured"].ok
    assert results["reveal_error"].error is not None and results["reveal_error"].error.kind == "upstream_error"
    assert not results["reveal_protocol_error"].ok
    for name, result in results.items():
        texts = shown_texts(result)
        assert not leaks("\n".join(texts), SECRETS), name
        # the server did echo them: what the model sees shows where they were masked
        assert '"authorization": "***"' in texts[0] or '"authorization":"***"' in texts[0], name
        assert "/t/***/mcp?key=***" in texts[0], name
    assert results["reveal_structured"].output.structured["headers"]["authorization"] == "***"
    item = mcp_call_item(results["reveal_error"])
    assert not leaks(repr(item), SECRETS)
    assert "HTTP Request" in caplog.text  # httpx2 logged every request's URL, masked
    assert not leaks(caplog.text, SECRETS)
    assert exporter.get_finished_spans()
    assert not leaks("\n".join(span_texts(exporter)), SECRETS)


async def test_http_failing_tools_list_hides_secrets_in_the_connect_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with http_server(ECHO, FIXTURE_LIST_FAIL="1") as url, ToolRegistry() as registry:
        with anyio.fail_after(30), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(http_spec(url))
    message = str(caught.value)
    assert "tools/list refused" in message and "***" in message
    assert not leaks(message, SECRETS)
    assert not leaks("".join(traceback.format_exception(caught.value)), SECRETS)
    assert not leaks(caplog.text, SECRETS)


async def test_http_refused_handshake_hides_secrets_in_the_connect_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with echo_http() as url, ToolRegistry() as registry:
        with anyio.fail_after(30), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(http_spec(url, reject=True))
    message = str(caught.value)
    assert "unauthorized: *** at /t/***/mcp?key=***" in message
    assert not leaks(message, SECRETS)
    assert not leaks("".join(traceback.format_exception(caught.value)), SECRETS)
    assert not leaks(caplog.text, SECRETS)


# -- stdio: env values -------------------------------------------------------------------------


async def test_stdio_echoed_env_never_reaches_results_errors_logs_or_spans(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    registry, exporter = traced_registry()
    async with registry:
        with anyio.fail_after(30):
            await registry.connect(stdio_spec())
            results = {name: await registry.dispatch(f"echo__{name}", {}) for name in ECHOING_TOOLS}
    for name, result in results.items():
        texts = shown_texts(result)
        assert not leaks("\n".join(texts), (ENV_TOKEN,)), name
        assert '"FIXTURE_SECRET_TOKEN": "***"' in texts[0] or '"FIXTURE_SECRET_TOKEN":"***"' in texts[0], name
    assert not leaks(caplog.text, (ENV_TOKEN,))
    assert not leaks("\n".join(span_texts(exporter)), (ENV_TOKEN,))


async def test_stdio_env_never_reaches_descriptions_instructions_or_resources() -> None:
    async with ToolRegistry() as registry:
        with anyio.fail_after(30):
            connection = await registry.connect(stdio_spec())
            contents = await registry.read_resource("echo", "echo://reveal")
        description = registry["echo__described"].definition.description
    assert description.startswith("Runs with") and '"FIXTURE_SECRET_TOKEN": "***"' in description
    assert connection.instructions is not None and '"FIXTURE_SECRET_TOKEN": "***"' in connection.instructions
    assert '"FIXTURE_SECRET_TOKEN": "***"' in contents.as_text()
    assert not leaks(description + connection.instructions + contents.as_text(), (ENV_TOKEN,))


async def test_stdio_failing_tools_list_hides_env_in_the_connect_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with ToolRegistry() as registry:
        with anyio.fail_after(30), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(stdio_spec(FIXTURE_LIST_FAIL="1"))
    message = str(caught.value)
    assert "tools/list refused" in message and '"FIXTURE_SECRET_TOKEN": "***"' in message
    assert not leaks(message, (ENV_TOKEN,))
    assert not leaks(caplog.text, (ENV_TOKEN,))


# -- the telemetry guard's lifetime -------------------------------------------------------------


async def test_log_records_are_redacted_only_while_a_connection_is_open() -> None:
    library = logging.getLogger("httpx2")
    assert HEADER_TOKEN not in TELEMETRY_GUARD.secrets.values

    def record() -> logging.LogRecord:
        return library.makeRecord("httpx2", logging.INFO, __file__, 1, "GET %s", (f"/x?key={QUERY_TOKEN}",), None)

    async with echo_http() as url, ToolRegistry() as registry:
        with anyio.fail_after(30):
            await registry.connect(http_spec(url))
        assert HEADER_TOKEN in TELEMETRY_GUARD.secrets.values
        assert record().getMessage() == "GET /x?key=***"
    assert HEADER_TOKEN not in TELEMETRY_GUARD.secrets.values
    assert record().getMessage() == f"GET /x?key={QUERY_TOKEN}"


async def test_a_tool_whose_name_holds_a_configured_secret_is_left_out(caplog: pytest.LogCaptureFixture) -> None:
    secret_name = "tool_named_after_a_secret_x9"
    with anyio.fail_after(60), caplog.at_level(logging.WARNING, logger="toolmesh.mcp"):
        async with ToolRegistry() as registry:
            await registry.connect(lowlevel_stdio("low", {"FIXTURE_EXTRA_TOOLS": secret_name}))
            assert "low__echo" in registry.names()
            assert not any(secret_name in name for name in registry.names())
            assert (await registry.dispatch("low__echo", {"text": "still works"})).ok
    assert "1 tool(s) whose name holds a configured secret" in caplog.text
    assert secret_name not in caplog.text


STDERR_SERVER = """
import os, sys
from mcp.server.mcpserver import MCPServer

print("starting with token=" + os.environ["API_TOKEN"], file=sys.stderr, flush=True)
server = MCPServer("stderr-talker")


@server.tool()
def ping() -> str:
    print("ping, token " + os.environ["API_TOKEN"] + " again", file=sys.stderr, flush=True)
    return "pong"


if __name__ == "__main__":
    server.run("stdio")
"""


async def test_a_stdio_servers_stderr_is_redacted_on_its_way_to_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "stderr_server.py"
    script.write_text(STDERR_SERVER)
    token = "sk-stderr-SECRET-0123456789"
    log = (tmp_path / "servers.log").open("w")
    monkeypatch.setattr(_session, "child_errlog", log)
    command, args, env = stdio_params(script, {"API_TOKEN": token})
    with anyio.fail_after(60):
        async with ToolRegistry() as registry:
            await registry.connect(McpServer.stdio("talker", command, args, env=env))
            assert (await registry.dispatch("talker__ping")).ok
    log.close()
    text = (tmp_path / "servers.log").read_text()
    assert "starting with token=***" in text and "ping, token *** again" in text
    assert token not in text
