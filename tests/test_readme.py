"""The README's examples run as shown: the first screen's, and every block of the core sections."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys

import pytest

from _docs import README, python_blocks


def test_first_readme_example_runs_and_prints_what_it_says() -> None:
    code = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[0]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == "succeeded 5"
    assert lines[2].startswith("Invalid arguments for tool 'add': x: Input should be a valid integer")
    assert len([line for line in code.splitlines() if line.strip()]) <= 15


CORE_SECTIONS = ["Rows", "Native tools", "Dispatch", "Context", "Output", "Errors", "Snapshots"]


@pytest.mark.parametrize("title", CORE_SECTIONS)
async def test_the_examples_of_each_core_section_run(title: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The blocks of one section run in order in one namespace, top-level ``await`` included."""
    blocks = python_blocks(title)
    assert blocks, f"the README section {title!r} has no example"
    namespace: dict[str, object] = {"__name__": "readme_example"}
    for source in blocks:
        code = compile(source, str(README), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        outcome = eval(code, namespace)
        if inspect.iscoroutine(outcome):
            await outcome
