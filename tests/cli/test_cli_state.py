"""--state on `toolmesh check` and `toolmesh serve`: the backend's health, and a clear error when it is not there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
from typer.testing import CliRunner

from _servers import free_port
from _services import redis_server
from toolmesh._cli.main import app


def _config(folder: Path) -> Path:
    path = folder / "toolmesh.json"
    path.write_text(json.dumps({"native": []}))
    return path


async def test_check_reports_the_state_backend_as_ok(tmp_path: Path) -> None:
    async with redis_server() as redis:
        arguments = ["check", "-c", str(_config(tmp_path)), "--state", redis.url]
        done = await anyio.to_thread.run_sync(lambda: CliRunner().invoke(app, arguments))
    assert done.exit_code == 0, done.output
    assert re.search(rf"✓ state +ok  {re.escape(redis.url)} \(prefix toolmesh:[0-9a-f]{{12}}:\)", done.stdout)


def test_check_fails_on_an_unreachable_state_naming_the_url_without_its_password(tmp_path: Path) -> None:
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    done = CliRunner().invoke(app, ["check", "-c", str(_config(tmp_path))], env={"TOOLMESH_STATE": url})
    assert done.exit_code == 1, done.output
    assert re.search(r"✗ state +failed: redis://\*\*\*@127\.0\.0\.1:\d+/0", done.stdout), done.stdout
    assert "hunter2" not in done.output


def test_serve_refuses_to_start_when_redis_is_unreachable(tmp_path: Path) -> None:
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    done = CliRunner().invoke(app, ["serve", "-c", str(_config(tmp_path)), "--port", "0", "--state", url])
    assert done.exit_code == 2, done.output
    assert "the shared state at redis://***@127.0.0.1:" in done.stderr
    assert "is Redis running there" in done.stderr and "hunter2" not in done.output


def test_serve_refuses_workers_without_a_shared_state(tmp_path: Path) -> None:
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"serve": {"workers": 2}}))
    done = CliRunner().invoke(app, ["serve", "-c", str(path)])
    assert done.exit_code == 2
    assert "error: 2 workers need a shared state backend" in done.stderr and "--state redis://" in done.stderr
    done = CliRunner().invoke(app, ["serve", "-c", str(path), "--workers", "3", "--state", "memory"])
    assert done.exit_code == 2 and "error: 3 workers need a shared state backend" in done.stderr
