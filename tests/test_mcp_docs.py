"""The complete examples in docs/mcp.md run as written (from the repository root)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def programs() -> list[str]:
    text = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    return [block for block in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL) if "anyio.run(" in block]


def test_docs_have_a_complete_example() -> None:
    assert programs()


@pytest.mark.parametrize("source", programs())
def test_the_examples_in_docs_mcp_md_run(source: str, capsys: pytest.CaptureFixture[str]) -> None:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(source, "docs/mcp.md", "exec"), {"__name__": "__main__"})
    finally:
        os.chdir(cwd)
    assert "demo" in capsys.readouterr().out
