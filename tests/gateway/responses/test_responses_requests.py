"""Bad Responses requests are 400s in the API's error shape, naming the field and saying what to send."""

from __future__ import annotations

from typing import Any

import openai
import pytest
from mcp.server.mcpserver import MCPServer

from _responses import Reply, mcp_tool, scene


async def _refused(client: Any, **request: Any) -> openai.BadRequestError:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="m", **request)
    assert caught.value.status_code == 400
    return caught.value


def _error(exc: openai.BadRequestError) -> dict[str, Any]:
    assert isinstance(exc.body, dict)
    assert exc.body["type"] == "invalid_request_error"
    return exc.body


async def test_stateful_and_hosted_fields_are_refused_saying_what_to_send_instead() -> None:
    async with scene([Reply(text="still fine")]) as (client, upstream, url):
        previous = _error(await _refused(client, input="hi", previous_response_id="resp_1"))
        assert previous["param"] == "previous_response_id" and "whole conversation" in previous["message"]
        store = _error(await _refused(client, input="hi", store=True))
        assert store["param"] == "store" and "store: false" in store["message"]
        for key in ("connector_id", "tunnel_id"):
            tool = {"type": "mcp", "server_label": "x", key: "abc"}
            refused = _error(await _refused(client, input="hi", tools=[tool]))
            assert refused["param"] == f"tools[0].{key}" and "server_url" in refused["message"]
        hosted = _error(await _refused(client, input="hi", tools=[{"type": "web_search"}]))
        assert hosted["param"] == "tools[0].type"
        bad_label = _error(await _refused(client, input="hi", tools=[mcp_tool("no spaces", url)]))
        assert bad_label["param"] == "tools[0].server_label"
        bad_item = _error(await _refused(client, input=[{"type": "item_reference", "id": "x"}]))
        assert bad_item["param"] == "input[0].type"
        assert upstream.requests == []
        ok = await client.responses.create(model="m", input="hi", store=False)
    assert ok.output_text == "still fine"


async def test_a_duplicate_server_label_is_a_400_naming_the_second_one() -> None:
    async with scene([]) as (client, _, url):
        error = _error(await _refused(client, input="hi", tools=[mcp_tool("calc", url), mcp_tool("calc", url)]))
    assert error["param"] == "tools[1].server_label" and "tools[0]" in error["message"]


def _clashing() -> MCPServer:
    server = MCPServer("clash")

    @server.tool(name="x__y")
    def xy() -> str:
        return "xy"

    @server.tool()
    def y() -> str:
        return "y"

    return server


async def test_exposed_names_colliding_are_a_400_never_a_replacement() -> None:
    async with scene([], server=_clashing()) as (client, upstream, url):
        # label "s" exposes s__x__y; label "s__x" exposes s__x__y too
        error = _error(await _refused(client, input="hi", tools=[mcp_tool("s", url), mcp_tool("s__x", url)]))
        assert error["param"] == "tools[1]" and "s__x__y" in error["message"]
        function = {"type": "function", "name": "s__y", "parameters": {"type": "object", "properties": {}}}
        clash = _error(await _refused(client, input="hi", tools=[function, mcp_tool("s", url)]))
        assert clash["param"] == "tools[1]" and "s__y" in clash["message"]
    assert upstream.requests == []


async def test_too_many_servers_is_a_400() -> None:
    async with scene([], max_servers=1) as (client, _, url):
        error = _error(await _refused(client, input="hi", tools=[mcp_tool("a", url), mcp_tool("b", url)]))
    assert error["param"] == "tools" and "at most 1" in error["message"]


async def test_a_url_the_policy_refuses_is_a_400_naming_the_field() -> None:
    async with scene([]) as (client, _, _url):
        remote = _error(await _refused(client, input="hi", tools=[mcp_tool("r", "https://example.com/mcp")]))
        assert remote["param"] == "tools[0].server_url" and "allowlist" in remote["message"]
        userinfo = _error(await _refused(client, input="hi", tools=[mcp_tool("u", "http://me:pw@127.0.0.1:9/mcp")]))
        assert userinfo["param"] == "tools[0].server_url" and "credentials" in userinfo["message"]


async def test_a_streamed_request_is_refused_before_any_event() -> None:
    async with scene([]) as (client, _, _url):
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(
                model="m", input="hi", tools=[mcp_tool("r", "https://example.com/mcp")], stream=True
            )
    assert _error(caught.value)["param"] == "tools[0].server_url"


async def test_a_tool_choice_naming_nothing_declared_is_a_400() -> None:
    async with scene([]) as (client, upstream, url):
        unknown = _error(await _refused(client, input="x", tool_choice={"type": "function", "name": "nope"}))
        label = _error(
            await _refused(
                client,
                input="x",
                tools=[mcp_tool("calc", url)],
                tool_choice={"type": "mcp", "server_label": "other"},
            )
        )
        hosted = _error(await _refused(client, input="x", tool_choice={"type": "web_search_preview"}))
    assert (unknown["param"], label["param"], hosted["param"]) == (
        "tool_choice.name",
        "tool_choice.server_label",
        "tool_choice.type",
    )
    assert upstream.requests == []


@pytest.mark.parametrize(
    ("key", "value", "param", "takes"),
    [
        ("allowed_tools", {"tool_name": ["add"]}, "tools[0].allowed_tools.tool_name", "did you mean `tool_names`?"),
        ("require_approval", {"nevr": {"tool_names": ["add"]}}, "tools[0].require_approval.nevr", "`never`"),
        ("require_approval", {"never": {"readonly": True}}, "tools[0].require_approval.never.readonly", "`read_only`"),
        ("allowed_tool", ["add"], "tools[0].allowed_tool", "did you mean `allowed_tools`?"),
    ],
)
async def test_a_misspelt_filter_key_is_a_400_never_a_filter_that_selects_everything(
    key: str, value: dict[str, Any], param: str, takes: str
) -> None:
    async with scene([]) as (client, upstream, url):
        tool = {**mcp_tool("calc", url), key: value}
        error = _error(await _refused(client, input="hi", tools=[tool]))
    assert error["param"] == param and takes in error["message"]
    assert upstream.requests == []
