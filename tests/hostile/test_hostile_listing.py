"""A server listing tens of thousands of tools over real stdio: refused (or cut) as early as each limit can tell.

The raw server (servers/raw_server.py) lists its own tools, then ``HOSTILE_TOOLS`` generated
ones, one page or pages of ``HOSTILE_PAGE_SIZE``, and notes every request it is sent
(``HOSTILE_REQUESTS``), so a test sees how much of the listing was asked for. With
``HOSTILE_UNREADABLE_FROM`` the generated tools past a point have no object schema: the SDK
cannot make a model of them, so a listing that reads them at all fails on them instead.
Peak memory and the event loop's stall are measured in bench/listing.py.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest
from _hostile import RAW_TOOLS as TOOLS
from _hostile import raw_stdio

from _mcp import child_pids, wait_until
from toolmesh import McpEntry, ServerConnectionError, ToolRegistry

MANY = 30_000
"""Generated tools: about 5 MB as one page."""


def _env(requests: Path, page_size: int = 0, **more: str) -> dict[str, str]:
    return {"HOSTILE_TOOLS": str(MANY), "HOSTILE_PAGE_SIZE": str(page_size), "HOSTILE_REQUESTS": str(requests), **more}


def _asked(requests: Path, method: str = "tools/list") -> int:
    return requests.read_text().splitlines().count(method) if requests.exists() else 0


def _rows(registry: ToolRegistry) -> list[str]:
    return [row.wire_name for row in registry.entries() if isinstance(row, McpEntry)]


async def _refused(registry: ToolRegistry, **options: Any) -> str:
    with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
        await registry.connect(raw_stdio(**options))
    return str(caught.value)


async def test_one_page_past_max_tools_is_refused_before_a_tool_of_it_is_read(tmp_path: Path) -> None:
    """Its tools past the 2,000th cannot be read: only a count made before reading any says max_tools."""
    before, requests = child_pids(), tmp_path / "requests"
    async with ToolRegistry() as registry:
        text = await _refused(registry, env=_env(requests, HOSTILE_UNREADABLE_FROM="2000"))
        assert f"tools/list has {MANY + len(TOOLS)} tools, more than max_tools=1000" in text
        assert "raise max_tools on the server spec" in text and 'on_too_many_tools="keep_first"' in text
        assert _asked(requests) == 1 and registry.entries() == []
    assert child_pids() - before == set()


async def test_keep_first_cuts_the_page_at_max_tools_and_reads_no_more(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before, requests = child_pids(), tmp_path / "requests"
    env = _env(requests, HOSTILE_UNREADABLE_FROM="100")
    async with ToolRegistry() as registry:
        with caplog.at_level(logging.WARNING, logger="toolmesh.mcp"), anyio.fail_after(60):
            await registry.connect(raw_stdio(env=env, max_tools=50, on_too_many_tools="keep_first"))
        assert _rows(registry) == [*TOOLS, *(f"t{i:05d}" for i in range(50 - len(TOOLS)))]
        assert _asked(requests) == 1
        result = await registry.dispatch("raw__echo", {"text": "still here"})
        assert result.ok, result.error
    (warning,) = [r.getMessage() for r in caplog.records if "max_tools=50" in r.getMessage()]
    assert f"lists {MANY + len(TOOLS)} tools" in warning and "keeping the first 50" in warning
    assert child_pids() - before == set()


@pytest.mark.parametrize("on_too_many_tools", ["error", "keep_first"])
async def test_listing_stops_at_the_page_that_takes_the_count_past_max_tools(
    tmp_path: Path, on_too_many_tools: str
) -> None:
    """Pages of 500: the third takes the count past 1,000, and no fourth page is asked for."""
    requests = tmp_path / "requests"
    options: dict[str, Any] = {"env": _env(requests, 500), "max_pages": 1000, "on_too_many_tools": on_too_many_tools}
    async with ToolRegistry() as registry:
        if on_too_many_tools == "error":
            text = await _refused(registry, **options)
            assert "tools/list has 1500 or more tools, more than max_tools=1000" in text
        else:
            with anyio.fail_after(60):
                await registry.connect(raw_stdio(**options))
            assert len(_rows(registry)) == 1000
        assert _asked(requests) == 3


@pytest.mark.parametrize("id_last", [False, True], ids=["id-first", "id-last"])
@pytest.mark.parametrize(
    ("options", "bound", "named"),
    [
        ({"max_page_bytes": 100_000}, "100000 bytes (max_page_bytes)", "raise max_page_bytes"),
        ({"max_tools": 4}, "1048576 bytes (max_tools * max_schema_bytes)", "raise max_page_bytes"),
    ],
    ids=["max_page_bytes", "derived"],
)
async def test_a_page_over_its_bound_in_bytes_is_refused_unread_and_the_bound_named(
    tmp_path: Path, options: dict[str, Any], bound: str, named: str, id_last: bool
) -> None:
    """About 5 MB in one page; its tools are all unreadable, so any reading of it would fail otherwise.

    A TypeScript server writes the answer's id last: then the line is known to answer the
    listing (the only request waiting) before its id arrives.
    """
    before, requests = child_pids(), tmp_path / "requests"
    env = _env(requests, HOSTILE_UNREADABLE_FROM="0", HOSTILE_ID_LAST="1" if id_last else "0")
    async with ToolRegistry() as registry:
        text = await _refused(registry, env=env, **options)
        assert f"a tools/list page is larger than {bound}, so it was not read" in text and named in text
        assert _asked(requests) == 1 and registry.entries() == []
    assert child_pids() - before == set()


@pytest.mark.parametrize("id_last", [False, True], ids=["id-first", "id-last"])
async def test_a_call_answered_while_a_listing_waits_keeps_the_bound_of_a_result(tmp_path: Path, id_last: bool) -> None:
    """Only the listing's answer is held to max_page_bytes: a 300 kB result arriving meanwhile is read whole."""
    requests = tmp_path / "requests"
    env = {
        "HOSTILE_REQUESTS": str(requests),
        "HOSTILE_HUGE_BYTES": str(300_000),
        "HOSTILE_LIST_DELAY": "1",
        "HOSTILE_ID_LAST": "1" if id_last else "0",
    }
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(raw_stdio(env=env, max_page_bytes=20_000))
            async with anyio.create_task_group() as group:
                group.start_soon(registry.refresh, "raw")
                await wait_until(lambda: _asked(requests) == 2, 30)  # the refresh's listing waits on the server
                result = await registry.dispatch("raw__huge", {})
        assert result.ok, result.error
        assert len(result.output.as_text()) == 300_000
        assert _rows(registry) == list(TOOLS)
