"""The complete examples of the MCP servers guide run as written (from the repository root)."""

from __future__ import annotations

import os

import pytest

from _docs import DOCS, ROOT, page_blocks

PAGE = DOCS / "guides" / "mcp-servers.md"


def programs() -> list[str]:
    return [block.source for block in page_blocks(PAGE) if "anyio.run(" in block.source]


def test_docs_have_a_complete_example() -> None:
    assert programs()


@pytest.mark.parametrize("source", programs())
def test_the_mcp_examples_in_the_docs_run(source: str, capsys: pytest.CaptureFixture[str]) -> None:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(source, str(PAGE), "exec"), {"__name__": "__main__"})
    finally:
        os.chdir(cwd)
    assert "demo" in capsys.readouterr().out
