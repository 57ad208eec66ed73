"""The public API is exactly what toolmesh.__all__ names, and every name in it exists."""

from __future__ import annotations

import toolmesh


def test_all_names_exist_and_nothing_private_is_exported() -> None:
    for name in toolmesh.__all__:
        assert hasattr(toolmesh, name), name
        assert not name.startswith("_"), name
    assert len(set(toolmesh.__all__)) == len(toolmesh.__all__)


def test_the_design_contract_names_are_public() -> None:
    contract = {
        "ToolRegistry",
        "tool",
        "ToolContext",
        "ToolResult",
        "ToolOutput",
        "ToolExecutionError",
        "ErrorKind",
        "ToolCapabilities",
        "McpServer",
        "NamePolicy",
        "NativeEntry",
        "McpEntry",
        "DynamicEntry",
        "HostedEntry",
        "Text",
        "Json",
        "Image",
        "Audio",
        "ResourceLink",
        "EmbeddedResource",
        "Disposition",
    }
    assert contract <= set(toolmesh.__all__)
