"""What a new user meets first with ``serve --responses-upstream``: a missing ``openai`` package, the catalog
offered by default, upstream errors, approval secrets and the allowlist (issue 12's tryout)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from _responses import Reply, scene
from _servers import ROOT
from toolmesh import ToolRegistry, tool
from toolmesh.gateway import ResponsesSettings

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


async def test_the_catalog_is_not_offered_unless_the_operator_opts_in() -> None:
    @tool
    def wipe(path: str) -> str:
        """Delete a path (a tool no request should get unasked)."""
        return path

    registry = ToolRegistry()
    registry.register(wipe)
    assert ResponsesSettings(upstream="http://127.0.0.1:9/v1").offer_catalog is False
    async with scene([Reply(text="ok")], registry=registry) as (client, upstream, _):
        response = await client.responses.create(model="m", input="hi")
    assert response.output_text == "ok"
    assert "wipe" not in json.dumps(upstream.requests[0].get("tools", []))
