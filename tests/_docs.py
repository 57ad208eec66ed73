"""Reading the Python examples of the README and of every ``docs/`` page, for the tests that run them.

Every ``python`` block of a page is an example that runs. A page's blocks run in order in one namespace (so a
later block may use what an earlier one defined), with top-level ``await`` allowed, from the repository root. A
block that starts its own event loop (``anyio.run(`` or ``asyncio.run(``) is a complete program: it runs in a
worker thread, with ``__name__`` set to ``"docs_example"`` (so an ``if __name__ == "__main__":`` line that would
call a real provider does not run). A block that cannot run on its own, because it needs something no page can
give (a provider's client, a config file of the reader's), is marked by the line
``<!-- docs-test: fragment -->`` just before it: it is compiled, not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"

FRAGMENT = "<!-- docs-test: fragment -->"
_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One ``python`` block of a page: its code padded so tracebacks point at the page's lines."""

    page: Path
    line: int
    source: str
    fragment: bool

    @property
    def program(self) -> bool:
        """Whether the block starts its own event loop (runs as a whole program, in a worker thread)."""
        return "anyio.run(" in self.source or "asyncio.run(" in self.source

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """The README and every Markdown page of ``docs/``, in a stable order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def page_blocks(page: Path, text: str | None = None, offset: int = 0) -> list[Block]:
    """The ``python`` blocks of a page (or of ``text``, a part of it starting ``offset`` lines in)."""
    if text is None:
        text = page.read_text(encoding="utf-8")
    found = []
    for match in _BLOCK.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        line = offset + text.count("\n", 0, match.start(1))
        found.append(Block(page, line + 1, "\n" * line + match.group(1), before.strip() == FRAGMENT))
    return found
