"""Native tools ask through `ctx.elicit` / `ctx.sample`: the same requests and callbacks as MCP servers' requests."""

from __future__ import annotations

import mcp_types
import pydantic
import pytest

from _asking import Recorder
from toolmesh import (
    ElicitationRequest,
    ErrorKind,
    NoCallbackError,
    SamplingRequest,
    ToolContext,
    ToolExecutionError,
    ToolRegistry,
    tool,
)


class Contact(pydantic.BaseModel):
    name: str
    email: str = "unknown"  # the Recorder answers the name only: a valid answer needs a default here


@tool
async def sign_up(ctx: ToolContext) -> str:
    """Ask the user for their contact details."""
    answer = await ctx.elicit("Who are you?", Contact)
    return f"{answer.action} {answer.content}"


@tool
async def sign_in(ctx: ToolContext) -> str:
    """Send the user to the login page."""
    answer = await ctx.elicit("Please sign in", url="https://example.com/login")
    return answer.action


@tool
async def summarize(ctx: ToolContext, text: str) -> str:
    """Summarize with the host's model."""
    answer = await ctx.sample(f"Summarize: {text}", max_tokens=20, system_prompt="One line.")
    assert isinstance(answer.content, mcp_types.TextContent)
    return answer.content.text


def _registry(**callbacks: object) -> ToolRegistry:
    registry = ToolRegistry(**callbacks)  # type: ignore[arg-type]
    for function in (sign_up, sign_in, summarize):
        registry.register(function)
    return registry


async def test_ctx_elicit_asks_a_form_with_the_model_s_schema_through_the_registry_default() -> None:
    host = Recorder("host")
    result = await _registry(elicitation=host.elicit).dispatch("sign_up", {}, ToolContext(call_id="n1"))
    assert result.output.as_text() == "accept {'name': 'host:n1'}"
    [asked] = host.asked
    assert isinstance(asked, ElicitationRequest)
    assert (asked.call_id, asked.tool_name, asked.server) == ("n1", "sign_up", None)
    assert isinstance(asked.params, mcp_types.ElicitRequestFormParams)
    assert asked.params.message == "Who are you?"
    assert asked.params.requested_schema["required"] == ["name"]
    assert set(asked.params.requested_schema["properties"]) == {"name", "email"}


async def test_ctx_elicit_with_a_url_asks_in_url_mode() -> None:
    host = Recorder("host")
    result = await _registry(elicitation=host.elicit).dispatch("sign_in", {}, ToolContext(call_id="n2"))
    assert result.output.as_text() == "accept"
    [asked] = host.asked
    assert isinstance(asked.params, mcp_types.ElicitRequestURLParams)
    assert (asked.params.url, asked.params.elicitation_id) == ("https://example.com/login", "n2-elicit")


async def test_ctx_sample_builds_a_sampling_request_from_a_string() -> None:
    host, mine = Recorder("host"), Recorder("mine")
    registry = _registry(sampling=host.sample)
    result = await registry.dispatch("summarize", {"text": "x"}, ToolContext(call_id="n3", sampling=mine.sample))
    assert result.output.as_text() == "mine says hi" and host.asked == []
    [asked] = mine.asked
    assert isinstance(asked, SamplingRequest)
    assert (asked.call_id, asked.tool_name, asked.server) == ("n3", "summarize", None)
    assert (asked.params.max_tokens, asked.params.system_prompt) == (20, "One line.")
    [message] = asked.params.messages
    assert message.role == "user" and isinstance(message.content, mcp_types.TextContent)
    assert message.content.text == "Summarize: x"


@pytest.mark.parametrize(
    ("name", "arguments", "feedback"),
    [
        ("sign_up", {}, "The tool 'sign_up' needs input from the user ('Who are you?'), but this host cannot ask"),
        ("sign_in", {}, "needs to open https://example.com/login ('Please sign in')"),
        ("summarize", {"text": "x"}, "The tool 'summarize' asked to use the host's model (sampling)"),
    ],
)
async def test_without_a_callback_the_call_fails_saying_what_the_tool_wanted(
    name: str, arguments: dict[str, str], feedback: str
) -> None:
    result = await _registry().dispatch(name, arguments)
    assert isinstance(result.error, NoCallbackError)
    assert result.error.kind is ErrorKind.UNAVAILABLE and not result.error.retryable
    assert feedback in result.error.model_feedback
    assert result.presentation.as_text() == result.error.model_feedback


async def test_dispatch_native_gives_the_registry_default_too() -> None:
    host = Recorder("host")
    registry = _registry(sampling=host.sample)
    assert await registry.dispatch_native(summarize, text="y") == "host says hi"
    with pytest.raises(ToolExecutionError) as raised:
        await _registry().dispatch_native(summarize, text="y")
    assert isinstance(raised.value, NoCallbackError)


async def test_a_tool_may_catch_the_missing_callback_and_go_on() -> None:
    @tool
    async def polite(ctx: ToolContext) -> str:
        """Ask, or do without."""
        try:
            await ctx.elicit("Name?")
        except NoCallbackError:
            return "anonymous"
        return "named"

    registry = ToolRegistry()
    registry.register(polite)
    assert (await registry.dispatch("polite", {})).output.as_text() == "anonymous"
