"""The complete examples of the README's MCP section run as written (from the repository root)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _docs import README, python_blocks

ROOT = Path(__file__).resolve().parent.parent


def programs() -> list[str]:
    return [block for block in python_blocks("MCP servers") if "anyio.run(" in block]


def test_docs_have_a_complete_example() -> None:
    assert programs()


@pytest.mark.parametrize("source", programs())
def test_the_mcp_examples_in_the_readme_run(source: str, capsys: pytest.CaptureFixture[str]) -> None:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(source, str(README), "exec"), {"__name__": "__main__"})
    finally:
        os.chdir(cwd)
    assert "demo" in capsys.readouterr().out
