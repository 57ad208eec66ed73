"""Sampling: an MCP server's request for a completion reaches the sampling callback of the call that caused it."""

from __future__ import annotations

import anyio
import mcp_types
import pytest

from _asking import ASKING, PROTOCOLS, Recorder, answer_of, asking_http, asking_in_process, asking_stdio
from _mcp import everything_stdio
from _servers import http_server
from toolmesh import ErrorKind, NoCallbackError, SamplingRequest, ToolContext, ToolRegistry
from toolmesh.mcp import MCP_ASKED


def _check(host: Recorder, call_id: str) -> None:
    [asked] = host.asked
    assert isinstance(asked, SamplingRequest)
    assert (asked.call_id, asked.tool_name, asked.server) == (call_id, "ask__ask_sample", "ask")
    assert asked.params.system_prompt == "Be brief." and asked.params.max_tokens == 50
    content = asked.params.messages[0].content
    assert isinstance(content, mcp_types.TextContent) and content.text == "Say hi"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_sampling_reaches_the_registry_default_in_process(protocol: str) -> None:
    host = Recorder("host")
    async with ToolRegistry(sampling=host.sample) as registry:
        await registry.connect(asking_in_process(protocol))
        result = await registry.dispatch("ask__ask_sample", {}, ToolContext(call_id="s1"))
    assert answer_of(result) == {"model": "host", "text": "host says hi"}
    _check(host, "s1")
    assert result.metadata[MCP_ASKED] == [{"kind": "sampling", "message": "Say hi", "answered": True, "model": "host"}]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_call_s_sampling_callback_overrides_the_registry_default(protocol: str) -> None:
    host, mine = Recorder("host"), Recorder("mine")
    async with ToolRegistry(sampling=host.sample) as registry:
        await registry.connect(asking_in_process(protocol))
        result = await registry.dispatch("ask__ask_sample", {}, ToolContext(call_id="s2", sampling=mine.sample))
    assert answer_of(result)["model"] == "mine" and host.asked == []
    _check(mine, "s2")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_sampling_over_stdio(protocol: str) -> None:
    host = Recorder("host")
    async with ToolRegistry(sampling=host.sample) as registry:
        connection = await registry.connect(asking_stdio(protocol))
        assert connection.protocol_version == protocol
        result = await registry.dispatch("ask__ask_sample", {}, ToolContext(call_id="s3"))
    assert answer_of(result)["text"] == "host says hi"
    _check(host, "s3")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_sampling_over_http(protocol: str) -> None:
    host = Recorder("host")
    async with http_server(ASKING) as url, ToolRegistry(sampling=host.sample) as registry:
        connection = await registry.connect(asking_http(url, protocol))
        assert connection.protocol_version == protocol
        result = await registry.dispatch("ask__ask_sample", {}, ToolContext(call_id="s4"))
    assert answer_of(result)["text"] == "host says hi"
    _check(host, "s4")


async def test_without_a_sampling_callback_a_2026_call_fails_at_once_saying_so() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(asking_in_process("2026-07-28"))
        with anyio.fail_after(30):
            result = await registry.dispatch("ask__ask_sample", {})
    assert isinstance(result.error, NoCallbackError) and result.error.kind is ErrorKind.UNAVAILABLE
    assert "asked to use the host's model" in result.error.model_feedback
    assert isinstance(result.error.request, SamplingRequest)
    assert result.metadata[MCP_ASKED] == [
        {"kind": "sampling", "message": "Say hi", "answered": False, "reason": "no callback"}
    ]


async def test_a_sampling_callback_answering_the_wrong_type_fails_the_request() -> None:
    async def wrong(request: SamplingRequest) -> mcp_types.CreateMessageResult:
        return mcp_types.ElicitResult(action="accept")  # type: ignore[return-value]

    host = Recorder("host")
    async with ToolRegistry(sampling=host.sample) as registry:
        await registry.connect(asking_in_process("2026-07-28"))
        result = await registry.dispatch("ask__ask_sample", {}, ToolContext(sampling=wrong))
    assert result.error is not None and "ElicitResult, not a CreateMessageResult" in result.error.message


async def test_server_everything_lists_and_runs_trigger_sampling_request_only_when_declared() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(everything_stdio("ev", call_timeout=20))
        assert "ev__trigger-sampling-request" not in registry
    host = Recorder("host")
    async with ToolRegistry(sampling=host.sample) as registry:
        await registry.connect(everything_stdio("ev", call_timeout=20))
        assert "ev__trigger-sampling-request" in registry
        assert "ev__trigger-elicitation-request" not in registry
        result = await registry.dispatch(
            "ev__trigger-sampling-request", {"prompt": "Tell a joke", "maxTokens": 30}, ToolContext(call_id="ev2")
        )
    assert result.ok, result.error and result.error.message
    [asked] = host.asked
    assert (asked.call_id, asked.tool_name, asked.server) == ("ev2", "ev__trigger-sampling-request", "ev")
    assert "host says hi" in result.output.as_text()
