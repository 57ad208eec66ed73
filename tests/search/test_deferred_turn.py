"""Deferred rows: declared or left to search, by row, by server spec and by policy; the turn's record."""

from __future__ import annotations

import json

import anyio
import pytest
from _catalog import make_registry

from toolmesh import (
    ConfigurationError,
    DeferPolicy,
    Disposition,
    ErrorKind,
    McpServer,
    ToolCall,
    ToolRegistry,
    run_tool_calls,
)


def call(id_: str, name: str, **arguments: object) -> ToolCall:
    return ToolCall.from_arguments(id_, name, arguments)


def test_nothing_is_deferred_by_default() -> None:
    snapshot = make_registry().snapshot()
    assert snapshot.deferred == frozenset() and snapshot.search_row is None
    assert [row.name for row in snapshot.offered()] == snapshot.names()
    assert "search_tools" not in snapshot


def test_a_row_asks_to_be_deferred() -> None:
    snapshot = make_registry(get_weather_forecast=True).snapshot()
    assert snapshot.deferred == {"get_weather_forecast"}
    assert "get_weather_forecast" not in snapshot.declared
    assert {"add", "send_email", "search_tools"} <= snapshot.declared
    offered = [row.name for row in snapshot.offered()]
    assert "get_weather_forecast" not in offered and offered[-1] == "search_tools"


def test_the_policy_defers_mcp_rows_over_a_catalog_size_and_always_declares_some() -> None:
    registry = make_registry(DeferPolicy(defer_mcp_over=3, always_declare=["send_*"]), send_email=True, add=True)
    # natives are MCP-free: only their own settings defer them; always_declare wins over a row's wish
    assert registry.deferred_names() == {"add"}
    assert DeferPolicy(always_declare="x").always_declare == ("x",)
    with pytest.raises(ConfigurationError):
        DeferPolicy(unfound="ignore")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        DeferPolicy(search_tool="search tools")
    with pytest.raises(ConfigurationError):
        DeferPolicy(defer_mcp_over=-1)


def test_mcp_server_specs_and_config_files_carry_defer_loading(tmp_path: object) -> None:
    spec = McpServer.http("docs", "http://127.0.0.1:9/mcp", defer_loading=True)
    assert spec.defer_loading is True and "defer_loading=True" in repr(spec)
    assert McpServer.http("docs", "http://127.0.0.1:9/mcp").defer_loading is None
    from pathlib import Path

    path = Path(str(tmp_path)) / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"url": "http://127.0.0.1:9/mcp", "deferLoading": True}}}))
    (loaded,) = McpServer.from_config(path)
    assert loaded.defer_loading is True
    path.write_text(json.dumps({"mcpServers": {"a": {"url": "http://127.0.0.1:9/mcp", "deferLoading": "yes"}}}))
    with pytest.raises(ConfigurationError, match="deferLoading"):
        McpServer.from_config(path)


def test_the_search_row_name_must_be_free() -> None:
    registry = make_registry(get_weather_forecast=True)

    @registry.tool(name="search_tools")
    async def other(q: str) -> str:
        """Another search."""
        return q

    with pytest.raises(ConfigurationError, match="search_tool"):
        registry.snapshot()
    renamed = ToolRegistry(defer=DeferPolicy(search_tool="find_tools"))
    renamed.register(other)
    from _catalog import add

    renamed.register(add, defer_loading=True)
    assert renamed.snapshot().search_row is not None
    assert renamed.snapshot().search_row.name == "find_tools"  # type: ignore[union-attr]


async def test_a_deferred_row_is_refused_until_found_then_runs() -> None:
    registry = make_registry(get_weather_forecast=True)
    snapshot = registry.snapshot()
    with anyio.fail_after(10):
        (refused,) = await run_tool_calls(snapshot, [call("c1", "get_weather_forecast", city="Paris")])
        assert refused.disposition is Disposition.REFUSED
        assert refused.error is not None and refused.error.kind is ErrorKind.NOT_FOUND
        assert "search_tools" in refused.presentation.as_text()
        assert snapshot.step == 1

        (searched,) = await run_tool_calls(snapshot, [call("c2", "search_tools", query="weather in a city")])
        assert searched.ok
        listed = searched.output.blocks[0].value  # type: ignore[union-attr]
        assert listed["tools"][0]["name"] == "get_weather_forecast"
        assert [(f.name, f.search, f.step, f.query) for f in snapshot.found] == [
            ("get_weather_forecast", "search_tools", 1, "weather in a city")
        ]
        assert "get_weather_forecast" in [row.name for row in snapshot.offered()]

        (ran,) = await run_tool_calls(snapshot, [call("c3", "get_weather_forecast", city="Paris")])
    assert ran.ok and ran.output.as_text() == "sunny in Paris"
    assert [(c.name, c.call_id, c.step) for c in snapshot.called] == [
        ("search_tools", "c2", 1),
        ("get_weather_forecast", "c3", 2),
    ]
    # a new turn starts from nothing found
    assert registry.snapshot().found == ()


async def test_refusal_can_be_turned_off() -> None:
    registry = make_registry(DeferPolicy(unfound="allow"), get_weather_forecast=True)
    with anyio.fail_after(10):
        (result,) = await run_tool_calls(registry.snapshot(), [call("c1", "get_weather_forecast", city="Rome")])
    assert result.ok


async def test_direct_dispatch_on_a_snapshot_is_refused_too() -> None:
    snapshot = make_registry(send_email=True).snapshot()
    with anyio.fail_after(10):
        result = await snapshot.dispatch("send_email", {"to": "a", "subject": "b", "body": "c"})
    assert result.disposition is Disposition.REFUSED
    snapshot.record_found(["send_email", "add", "nope"], search="tool_search")
    assert [f.name for f in snapshot.found] == ["send_email"]  # only deferred rows count
    with anyio.fail_after(10):
        result = await snapshot.dispatch("send_email", {"to": "a", "subject": "b", "body": "c"})
    assert result.ok


async def test_the_search_row_searches_deferred_rows_only_and_bounds_its_limit() -> None:
    registry = make_registry(DeferPolicy(max_search_limit=2, search_limit=1), send_email=True, add=True)
    snapshot = registry.snapshot()
    with anyio.fail_after(10):
        (one,) = await run_tool_calls(snapshot, [call("c1", "search_tools", query="weather email integers")])
        (bad,) = await run_tool_calls(snapshot, [call("c2", "search_tools", query="x", limit=50)])
    tools = one.output.blocks[0].value["tools"]  # type: ignore[union-attr]
    assert [tool["name"] for tool in tools] == ["send_email"] or [tool["name"] for tool in tools] == ["add"]
    assert bad.error is not None and bad.error.kind is ErrorKind.INVALID_ARGUMENTS


async def test_the_search_row_takes_a_whole_limit_written_as_a_float() -> None:
    # JSON Schema's "integer" holds 2.0, and models write it: the search answers, not an internal error
    registry = make_registry(DeferPolicy(), send_email=True, add=True)
    snapshot = registry.snapshot()
    with anyio.fail_after(10):
        (two,) = await run_tool_calls(snapshot, [call("c1", "search_tools", query="weather email integers", limit=2.0)])
    assert two.disposition is Disposition.SUCCEEDED, two.error
    assert len(two.output.blocks[0].value["tools"]) == 2  # type: ignore[union-attr]


async def test_a_long_lived_snapshot_remembers_a_bounded_number_of_calls() -> None:
    from toolmesh._dispatch.ledger import MAX_CALLS_RECORDED

    snapshot = make_registry().snapshot()
    with anyio.fail_after(60):
        for n in range(MAX_CALLS_RECORDED + 10):
            await snapshot.dispatch("add", {"x": n, "y": 1})
    assert len(snapshot.called) == MAX_CALLS_RECORDED
    assert snapshot.called[-1].name == "add"


async def _slow_ranker(query: str, rows: object) -> dict[str, float]:
    await anyio.sleep(0.05)
    return {}


@pytest.mark.parametrize("ranker", [None, _slow_ranker], ids=["lexical", "async ranker"])
async def test_a_call_in_the_step_of_the_search_that_finds_it_is_refused_whatever_the_search_takes(
    ranker: object,
) -> None:
    # the model asked for both before it saw the search's answer: its calls are judged by what it was offered
    registry = make_registry(DeferPolicy(), ranker=ranker, get_weather_forecast=True)  # type: ignore[arg-type]
    snapshot = registry.snapshot()
    with anyio.fail_after(10):
        searched, early = await run_tool_calls(
            snapshot,
            [call("c1", "search_tools", query="weather forecast"), call("c2", "get_weather_forecast", city="Oslo")],
        )
        (later,) = await run_tool_calls(snapshot, [call("c3", "get_weather_forecast", city="Oslo")])
    assert searched.ok and [f.name for f in snapshot.found] == ["get_weather_forecast"]
    assert early.disposition is Disposition.REFUSED and early.error is not None
    assert early.error.kind is ErrorKind.NOT_FOUND
    assert later.ok
