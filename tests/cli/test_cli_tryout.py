"""The toolmesh command and examples as a new user meets them: missing extras, any directory, honest status."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from _mcp import alive
from _servers import DEMO, ROOT, toolmesh_env
from toolmesh._cli.main import app

_WAIT = 60.0
BROKEN = {"command": "/nonexistent/toolmesh-test-server"}
CLI = [sys.executable, "-c", "from toolmesh._cli.main import main; main()"]
LONG = "summarize_the_quarterly_financial_statements_for_the_board"


def _config(tmp_path: Path, servers: dict[str, Any]) -> str:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return str(path)


def _demo(**options: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(DEMO), "stdio"], **options}


def _invoke(*args: str, columns: int = 100) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})


def _env() -> dict[str, str]:
    return toolmesh_env()


# -- 1. a provider's optional package -------------------------------------------------------


def test_export_without_the_providers_package_exits_2_before_any_server_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    config = _config(tmp_path, {"m": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}})
    blocked = "import sys; sys.modules['google.genai'] = None; from toolmesh._cli.main import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", blocked, "export", "--provider", "gemini", "-c", config],
        capture_output=True,
        text=True,
        env={**_env(), "COLUMNS": "300"},
        cwd=tmp_path,
        timeout=_WAIT,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("error: --provider gemini needs the google-genai package")
    assert line.endswith("install it: pip install google-genai")
    assert not marker.exists()


# -- 2. the demo from anywhere --------------------------------------------------------------


def test_demo_runs_from_another_directory_without_the_repositorys_venv(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")],
        capture_output=True,
        text=True,
        env={**_env(), "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
        cwd=tmp_path,
        timeout=_WAIT * 2,
    )
    assert done.returncode == 0, done.stderr
    assert "connected 'notes'" in done.stdout
    assert "notes__search" in done.stdout and "forecast" in done.stdout
    # It ends by serving: an MCP client lists and calls a native and a proxied tool through `toolmesh serve`.
    assert "an MCP client" in done.stdout and "lists 6 tools at http://127.0.0.1:" in done.stdout
    assert '{"city": "Lima", "temperature": 21.0, "unit": "celsius"}' in done.stdout
    assert '{"matches": [{"title": "travel"' in done.stdout
    assert "gateway stopped by SIGTERM: exit code 0" in done.stdout


def test_the_example_config_runs_python_from_path_relative_to_the_current_directory(
    monkeypatch: Any,
) -> None:
    monkeypatch.chdir(ROOT)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    done = CliRunner().invoke(app, ["tools", "--names", "-c", "examples/mcp.json"], env={"PATH": path})
    assert done.exit_code == 0, done.output
    assert "notes__search" in done.stdout.splitlines()


# -- 3. status lines ------------------------------------------------------------------------


def test_ctrl_c_while_connecting_reports_stopped_servers_not_failed_ones(tmp_path: Path) -> None:
    pid_file = tmp_path / "slow.pid"
    hang = f"import os, sys; open({str(pid_file)!r}, 'w').write(str(os.getpid())); sys.stdin.read()"
    config = _config(tmp_path, {"demo": _demo(), "slow": {"command": sys.executable, "args": ["-c", hang]}})
    cli = subprocess.Popen(
        [*CLI, "tools", "--names", "-c", config],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**_env(), "COLUMNS": "300"},
        cwd=tmp_path,
    )
    pid = 0
    try:
        deadline = time.monotonic() + _WAIT
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and cli.poll() is None, "the slow server never started"
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        cli.send_signal(signal.SIGINT)
        _, stderr = cli.communicate(timeout=_WAIT)
        assert cli.returncode == 130, stderr
        assert "failed" not in stderr
        assert "another server failed first" not in stderr
        lines = {line.split()[1]: line for line in stderr.splitlines() if line.startswith("- ")}
        assert set(lines) == {"demo", "slow"}, stderr
        assert "stopped: interrupted while connecting" in lines["slow"]
        assert "stopped" in lines["demo"]
        assert "0 of 2 servers connected (0 tools), 2 stopped" in stderr
        deadline = time.monotonic() + _WAIT
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.communicate()
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_all_or_nothing_shows_a_good_server_as_closed_not_failed(tmp_path: Path) -> None:
    done = _invoke("tools", "--names", "-c", _config(tmp_path, {"demo": _demo(), "broken": BROKEN}), columns=300)
    assert done.exit_code == 2
    lines = done.stderr.splitlines()
    assert "- demo   connected, then closed because broken failed" in [line.rstrip() for line in lines]
    assert not any(line.startswith("✗ demo") for line in lines)
    assert "0 of 2 servers connected (0 tools), 1 failed, 1 stopped" in lines


def test_skip_failures_reports_each_failure_once(tmp_path: Path) -> None:
    config = _config(tmp_path, {"demo": _demo(), "broken": BROKEN})
    done = subprocess.run(
        [*CLI, "tools", "--names", "--skip-failures", "-c", config],
        capture_output=True,
        text=True,
        env={**_env(), "COLUMNS": "300"},
        cwd=tmp_path,
        timeout=_WAIT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("could not start") == 1, done.stderr
    assert "skipped a server" not in done.stderr


def test_unknown_tool_of_a_server_left_out_by_server_says_so(tmp_path: Path) -> None:
    config = _config(tmp_path, {"a": _demo(), "b": _demo()})
    done = _invoke("call", "b__echo", '{"text": "hi"}', "-c", config, "--server", "a", columns=300)
    assert done.exit_code == 1
    assert "Unknown tool" in done.stdout
    assert "only the servers given with --server were started (a); not started: b" in done.stderr


def test_unknown_tool_of_a_skipped_server_says_it_failed(tmp_path: Path) -> None:
    config = _config(tmp_path, {"demo": _demo(), "broken": BROKEN})
    done = _invoke("call", "broken__x", "{}", "--skip-failures", "-c", config, columns=300)
    assert done.exit_code == 1
    assert "failed to connect and were skipped, so their tools are missing: broken" in done.stderr


def test_a_known_tool_gets_no_hint(tmp_path: Path) -> None:
    config = _config(tmp_path, {"a": _demo(), "b": _demo()})
    done = _invoke("call", "a__echo", '{"text": "hi"}', "-c", config, "--server", "a", columns=300)
    assert done.exit_code == 0, done.output
    assert "note:" not in done.stderr


# -- 4. cosmetics ---------------------------------------------------------------------------


def test_one_tool_is_singular(tmp_path: Path) -> None:
    done = _invoke("tools", "--names", "-c", _config(tmp_path, {"demo": _demo(include=["echo"])}))
    assert done.exit_code == 0, done.output
    assert "1 of 1 server connected (1 tool)" in done.stderr.splitlines()


def test_help_texts_are_plain_text() -> None:
    for command in ("tools", "call", "export"):
        done = _invoke(command, "--help", columns=300)
        assert done.exit_code == 0
        assert "``" not in done.output
    assert "(what tools= takes)" in " ".join(_invoke("export", "--help", columns=300).output.split())


def test_call_table_never_wraps_the_tool_name_in_a_pipe(tmp_path: Path) -> None:
    module = tmp_path / "long_tools.py"
    module.write_text(
        f"from toolmesh import tool\n\n\n@tool\ndef {LONG}(text: str) -> str:\n"
        '    """Echo."""\n    return text\n\n\ntools = [' + LONG + "]\n",
        encoding="utf-8",
    )
    done = _invoke("call", LONG, '{"text": "x"}', "-m", f"{module}:tools", columns=80)
    assert done.exit_code == 0, done.output
    assert LONG in done.stdout, done.stdout


def test_call_table_keeps_a_long_result_on_one_line_in_a_pipe(tmp_path: Path) -> None:
    module = tmp_path / "echo_tools.py"
    module.write_text(
        'from toolmesh import tool\n\n\n@tool\ndef echo(text: str) -> str:\n    """Echo."""\n    return text\n\n\n'
        "tools = [echo]\n",
        encoding="utf-8",
    )
    sentence = " ".join(f"word{index}" for index in range(30))  # about 230 characters
    done = _invoke("call", "echo", json.dumps({"text": sentence}), "-m", f"{module}:tools", columns=80)
    assert done.exit_code == 0, done.output
    assert any(sentence in line for line in done.stdout.splitlines()), done.stdout
