"""Importing toolmesh imports no agent framework: each bridge is an optional extra, imported on its own."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ("pydantic_ai", "agents", "langchain_core", "langgraph")


def _loaded_after(imports: str) -> list[str]:
    code = f"import sys; {imports}; print(','.join(m for m in {FRAMEWORKS!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return [name for name in done.stdout.strip().split(",") if name]


def test_importing_toolmesh_imports_no_framework() -> None:
    public = "toolmesh, toolmesh.mcp, toolmesh.hooks, toolmesh.policy, toolmesh.providers, toolmesh.bridges"
    assert _loaded_after(f"import {public}") == []


def test_the_pydantic_ai_bridge_imports_pydantic_ai_only() -> None:
    assert _loaded_after("import toolmesh.bridges.pydantic_ai") == ["pydantic_ai"]
