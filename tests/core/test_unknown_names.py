"""Unknown names: any value as a name is a not_found result, and suggestions stay cheap on big catalogs."""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable
from typing import Any

import pytest

from toolmesh import ErrorKind, ToolCall, ToolNotFoundError, ToolRegistry, run_tool_calls, tool


@tool
async def add(x: int, y: int = 0) -> int:
    """Add two integers."""
    return x + y


NOT_STRINGS: list[Any] = [None, 42, 1.5, True, [1, "add"], {"name": "add"}, b"add", ("add",)]


@pytest.mark.parametrize("name", NOT_STRINGS, ids=lambda value: type(value).__name__)
async def test_a_name_that_is_not_a_string_is_not_found_on_registry_and_snapshot(name: Any) -> None:
    registry = ToolRegistry()
    registry.register(add)
    for catalog in (registry, registry.snapshot()):
        result = await catalog.dispatch(name, '{"x": 1}')
        assert result.error is not None and result.error.kind is ErrorKind.NOT_FOUND
        assert result.name == "" and result.kind == "unknown"
        assert result.presentation.as_text().startswith(
            f"Unknown tool: a tool name is a string, got {type(name).__name__} "
        )
        assert name not in catalog
        assert catalog.get(name) is None
        with pytest.raises(ToolNotFoundError, match="a tool name is a string"):
            catalog[name]
    assert (await registry.dispatch("add", '{"x": 1}')).ok  # still usable


async def test_a_turn_with_names_that_are_not_strings_fails_only_those_calls_as_not_found() -> None:
    registry = ToolRegistry()
    registry.register(add)
    calls = [ToolCall("c1", None), ToolCall("c2", ["add"]), ToolCall("c3", "add", '{"x": 2}'), ToolCall("c4", 7)]
    results = await run_tool_calls(registry.snapshot(), calls)  # type: ignore[arg-type]
    assert [r.call_id for r in results] == ["c1", "c2", "c3", "c4"]
    for index in (0, 1, 3):
        error = results[index].error
        assert error is not None and error.kind is ErrorKind.NOT_FOUND, results[index]
        assert results[index].name == "" and "a tool name is a string" in error.message
    assert results[2].ok and results[2].output[0].value == 2  # type: ignore[union-attr]


async def test_a_very_long_unknown_name_is_cut_in_the_message() -> None:
    registry = ToolRegistry()
    registry.register(add)
    result = await registry.dispatch("a" * 100_000, "{}")
    text = result.presentation.as_text()
    assert result.error is not None and result.error.kind is ErrorKind.NOT_FOUND
    assert len(text) < 200 and "(a name of 100000 characters)" in text


@functools.cache
def _big_registry(rows: int) -> tuple[ToolRegistry, list[str]]:
    registry = ToolRegistry()
    verbs = ["get", "list", "create", "update", "delete", "search", "read", "write"]
    words = [hashlib.sha256(str(i).encode()).hexdigest()[:10] for i in range(rows)]
    names = [f"srv{i % 30}__{verbs[i % 8]}_{words[i]}" for i in range(rows)]
    for name in names:
        registry.register_hosted(name, {"type": "web_search"})
    registry.register(add)
    return registry, [*names, "add"]


MISTAKES: dict[str, Callable[[str], str]] = {
    "dropped": lambda name: name[:9] + name[10:],
    "added": lambda name: name[:-3] + "q" + name[-3:],
    "replaced at the end": lambda name: name[:-1] + ("x" if name[-1] != "x" else "y"),
    "swapped": lambda name: name[:7] + name[8] + name[7] + name[9:],
    "prefix dropped": lambda name: name.split("__", 1)[1],
    "another prefix": lambda name: "other__" + name.split("__", 1)[1],
    "case and separators": lambda name: name.upper().replace("_", "-"),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_suggestions_on_a_big_catalog_find_the_usual_mistakes(mistake: str) -> None:
    registry, names = _big_registry(20_000)
    snapshot = registry.snapshot()
    for meant in names[1234::4321]:
        asked = MISTAKES[mistake](meant)
        assert asked not in names
        assert meant in snapshot._missing(asked).suggestions, (asked, meant)
    assert snapshot._missing("ad").suggestions == ("add",)


def test_unknown_names_on_a_50000_row_catalog_cost_little() -> None:
    """20 unknown names took about 20 s at 50,000 rows (difflib over every name); now the
    names are indexed once per catalog version. The bound is a sanity bound, not a benchmark
    (bench/unknown_names.py measures): well under a millisecond per name after the index."""
    registry, names = _big_registry(50_000)
    snapshot = registry.snapshot()
    asked = [MISTAKES["replaced at the end"](name) for name in names[: -1 : len(names) // 20]]
    start = time.perf_counter()
    for name in asked:
        assert snapshot._missing(name).suggestions
    for name in asked:
        registry.snapshot()._missing(name)  # a new snapshot of the same catalog reuses the index
    assert time.perf_counter() - start < 10.0


def test_the_index_follows_the_catalog() -> None:
    registry = ToolRegistry()
    registry.register(add)
    assert registry._missing("ad").suggestions == ("add",)
    registry.register_hosted("adx", {"type": "web_search"})
    assert set(registry._missing("ad").suggestions) == {"add", "adx"}
    registry.unregister("add")
    assert registry._missing("ad").suggestions == ("adx",)
    frozen = registry.snapshot()
    registry.register_hosted("ade", {"type": "web_search"})
    assert frozen._missing("ad").suggestions == ("adx",)  # a snapshot keeps its own names


def test_tool_not_found_error_still_takes_a_plain_list_of_names() -> None:
    missing = ToolNotFoundError("serch", ["search", "fetch"])
    assert missing.suggestions == ("search",) and missing.name == "serch"
    assert ToolNotFoundError(None, ["search"]).suggestions == ()


def _hosted_registry(names: list[str]) -> ToolRegistry:
    registry = ToolRegistry()
    for name in names:
        registry.register_hosted(name, {"type": "web_search"})
    return registry


def _names(rows: int, salt: str = "") -> list[str]:
    verbs = ["get", "list", "create", "update", "delete", "search", "read", "write"]
    words = [hashlib.sha256(f"{salt}{i}".encode()).hexdigest()[:10] for i in range(rows)]
    return [f"srv{i % 30}__{verbs[i % 8]}_{words[i]}" for i in range(rows)]


async def test_the_first_unknown_name_after_a_change_indexes_only_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexing every name again after each change cost ~0.2 s at 50,000 rows; the new
    version's index is derived from the last one, so its work follows the change, not the catalog."""
    from toolmesh._core import suggest

    names = _names(5_000)
    registry = _hosted_registry(names)
    assert (await registry.dispatch("srv0__get_nothing", "{}")).error is not None  # the first index: every name
    keyed = 0
    real_key = suggest._key

    def counting_key(name: str) -> str:
        nonlocal keyed
        keyed += 1
        return real_key(name)

    monkeypatch.setattr(suggest, "_key", counting_key)
    registry.register_hosted("srv0__brand_new_tool", {"type": "web_search"})
    registry.unregister(names[7])
    result = await registry.dispatch("srv0__brand_new_tol", "{}")
    assert "srv0__brand_new_tool" in result.presentation.as_text()
    assert keyed < 50, f"{keyed} names keyed for a change of two"
    gone = await registry.dispatch(names[7][:-1], "{}")
    assert names[7] not in gone.presentation.as_text()


def test_a_derived_index_suggests_what_a_fresh_one_does() -> None:
    before, after = _names(3_000), _names(3_000)
    for name in _names(40, salt="new"):  # new names, some near the old ones
        after.append(name)
    del after[100:160]  # gone
    after[200] = after[200].upper()  # the same up to case: another name, the same key
    old_others = {f"tool_{i}": name for i, name in enumerate(before[:500])}
    kept = set(after)
    new_others = {other: name for other, name in old_others.items() if name in kept and int(other[5:]) % 7}
    new_others.update({f"tool_{i}": name for i, name in enumerate(after[-40:], start=1_000)})
    queries = [
        *(name[:-1] for name in before[90:230:3]),  # typos of kept, gone and changed names
        *(name.split("__", 1)[1] for name in after[-40:]),  # new names without their prefix
        *(f"tool_{i}" for i in [*range(0, 500, 9), *range(1_000, 1_040, 3)]),  # other names, some gone
        *(name[:5] + name[6:] for name in after[::97]),
    ]
    from toolmesh._core.suggest import NameIndex

    previous = NameIndex(before, old_others)
    for query in queries[::5]:
        previous.suggest(query)  # build it, with the thirds of the lengths the queries meet
    derived = NameIndex(after, new_others, previous=previous)
    fresh = NameIndex(after, new_others)
    for query in queries:
        assert derived.suggest(query) == fresh.suggest(query), query
    assert derived._by_key is not None and previous._by_key is not None
    shared = [key for key, bucket in derived._by_key.items() if previous._by_key.get(key) is bucket]
    assert len(shared) > 2_000  # derived: the unchanged buckets are the previous index's own
    rebuilt = NameIndex(before, old_others)
    for query in queries:  # and deriving changed nothing of the previous index
        assert previous.suggest(query) == rebuilt.suggest(query), query
