"""The README is a front page: short, with the two commands, and its example runs and prints what it says."""

from __future__ import annotations

import re
import subprocess
import sys

from _docs import DOCS, README, ROOT, page_blocks


def run(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_readme_is_a_front_page_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    assert "make demo" in text and "make test" in text
    assert len(page_blocks(README)) == 1


def test_the_readme_example_runs_and_prints_what_it_says() -> None:
    (block,) = page_blocks(README)
    lines = run(block.source)
    assert lines[0].startswith("['add', 'notes__list_notes', 'notes__read', 'notes__search'")
    assert "succeeded 5" in lines
    assert '      "title": "travel",' in lines
    assert lines[-1].startswith("Invalid arguments for tool 'add': x: Input should be a valid integer")


def test_first_tutorial_example_runs_and_prints_what_it_says() -> None:
    code = re.findall(r"```python\n(.*?)```", (DOCS / "tutorial.md").read_text(), flags=re.S)[0]
    lines = run(code)
    assert lines[1] == "succeeded 5"
    assert lines[2].startswith("Invalid arguments for tool 'add': x: Input should be a valid integer")
    assert len([line for line in code.splitlines() if line.strip()]) <= 15
