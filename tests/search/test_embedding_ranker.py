"""EmbeddingRanker: any embedding model as a host ranker, two views per row, embedded once, answers checked."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

import anyio
import numpy as np
import pytest
from _catalog import make_registry

from toolmesh import (
    AsyncEmbeddingRanker,
    DeferPolicy,
    EmbeddingError,
    EmbeddingRanker,
    ToolCall,
    ToolRegistry,
    run_tool_calls,
)
from toolmesh._search.embedding import row_views
from toolmesh._search.words import MAX_QUERY_CHARS

CONCEPTS = {
    "weather": ("weather", "forecast", "rain", "umbrella", "sunny"),
    "code": ("pull", "request", "repository", "branch", "merge", "changes"),
    "mail": ("email", "message", "inbox", "letter", "subject"),
    "numbers": ("add", "integers", "sum", "total"),
    "calendar": ("calendar", "event", "meeting", "appointment"),
}


class ConceptModel:
    """A tiny embedding model: a text's vector counts its words per concept (so "umbrella"
    means weather though no tool says it). Records every batch it is given."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        vectors = []
        for text in texts:
            words = text.lower().replace(".", " ").split()
            vector = [float(sum(word in group for word in words)) for group in CONCEPTS.values()]
            vectors.append([*vector, 0.01])  # never the zero vector
        return vectors

    @property
    def texts(self) -> list[str]:
        return [text for batch in self.batches for text in batch]


def test_a_query_in_words_no_tool_uses_is_found_by_meaning() -> None:
    model = ConceptModel()
    registry = make_registry(ranker=EmbeddingRanker(model))
    assert make_registry().search("do I need an umbrella") == []  # no word in common
    matches = registry.search("do I need an umbrella")
    assert matches[0].name == "get_weather_forecast"
    assert registry.search("a letter for Bob")[0].name == "send_email"


def test_each_row_has_two_views_and_scores_by_the_better_one() -> None:
    registry = make_registry()
    does, takes = row_views(registry["calendar__create_event"])
    assert does.startswith("calendar create event. ") and "Put a new event in the calendar" in does
    assert takes == "calendar create event. title What the meeting is about"
    registry.register_dynamic(
        "put_entry",
        {"type": "object", "properties": {"when": {"type": "string", "description": "the day of the appointment"}}},
        _sent,
        description="Put a new entry.",
    )
    ranker = EmbeddingRanker(ConceptModel())
    scores = ranker("meeting", list(registry.snapshot()))
    # "appointment" is only in put_entry's parameter: its second view scores it, as high as a row
    # whose description says "calendar"
    assert scores["put_entry"] == pytest.approx(1.0, abs=1e-3)
    assert scores["calendar__create_event"] == pytest.approx(1.0, abs=1e-3)
    assert scores["add"] < 0.1


async def _sent(arguments: object) -> str:
    return "sent"


def test_rows_are_embedded_once_and_a_changed_row_again() -> None:
    model = ConceptModel()
    ranker = EmbeddingRanker(model, batch_size=3)
    registry = make_registry(ranker=ranker)
    ranker.embed_rows(list(registry.snapshot()))
    first = model.texts
    assert len(first) == 10 and all(len(batch) <= 3 for batch in model.batches)  # 5 rows, 2 views
    assert [len(text) for text in first] == sorted(len(text) for text in first)  # shortest first
    registry.search("umbrella")
    registry.search("umbrella again")
    assert model.texts[len(first) :] == ["umbrella", "umbrella again"]  # only the queries
    registry.unregister("send_email")
    registry.register_dynamic("send_email", {"type": "object"}, _sent, description="Mail it to them.")
    model.batches.clear()
    registry.search("umbrella")
    assert sorted(model.texts[:-1]) == sorted(row_views(registry["send_email"]))  # the changed row only
    assert model.texts[-1] == "umbrella"


def test_a_hostile_query_reaches_the_model_bounded() -> None:
    model = ConceptModel()
    registry = make_registry(ranker=EmbeddingRanker(model))
    registry.search("(a+)+$ \x00\x1b[31m" + "umbrella " * 20_000)
    query = model.texts[-1]
    assert len(query) == MAX_QUERY_CHARS and query.startswith("(a+)+$")


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ([[1.0, 0.0]], "shape"),  # one vector for two texts
        ([[1.0, 0.0], [1.0, 0.0, 0.0]], "not vectors"),  # ragged
        ([[1.0, float("nan")], [1.0, 0.0]], "not finite"),
        ([[0.0, 0.0], [1.0, 0.0]], "zero"),
        ("vectors", "not vectors"),
        ([[]] * 2, "shape"),
    ],
)
def test_a_bad_answer_of_the_model_is_an_embedding_error(answer: object, words: str) -> None:
    ranker = EmbeddingRanker(lambda texts: answer)
    rows = list(make_registry().snapshot(active=["add"]))
    with pytest.raises(EmbeddingError, match=words):
        ranker.embed_rows(rows)


def test_a_model_that_changes_dimension_is_refused() -> None:
    sizes = iter([4, 3])
    ranker = EmbeddingRanker(lambda texts: np.ones((len(texts), next(sizes))))
    registry = make_registry()
    ranker.embed_rows(list(registry.snapshot(active=["add"])))
    with pytest.raises(EmbeddingError, match="3 numbers after vectors of 4"):
        ranker.embed_rows(list(registry.snapshot(active=["send_email"])))


def test_a_failing_model_leaves_the_lexical_ranking_and_the_registry_usable(caplog: pytest.LogCaptureFixture) -> None:
    answers: list[object] = [RuntimeError("model server down"), [[1.0]]]

    def flaky(texts: Sequence[str]) -> object:
        answer = answers.pop(0) if answers else [[1.0, 0.0]] * len(texts)
        if isinstance(answer, Exception):
            raise answer
        return answer

    registry = make_registry(ranker=EmbeddingRanker(flaky))
    with caplog.at_level(logging.ERROR, logger="toolmesh"):
        assert registry.search("forecast")[0].name == "get_weather_forecast"  # the model raised
        assert registry.search("forecast")[0].name == "get_weather_forecast"  # one vector for ten texts
    assert caplog.text.count("ranker failed") == 2 and "model server down" in caplog.text
    assert len(registry.search("forecast email", limit=5)) == 5  # then it works: every row ranked


def test_kept_vectors_are_bounded_by_what_is_searched() -> None:
    model = ConceptModel()
    ranker = EmbeddingRanker(model)
    big = ToolRegistry(ranker=ranker)
    for i in range(800):
        big.register_dynamic(f"tool_{i}", {"type": "object"}, _sent, description=f"Tool number {i}.")
    big.search("umbrella")
    small = make_registry(ranker=ranker)
    small.search("umbrella")
    small.search("umbrella")  # the kept vectors: now only the small catalog's
    model.batches.clear()
    ranker.embed_rows(list(big.snapshot()))
    assert len(model.texts) == 1600  # the big catalog's vectors were dropped


def test_numpy_missing_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)
    with pytest.raises(ImportError, match=r"toolmesh\[embeddings\]"):
        EmbeddingRanker(ConceptModel())


async def test_an_async_model_ranks_in_asearch_and_in_a_turns_search_row() -> None:
    model = ConceptModel()

    async def service(texts: Sequence[str]) -> list[list[float]]:
        await anyio.lowlevel.checkpoint()  # an embedding service's round trip
        return model(texts)

    registry = make_registry(DeferPolicy(), AsyncEmbeddingRanker(service), get_weather_forecast=True, add=True)
    assert (await registry.asearch("umbrella"))[0].name == "get_weather_forecast"
    snapshot = registry.snapshot()
    call = ToolCall.from_arguments("s", "search_tools", {"query": "do I need an umbrella"})
    with anyio.fail_after(10):
        (found,) = await run_tool_calls(snapshot, [call])
    assert found.ok and snapshot.found[0].name == "get_weather_forecast"


def test_an_async_model_given_to_the_sync_ranker_says_which_class_takes_it() -> None:
    async def embed(texts: Sequence[str]) -> list[list[float]]:
        return [[1.0] for _ in texts]

    with pytest.raises(TypeError, match="AsyncEmbeddingRanker"):
        EmbeddingRanker(embed)  # type: ignore[arg-type]


async def test_a_service_that_does_not_answer_in_time_leaves_the_lexical_ranking(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ConceptModel()
    hanging = anyio.Event()

    async def service(texts: Sequence[str]) -> list[list[float]]:
        if texts == ["forecast"]:
            await hanging.wait()  # never set: the service holds this query
        return model(texts)

    with pytest.raises(ValueError, match="timeout"):
        AsyncEmbeddingRanker(service, timeout=0)
    registry = make_registry(ranker=AsyncEmbeddingRanker(service, timeout=0.2))
    with anyio.fail_after(30), caplog.at_level(logging.ERROR, logger="toolmesh"):
        matches = await registry.asearch("forecast")
    assert matches[0].name == "get_weather_forecast" and len(matches) == 1  # the lexical ranking alone
    assert "within 0.2 s" in caplog.text
    assert (await registry.asearch("umbrella"))[0].name == "get_weather_forecast"  # then it ranks again
