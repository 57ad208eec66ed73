"""One row whose name a provider rejects leaves only that row out of the declarations, and says so."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from _mcp import lowlevel_stdio
from toolmesh import NamePolicy, ToolRegistry, tool
from toolmesh.providers import (
    UnsupportedToolError,
    _common,
    anthropic,
    gemini,
    openai,
    openai_responses,
    rejected_names,
)


@pytest.fixture(autouse=True)
def _fresh_warnings() -> None:
    """Each rejected name is warned about once per process; every test here starts afresh."""
    _common._warned.clear()


LONG = "t" * 300
"""A server tool name no provider accepts (MCP allows 128 characters, OpenAI and Gemini 64)."""


@tool
async def add(x: int, y: int = 0) -> int:
    """Add two integers."""
    return x + y


def declared_names(provider: str, catalog: Any, **options: Any) -> list[str]:
    if provider == "openai":
        return [item["function"]["name"] for item in openai.tools(catalog, **options)]
    if provider == "openai_responses":
        return [item["name"] for item in openai_responses.tools(catalog, **options)]  # type: ignore[typeddict-item]
    if provider == "anthropic":
        return [item["name"] for item in anthropic.tools(catalog, **options)]
    (declared,) = gemini.tools(catalog, **options)
    return [function.name or "" for function in declared.function_declarations or ()]  # type: ignore[union-attr]


RULES = {"openai": "openai", "openai_responses": "openai", "anthropic": "anthropic", "gemini": "gemini"}


def catalog_with_bad_rows() -> ToolRegistry:
    """The default (MCP) naming rule allows 128 characters and dots: fine for MCP, not for every provider."""
    registry = ToolRegistry()
    registry.register(add)
    registry.register(add, name="x" * 100)  # too long for OpenAI and Gemini
    registry.register(add, name="docs.search")  # a dot: OpenAI and Anthropic refuse it
    registry.register(add, name="z" * 128)  # too long for everyone but Anthropic and MCP
    return registry


EXPECTED_LEFT_OUT = {
    "openai": ["x" * 100, "docs.search", "z" * 128],
    "openai_responses": ["x" * 100, "docs.search", "z" * 128],
    "anthropic": ["docs.search"],
    "gemini": ["x" * 100, "z" * 128],
}


@pytest.mark.parametrize("provider", list(RULES))
def test_only_the_rows_with_rejected_names_are_left_out_with_one_warning_each(
    provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    registry = catalog_with_bad_rows()
    left_out = EXPECTED_LEFT_OUT[provider]
    with caplog.at_level(logging.WARNING, logger="toolmesh.providers"):
        names = declared_names(provider, registry.snapshot())
        assert declared_names(provider, registry.snapshot()) == names  # the next turn: same, no new warning
    assert names == [name for name in registry.names() if name not in left_out]
    warnings = [record.getMessage() for record in caplog.records if record.name == "toolmesh.providers"]
    assert len(warnings) == len(left_out)
    for name, text in zip(left_out, warnings, strict=True):
        assert repr(name) in text and "left out of the declarations" in text
        assert f"NamePolicy(provider={RULES[provider]!r})" in text
    assert list(rejected_names(registry, RULES[provider])) == left_out


@pytest.mark.parametrize("provider", list(RULES))
def test_invalid_names_raise_refuses_the_catalog_naming_the_row(provider: str) -> None:
    with pytest.raises(UnsupportedToolError, match=r"is not valid for .*NamePolicy\(provider="):
        declared_names(provider, catalog_with_bad_rows(), invalid_names="raise")


def test_rejected_names_is_empty_for_a_valid_catalog_and_refuses_unknown_providers() -> None:
    registry = ToolRegistry()
    registry.register(add)
    assert rejected_names(registry, "openai") == {}
    with pytest.raises(ValueError, match="unknown provider 'cohere'"):
        rejected_names(registry, "cohere")


Declare = Callable[[Any], list[str]]

NOT_SECRET_LONG = LONG + ","
"""The env value that lists the long tool: not the name itself, since a configured env value is a
secret, and a tool whose name holds a secret is left out of the catalog (tests/test_mcp_secrets.py)."""


async def test_a_300_character_server_tool_name_connects_and_only_that_row_is_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with anyio.fail_after(60):
        async with ToolRegistry() as registry:
            await registry.connect(lowlevel_stdio("low", {"FIXTURE_EXTRA_TOOLS": NOT_SECRET_LONG}))
            (row,) = [entry for entry in registry.entries() if getattr(entry, "wire_name", None) == LONG]
            assert len(row.name) == 128 and row.name.startswith("low__ttt")
            result = await registry.dispatch(row.name, {"q": "hi"})
            assert result.ok and result.presentation.as_text() == f"{LONG} q=hi"
            with caplog.at_level(logging.WARNING, logger="toolmesh.providers"):
                names = declared_names("openai", registry)
            assert row.name not in names and "low__echo" in names
            assert len(names) == len(registry) - 1
            assert any(row.name in record.getMessage() for record in caplog.records)
            assert anthropic.tools(registry)[-1]["name"] == row.name  # 128 characters: fine for Anthropic

        # The provider's own rule names the row when it is added: nothing is left out.
        async with ToolRegistry(names=NamePolicy(provider="openai")) as registry:
            await registry.connect(lowlevel_stdio("low", {"FIXTURE_EXTRA_TOOLS": NOT_SECRET_LONG}))
            (row,) = [entry for entry in registry.entries() if getattr(entry, "wire_name", None) == LONG]
            assert len(row.name) == 64
            assert declared_names("openai", registry) == registry.names()
            assert (await registry.dispatch(row.name, {"q": "hi"})).presentation.as_text() == f"{LONG} q=hi"
