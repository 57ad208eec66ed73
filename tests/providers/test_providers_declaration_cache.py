"""A row's declaration is built once per (row, format options) and reused; what is handed out is safe to keep."""

from __future__ import annotations

import copy
import json
import logging
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from toolmesh import ToolRegistry
from toolmesh.providers import UnsupportedToolError, _common, anthropic, gemini, openai, openai_responses

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "Words to look for."},
        "labels": {"type": "array", "items": {"type": "string"}},
        "limit": {"type": "integer", "default": 20},
    },
    "required": ["query"],
}


async def _handler(arguments: dict[str, Any]) -> str:
    return ""


def _registry(description: str = "Search the issues.") -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_dynamic("search", SCHEMA, _handler, description=description)
    return registry


def _schema_part(provider: str, declaration: Any) -> Any:
    """The nested, cached part of one declaration: the parameters schema."""
    match provider:
        case "chat":
            return declaration["function"]["parameters"]
        case "responses":
            return declaration["parameters"]
        case "anthropic":
            return declaration["input_schema"]
    return declaration.parameters_json_schema


EXPORTS: dict[str, Callable[..., list[Any]]] = {
    "chat": openai.tools,
    "responses": openai_responses.tools,
    "anthropic": anthropic.tools,
    "gemini": lambda catalog, **options: gemini.tools(catalog, **options)[0].function_declarations,
}


@pytest.mark.parametrize("provider", sorted(EXPORTS))
def test_a_later_export_reuses_the_first_declaration(provider: str) -> None:
    snapshot = _registry().snapshot()
    first = EXPORTS[provider](snapshot)
    later = EXPORTS[provider](snapshot)
    assert later == first
    assert later[0] is not first[0]  # a fresh top level per turn
    assert _schema_part(provider, later[0]) is _schema_part(provider, first[0])  # built once


@pytest.mark.parametrize("provider", sorted(EXPORTS))
def test_a_replaced_row_gets_a_new_declaration(provider: str) -> None:
    registry = _registry("Search the issues.")
    before = EXPORTS[provider](registry)[0]
    registry.register_dynamic("search", SCHEMA, _handler, description="Search issues and pull requests.", replace=True)
    after = EXPORTS[provider](registry)[0]
    description = after["function"]["description"] if provider == "chat" else _get(after, "description")
    assert description == "Search issues and pull requests."
    assert _schema_part(provider, after) is not _schema_part(provider, before)


def _get(declaration: Any, key: str) -> Any:
    return declaration[key] if isinstance(declaration, dict) else getattr(declaration, key)


def test_strict_and_loose_declarations_are_cached_apart() -> None:
    snapshot = _registry().snapshot()
    for tools in (openai.tools, openai_responses.tools):
        strict = tools(snapshot, strict=True)
        loose = tools(snapshot)
        again = tools(snapshot, strict=True)
        assert again == strict and loose != strict
        strict_params = strict[0]["function"]["parameters"] if tools is openai.tools else strict[0]["parameters"]
        loose_params = loose[0]["function"]["parameters"] if tools is openai.tools else loose[0]["parameters"]
        assert strict_params["additionalProperties"] is False and strict_params["required"] == [
            "query",
            "labels",
            "limit",
        ]
        assert loose_params == SCHEMA


@pytest.mark.parametrize("provider", ["chat", "responses", "anthropic"])
def test_cached_parts_are_read_only_and_the_top_level_is_the_callers(provider: str) -> None:
    snapshot = _registry().snapshot()
    declaration = EXPORTS[provider](snapshot)[0]
    schema = _schema_part(provider, declaration)
    with pytest.raises(TypeError, match="read-only"):
        schema["properties"]["query"] = {"type": "integer"}
    with pytest.raises(TypeError, match="read-only"):
        schema["required"].append("limit")
    with pytest.raises(TypeError, match="read-only"):
        schema.update(title="changed")
    declaration["cache_control"] = {"type": "ephemeral"}
    mutable = copy.deepcopy(schema)
    mutable["required"].append("limit")
    assert type(mutable) is dict and type(mutable["required"]) is list
    assert pickle.loads(pickle.dumps(schema)) == SCHEMA and json.loads(json.dumps(schema)) == SCHEMA
    later = EXPORTS[provider](snapshot)[0]
    assert "cache_control" not in later and _schema_part(provider, later) == SCHEMA


def test_gemini_declarations_are_fresh_copies_over_a_read_only_schema() -> None:
    snapshot = _registry().snapshot()
    declaration = EXPORTS["gemini"](snapshot)[0]
    declaration.description = "changed"
    with pytest.raises(TypeError, match="read-only"):
        declaration.parameters_json_schema["type"] = "array"
    later = EXPORTS["gemini"](snapshot)[0]
    assert later.description == "Search the issues." and later.parameters_json_schema == SCHEMA


LONG = "t" * 100
"""Valid for an MCP-style registry, too long for OpenAI (64 characters)."""


def test_a_rejected_name_is_left_out_with_one_warning_and_raises_every_time(caplog: pytest.LogCaptureFixture) -> None:
    _common._warned.clear()
    registry = _registry()
    registry.register_dynamic(LONG, SCHEMA, _handler)
    with caplog.at_level(logging.WARNING, logger="toolmesh.providers"):
        first = openai.tools(registry)
        later = openai.tools(registry)
    assert [tool["function"]["name"] for tool in first] == ["search"] and later == first
    assert len([r for r in caplog.records if LONG in r.getMessage()]) == 1
    for _ in range(2):
        with pytest.raises(UnsupportedToolError, match=LONG):
            openai.tools(registry, invalid_names="raise")
