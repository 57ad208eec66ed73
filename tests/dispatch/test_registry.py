"""ToolRegistry: typed rows, registration, collisions, introspection and snapshots."""

from __future__ import annotations

from typing import Any

import pytest

from toolmesh import (
    ConfigurationError,
    DynamicEntry,
    HostedEntry,
    NameCollisionError,
    NativeEntry,
    ToolContext,
    ToolNotFoundError,
    ToolRegistry,
    tool,
)


@tool
async def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


@tool
async def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"


async def echo_handler(arguments: dict[str, Any]) -> dict[str, Any]:
    return arguments


ECHO_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def test_register_returns_a_typed_native_row() -> None:
    registry = ToolRegistry()
    row = registry.register(add)
    assert isinstance(row, NativeEntry)
    assert row.kind == "native"
    assert row.function is add.fn
    assert row.args_model is add.args_model
    assert row.definition.name == "add"
    assert registry["add"] is row
    assert "add" in registry and len(registry) == 1


def test_plain_function_is_decorated_on_registration() -> None:
    def shout(text: str) -> str:
        """Shout it."""
        return text.upper()

    registry = ToolRegistry()
    row = registry.register(shout)
    assert row.definition.description == "Shout it."
    assert row.definition.parameters["required"] == ["text"]


def test_decorator_form_registers_and_returns_the_tool() -> None:
    registry = ToolRegistry()

    @registry.tool
    async def ping() -> str:
        return "pong"

    @registry.tool(name="pong2", description="Second.")
    async def pong() -> str:
        return "ping"

    assert registry.names() == ["ping", "pong2"]
    assert registry["pong2"].definition.description == "Second."


def test_entries_are_in_registration_order_and_definitions_follow() -> None:
    registry = ToolRegistry()
    registry.register(greet)
    registry.register_dynamic("echo", ECHO_SCHEMA, echo_handler, description="Echo.")
    registry.register(add)
    assert [row.name for row in registry.entries()] == ["greet", "echo", "add"]
    assert [d.name for d in registry.definitions()] == ["greet", "echo", "add"]
    assert [type(row) for row in registry] == [NativeEntry, DynamicEntry, NativeEntry]


def test_collision_names_both_rows_and_leaves_the_registry_unchanged() -> None:
    registry = ToolRegistry()
    registry.register(add)

    async def other(arguments: dict[str, Any]) -> str:
        return "x"

    with pytest.raises(NameCollisionError) as info:
        registry.register_dynamic("add", ECHO_SCHEMA, other)
    message = str(info.value)
    assert "Tool name 'add' is already taken by native tool 'add' (test_registry.add)" in message
    assert "cannot add dynamic tool 'add'" in message
    assert "replace=True" in message
    assert isinstance(registry["add"], NativeEntry)
    assert len(registry) == 1


def test_replace_true_replaces_in_place_keeping_the_position() -> None:
    registry = ToolRegistry()
    registry.register(greet)
    registry.register(add)
    registry.register_dynamic("greet", ECHO_SCHEMA, echo_handler, replace=True)
    assert registry.names() == ["greet", "add"]
    assert isinstance(registry["greet"], DynamicEntry)


def test_unknown_name_lookup_suggests_close_names() -> None:
    registry = ToolRegistry()
    registry.register(greet)
    with pytest.raises(ToolNotFoundError, match=r"Unknown tool 'gret'. Did you mean 'greet'\?"):
        registry["gret"]
    with pytest.raises(KeyError):
        registry["nothing"]
    assert registry.get("nothing") is None


def test_unregister_removes_and_returns_the_row() -> None:
    registry = ToolRegistry()
    row = registry.register(add)
    assert registry.unregister("add") is row
    assert "add" not in registry
    with pytest.raises(ToolNotFoundError, match="Unknown tool 'add'"):
        registry.unregister("add")


def test_invalid_names_are_refused_with_the_rule() -> None:
    registry = ToolRegistry()
    with pytest.raises(
        ConfigurationError, match=r"'has space' does not match the mcp tool-name rule .*as 'has_space' instead"
    ):
        registry.register(add, name="has space")
    assert len(registry) == 0


def test_dynamic_schema_must_be_a_valid_object_schema() -> None:
    registry = ToolRegistry()
    with pytest.raises(ConfigurationError, match=r'its schema must be a JSON Schema object with "type": "object"'):
        registry.register_dynamic("d", {"type": "array"}, echo_handler)
    with pytest.raises(ConfigurationError, match="invalid JSON Schema at properties/x/type"):
        registry.register_dynamic("d", {"type": "object", "properties": {"x": {"type": "strin"}}}, echo_handler)

    def sync_handler(arguments: dict[str, Any]) -> None:
        return None

    with pytest.raises(ConfigurationError, match="the handler must be an async function"):
        registry.register_dynamic("d", ECHO_SCHEMA, sync_handler)  # type: ignore[arg-type]
    assert len(registry) == 0


async def test_dynamic_tool_validates_against_its_schema_and_runs_the_handler() -> None:
    registry = ToolRegistry()
    registry.register_dynamic("echo", ECHO_SCHEMA, echo_handler)
    good = await registry.dispatch("echo", '{"text": "hi"}')
    assert good.output.structured == {"text": "hi"}
    assert good.kind == "dynamic"
    bad = await registry.dispatch("echo", '{"text": 5}')
    assert bad.error is not None and bad.error.kind == "invalid_arguments"
    assert bad.presentation.as_text() == (
        "Invalid arguments for tool 'echo': text: 5 is not of type 'string'. "
        "Expected parameters: text (string, required)."
    )
    missing = await registry.dispatch("echo", "{}")
    assert "text: missing required field" in missing.presentation.as_text()


async def test_dynamic_handler_may_take_the_context() -> None:
    async def whoami(arguments: dict[str, Any], ctx: ToolContext[str]) -> str:
        return ctx.deps

    registry = ToolRegistry()
    registry.register_dynamic("whoami", {"type": "object"}, whoami)
    result = await registry.dispatch("whoami", None, ctx=ToolContext(deps="ada"))
    assert result.output.as_text() == "ada"


async def test_hosted_row_is_advertised_but_never_dispatched_locally() -> None:
    registry = ToolRegistry()
    row = registry.register_hosted(
        "web_search", {"type": "web_search"}, description="Search the web.", provider="openai"
    )
    assert isinstance(row, HostedEntry)
    assert registry.definitions()[0].name == "web_search"
    result = await registry.dispatch("web_search", "{}")
    assert result.error is not None and result.error.kind == "not_found"
    assert result.presentation.as_text() == "The tool 'web_search' is not available to call here."
    with pytest.raises(ConfigurationError, match="provider_tool must be the provider's declaration with a 'type'"):
        registry.register_hosted("x", {})


async def test_snapshot_keeps_dispatching_the_rows_it_captured() -> None:
    registry = ToolRegistry()
    registry.register(greet)
    registry.register(add)
    snap = registry.snapshot()

    @tool(name="greet")
    async def greet_v2(name: str) -> str:
        return f"bonjour {name}"

    registry.register(greet_v2, replace=True)
    registry.unregister("add")
    assert (await snap.dispatch("greet", {"name": "ann"})).output.as_text() == "hello ann"
    assert (await snap.dispatch("add", {"x": 1, "y": 2})).output.structured == 3
    assert (await registry.dispatch("greet", {"name": "ann"})).output.as_text() == "bonjour ann"
    assert (await registry.dispatch("add", {"x": 1, "y": 2})).error is not None
    assert snap.names() == ["greet", "add"]


def test_snapshot_with_active_names_keeps_catalog_order_and_refuses_unknown_names() -> None:
    registry = ToolRegistry()
    registry.register(greet)
    registry.register(add)
    snap = registry.snapshot(active=["add", "greet"])
    assert snap.names() == ["greet", "add"]
    assert registry.snapshot(active=["add"]).names() == ["add"]
    with pytest.raises(ToolNotFoundError, match=r"Unknown tool 'ad'\. Did you mean 'add'"):
        registry.snapshot(active=["ad"])


async def test_registry_is_an_async_context_manager() -> None:
    async with ToolRegistry() as registry:
        registry.register(add)
        assert (await registry.dispatch("add", {"x": 1, "y": 1})).output.structured == 2
