"""Elicitation: an MCP server's request for user input reaches the callback of the call that caused it."""

from __future__ import annotations

import logging

import anyio
import mcp_types
import pytest

from _asking import PROTOCOLS, Recorder, answer_of, asking_http, asking_in_process, asking_stdio
from _mcp import everything_stdio, wait_until
from _servers import http_server
from toolmesh import ElicitationRequest, ErrorKind, NoCallbackError, ToolContext, ToolRegistry, ToolResult
from toolmesh.mcp import MCP_ASKED

ASKING = "tests/fixtures/asking_server.py"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_form_elicitation_reaches_the_registry_default_with_the_call_id_and_row(protocol: str) -> None:
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        connection = await registry.connect(asking_in_process(protocol))
        assert connection.protocol_version == protocol
        result = await registry.dispatch("ask__ask_form", {"message": "Your name?"}, ToolContext(call_id="c1"))
    assert answer_of(result) == {"action": "accept", "content": {"name": "host:c1"}}
    [asked] = host.asked
    assert isinstance(asked, ElicitationRequest)
    assert (asked.call_id, asked.tool_name, asked.server) == ("c1", "ask__ask_form", "ask")
    assert isinstance(asked.params, mcp_types.ElicitRequestFormParams)
    assert asked.params.message == "Your name?" and asked.params.requested_schema["required"] == ["name"]
    assert result.metadata[MCP_ASKED] == [
        {"kind": "elicitation", "mode": "form", "message": "Your name?", "answered": True, "action": "accept"}
    ]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_url_elicitation_arrives_in_url_mode(protocol: str) -> None:
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        await registry.connect(asking_in_process(protocol))
        result = await registry.dispatch("ask__ask_url", {"url": "https://example.com/sign-in"})
    assert answer_of(result)["action"] == "accept"
    [asked] = host.asked
    assert isinstance(asked.params, mcp_types.ElicitRequestURLParams)
    assert asked.params.url == "https://example.com/sign-in" and asked.params.message == "Please sign in"
    if protocol == "2025-11-25":  # 2026-07-28 has no elicitationId in an embedded request
        assert asked.params.elicitation_id == "e1"
    assert result.metadata[MCP_ASKED][0]["url"] == "https://example.com/sign-in"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_call_s_own_callback_overrides_the_registry_default(protocol: str) -> None:
    host, mine = Recorder("host"), Recorder("mine")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        await registry.connect(asking_in_process(protocol))
        result = await registry.dispatch("ask__ask_form", {}, ToolContext(call_id="c2", elicitation=mine.elicit))
    assert answer_of(result)["content"] == {"name": "mine:c2"}
    assert host.asked == [] and len(mine.asked) == 1


async def test_the_capability_is_declared_only_with_a_registry_default() -> None:
    """server-everything lists trigger-elicitation-request only to clients that declare elicitation."""
    async with ToolRegistry() as registry:
        await registry.connect(everything_stdio("ev", call_timeout=20))
        assert "ev__trigger-elicitation-request" not in registry
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        await registry.connect(everything_stdio("ev", call_timeout=20))
        assert "ev__trigger-elicitation-request" in registry
        assert "ev__trigger-sampling-request" not in registry  # sampling was not declared
        result = await registry.dispatch("ev__trigger-elicitation-request", {}, ToolContext(call_id="ev1"))
    assert result.ok, result.error and result.error.message
    [asked] = host.asked
    assert (asked.call_id, asked.tool_name, asked.server) == ("ev1", "ev__trigger-elicitation-request", "ev")
    assert "host:ev1" in result.output.as_text()


async def test_without_a_callback_a_2026_server_s_request_fails_the_call_saying_what_it_wanted() -> None:
    """The server asks although no capability was declared; the call ends at once, never hangs."""
    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process("2026-07-28"))
        with anyio.fail_after(30):
            result = await registry.dispatch("ask__ask_form", {"message": "Your name?"})
    assert isinstance(result.error, NoCallbackError)
    assert result.error.kind is ErrorKind.UNAVAILABLE and not result.error.retryable
    assert "'Your name?'" in result.error.model_feedback and "cannot ask the user" in result.error.model_feedback
    assert isinstance(result.error.request, ElicitationRequest)
    assert result.metadata[MCP_ASKED] == [
        {"kind": "elicitation", "mode": "form", "message": "Your name?", "answered": False, "reason": "no callback"}
    ]


async def test_a_per_call_callback_without_a_registry_default_is_not_offered_to_servers() -> None:
    mine = Recorder("mine")
    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process("2026-07-28"))
        result = await registry.dispatch("ask__ask_form", {}, ToolContext(elicitation=mine.elicit))
    assert isinstance(result.error, NoCallbackError) and mine.asked == []


async def test_without_a_callback_for_sampling_a_2025_server_gets_an_error_at_once() -> None:
    """Elicitation declared, sampling not: the SDK answers the server's sampling request with an error."""
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        await registry.connect(asking_in_process("2025-11-25"))
        with anyio.fail_after(30):
            result = await registry.dispatch("ask__ask_sample", {})
        assert result.error is not None and "Sampling not supported" in result.error.message
        assert answer_of(await registry.dispatch("ask__ask_form", {}))["action"] == "accept"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_callback_that_raises_fails_only_that_request_and_the_registry_goes_on(
    protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(request: ElicitationRequest) -> mcp_types.ElicitResult:
        raise RuntimeError("the dialog crashed")

    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        await registry.connect(asking_in_process(protocol))
        with caplog.at_level(logging.WARNING, logger="toolmesh.mcp"):
            failed = await registry.dispatch("ask__ask_form", {}, ToolContext(elicitation=broken))
        after = await registry.dispatch("ask__ask_form", {}, ToolContext(call_id="c3"))
    assert not failed.ok
    assert failed.metadata[MCP_ASKED][0]["reason"] == "callback raised RuntimeError"
    if protocol == "2025-11-25":  # the server got an error answer; its tool failed with it
        assert "the host could not answer (its callback failed)" in failed.error.message  # type: ignore[union-attr]
    else:  # 2026-07-28 cannot answer one request with an error: the call fails here
        assert failed.error is not None and failed.error.kind is ErrorKind.INTERNAL
        assert "the dialog crashed" in failed.error.message and "could not answer" in failed.error.model_feedback
    assert any("dialog crashed" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)
    assert answer_of(after)["content"] == {"name": "host:c3"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_callback_is_bounded_by_the_call_s_timeout(protocol: str) -> None:
    cancelled = anyio.Event()

    async def never(request: ElicitationRequest) -> mcp_types.ElicitResult:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        await registry.connect(asking_in_process(protocol))
        with anyio.fail_after(30):
            result = await registry.dispatch("ask__ask_form", {}, ToolContext(elicitation=never, timeout=0.5))
            await cancelled.wait()
        assert result.error is not None and result.error.kind is ErrorKind.TIMEOUT
        assert answer_of(await registry.dispatch("ask__ask_form", {}))["action"] == "accept"


async def test_2026_input_rounds_are_capped() -> None:
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        await registry.connect(asking_in_process("2026-07-28"))
        with anyio.fail_after(30):
            result = await registry.dispatch("ask__ask_forever", {})
    assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
    assert "after 8 rounds" in result.error.message and "stopped after 8 rounds" in result.error.model_feedback
    assert len(host.asked) == 8 and len(result.metadata[MCP_ASKED]) == 8


# -- transports and concurrency --------------------------------------------------------


async def _two_at_once(registry: ToolRegistry) -> tuple[dict[str, Recorder], dict[str, ToolResult]]:
    """Two calls on one session, each with its own callback, both in flight when the server asks."""
    callers = {tag: Recorder(tag) for tag in ("a", "b")}
    results: dict[str, ToolResult] = {}

    async def one(tag: str) -> None:
        ctx = ToolContext(call_id=f"call-{tag}", elicitation=callers[tag].elicit)
        results[tag] = await registry.dispatch("ask__ask_pair", {"tag": tag}, ctx)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as group:
            group.start_soon(one, "a")
            group.start_soon(one, "b")
    return callers, results


async def _pair(registry: ToolRegistry) -> dict[str, ToolResult]:
    """``_two_at_once``, each callback asked once, by its own call."""
    callers, results = await _two_at_once(registry)
    for tag, recorder in callers.items():
        [asked] = recorder.asked
        assert (asked.call_id, asked.params.message) == (f"call-{tag}", f"pair {tag}")
    return results


def _own_answers(results: dict[str, ToolResult]) -> None:
    for tag, result in results.items():
        assert answer_of(result)["content"] == {"name": f"{tag}:call-{tag}"}  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_two_calls_in_process_each_get_their_own_callback_s_answer(protocol: str) -> None:
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        await registry.connect(asking_in_process(protocol))
        _own_answers(await _pair(registry))
    assert host.asked == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_over_http_two_calls_each_get_their_own_callback_s_answer(protocol: str) -> None:
    host = Recorder("host")
    async with http_server(ASKING) as url, ToolRegistry(elicitation=host.elicit) as registry:
        connection = await registry.connect(asking_http(url, protocol))
        assert connection.protocol_version == protocol
        _own_answers(await _pair(registry))
        assert answer_of(await registry.dispatch("ask__ask_url", {}))["action"] == "accept"
    [asked] = host.asked  # the call without a callback of its own: the registry default answered
    assert isinstance(asked.params, mcp_types.ElicitRequestURLParams) and asked.tool_name == "ask__ask_url"


async def test_over_stdio_2026_two_calls_each_get_their_own_callback_s_answer() -> None:
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        connection = await registry.connect(asking_stdio("2026-07-28"))
        assert connection.protocol_version == "2026-07-28"
        _own_answers(await _pair(registry))


async def test_over_stdio_2025_one_call_is_routed_and_two_at_once_are_refused_not_guessed() -> None:
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        connection = await registry.connect(asking_stdio("2025-11-25"))
        assert connection.protocol_version == "2025-11-25"
        single = await registry.dispatch("ask__ask_form", {}, ToolContext(call_id="solo"))
        assert answer_of(single)["content"] == {"name": "host:solo"}
        callers, results = await _two_at_once(registry)
    assert callers["a"].asked == [] and callers["b"].asked == []
    for result in results.values():
        assert not result.ok and "2 calls are in flight" in result.error.message  # type: ignore[union-attr]
        notes = result.metadata[MCP_ASKED]  # each refused request is noted on every call that may have sent it
        assert notes and all(
            n["kind"] == "elicitation" and not n["answered"] and "2 calls" in n["reason"] for n in notes
        )


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_over_stdio_the_request_reaches_the_callback_with_the_spec_s_secrets_masked(protocol: str) -> None:
    secret = "s3cr3t-elicit-token-91"
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        await registry.connect(asking_stdio(protocol, env={"FIXTURE_API_TOKEN": secret}))
        result = await registry.dispatch("ask__ask_form", {"message": f"Is {secret} yours?"}, ToolContext(call_id="s"))
    assert answer_of(result)["content"] == {"name": "host:s"}
    [asked] = host.asked
    assert asked.params.message == "Is *** yours?" and asked.call_id == "s"
    assert result.metadata[MCP_ASKED][0]["message"] == "Is *** yours?"


async def test_a_2026_header_mismatch_fails_the_call_and_refreshes_the_server_s_rows() -> None:
    """No hidden re-listing inside the call: the call fails, the rows (and the session's listing) are refreshed."""
    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process("2026-07-28"))
        assert "ask__fresh" not in registry
        result = await registry.dispatch("ask__mismatch", {})
        assert result.error is not None and result.error.kind is ErrorKind.UPSTREAM_ERROR
        await wait_until(lambda: "ask__fresh" in registry, seconds=30)
        assert (await registry.dispatch("ask__fresh", {})).ok
