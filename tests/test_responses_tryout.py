"""What a new user meets first with ``serve --responses-upstream``: a missing ``openai`` package, the catalog
offered by default, upstream errors, approval secrets and the allowlist (issue 12's tryout)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _servers import ROOT

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
NO_OPENAI = (
    "import sys; sys.modules['openai'] = None; sys.argv = ['toolmesh', *sys.argv[1:]]; "
    "from toolmesh._cli import main; main()"
)


def test_serve_without_the_openai_package_exits_2_with_the_install_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_OPENAI, "serve", "--port", "0", "--responses-upstream", "http://127.0.0.1:9/v1"],
        env=ENV,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "the Responses endpoint needs the openai package: pip install 'toolmesh[responses]'" in done.stderr
