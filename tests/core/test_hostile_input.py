"""Property tests: hostile arguments never make dispatch or a provider parser raise; hostile server tool
names never give two rows one name, or a name the provider rejects.

Examples are bounded (``max_examples``, no deadline: the machine may be busy). The MCP names
test lists its names through a real in-process MCP server (the SDK's low-level ``Server`` and
``mcp.Client(server)``), served by one session for every example.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.from_thread
import mcp
import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.server import Server

from toolmesh import (
    PROVIDER_RULES,
    Disposition,
    ErrorKind,
    McpEntry,
    NameCollisionError,
    NamePolicy,
    ToolCall,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    ToolResult,
    tool,
)
from toolmesh.mcp import McpServer
from toolmesh.mcp._client.tool_listing import build_rows, discover_tools
from toolmesh.providers import anthropic, gemini, openai, openai_responses

# -- strategies ---------------------------------------------------------------------

ANY_CHAR = st.characters(exclude_categories=())
"""Any code point, lone surrogates included."""


def _nested(depth: int, leaf: Any = 0) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"x": value} if depth % 2 else [value]
    return value


def _huge(digits: int) -> int:
    return -(10**digits) if digits % 2 else 10**digits


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=4_000, max_value=6_000).map(_huge),  # beyond 4300 digits: no str() for it
    st.sampled_from([2**64, -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(ANY_CHAR, max_size=20),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(ANY_CHAR, max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
DEEP = st.integers(min_value=500, max_value=120_000).map(_nested)
"""Nesting from what the parsers accept to far beyond the interpreter's recursion limit."""

MAPPINGS = st.one_of(
    st.dictionaries(st.text(ANY_CHAR, max_size=8), VALUES, max_size=5),
    st.dictionaries(st.sampled_from(["x", "y", "text", "data"]), VALUES, max_size=4),
    DEEP.map(lambda value: {"data": value}),
    st.dictionaries(st.one_of(st.integers(), st.none(), st.booleans()), VALUES, max_size=3),
)
JSON_TEXT = st.one_of(
    st.text(ANY_CHAR, max_size=50),
    VALUES.map(lambda value: _dumps(value)),
    MAPPINGS.map(lambda value: _dumps(value)),
    st.integers(min_value=1, max_value=120_000).map(lambda depth: '{"x": ' + "[" * depth + "]" * depth + "}"),
    st.integers(min_value=4_000, max_value=20_000).map(lambda digits: '{"x": ' + "7" * digits + "}"),
    st.sampled_from(['{"x": NaN}', '{"x": Infinity}', '{"x": 1e999}', '{"text": "\\ud800"}', '{"x": 1', "null"]),
)
ARGUMENTS = st.one_of(JSON_TEXT, MAPPINGS, VALUES, st.none(), st.builds(object), st.binary(max_size=10))


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value)
    except (ValueError, TypeError, RecursionError):
        return "{}"


HYPOTHESIS = settings(max_examples=200, deadline=None)


# -- dispatch -----------------------------------------------------------------------


@tool
async def echo(x: int = 0, text: str = "", data: Any = None) -> dict[str, Any]:
    """Echo what it got."""
    return {"x": x, "text_length": len(text), "has_data": data is not None}


async def _dynamic(arguments: dict[str, Any]) -> str:
    return f"{len(arguments)} arguments"


SCHEMA = {
    "type": "object",
    "properties": {"x": {"type": "integer"}, "text": {"type": "string"}, "data": {}},
}


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(echo)
    registry.register_dynamic("dyn", SCHEMA, _dynamic)
    return registry


REGISTRY = _registry()
SNAPSHOT = REGISTRY.snapshot()


def _check_result(result: object, name: str) -> None:
    assert isinstance(result, ToolResult)
    assert result.name == name and result.call_id == "c1"
    assert result.disposition in (Disposition.SUCCEEDED, Disposition.FAILED)
    if result.error is not None:
        assert result.error.kind is ErrorKind.INVALID_ARGUMENTS, result.error
        assert isinstance(result.presentation.as_text(), str)


@HYPOTHESIS
@given(arguments=ARGUMENTS, name=st.sampled_from(["echo", "dyn"]))
def test_any_arguments_never_make_dispatch_raise(arguments: Any, name: str) -> None:
    async def run() -> None:
        for catalog in (REGISTRY, SNAPSHOT):
            result = await catalog.dispatch(name, arguments, ToolContext(call_id="c1"))
            _check_result(result, name)

    anyio.run(run)


@HYPOTHESIS
@given(arguments=JSON_TEXT)
def test_json_text_that_is_not_an_object_is_invalid_arguments(arguments: str) -> None:
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return
    if isinstance(value, dict) or value is None or not arguments.strip():
        return
    result = anyio.run(REGISTRY.dispatch, "dyn", arguments)
    assert result.error is not None and result.error.kind is ErrorKind.INVALID_ARGUMENTS


# -- provider parsers ---------------------------------------------------------------

NAMES = st.one_of(st.text(ANY_CHAR, max_size=10), st.none(), st.integers(), st.lists(st.integers(), max_size=2))
IDS = st.one_of(st.none(), st.text(ANY_CHAR, max_size=10), st.integers())


def _parse(provider: str, name: Any, id_: Any, arguments: Any) -> list[ToolCall]:
    match provider:
        case "openai":
            call = {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}
            return openai.parse_tool_calls({"tool_calls": [call]})
        case "openai_strict":
            call = {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}
            return openai.parse_tool_calls({"tool_calls": [call]}, catalog=SNAPSHOT)
        case "openai_responses":
            item = {"type": "function_call", "call_id": id_, "name": name, "arguments": arguments}
            return openai_responses.parse_tool_calls([item], catalog=SNAPSHOT)
        case "anthropic":
            return anthropic.parse_tool_calls([{"type": "tool_use", "id": id_, "name": name, "input": arguments}])
        case _:
            return gemini.parse_tool_calls([{"function_call": {"id": id_, "name": name, "args": arguments}}])


@HYPOTHESIS
@given(
    provider=st.sampled_from(["openai", "openai_strict", "openai_responses", "anthropic", "gemini"]),
    arguments=ARGUMENTS,
    name=st.one_of(st.sampled_from(["echo", "dyn"]), NAMES),
    id_=IDS,
)
def test_any_arguments_never_make_a_provider_parser_raise(provider: str, arguments: Any, name: Any, id_: Any) -> None:
    (call,) = _parse(provider, name, id_, arguments)
    assert isinstance(call.id, str) and call.id
    assert call.name == (name if isinstance(name, str) else "")
    assert isinstance(call.arguments, str)
    if call.valid:
        value = json.loads(call.arguments, parse_constant=lambda constant: pytest.fail(constant))
        assert isinstance(value, dict)
        call.arguments.encode("utf-8")  # always text that can be sent on
    else:
        assert isinstance(call.problem, str) and call.problem.startswith("arguments ")
    same = _parse(provider, name, id_, arguments)[0]
    assert same.id == call.id  # a generated id is deterministic


@HYPOTHESIS
@given(arguments=ARGUMENTS, name=st.one_of(st.sampled_from(["echo", "dyn"]), NAMES))
def test_parsed_calls_run_in_a_turn_without_raising(arguments: Any, name: Any) -> None:
    from toolmesh import run_tool_calls

    (call,) = _parse("anthropic", name, "c1", arguments)
    (result,) = anyio.run(run_tool_calls, SNAPSHOT, [call])
    assert isinstance(result, ToolResult) and result.call_id == "c1"
    if result.error is not None:
        assert result.error.kind in (ErrorKind.INVALID_ARGUMENTS, ErrorKind.NOT_FOUND), result.error


# -- names --------------------------------------------------------------------------

SERVER_TOOL_NAMES = st.lists(
    st.one_of(
        st.text(ANY_CHAR, max_size=20),
        st.text(alphabet="ab._-/ :é", min_size=1, max_size=5),  # names that sanitize to one another
        st.integers(min_value=60, max_value=400).map(lambda n: "t" * n),  # too long for every provider
        st.sampled_from(["search", "search.v2", "search_v2", "search/v2", "srv__search", "_", "-x", "1st"]),
    ),
    max_size=12,
)
POLICIES = st.builds(
    NamePolicy,
    provider=st.sampled_from([None, "openai", "anthropic", "gemini"]),
    dedupe=st.booleans(),
    template=st.sampled_from(["{server}__{tool}", "{tool}", "{server}.{tool}"]),
)


def _check_names(policy: NamePolicy, wire_names: list[str], assigned: dict[str, str]) -> None:
    assert list(assigned) == wire_names
    names = list(assigned.values())
    assert len(set(names)) == len(names), "two tools got one model-visible name"
    for name in names:
        assert policy.is_valid(name), name


def _collision_is_real(policy: NamePolicy, wire_names: list[str]) -> bool:
    natural = [policy.model_name("srv", name) for name in wire_names]
    if len(set(wire_names)) < len(wire_names):
        return True  # the server lists a tool twice: refused even with dedupe
    return not policy.dedupe and len(set(natural)) < len(natural)


def _export_checks(rows: list[McpEntry]) -> None:
    """Every provider export of these rows works and declares only names its rule accepts."""
    definitions = [row.definition for row in rows]
    for provider, names in (
        ("openai", [item["function"]["name"] for item in openai.tools(definitions)]),
        ("openai", [item["name"] for item in openai_responses.tools(definitions)]),  # type: ignore[typeddict-item]
        ("anthropic", [item["name"] for item in anthropic.tools(definitions)]),
        (
            "gemini",
            [f.name for item in gemini.tools(definitions) for f in item.function_declarations or ()],  # type: ignore[union-attr]
        ),
    ):
        rule = PROVIDER_RULES[provider]
        assert names == [row.name for row in rows if rule.matches(row.name)]


@HYPOTHESIS
@given(policy=POLICIES, wire_names=SERVER_TOOL_NAMES, taken=st.lists(st.sampled_from(["srv__search", "search"])))
def test_any_server_tool_names_get_distinct_valid_names_or_a_collision_error(
    policy: NamePolicy, wire_names: list[str], taken: list[str]
) -> None:
    owners = {name: f"native tool {name!r}" for name in taken}
    try:
        assigned = policy.assign("srv", wire_names, taken=owners)
    except NameCollisionError:
        natural = {policy.model_name("srv", name) for name in wire_names}
        assert _collision_is_real(policy, wire_names) or (natural & set(owners) and not policy.dedupe)
        return
    _check_names(policy, wire_names, assigned)
    assert not set(assigned.values()) & set(owners)


class _Listing:
    """An in-process MCP server whose tool list each example sets."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.server: Server[Any] = Server("hostile-names", on_list_tools=self._list, on_call_tool=self._call)

    async def _list(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {}}
        return types.ListToolsResult(tools=[types.Tool(name=name, input_schema=schema) for name in self.names])

    async def _call(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])


async def _list_tools(client: mcp.Client) -> list[types.Tool]:
    with anyio.fail_after(30):
        return await discover_tools(client, McpServer.stdio("srv", "unused", max_pages=10))


class _NoCalls:
    async def call_tool(self, entry: McpEntry, arguments: dict[str, Any] | None, ctx: ToolContext[Any]) -> ToolOutput:
        raise AssertionError("not called")


@pytest.fixture(scope="module")
def listing() -> Iterator[tuple[anyio.from_thread.BlockingPortal, mcp.Client, _Listing]]:
    state = _Listing()
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(mcp.Client(state.server)) as client,
    ):
        yield portal, client, state


@settings(max_examples=150, deadline=None)
@given(policy=POLICIES, wire_names=SERVER_TOOL_NAMES)
def test_any_names_an_mcp_server_lists_give_distinct_valid_rows_or_a_collision_error(
    listing: tuple[anyio.from_thread.BlockingPortal, mcp.Client, _Listing], policy: NamePolicy, wire_names: list[str]
) -> None:
    portal, client, state = listing
    state.names = wire_names
    tools = portal.call(_list_tools, client)
    assert [item.name for item in tools] == wire_names
    try:
        rows = build_rows(McpServer.stdio("srv", "unused"), tools, policy, {}, _NoCalls())
    except NameCollisionError:
        assert _collision_is_real(policy, wire_names)
        return
    _check_names(policy, wire_names, {row.wire_name: row.name for row in rows})
    _export_checks(rows)
