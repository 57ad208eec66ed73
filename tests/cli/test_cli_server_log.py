"""The stdio servers' stderr log: one per run, in the user's state folder, old ones pruned, each bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from _servers import DEMO
from toolmesh._cli.main import app
from toolmesh._cli.server_log import KEEP_LOGS, ServerLog, prune_logs, state_dir


def _config(tmp_path: Path, *, debug: bool) -> str:
    env = {"FIXTURE_LOG_LEVEL": "DEBUG"} if debug else {}
    server: dict[str, Any] = {"command": sys.executable, "args": [str(DEMO), "stdio"], "env": env}
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"demo": server}}), encoding="utf-8")
    return str(path)


def _tools(config: str, state: Path) -> Result:
    return CliRunner().invoke(
        app, ["tools", "--names", "-c", config], env={"COLUMNS": "100", "TOOLMESH_STATE_DIR": str(state)}
    )


def _printed_log(done: Result) -> Path:
    [line] = [line for line in done.stderr.splitlines() if line.startswith("server stderr: ")]
    return Path(line.removeprefix("server stderr: "))


def _temp_logs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("toolmesh-servers-*.log")}


def test_the_log_is_in_the_state_folder_and_nothing_is_left_in_tmp(tmp_path: Path) -> None:
    state = tmp_path / "state"
    before = _temp_logs()
    done = _tools(_config(tmp_path, debug=True), state)
    assert done.exit_code == 0, done.output
    log = _printed_log(done)
    assert log.parent == state / "logs" and log.name.startswith("servers-") and log.suffix == ".log"
    assert "DEBUG" in log.read_text(encoding="utf-8")
    assert (state / "logs").stat().st_mode & 0o777 == 0o700
    assert _temp_logs() == before


def test_a_log_no_server_wrote_to_is_removed_at_exit(tmp_path: Path) -> None:
    state = tmp_path / "state"
    done = _tools(_config(tmp_path, debug=False), state)
    assert done.exit_code == 0, done.output
    assert not _printed_log(done).exists()
    assert list((state / "logs").iterdir()) == []


def _ended_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    return int(done.stdout)


def test_each_run_keeps_only_the_newest_logs_of_ended_runs(tmp_path: Path) -> None:
    state = tmp_path / "state"
    logs = state / "logs"
    logs.mkdir(parents=True)
    ended = _ended_pid()
    old = [logs / f"servers-20260101T0000{i:02d}Z-{ended}-abcdef.log" for i in range(KEEP_LOGS + 5)]
    for age, path in enumerate(reversed(old)):
        path.write_text("old\n", encoding="utf-8")
        os.utime(path, (1_700_000_000 - age, 1_700_000_000 - age))
    old[0].with_name(old[0].name + ".1").write_text("older part\n", encoding="utf-8")
    live = logs / "servers-20250101T000000Z-1-abcdef.log"  # pid 1 is always running: its log stays
    live.write_text("live\n", encoding="utf-8")
    os.utime(live, (1_000_000_000, 1_000_000_000))

    done = _tools(_config(tmp_path, debug=True), state)
    assert done.exit_code == 0, done.output
    this_run = _printed_log(done)
    kept = {p.name for p in logs.iterdir()}
    newest = {p.name for p in old[-(KEEP_LOGS - 1) :]}
    assert kept == newest | {live.name, this_run.name}


def test_a_run_log_is_rotated_at_its_size_bound(tmp_path: Path) -> None:
    path = tmp_path / "servers-x.log"
    log = ServerLog(path, max_bytes=1_000)
    try:
        for i in range(200):
            log.write(f"line {i:04d} of a chatty server\n")
        log.flush()
    finally:
        log.close()
    rotated = path.with_name(path.name + ".1")
    assert path.stat().st_size <= 1_000 and rotated.stat().st_size <= 1_000
    assert path.read_text(encoding="utf-8").splitlines()[-1] == "line 0199 of a chatty server"
    assert sorted(tmp_path.iterdir()) == [path, rotated]


def test_a_rotated_part_whose_log_is_gone_is_removed(tmp_path: Path) -> None:
    orphan = tmp_path / f"servers-20260101T000000Z-{_ended_pid()}-abcdef.log.1"
    orphan.write_text("x\n", encoding="utf-8")
    prune_logs(tmp_path)
    assert not orphan.exists()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"TOOLMESH_STATE_DIR": "/srv/tm", "XDG_STATE_HOME": "/x"}, Path("/srv/tm")),
        ({"XDG_STATE_HOME": "/x/state"}, Path("/x/state/toolmesh")),
        ({"XDG_STATE_HOME": "relative/ignored"}, Path("/home/u/.local/state/toolmesh")),
        ({}, Path("/home/u/.local/state/toolmesh")),
    ],
)
def test_the_state_folder_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: Path
) -> None:
    for name in ("TOOLMESH_STATE_DIR", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", "/home/u")
    assert state_dir() == expected
