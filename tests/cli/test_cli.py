"""The toolmesh command: the catalog and one call, from a module and from an mcpServers file."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from toolmesh._cli.main import app

ROOT = Path(__file__).resolve().parents[2]
MODULE = "examples/tools.py:registry"
ACTIVE_VENV = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
"""examples/mcp.json runs ``python`` from PATH, as in a shell where the venv is active."""


@pytest.fixture(autouse=True)
def at_repository_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_tools_prints_native_and_mcp_rows() -> None:
    done = CliRunner().invoke(
        app, ["tools", "--module", MODULE, "--config", "examples/mcp.json"], env={"COLUMNS": "200", **ACTIVE_VENV}
    )
    assert done.exit_code == 0, done.output
    for expected in ("forecast", "swatch", "notes__search", "notes:search", "mcp", "native"):
        assert expected in done.output


def test_call_prints_the_result_as_json() -> None:
    done = CliRunner().invoke(app, ["call", "forecast", '{"city": "Oslo"}', "-m", MODULE, "--json"])
    assert done.exit_code == 0, done.output
    result = json.loads(done.stdout)
    assert result["duration"] > 0
    value = {"city": "Oslo", "temperature": 2.0, "unit": "celsius"}
    assert result["call_id"].startswith("call_")
    assert {k: v for k, v in result.items() if k not in ("duration", "call_id")} == {
        "name": "forecast",
        "kind": "native",
        "disposition": "succeeded",
        "error": None,
        "output": {"blocks": [{"type": "json", "value": value}], "structured": value},
        "presentation": '{"city":"Oslo","temperature":2.0,"unit":"celsius"}',
    }


def test_failed_call_exits_1_and_says_why() -> None:
    done = CliRunner().invoke(app, ["call", "forecast", '{"city": 1}', "-m", MODULE, "--json"])
    assert done.exit_code == 1
    assert json.loads(done.stdout)["error"]["kind"] == "invalid_arguments"


def test_bad_module_spec_is_a_clear_error() -> None:
    done = CliRunner().invoke(app, ["tools", "--module", "nope.py:registry"])
    assert done.exit_code == 2
    assert "no file 'nope.py'; give path/to/file.py:NAME" in done.output


def test_mcp_call_through_the_cli() -> None:
    done = CliRunner().invoke(
        app, ["call", "notes__read", '{"title": "ideas"}', "-c", "examples/mcp.json", "--json"], env=ACTIVE_VENV
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["presentation"] == "a registry where every tool is a typed row"


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic", "gemini"])
def test_export_prints_declarations_the_providers_sdk_accepts(provider: str) -> None:
    done = CliRunner().invoke(app, ["export", "--provider", provider, "-m", MODULE])
    assert done.exit_code == 0, done.output
    declarations = json.loads(done.stdout)
    if provider == "openai":
        from openai.types.chat import ChatCompletionToolParam
        from pydantic import TypeAdapter

        TypeAdapter(list[ChatCompletionToolParam]).validate_python(declarations)
        names = [d["function"]["name"] for d in declarations]
    elif provider == "openai-responses":
        names = [d["name"] for d in declarations]
    elif provider == "anthropic":
        from anthropic.types import ToolParam
        from pydantic import TypeAdapter

        TypeAdapter(list[ToolParam]).validate_python(declarations)
        names = [d["name"] for d in declarations]
    else:
        from google.genai import types

        names = [f.name for d in declarations for f in types.Tool.model_validate(d).function_declarations or []]
    assert names == ["forecast", "word_count", "swatch"]


def test_export_refuses_an_unknown_provider() -> None:
    done = CliRunner().invoke(app, ["export", "--provider", "nope", "-m", MODULE])
    assert done.exit_code == 2
    assert "--provider 'nope' is not one of openai, openai-responses, anthropic, gemini" in " ".join(
        done.output.split()
    )


@pytest.mark.parametrize("command", ["tools", "call", "export", "check", "serve"])
def test_help_is_whole_at_80_columns(command: str) -> None:
    done = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    assert max(len(line) for line in done.output.splitlines()) <= 80
    assert "…" not in done.output
    click_command = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    words = set(done.output.replace(",", " ").split())
    for param in click_command.params:
        for name in (*param.opts, *param.secondary_opts):
            if name.startswith("-"):
                assert name in words, f"{name} is not whole in `toolmesh {command} --help`"
        assert param.help is None or " ".join(param.help.split()[-2:]) in " ".join(done.output.split())


def test_the_command_list_is_whole_at_80_columns() -> None:
    done = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    listed = done.output.split("Commands:", 1)[1].splitlines()
    assert {line.split()[0] for line in listed if line.strip()} == {"tools", "call", "export", "check", "serve"}
    assert not any(line.rstrip().endswith(("...", "…")) or len(line) > 80 for line in listed)
