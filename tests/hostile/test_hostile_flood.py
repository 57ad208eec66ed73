"""A 2025-11-25 stdio server that floods ``notifications/tools/list_changed`` while calls run.

The raw server (servers/raw_server.py) announces a change every 2 ms, ``HOSTILE_FLOOD_COUNT``
times, then lists one more tool (``late``), announces it once more and notes ``flood-done``
among the requests it was sent (``HOSTILE_REQUESTS``). Refreshes caused by announcements
coalesce: one in flight and one pending per server, started at least a second after the
previous one ended, so the flood costs a listing a second, not one per announcement, and
calls go on beside it. Call latency under the flood is measured in bench/listing.py.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio
from _hostile import RAW_TOOLS, raw_stdio

from _mcp import child_pids
from toolmesh import ToolRegistry

REFRESH_GAP = 1.0
"""Seconds between the end of a refresh caused by announcements and the start of the next (toolmesh's own)."""


async def test_a_list_changed_flood_costs_a_listing_a_second_and_calls_go_on(tmp_path: Path) -> None:
    before, requests = child_pids(), tmp_path / "requests"
    env = {
        "HOSTILE_REQUESTS": str(requests),
        "HOSTILE_FLOOD": "0.002",
        "HOSTILE_FLOOD_COUNT": "1000",
        "HOSTILE_TOOLS": "50",
    }
    async with ToolRegistry() as registry:
        late = anyio.Event()
        registry.on_change(lambda change: late.set() if "raw__late" in change.added else None)
        with anyio.fail_after(60):
            await registry.connect(raw_stdio(env=env))
        start, calls = time.perf_counter(), 0
        with anyio.fail_after(120):
            while "flood-done" not in requests.read_text():
                result = await registry.dispatch("raw__echo", {"text": str(calls)})
                assert result.ok and result.output.as_text() == str(calls), result.error
                calls += 1
            elapsed = time.perf_counter() - start
            await late.wait()  # the announcement after the flood is not lost in the coalescing
        listings = requests.read_text().splitlines().count("tools/list") - 1  # after the connect's own
        assert [row.wire_name for row in registry.entries()][: len(RAW_TOOLS) + 1] == [*RAW_TOOLS, "late"]
    assert listings <= calls + 2, (listings, calls)
    assert listings <= 3 + elapsed / REFRESH_GAP, (listings, elapsed)  # one per gap, plus the first and the last
    assert child_pids() - before == set()
