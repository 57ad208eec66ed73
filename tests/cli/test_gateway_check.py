"""`toolmesh check`: connects everything a gateway config names and reports each source; 1 when one failed."""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolmesh._cli.main import app
from toolmesh._cli.serve import BUNDLED_CONFIG, config_path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def test_the_bundled_config_checks_ok_with_a_line_per_source() -> None:
    done = CliRunner().invoke(app, ["check", "--config", str(EXAMPLES / "toolmesh.json")])
    assert done.exit_code == 0, done.output
    assert re.search(r"✓ native +ok  3 tools  \d+\.\d\d s", done.stdout), done.stdout
    assert re.search(r"✓ notes +ok  4 tools  protocol 20\d\d-\d\d-\d\d  \d+\.\d\d s", done.stdout), done.stdout
    # The policy denies notes__forget; the reader profile keeps read-only rows.
    assert "profiles: default (6 tools), reader (3 tools), notes (3 tools)" in done.stdout


def test_a_failing_server_is_reported_and_the_exit_code_is_1(tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "notes": {"command": "python", "args": [str(EXAMPLES / "notes_server.py")]},
            "broken": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]},
        },
    }
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps(config))
    done = CliRunner().invoke(app, ["check", "--config", str(path)])
    assert done.exit_code == 1, done.output
    assert re.search(r"✓ notes +ok  4 tools  protocol", done.stdout), done.stdout
    assert re.search(r"✗ broken +failed: MCP server 'broken': .*closed.*  \d+\.\d\d s", done.stdout), done.stdout
    assert "1 failed: broken" in done.stderr


def test_a_native_module_that_fails_to_load_fails_the_check(tmp_path: Path) -> None:
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"native": [f"{EXAMPLES / 'tools.py'}:nothing"]}))
    done = CliRunner().invoke(app, ["check", "-c", str(path)])
    assert done.exit_code == 1
    assert "✗ native  failed:" in done.stdout and "has no attribute 'nothing'" in done.stdout


def test_a_bad_config_exits_2_before_anything_starts(tmp_path: Path) -> None:
    path = tmp_path / "toolmesh.json"
    path.write_text('{"serve": {"prot": 1}}')
    done = CliRunner().invoke(app, ["check", "-c", str(path)])
    assert done.exit_code == 2
    assert f"{path}: key 'serve.prot': unknown key. Did you mean 'port'?" in done.stderr


def test_without_config_the_local_file_then_the_bundled_example_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert config_path(None) == BUNDLED_CONFIG == EXAMPLES / "toolmesh.json"
    (tmp_path / "toolmesh.json").write_text("{}")
    assert config_path(None) == Path("toolmesh.json")
    assert config_path(Path("other.json")) == Path("other.json")


# -- serve refuses before it serves --------------------------------------------------------------


def _native_only(tmp_path: Path) -> Path:
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"native": [f"{EXAMPLES / 'tools.py'}:registry"], "profiles": {"reader": {}}}))
    return path


def test_serve_refuses_a_public_host_without_tokens(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["serve", "-c", str(_native_only(tmp_path)), "--host", "0.0.0.0"])
    assert done.exit_code == 2
    assert "serving on '0.0.0.0' without tokens" in done.stderr


def test_serve_names_an_unknown_profile(tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["serve", "-c", str(_native_only(tmp_path)), "--profile", "raeder"])
    assert done.exit_code == 2
    assert "--profile 'raeder': no such profile; the profiles are default, reader" in done.stderr


def test_serve_on_a_port_in_use_says_so(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = CliRunner().invoke(app, ["serve", "-c", str(_native_only(tmp_path)), "--port", str(port)])
    assert done.exit_code == 2, done.output
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "Give another --port" in done.stderr


def test_oauth_keys_that_cannot_be_fetched_fail_the_check_as_they_would_stop_serve(tmp_path: Path) -> None:
    oauth = {
        "issuer": "http://127.0.0.1:9",  # the discard port: nothing listens
        "resource": "http://127.0.0.1:8765/mcp",
        "jwksUri": "http://127.0.0.1:9/jwks.json",
        "fetchTimeoutSeconds": 2,
    }
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"native": [f"{EXAMPLES / 'tools.py'}:registry"], "serve": {"auth": {"oauth": oauth}}}))
    done = CliRunner().invoke(app, ["check", "-c", str(path)])
    assert done.exit_code == 1, done.output
    said = r"✗ oauth +failed: the gateway cannot check access tokens of the issuer http://127.0.0.1:9: "
    assert re.search(said + ".*could not be reached", done.stdout)
    assert "jwksUri" in done.stdout and "1 failed: oauth" in done.stderr


def test_check_says_which_profiles_are_in_search_mode(tmp_path: Path) -> None:
    config = {
        "mcpServers": {"notes": {"command": sys.executable, "args": [str(EXAMPLES / "notes_server.py")]}},
        "profiles": {"lean": {"search": True}},
    }
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps(config))
    done = CliRunner().invoke(app, ["check", "--config", str(path)])
    assert done.exit_code == 0, done.output
    assert "profiles: default (4 tools), lean (4 tools, in search mode)" in done.stdout, done.stdout


def test_serve_with_an_issuer_it_cannot_read_exits_2_before_starting_any_server(tmp_path: Path) -> None:
    started = tmp_path / "started"
    server = tmp_path / "server.py"
    server.write_text(
        f"import pathlib, runpy\npathlib.Path({str(started)!r}).touch()\n"
        f"runpy.run_path({str(EXAMPLES / 'notes_server.py')!r}, run_name='__main__')\n",
        encoding="utf-8",
    )
    oauth = {"issuer": "http://127.0.0.1:9", "resource": "http://127.0.0.1:8765/mcp", "fetchTimeoutSeconds": 2}
    config = {
        "mcpServers": {"notes": {"command": sys.executable, "args": [str(server)]}},
        "serve": {"auth": {"oauth": oauth}},
    }
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    done = CliRunner().invoke(app, ["serve", "-c", str(path), "--port", "0"])
    assert done.exit_code == 2, done.output
    assert "the gateway cannot check access tokens of the issuer http://127.0.0.1:9:" in done.stderr
    assert "could not be reached" in done.stderr
    assert not started.exists()  # the upstream server was never started
