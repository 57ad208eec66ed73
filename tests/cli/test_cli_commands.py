"""The toolmesh command: stdout for results, stderr for status and errors, servers started only when needed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from _servers import DEMO
from toolmesh._cli import catalog as cli
from toolmesh._cli.main import app

DEMO_TOOLS = 16


def _config(tmp_path: Path, servers: dict[str, Any], name: str = "mcp.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return str(path)


def _demo(**env: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(DEMO), "stdio"], "env": env}


BROKEN = {"command": "/nonexistent/toolmesh-test-server"}


def _marker_server(marker: Path) -> dict[str, Any]:
    """A "server" that only proves it was started: it creates ``marker`` and exits."""
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}


def _invoke(*args: str, columns: int = 100) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns)})


# -- errors --------------------------------------------------------------------------------


def test_errors_go_to_stderr_printed_literally() -> None:
    done = _invoke("tools", "-c", "x/[/x]/nope.json")
    assert done.exit_code == 2
    assert done.stdout == ""
    assert done.stderr == "error: x/[/x]/nope.json: cannot read the MCP config file (No such file or directory).\n"


def test_options_are_checked_before_any_server_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    done = _invoke("export", "--provider", "bogus", "-c", _config(tmp_path, {"m": _marker_server(marker)}))
    assert done.exit_code == 2
    assert not marker.exists()
    assert done.stderr.startswith("error: --provider 'bogus' is not one of openai, openai-responses")


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
def test_strict_for_a_provider_without_strict_mode_is_a_usage_error(tmp_path: Path, provider: str) -> None:
    marker = tmp_path / "started"
    config = _config(tmp_path, {"m": _marker_server(marker)})
    done = _invoke("export", "--strict", "--provider", provider, "-c", config)
    assert done.exit_code == 2 and done.stdout == ""
    assert not marker.exists()
    assert done.stderr.startswith(
        f"error: --strict is OpenAI's strict mode (--provider openai or openai-responses); {provider} has none"
    )


def test_config_files_are_all_read_before_any_server_starts(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    good = _config(tmp_path, {"m": _marker_server(marker)})
    bad = _config(tmp_path, {"x": {"command": "y", "comand": "z"}}, name="bad.json")
    done = _invoke("tools", "-c", good, "-c", bad)
    assert done.exit_code == 2
    assert not marker.exists()
    assert "key 'comand': unknown key" in done.stderr


def test_nothing_configured_says_how_to_configure() -> None:
    done = _invoke("tools")
    assert done.exit_code == 2 and done.stdout == ""
    assert "--module path/to/tools.py:registry" in done.stderr and "--config mcp.json" in done.stderr


# -- connecting: status, failures, server stderr ----------------------------------------------


def test_status_per_server_then_a_summary_and_skip_failures(tmp_path: Path) -> None:
    config = _config(tmp_path, {"demo": _demo(), "broken": BROKEN})
    done = _invoke("tools", "--names", "--skip-failures", "-c", config)
    assert done.exit_code == 0, done.output
    lines = [line.rstrip() for line in done.stderr.splitlines()]
    assert lines[0] == f"✓ demo   connected, {DEMO_TOOLS} tools"
    assert lines[1].startswith("✗ broken failed: MCP server 'broken': could not start '/nonexistent/")
    assert lines[2] == f"1 of 2 servers connected ({DEMO_TOOLS} tools), 1 failed"
    assert done.stdout.splitlines()[:2] == ["demo__echo", "demo__add"]


def test_without_skip_failures_a_broken_server_fails_the_command(tmp_path: Path) -> None:
    done = _invoke("tools", "--names", "-c", _config(tmp_path, {"demo": _demo(), "broken": BROKEN}))
    assert done.exit_code == 2 and done.stdout == ""
    assert "✗ broken failed" in done.stderr and "error: MCP server 'broken': could not start" in done.stderr
    assert "server stderr: " in done.stderr


@pytest.mark.parametrize("command", [["export"], ["call", "demo__echo", '{"text": "hi"}']])
def test_skip_failures_for_export_and_call(tmp_path: Path, command: list[str]) -> None:
    config = _config(tmp_path, {"demo": _demo(), "broken": BROKEN})
    assert _invoke(*command, "-c", config).exit_code == 2
    done = _invoke(*command, "--skip-failures", "-c", config)
    assert done.exit_code == 0, done.output
    assert "demo__echo" in done.stdout or "hi" in done.stdout


def test_a_server_skipped_under_skip_failures_shows_its_own_stderr(tmp_path: Path) -> None:
    crash = "import sys; sys.stderr.write('boom: WEATHER_KEY is not set\\n'); sys.exit(3)"
    crashing = {"command": sys.executable, "args": ["-c", crash]}
    config = _config(tmp_path, {"demo": _demo(FIXTURE_LOG_LEVEL="DEBUG"), "weather": crashing})
    done = _invoke("tools", "--names", "--skip-failures", "-c", config)
    assert done.exit_code == 0, done.output
    assert "skipped MCP server 'weather': stderr ends with:\n  | [weather] boom: WEATHER_KEY is not set" in done.stderr
    tail = done.stderr.split("skipped MCP server 'weather': stderr ends with:", 1)[1]
    assert "[demo]" not in tail  # the other server's lines are in the log, not in this server's tail


def test_server_stderr_goes_to_a_log_file(tmp_path: Path) -> None:
    config = _config(tmp_path, {"demo": _demo(FIXTURE_LOG_LEVEL="DEBUG")})
    done = _invoke("tools", "--names", "-c", config)
    assert done.exit_code == 0, done.output
    [line] = [line for line in done.stderr.splitlines() if line.startswith("server stderr: ")]
    log = Path(line.removeprefix("server stderr: "))
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
        assert any("DEBUG" in line for line in lines) and "DEBUG" not in done.output
        assert all(line.startswith("[demo] ") for line in lines)  # a shared log says whose each line is
    finally:
        log.unlink()
    shown = _invoke("tools", "--names", "--server-stderr", "-c", config)
    assert shown.exit_code == 0 and "server stderr: " not in shown.stderr


# -- tools ---------------------------------------------------------------------------------

LONG = "summarize_the_quarterly_financial_statements_for_the_board"


def _long_module(tmp_path: Path) -> str:
    path = tmp_path / "long_tools.py"
    path.write_text(
        "from toolmesh import tool\n\n\n"
        f"@tool\ndef {LONG}(text: str) -> str:\n"
        '    """A tool whose name is longer than a narrow terminal is wide."""\n'
        "    return text\n\n\n"
        "tools = [" + LONG + "]\n",
        encoding="utf-8",
    )
    return f"{path}:tools"


@pytest.mark.parametrize("columns", [30, 60])
def test_names_never_wrap_mid_word_in_a_pipe(tmp_path: Path, columns: int) -> None:
    done = _invoke("tools", "-m", _long_module(tmp_path), columns=columns)
    assert done.exit_code == 0, done.output
    assert LONG in done.stdout


@pytest.mark.parametrize("columns", [30, 60])
def test_names_never_wrap_mid_word_in_a_narrow_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setattr(cli, "console", Console(force_terminal=True, width=columns, color_system=None))
    done = _invoke("tools", "-m", _long_module(tmp_path), columns=columns)
    assert done.exit_code == 0, done.output
    assert LONG in done.stdout


def test_tools_names_and_json(tmp_path: Path) -> None:
    module = _long_module(tmp_path)
    names = _invoke("tools", "--names", "-m", module)
    assert names.stdout == f"{LONG}\n"
    rows = json.loads(_invoke("tools", "--json", "-m", module).stdout)
    assert rows == [
        {
            "name": LONG,
            "kind": "native",
            "server": None,
            "wire_name": None,
            "description": "A tool whose name is longer than a narrow terminal is wide.",
            "parameters": rows[0]["parameters"],
            "output_schema": rows[0]["output_schema"],
        }
    ]
    assert rows[0]["parameters"]["required"] == ["text"]


# -- call ----------------------------------------------------------------------------------


def test_call_starts_only_the_server_asked_for(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    config = _config(tmp_path, {"demo": _demo(), "other": _marker_server(marker)})
    done = _invoke("call", "demo__add", '{"a": 1, "b": 2}', "--server", "demo", "--json", "-c", config)
    assert done.exit_code == 0, done.output
    assert not marker.exists() and "other" not in done.stderr
    result = json.loads(done.stdout)
    assert result["kind"] == "mcp" and result["disposition"] == "succeeded" and result["error"] is None
    assert result["output"]["structured"] == {"sum": 3}
    assert "3" in result["presentation"]
    assert result["duration"] > 0


def test_call_with_an_unknown_server_starts_nothing(tmp_path: Path) -> None:
    done = _invoke("call", "demo__echo", "{}", "--server", "nope", "-c", _config(tmp_path, {"demo": _demo()}))
    assert done.exit_code == 2
    assert done.stderr == "error: --server 'nope' is not a server of the config files (servers: demo)\n"


def test_call_json_shows_a_failure_whole(tmp_path: Path) -> None:
    done = _invoke("call", "demo__fail", '{"reason": "no"}', "--json", "-c", _config(tmp_path, {"demo": _demo()}))
    assert done.exit_code == 1
    result = json.loads(done.stdout)
    assert result["disposition"] == "failed"
    assert set(result["error"]) == {"kind", "message", "retryable", "code", "http_status", "model_feedback"}
    assert result["error"]["kind"] == "upstream_error"


# -- export --------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_export_applies_the_providers_name_rule(tmp_path: Path, provider: str) -> None:
    label = "a" * 60
    config = _config(tmp_path, {label: _demo()})
    done = _invoke("export", "--provider", provider, "-c", config)
    assert done.exit_code == 0, done.output
    declarations = json.loads(done.stdout)
    if provider == "openai":
        names = [d["function"]["name"] for d in declarations]
    else:
        names = [f["name"] for d in declarations for f in d["function_declarations"]]
    assert len(names) == DEMO_TOOLS
    assert all(len(name) <= 64 for name in names) and len(set(names)) == DEMO_TOOLS
    assert names[0].startswith(label[:40])


def test_serve_says_which_profiles_are_in_search_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toolmesh import ToolRegistry
    from toolmesh._cli.announce import _announce
    from toolmesh.gateway import GatewayConfig
    from toolmesh.gateway._config.config import ServeSettings

    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"profiles": {"lean": {"search": True}, "full": {}}}))
    config = GatewayConfig.load(path)
    sizes = {"default": 39, "lean": 39, "full": 39}
    _announce("http://127.0.0.1:1", ServeSettings(), config, ToolRegistry(), sizes)
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")}
    assert "search mode" in lines["lean"] and "search_tools" in lines["lean"]
    assert "search mode" not in lines["full"] and "search mode" not in lines["default"]
