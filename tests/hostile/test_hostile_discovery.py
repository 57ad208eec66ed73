"""Discovery limits (max_tools, max_description_chars, max_schema_bytes) and connect's deadline."""

from __future__ import annotations

import logging
import time

import anyio
import pytest
from _hostile import raw_stdio

from _mcp import child_pids, lowlevel_in_process, lowlevel_stdio
from toolmesh import McpEntry, ServerConnectionError, ToolRegistry


def _rows(registry: ToolRegistry, label: str) -> list[McpEntry]:
    return [row for row in registry.entries() if isinstance(row, McpEntry) and row.server == label]


async def test_more_tools_than_max_tools_fails_connect_naming_the_limit() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(lowlevel_stdio(env={"FIXTURE_MANY_TOOLS": "30"}, max_tools=10))
        text = str(caught.value)
        assert "more than max_tools=10" in text and "raise max_tools" in text and "keep_first" in text
        assert _rows(registry, "low") == []
        await registry.connect(lowlevel_stdio(env={"FIXTURE_MANY_TOOLS": "30"}))
        assert len(_rows(registry, "low")) > 30
    assert child_pids() - before == set()


async def test_keep_first_keeps_max_tools_in_the_servers_order_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    before = child_pids()
    env = {"FIXTURE_MANY_TOOLS": "30", "FIXTURE_PAGE_SIZE": "4"}
    async with ToolRegistry() as registry:
        with caplog.at_level(logging.WARNING, logger="toolmesh.mcp"), anyio.fail_after(60):
            await registry.connect(lowlevel_stdio(env=env, max_tools=10, on_too_many_tools="keep_first"))
        everything = lowlevel_stdio("all", env=env)
        with anyio.fail_after(60):
            await registry.connect(everything)
        kept = [row.wire_name for row in _rows(registry, "low")]
        assert kept == [row.wire_name for row in _rows(registry, "all")][:10]
        assert any("max_tools=10" in record.getMessage() for record in caplog.records)
    assert child_pids() - before == set()


async def test_a_description_over_max_description_chars_fails_connect_naming_tool_and_limit() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(raw_stdio(env={"HOSTILE_LIST": "big_description"}))
        text = str(caught.value)
        assert "'wordy'" in text and "20000 characters" in text and "max_description_chars=16384" in text
        assert "raise max_description_chars" in text
        with anyio.fail_after(60):
            await registry.connect(raw_stdio(env={"HOSTILE_LIST": "big_description"}, exclude=["wordy"]))
        assert "raw__echo" in registry
    assert child_pids() - before == set()


async def test_a_schema_over_max_schema_bytes_fails_connect_naming_tool_and_limit() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        with anyio.fail_after(60), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(raw_stdio(env={"HOSTILE_LIST": "big_schema"}, max_schema_bytes=100_000))
        text = str(caught.value)
        assert "inputSchema of tool 'bulky'" in text and "max_schema_bytes=100000" in text
        assert "raise max_schema_bytes" in text
        with anyio.fail_after(60):
            await registry.connect(raw_stdio(env={"HOSTILE_LIST": "big_schema"}))  # 262144 by default
        assert "raw__bulky" in registry
    assert child_pids() - before == set()


@pytest.mark.parametrize("stubborn", [False, True], ids=["exits", "ignores-sigterm"])
async def test_connect_fails_at_its_deadline_when_tools_list_hangs(stubborn: bool) -> None:
    """The error comes at ``timeout``; the child's shutdown finishes in the background, before ``aclose()`` ends."""
    before = child_pids()
    timeout = 3.0
    env = {"HOSTILE_LIST": "hang", **({"HOSTILE_IGNORE_TERM": "1"} if stubborn else {})}
    async with ToolRegistry() as registry:
        start = time.perf_counter()
        with anyio.fail_after(timeout * 10), pytest.raises(ServerConnectionError) as caught:
            await registry.connect(raw_stdio(env=env, timeout=timeout))
        elapsed = time.perf_counter() - start
        assert "no answer within 3s while listing tools" in str(caught.value)
        # Before: timeout + 3.1 s (exits on stdin close), + 5.5 s (ignores SIGTERM).
        assert elapsed < timeout + 2.0, elapsed
        with anyio.fail_after(60):
            await registry.connect(raw_stdio("fine"))
        result = await registry.dispatch("fine__echo", {"text": "ok"})
        assert result.ok, result.error
    assert child_pids() - before == set()


async def test_max_tools_counts_the_tools_include_and_exclude_keep(caplog: pytest.LogCaptureFixture) -> None:
    env = {"FIXTURE_MANY_TOOLS": "30", "FIXTURE_PAGE_SIZE": "4"}
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(lowlevel_in_process("in", env, include=["item_002*"], max_tools=10))
        assert [row.wire_name for row in _rows(registry, "in")] == [f"item_{i:04d}" for i in range(20, 30)]
        first = lowlevel_in_process(
            "first", env, include=["item_002*"], exclude=["item_0021"], max_tools=5, on_too_many_tools="keep_first"
        )
        with caplog.at_level(logging.WARNING, logger="toolmesh.mcp"), anyio.fail_after(60):
            await registry.connect(first)
        kept = [row.wire_name for row in _rows(registry, "first")]
        assert kept == ["item_0020", "item_0022", "item_0023", "item_0024", "item_0025"]
        (warning,) = [record.getMessage() for record in caplog.records if "max_tools=5" in record.getMessage()]
        assert "or more tools that include/exclude keep" in warning and "matches none" not in caplog.text
        over = lowlevel_in_process("over", env, include=["item_00*"], max_tools=10)
        with anyio.fail_after(60), pytest.raises(ServerConnectionError, match="tools that include/exclude keep, more"):
            await registry.connect(over)


async def test_include_patterns_are_reported_unmatched_only_when_every_tool_was_listed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    env = {"FIXTURE_MANY_TOOLS": "30", "FIXTURE_PAGE_SIZE": "4"}
    async with ToolRegistry() as registry:
        with caplog.at_level(logging.WARNING, logger="toolmesh.mcp"), anyio.fail_after(60):
            cut = lowlevel_in_process(
                "cut", env, include=["item_000*", "item_002*"], max_tools=2, on_too_many_tools="keep_first"
            )
            await registry.connect(cut)  # listing stopped early: item_002* may match later pages
            assert "matches none" not in caplog.text
            await registry.connect(lowlevel_in_process("all", env, include=["item_000*", "nothing_*"]))
        unmatched = [record.getMessage() for record in caplog.records if "matches none" in record.getMessage()]
        assert unmatched == ["MCP server 'all': include pattern 'nothing_*' matches none of its tools"]
        assert [row.wire_name for row in _rows(registry, "cut")] == ["item_0000", "item_0001"]
