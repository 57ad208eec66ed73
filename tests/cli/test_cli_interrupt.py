"""Ctrl-C twice never orphans a stdio server: the toolmesh command, run as a real process."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from _servers import FIXTURES, toolmesh_env

STUBBORN = FIXTURES / "stubborn_server.py"
_WAIT = 60.0


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rfind(")") + 2] != "Z"


def _lines(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)
    into.put("")


def _wait_for(lines: queue.Queue[str], text: str, seen: list[str]) -> None:
    """Read stderr lines into ``seen`` until one holds ``text`` (``""``: until the stream ends)."""
    deadline = time.monotonic() + _WAIT
    while time.monotonic() < deadline:
        line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        seen.append(line)
        if line == "":
            if text == "":
                return

            raise AssertionError(f"the command ended before printing {text!r}: {''.join(seen)}")
        if text and text in line:
            return
    raise AssertionError(f"no {text!r} within {_WAIT} s: {''.join(seen)}")


def test_a_second_ctrl_c_kills_the_server_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "stubborn": {
                        "command": sys.executable,
                        "args": [str(STUBBORN)],
                        "env": {"FIXTURE_PID_FILE": str(pid_file)},
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    env = toolmesh_env()
    command = [sys.executable, "-c", "from toolmesh._cli.main import main; main()"]
    cli = subprocess.Popen(
        [*command, "call", "stubborn__slow", '{"seconds": 600}', "-c", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    pids: list[int] = []
    try:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_lines, args=(cli.stderr, lines), daemon=True).start()
        seen: list[str] = []
        _wait_for(lines, "1 of 1 server connected", seen)
        pids = [int(p) for p in pid_file.read_text(encoding="utf-8").split()]
        assert all(_alive(pid) for pid in pids)

        cli.send_signal(signal.SIGINT)
        _wait_for(lines, "stopping the servers", seen)
        cli.send_signal(signal.SIGINT)
        assert cli.wait(timeout=_WAIT) == 130
        _wait_for(lines, "", seen)
        text = "".join(seen)
        assert "killed 1 server process group" in text and "error: interrupted" in text

        deadline = time.monotonic() + _WAIT
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in pids if _alive(pid)] == []
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for stream in (cli.stdout, cli.stderr):
            if stream is not None:
                stream.close()
