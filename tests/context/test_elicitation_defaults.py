"""SEP-1034: an accepted elicitation form gets the requested schema's defaults for the fields it left out."""

from __future__ import annotations

import json

import anyio
import mcp_types

from _servers import FIXTURES, fixture_server
from toolmesh import ElicitationRequest, McpServer, ToolRegistry
from toolmesh._context.forms import form_defaults, with_form_defaults

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"]},
        "note": {"type": "string"},
    },
}
FORM = mcp_types.ElicitRequestFormParams(message="Who are you?", requested_schema=SCHEMA)
ALL_DEFAULTS = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True, "tags": ["a"]}


def test_form_defaults_lists_each_field_with_a_default() -> None:
    assert form_defaults(SCHEMA) == ALL_DEFAULTS
    assert form_defaults({"type": "object"}) == {}


def test_defaults_of_other_shapes_are_not_carried() -> None:
    schema = {"properties": {"obj": {"default": {"x": 1}}, "nums": {"default": [1, 2]}, "bad": "not a schema"}}
    assert form_defaults(schema) == {}


def test_an_accepted_form_gets_the_defaults_it_left_out() -> None:
    result = with_form_defaults(FORM, mcp_types.ElicitResult(action="accept", content={}))
    assert result.action == "accept" and result.content == ALL_DEFAULTS


def test_an_accepted_form_without_content_gets_every_default() -> None:
    result = with_form_defaults(FORM, mcp_types.ElicitResult(action="accept"))
    assert result.content == ALL_DEFAULTS


def test_what_the_host_gave_wins_even_null() -> None:
    answer = mcp_types.ElicitResult(action="accept", content={"name": "Ada", "age": None, "note": "hi"})
    result = with_form_defaults(FORM, answer)
    assert result.content == {**ALL_DEFAULTS, "name": "Ada", "age": None, "note": "hi"}
    assert answer.content == {"name": "Ada", "age": None, "note": "hi"}  # the host's own answer is not changed


def test_declined_cancelled_and_url_answers_are_left_alone() -> None:
    for action in ("decline", "cancel"):
        answer = mcp_types.ElicitResult(action=action)
        assert with_form_defaults(FORM, answer) is answer
    url = mcp_types.ElicitRequestURLParams(message="Sign in", url="https://example.com/login", elicitation_id="e1")
    accepted = mcp_types.ElicitResult(action="accept")
    assert with_form_defaults(url, accepted) is accepted


async def test_a_server_gets_the_defaults_the_hosts_callback_left_out() -> None:
    """End to end: the host accepts the form with nothing filled in; the server reads every default."""
    asked: list[ElicitationRequest] = []

    async def accept_as_shown(request: ElicitationRequest) -> mcp_types.ElicitResult:
        asked.append(request)
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    server = McpServer.in_process("conf", fixture_server(FIXTURES / "conformance_server.py"), prefix=False)
    async with ToolRegistry(elicitation=accept_as_shown) as registry:
        await registry.connect(server)
        with anyio.fail_after(30):
            result = await registry.dispatch("test_elicitation_sep1034_defaults", {})
    assert result.disposition == "succeeded", result.presentation.as_text()
    said = result.output.structured["result"]  # "Elicitation completed: action=accept, content={...}"
    answered = json.loads(said.partition("content=")[2])
    assert answered == {"name": "Ada", "age": 30, "score": 95.5, "status": "active", "verified": True}
    assert len(asked) == 1 and asked[0].tool_name == "test_elicitation_sep1034_defaults"
