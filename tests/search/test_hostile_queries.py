"""Queries are model text: huge, full of regex metacharacters or control characters, they answer quickly."""

from __future__ import annotations

import anyio
import pytest
from _catalog import make_registry

from toolmesh import DeferPolicy, ToolCall, run_tool_calls

HOSTILE = [
    "x" * 100_000,
    "weather " * 20_000,
    "(((a+)+)+)$" * 1_000,
    ".*.*.*.*.*.*.*.*.*=~!@#$%^&*()[]{}|\\",
    'title:weather AND -email OR NOT (add) ~2 ^5 "phrase" field:[a TO z] IN [a b]',
    "\x00\x01\x02\x1b[31m\u202e\ufeff\ud7ff",
    "",
    "   ",
    "日本語の天気予報 weather",
]


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_query_is_answered_without_raising(query: str) -> None:
    registry = make_registry()
    matches = registry.search(query, limit=5)
    assert len(matches) <= 5
    if "weather" in query:
        assert "get_weather_forecast" in [match.name for match in matches]


async def test_hostile_queries_through_the_search_row() -> None:
    registry = make_registry(DeferPolicy(defer_mcp_over=0), get_weather_forecast=True, send_email=True)
    snapshot = registry.snapshot()
    calls = [ToolCall.from_arguments(f"c{n}", "search_tools", {"query": query}) for n, query in enumerate(HOSTILE)]
    with anyio.fail_after(30):
        results = await run_tool_calls(snapshot, calls)
    assert all(result.ok for result in results)
    assert {found.name for found in snapshot.found} == {"get_weather_forecast", "send_email"}  # 4 names email
