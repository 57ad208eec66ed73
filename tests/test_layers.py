"""The shape of the code: imports run one way, and no module grows past a screenful of screens."""

from __future__ import annotations

import ast
from pathlib import Path

import toolmesh

SOURCE = Path(toolmesh.__file__).parent

CORE = ("_calls", "_capabilities", "_context", "_definition", "_errors", "_metadata", "_output", "_result")
"""The modules every other module builds on: they know no MCP and no provider format."""

MAX_LINES = 450


def _module_imports(name: str) -> set[str]:
    """The toolmesh modules ``toolmesh.<name>`` imports when it is imported (not inside functions)."""
    tree = ast.parse((SOURCE / f"{name}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            module = f"toolmesh.{node.module or ''}" if node.level == 1 else node.module or ""
            found.add(module.rstrip("."))
            found.update(f"{module.rstrip('.')}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_core_imports_neither_mcp_nor_providers() -> None:
    for name in CORE:
        wrong = sorted(
            module
            for module in _module_imports(name)
            if module.startswith(("toolmesh.mcp", "toolmesh.providers")) or module in ("mcp", "mcp_types")
        )
        assert not wrong, f"toolmesh.{name} imports {wrong}"


def test_the_core_builds_no_provider_items() -> None:
    text = (SOURCE / "_result.py").read_text(encoding="utf-8")
    assert '"mcp_call"' not in text and "MCP_SERVER_LABEL" not in text


def test_no_module_is_longer_than_the_limit() -> None:
    lengths = {
        str(path.relative_to(SOURCE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in SOURCE.rglob("*.py")
    }
    too_long = {name: lines for name, lines in lengths.items() if lines > MAX_LINES}
    assert not too_long, f"split these by responsibility: {too_long}"
