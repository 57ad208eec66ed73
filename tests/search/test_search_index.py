"""registry.search and snapshot.search: BM25 over names, descriptions and parameters, kept current."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from _catalog import add, make_registry

from toolmesh import Entry, ToolMatch, ToolRegistry, tool
from toolmesh._search.words import query_text, split_words


def test_identifiers_are_split_into_words() -> None:
    assert split_words("getHTTPResponse_v2") == ["get", "HTTP", "Response", "v2"]
    assert split_words("github__create_pull_request") == ["github", "create", "pull", "request"]
    assert split_words("fs.read-file/x") == ["fs", "read", "file", "x"]
    assert query_text("Create a PULL request!") == "create a pull request"


def test_a_query_drops_the_words_of_a_request_that_name_no_tool() -> None:
    assert query_text("Can you please give me what's in my inbox?") == "in inbox"  # "what's": its 's' goes too
    assert query_text("I want to read the file") == "to read the file"  # the index drops its stop words


def test_search_finds_a_tool_by_what_a_person_asks() -> None:
    registry = make_registry()
    matches = registry.search("will it rain in Paris? weather")
    assert matches[0].name == "get_weather_forecast"
    assert isinstance(matches[0], ToolMatch) and matches[0].row is registry["get_weather_forecast"]
    assert matches[0].score > 0
    assert registry.search("open a pull request")[0].name == "createPullRequest"  # camelCase split
    assert registry.search("new meeting in my calendar")[0].name == "calendar__create_event"  # server__tool split


def test_parameter_names_and_descriptions_are_searched() -> None:
    registry = make_registry()
    assert registry.search("subject")[0].name == "send_email"
    assert registry.search("meeting")[0].name == "calendar__create_event"  # only in a parameter description


def test_limit_bounds_the_matches_and_scores_descend() -> None:
    registry = make_registry()
    matches = registry.search("tool weather pull email calendar integers", limit=3)
    assert len(matches) == 3
    assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)
    with pytest.raises(ValueError):
        registry.search("x", limit=0)
    with pytest.raises(TypeError):
        registry.search(b"weather")  # type: ignore[arg-type]


def test_the_index_follows_registrations_and_removals() -> None:
    registry = make_registry()
    assert registry.search("integers")[0].name == "add"
    index = registry._index
    assert index is not None

    @tool
    async def multiply(x: int, y: int) -> int:
        """Multiply two integers."""
        return x * y

    registry.register(multiply)
    assert {m.name for m in registry.search("multiply integers")} >= {"multiply", "add"}
    assert registry._index is index  # the same index, kept current, not a new one
    registry.unregister("add")
    names = [m.name for m in registry.search("add integers")]
    assert names[0] == "multiply" and "add" not in names


def test_a_sync_reindexes_only_what_changed() -> None:
    registry = make_registry()
    registry.search("x")
    index = registry._index
    assert index is not None
    assert index.sync(registry._rows) == 0  # nothing changed

    @tool
    async def lookup_city(name: str) -> str:
        """Look a city up."""
        return name

    registry.register(lookup_city)
    assert index.sync(registry._rows) == 1
    registry.register(add, name="add", replace=True)  # the same definition again: nothing to index
    assert index.sync(registry._rows) == 0


def test_a_snapshot_searches_the_rows_it_froze() -> None:
    registry = make_registry()
    snapshot = registry.snapshot()
    subset = registry.snapshot(active=["add", "send_email"])
    registry.unregister("get_weather_forecast")  # the registry moves on
    assert registry.search("weather forecast") == [] or registry.search("weather forecast")[0].name != (
        "get_weather_forecast"
    )
    assert snapshot.search("weather forecast")[0].name == "get_weather_forecast"
    assert {m.name for m in subset.search("weather email integers")} == {"add", "send_email"}


def test_a_snapshot_of_a_subset_keeps_to_its_rows() -> None:
    registry = make_registry()
    subset = registry.snapshot(active=["add"])
    assert [m.name for m in subset.search("weather email integers")] == ["add"]


def test_a_host_ranker_is_fused_with_the_lexical_ranking() -> None:
    seen: list[tuple[str, int]] = []

    def embeddings(query: str, rows: Sequence[Entry]) -> Mapping[str, float]:
        seen.append((query, len(rows)))
        return {"send_email": 0.9, "add": 0.1, "no such row": 5.0}

    registry = make_registry()
    lexical = registry.search("forecast")
    assert lexical[0].name == "get_weather_forecast" and len(lexical) == 1
    fused = registry.search("forecast", ranker=embeddings)
    names = [m.name for m in fused]
    assert names[0] == "get_weather_forecast"  # first lexically, and so first fused
    assert "send_email" in names and "no such row" not in names
    assert seen == [("forecast", 5)]
    ranked = ToolRegistry(ranker=embeddings)
    ranked.register(add)
    assert [m.name for m in ranked.search("nothing lexical")] == ["add"]


def test_a_failing_ranker_leaves_the_lexical_ranking(caplog: pytest.LogCaptureFixture) -> None:
    def broken(query: str, rows: Sequence[Entry]) -> Mapping[str, float]:
        raise RuntimeError("embedding service down")

    registry = make_registry()
    assert registry.search("forecast", ranker=broken)[0].name == "get_weather_forecast"
    assert "ranker failed" in caplog.text


def test_a_query_in_other_words_finds_the_tool_through_the_thesaurus() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def create_directory(path: str) -> str:
        """Create a new directory, nested ones included."""
        return path

    @registry.tool
    async def read_media_file(path: str) -> str:
        """Read an image or audio file as base64 data."""
        return path

    assert registry.search("make a folder named reports")[0].name == "create_directory"
    assert registry.search("look at this picture")[0].name == "read_media_file"


async def test_an_async_ranker_is_awaited_by_asearch_and_by_the_search_row() -> None:
    import anyio

    from toolmesh import DeferPolicy, ToolCall, run_tool_calls

    async def embeddings(query: str, rows: Sequence[Entry]) -> Mapping[str, float]:
        await anyio.lowlevel.checkpoint()  # the query's embedding, from a service
        return {"send_email": 1.0}

    registry = make_registry(DeferPolicy(), embeddings, send_email=True, add=True)
    assert [m.name for m in await registry.asearch("nothing lexical")] == ["send_email"]
    with pytest.raises(TypeError, match="asearch"):
        registry.search("nothing lexical")
    snapshot = registry.snapshot()
    assert [m.name for m in await snapshot.asearch("nothing lexical", deferred_only=True)] == ["send_email"]
    with anyio.fail_after(10):
        (found,) = await run_tool_calls(snapshot, [ToolCall.from_arguments("s", "search_tools", {"query": "zzz"})])
    assert found.ok and [f.name for f in snapshot.found] == ["send_email"]
