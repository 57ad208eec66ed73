"""Anthropic's MCP connector: ``mcp_toolset`` with ``default_config`` and ``configs`` from the catalog's deferral.

Every toolset is checked against the anthropic SDK's own types (the request's TypedDict and
the response-side model), and read back as Anthropic applies it.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from _provider_support import add, assert_sdk_shape
from anthropic.types.beta import BetaMCPToolset, BetaMCPToolsetParam, BetaMessage, BetaToolUnionParam

from _mcp import demo_in_process
from toolmesh import DeferPolicy, ToolRegistry
from toolmesh.providers import anthropic as claude


def applied(toolset: BetaMCPToolset) -> dict[str, dict[str, bool]]:
    """Each pinned tool's config as Anthropic applies them: ``default_config``, then its entry of ``configs``."""
    default = toolset.default_config.model_dump(exclude_none=True) if toolset.default_config else {}
    configs = {name: config.model_dump(exclude_none=True) for name, config in (toolset.configs or {}).items()}
    return {tool.name: {"enabled": True, **default, **configs.get(tool.name, {})} for tool in toolset.tools or []}


async def test_the_toolset_defers_what_the_snapshot_defers_and_pins_its_listing() -> None:
    with anyio.fail_after(30):
        async with ToolRegistry(defer=DeferPolicy(always_declare=["demo__echo"])) as registry:
            registry.register(add)
            await registry.connect(demo_in_process("demo", defer_loading=True))
            snapshot = registry.snapshot()
            demo_rows = [row for row in snapshot if getattr(row, "server", None) == "demo"]
            assert len(demo_rows) > 2 and "demo__echo" not in snapshot.deferred

            toolset = claude.mcp_toolset(snapshot, "demo")
            assert_sdk_shape(BetaMCPToolsetParam, toolset)
            assert_sdk_shape(BetaToolUnionParam, toolset)
            assert toolset["default_config"] == {"defer_loading": True}
            assert toolset.get("configs") == {"echo": {"defer_loading": False}}

            # what Anthropic reads back (the JSON of the request) defers exactly the snapshot's deferred rows
            sent = BetaMCPToolset.model_validate_json(json.dumps(toolset))
            assert sent.mcp_server_name == "demo"
            config = applied(sent)
            assert sorted(config) == sorted(row.wire_name for row in demo_rows)  # type: ignore[attr-defined]
            deferred_wire = {row.wire_name for row in demo_rows if row.name in snapshot.deferred}  # type: ignore[attr-defined]
            assert {name for name, c in config.items() if c["defer_loading"]} == deferred_wire
            assert all(c["enabled"] for c in config.values())
            listed = {tool.name: tool for tool in sent.tools or []}
            for row in demo_rows:
                assert listed[row.wire_name].input_schema == row.tool.input_schema  # type: ignore[attr-defined]

            # the model uses a tool of the toolset: Anthropic calls the server; nothing is dispatched here
            reply = BetaMessage.model_validate(
                {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                    "content": [
                        {
                            "type": "mcp_tool_use",
                            "id": "mcptoolu_1",
                            "name": "echo",
                            "server_name": "demo",
                            "input": {"text": "hi"},
                        },
                        {
                            "type": "mcp_tool_result",
                            "tool_use_id": "mcptoolu_1",
                            "is_error": False,
                            "content": [{"type": "text", "text": "hi"}],
                        },
                        {"type": "text", "text": "It said hi."},
                    ],
                }
            )
            assert claude.parse_tool_calls(reply, catalog=snapshot) == []


async def test_your_default_config_and_configs_apply_over_the_catalogs() -> None:
    with anyio.fail_after(30):
        async with ToolRegistry() as registry:
            await registry.connect(demo_in_process("demo"))
            snapshot = registry.snapshot()
            assert not snapshot.deferred
            plain = claude.mcp_toolset(snapshot, "demo", pin=False)
            assert plain == {
                "type": "mcp_toolset",
                "mcp_server_name": "demo",
                "default_config": {"defer_loading": False},
            }

            toolset = claude.mcp_toolset(
                snapshot,
                "demo",
                default_config={"defer_loading": True},
                configs={"demo__echo": {"defer_loading": False}, "add": {"enabled": False}},
            )
            assert_sdk_shape(BetaMCPToolsetParam, toolset)
            config = applied(BetaMCPToolset.model_validate(toolset))
            # the catalog declares every row: over your deferring default, each is named declared
            assert config["echo"] == {"enabled": True, "defer_loading": False}
            assert config["add"] == {"enabled": False, "defer_loading": False}


async def test_a_toolset_refuses_what_anthropic_would_not_read() -> None:
    with anyio.fail_after(30):
        async with ToolRegistry() as registry:
            await registry.connect(demo_in_process("demo", defer_loading=True))
            snapshot = registry.snapshot()
            cases: list[tuple[str, dict[str, Any]]] = [
                ("no tool of MCP server 'nope'", {"server": "nope"}),
                ("which is no tool", {"server": "demo", "configs": {"missing": {"enabled": False}}}),
                ("only 'defer_loading' and 'enabled'", {"server": "demo", "default_config": {"cache": True}}),
                ("only 'defer_loading' and 'enabled'", {"server": "demo", "configs": {"echo": {"enabled": "no"}}}),
            ]
            for message, arguments in cases:
                with pytest.raises(ValueError, match=message):
                    claude.mcp_toolset(snapshot, **arguments)
            # a registry and a list of rows work too: each row's own setting decides
            assert claude.mcp_toolset(registry, "demo", pin=False)["default_config"] == {"defer_loading": True}
            assert claude.mcp_toolset(list(snapshot), "demo", pin=False)["default_config"] == {"defer_loading": True}
