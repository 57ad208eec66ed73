"""What an unknown tool name costs on a big catalog: the not-found result and its suggestions.

Run:  .venv/bin/python bench/unknown_names.py [--rows 50000] [--calls 2000]

A model that calls a name the catalog lacks gets a ``not_found`` result with up to
three close names. ``difflib.get_close_matches`` over every name costs about 18 µs
per name, so before the names were indexed one unknown name took 0.9 s at 50,000
rows and 20 of them stalled the event loop for 30 s. This prints, for a catalog of
``--rows`` hosted rows named like MCP tools (``server__verb_noun_word``):

1. the one-off cost of indexing the names (paid on the first unknown name after the
   catalog changed, once per catalog version);
2. the cost per unknown name afterwards, through ``ToolSnapshot.dispatch``, for typos,
   dropped server prefixes and names with no close match (best of 3 rounds);
3. a turn of 20 unknown calls at once through ``run_tool_calls``, then the same turn
   right after the catalog changed (the index is built again inside it);
4. the first unknown name right after a change of one row, and of 500 rows (1%), through
   ``ToolRegistry.dispatch``: the new version's index is derived from the last one (before
   that, every name was indexed again: ~0.2 s at 50,000 rows), best of 5, with the longest
   event-loop stall meanwhile;
5. for reference, ``difflib.get_close_matches`` over all the names for one query.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import random
import resource
import time

import anyio
import anyio.abc

from toolmesh import ToolCall, ToolRegistry, run_tool_calls

_VERBS = ["get", "list", "create", "update", "delete", "search", "read", "write", "fetch", "run"]
_NOUNS = ["issue", "file", "user", "repo", "comment", "page", "record", "event", "table", "branch"]


def _names(rows: int) -> list[str]:
    words = [hashlib.sha256(str(i).encode()).hexdigest()[:6] for i in range(rows)]
    return [f"srv{i % 40}__{_VERBS[i % 10]}_{_NOUNS[(i // 10) % 10]}_{words[i]}" for i in range(rows)]


def _queries(names: list[str], count: int) -> list[str]:
    chooser = random.Random(7)
    queries = []
    for i in range(count):
        name = chooser.choice(names)
        match i % 4:
            case 0:  # a dropped character
                at = chooser.randrange(len(name))
                queries.append(name[:at] + name[at + 1 :])
            case 1:  # two characters swapped
                at = chooser.randrange(len(name) - 1)
                queries.append(name[:at] + name[at + 1] + name[at] + name[at + 2 :])
            case 2:  # the server prefix dropped
                queries.append(name.split("__", 1)[1])
            case _:  # nothing like any name
                queries.append(f"frobnicate_{chooser.randrange(10**9)}")
    return [q for q in queries if q not in set(names)]


class _StallMeter:
    """The longest the event loop went without running a 1 ms ticker, while ``async with`` runs."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._group: anyio.abc.TaskGroup | None = None

    async def _tick(self) -> None:
        last = time.perf_counter()
        while True:
            await anyio.sleep(0.001)
            now = time.perf_counter()
            self.longest = max(self.longest, now - last)
            last = now

    async def __aenter__(self) -> _StallMeter:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._tick)
        await anyio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._group is not None
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _main(rows: int, calls: int) -> None:
    rss_start = _peak_rss_mb()
    registry = ToolRegistry()
    names = _names(rows)
    for name in names:
        registry.register_hosted(name, {"type": "web_search"})
    queries = _queries(names, calls)

    snapshot = registry.snapshot()
    rss_rows = _peak_rss_mb()
    async with _StallMeter() as meter:
        start = time.perf_counter()
        first = await snapshot.dispatch(queries[0], "{}")
        build = time.perf_counter() - start
    print(
        f"{rows} rows; first unknown name (indexes the names, in a worker thread): {build * 1000:.1f} ms, "
        f"longest event-loop stall meanwhile {meter.longest * 1000:.1f} ms"
    )
    print(
        f"peak RSS: {rss_start:.0f} MB at start, {rss_rows:.0f} MB with the rows, "
        f"{_peak_rss_mb():.0f} MB with the name index"
    )
    print(f"  e.g. {first.presentation.as_text()}")

    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for query in queries:
            await snapshot.dispatch(query, "{}")
        best = min(best, (time.perf_counter() - start) / len(queries))
    print(f"per unknown name afterwards: {best * 1e6:.0f} µs (best of 3 rounds of {len(queries)} names)")

    turn = [ToolCall(f"c{i}", query) for i, query in enumerate(queries[:20])]
    start = time.perf_counter()
    await run_tool_calls(registry.snapshot(), turn)
    print(f"a turn of 20 unknown calls: {(time.perf_counter() - start) * 1000:.1f} ms")
    registry.register_hosted("one_more", {"type": "web_search"})  # a new catalog version
    async with _StallMeter() as meter:
        start = time.perf_counter()
        await run_tool_calls(registry.snapshot(), turn)
        took = time.perf_counter() - start
    print(
        f"the same turn right after the catalog changed (indexes again): {took * 1000:.1f} ms, "
        f"longest event-loop stall meanwhile {meter.longest * 1000:.1f} ms"
    )

    for changed in (1, 500):
        took, stall = float("inf"), 0.0
        for round_ in range(5):
            for i in range(changed):
                registry.register_hosted(f"added_{changed}_{round_}_{i}", {"type": "web_search"})
            async with _StallMeter() as meter:
                start = time.perf_counter()
                await registry.dispatch(queries[round_], "{}")
                took = min(took, time.perf_counter() - start)
            stall = max(stall, meter.longest)
        print(
            f"first unknown name after a change of {changed} row{'s' * (changed > 1)}: {took * 1000:.1f} ms "
            f"(best of 5), longest event-loop stall meanwhile {stall * 1000:.1f} ms"
        )

    start = time.perf_counter()
    difflib.get_close_matches(queries[0], names, n=3, cutoff=0.7)
    print(f"reference, difflib.get_close_matches over all {rows} names: {(time.perf_counter() - start) * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--calls", type=int, default=2_000)
    args = parser.parse_args()
    anyio.run(_main, args.rows, args.calls)


if __name__ == "__main__":
    main()
