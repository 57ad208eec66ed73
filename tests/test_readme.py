"""The README's first example runs as shown."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_first_readme_example_runs_and_prints_what_it_says() -> None:
    code = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[0]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == "succeeded 5"
    assert lines[2].startswith("Invalid arguments for tool 'add': x: Input should be a valid integer")
    assert len([line for line in code.splitlines() if line.strip()]) <= 15
