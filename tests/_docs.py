"""Reading the README's sections and their Python examples, for the tests that run them."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_section(title: str) -> tuple[str, int]:
    """The text of the ``## title`` section (up to the next ``## ``) and its first line's offset."""
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.S | re.M)
    assert match is not None, f"README.md has no '## {title}' section"
    return match.group(1), text.count("\n", 0, match.start(1))


def python_blocks(title: str) -> list[str]:
    """The ``python`` code blocks of a README section, each padded so tracebacks point at README lines."""
    section, offset = readme_section(title)
    return [
        "\n" * (offset + section.count("\n", 0, block.start(1))) + block.group(1)
        for block in re.finditer(r"```python\n(.*?)```", section, flags=re.S)
    ]
