"""Catalog scale (issue 13): a refresh rebuilds only what changed; schemas compile at a row's first call."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from _mcp import lowlevel_in_process
from toolmesh import CatalogChange, McpEntry, ToolRegistry
from toolmesh._rows import rows as _entries

TOOLS = {"FIXTURE_MANY_TOOLS": "40", "FIXTURE_MUTATE_SILENT": "1"}


async def test_a_refresh_that_changes_nothing_keeps_every_row_and_reports_nothing() -> None:
    seen: list[CatalogChange] = []
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(lowlevel_in_process("low", TOOLS))
            before = {row.name: row for row in registry.entries()}
            registry.on_change(seen.append)
            after = await registry.refresh("low")
        assert [row.name for row in after] == list(before)
        assert all(registry[name] is row for name, row in before.items())  # the same objects: nothing rebuilt
        assert seen == []


async def test_a_refresh_builds_new_rows_only_for_changed_and_new_tools() -> None:
    seen: list[CatalogChange] = []
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(lowlevel_in_process("low", TOOLS))
            before = {row.name: row for row in registry.entries()}
            for arguments in ({"name": "item_0003", "description": "Changed."}, {"name": "fresh"}):
                assert (await registry.dispatch("low__mutate", arguments)).ok
            registry.on_change(seen.append)
            await registry.refresh("low")
        changed = registry["low__item_0003"]
        assert changed is not before["low__item_0003"] and changed.definition.description == "Changed."
        assert registry.names()[-1] == "low__fresh"
        kept = [name for name in before if name != "low__item_0003"]
        assert all(registry[name] is before[name] for name in kept)
        assert seen == [CatalogChange("low", added=("low__fresh",), changed=("low__item_0003",))]


async def test_schemas_compile_at_a_rows_first_call_once(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[tuple[str, str]] = []
    real = _entries.compile_schema

    def counting(schema: Any, *, server: str, tool: str, what: str) -> Any:
        compiled.append((tool, what))
        return real(schema, server=server, tool=tool, what=what)

    monkeypatch.setattr(_entries, "compile_schema", counting)
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(lowlevel_in_process("low", TOOLS))
            assert compiled == []  # discovery compiles nothing
            bad = await registry.dispatch("low__item_0001", {"x": "one"})
            assert compiled == [("item_0001", "inputSchema")]
            assert bad.error is not None and "x: 'one' is not of type 'integer'" in bad.error.model_feedback
            good = await registry.dispatch("low__item_0001", {"x": 1})
            assert good.ok, good.error
            await registry.dispatch("low__item_0001", {"x": 2})
            await registry.refresh("low")
            await registry.dispatch("low__item_0001", {"x": 3})
        row = registry["low__item_0001"]
        assert isinstance(row, McpEntry) and row.input_validator is not None
    assert compiled == [("item_0001", "inputSchema")]  # neither later calls nor a refresh compile it again


async def test_discovery_leaves_definitions_and_capabilities_to_their_first_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolmesh._rows import mcp_convert as _convert

    made: list[tuple[str, str]] = []
    definition, capabilities = _convert.tool_definition, _convert.tool_capabilities

    def counting_definition(name: str, tool: Any) -> Any:
        made.append(("definition", tool.name))
        return definition(name, tool)

    def counting_capabilities(tool: Any, *, modern: bool = False) -> Any:
        made.append(("capabilities", tool.name))
        return capabilities(tool, modern=modern)

    monkeypatch.setattr(_convert, "tool_definition", counting_definition)
    monkeypatch.setattr(_convert, "tool_capabilities", counting_capabilities)
    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(lowlevel_in_process("low", TOOLS))
        assert made == []  # discovery made neither
        row = registry["low__item_0002"]
        assert row.definition is row.definition and row.definition.name == "low__item_0002"
        assert row.capabilities.title == "item_0002" and row.capabilities is row.capabilities
        assert made == [("definition", "item_0002"), ("capabilities", "item_0002")]  # once each, then kept
        assert (await registry.dispatch("low__item_0003", {"x": 1})).ok
        assert ("definition", "item_0003") in made  # a call reads its row's definition (the parameters)
        exported = registry.snapshot().definitions()
        assert len(exported) == len(registry.names()) and made.count(("definition", "item_0003")) == 1


async def test_rows_built_at_discovery_equal_the_dataclass_constructors() -> None:
    """Discovery builds rows field by field (``slot_constructor``): the same rows as keyword construction."""
    from toolmesh import ToolCapabilities, ToolDefinition
    from toolmesh._rows.mcp_convert import tool_capabilities, tool_title

    async with ToolRegistry() as registry:
        with anyio.fail_after(60):
            await registry.connect(lowlevel_in_process("low", TOOLS, call_timeout=7))
        row = registry["low__bad_output"]
        assert isinstance(row, McpEntry)
        tool = row.tool
        assert row.definition == ToolDefinition(
            "low__bad_output", tool.description or "", tool.input_schema, tool.output_schema
        )
        assert (
            row.definition._declarations == {}
            and row.definition._declarations is not registry["low__echo"].definition._declarations
        )
        assert tool_capabilities(tool) == ToolCapabilities(
            task_support=row.capabilities.task_support, output_schema=tool.output_schema, title=tool_title(tool)
        )
        rebuilt = McpEntry(
            row.name,
            row.definition,
            row.capabilities,
            "low",
            "bad_output",
            tool,
            row.caller,
            7,
            max_presentation_chars=row.max_presentation_chars,
            validate_arguments=True,
            protocol_version=row.caller.protocol_version,  # type: ignore[attr-defined]
        )
        assert row == rebuilt and row.validate_arguments and row.timeout == 7


def test_a_rows_capabilities_follow_the_protocol_it_was_listed_on_whenever_they_are_read() -> None:
    """A reconnect may speak another version: rows read late still answer for their listing, and a refresh on
    the other version builds new rows."""
    import mcp_types

    from toolmesh import NamePolicy, TaskSupport
    from toolmesh.mcp import McpServer
    from toolmesh.mcp._client.tool_listing import build_rows

    class Session:  # only its protocol version is read; nothing is called
        protocol_version = "2026-07-28"

    session = Session()
    spec = McpServer.http("s", "http://127.0.0.1:9/mcp")
    tools = [mcp_types.Tool(name=f"t{i}", input_schema={"type": "object"}) for i in range(2)]
    modern = build_rows(spec, tools, NamePolicy(), {}, session)  # type: ignore[arg-type]
    assert modern[0].capabilities.task_support is None
    session.protocol_version = "2025-11-25"
    assert modern[1].capabilities.task_support is None  # first read after the version changed: as listed
    relisted = build_rows(spec, tools, NamePolicy(), {}, session, {row.wire_name: row for row in modern})  # type: ignore[arg-type]
    assert all(new is not old for new, old in zip(relisted, modern, strict=True))
    assert [row.capabilities.task_support for row in relisted] == [TaskSupport.FORBIDDEN] * 2
    again = build_rows(spec, tools, NamePolicy(), {}, session, {row.wire_name: row for row in relisted})  # type: ignore[arg-type]
    assert all(new is old for new, old in zip(again, relisted, strict=True))  # same version, same tools: kept


async def test_rows_of_every_family_are_hashable_by_family_and_name() -> None:
    async def add(x: int) -> int:
        return x

    async def handler(arguments: dict[str, Any]) -> str:
        return "ok"

    async with ToolRegistry() as registry:
        registry.register(add)
        registry.register_dynamic("dyn", {"type": "object"}, handler)
        registry.register_hosted("web_search", {"type": "web_search"})
        with anyio.fail_after(60):
            await registry.connect(lowlevel_in_process("low", TOOLS))
        rows = registry.entries()
        assert {row.kind for row in rows} == {"native", "dynamic", "hosted", "mcp"}
        counts = {row: 0 for row in rows}  # rows as keys: their schemas are dicts, their hash is family and name
        assert len(counts) == len(rows) and all(hash(row) == hash((row.kind, row.name)) for row in rows)
        again = {row.name: row for row in registry.entries()}
        assert all(again[row.name] in counts for row in rows)
