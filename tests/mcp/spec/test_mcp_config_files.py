"""Real hosts' mcpServers files load; hostile files fail fast with a ServerConfigError; URL paths stay secret."""

from __future__ import annotations

import json
import logging
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from toolmesh.mcp import McpServer, ServerConfigError, check_allowed_hosts, redact_url

TOKEN = "tok-0123456789abcdef"


def _write(tmp_path: Path, content: Any, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


# -- what popular hosts write --------------------------------------------------------------


def test_cline_file_loads_with_its_own_keys_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cline = {
        "mcpServers": {
            "github.com/modelcontextprotocol/servers/tree/main/src/github": {
                "command": "npx",
                "args": ["-y", "@modelcontextprotocol/server-github"],
                "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": TOKEN},
                "disabled": False,
                "autoApprove": [],
                "transportType": "stdio",
                "timeout": 60,
            }
        }
    }
    with caplog.at_level(logging.DEBUG, logger="toolmesh.mcp"):
        [spec] = McpServer.from_config(_write(tmp_path, cline))
    assert spec.label == "github_com_modelcontextprotocol_servers_tree_main_src_github"
    assert spec.timeout == 60.0
    assert "ignoring transportType, autoApprove" in caplog.text


def test_windsurf_server_url_is_the_url() -> None:
    [spec] = McpServer.from_config({"mcpServers": {"remote": {"serverUrl": "https://mcp.example.com/mcp"}}})
    assert spec.transport == "http" and spec.url == "https://mcp.example.com/mcp"


def test_url_and_server_url_together_are_refused() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'serverUrl': has both 'url' and 'serverUrl'"):
        McpServer.from_config({"mcpServers": {"r": {"url": "https://a.example", "serverUrl": "https://a.example"}}})


def test_vscode_dev_inputs_and_description_are_ignored(tmp_path: Path) -> None:
    text = """{
  "inputs": [{"type": "promptString", "id": "key", "password": true}],
  "servers": {
    "mine": {
      "type": "stdio", "command": "python", "args": ["server.py"],
      "dev": {"watch": "src/**/*.py", "debug": {"type": "debugpy"}},
      "description": "my server under development",
    },
  },
}"""
    [spec] = McpServer.from_config(_write(tmp_path, text))
    assert (spec.label, spec.command, spec.args) == ("mine", "python", ("server.py",))


def test_numeric_env_values_become_text() -> None:
    [spec] = McpServer.from_config({"mcpServers": {"s": {"command": "x", "env": {"PORT": 8080, "RATIO": 0.5}}}})
    assert dict(spec.env) == {"PORT": "8080", "RATIO": "0.5"}


def test_cursor_env_file_is_read_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / ".env").write_text(
        '# secrets\n\nexport API_KEY=from-file\nQUOTED="a b # c"\nPLAIN=x # note\nSHARED=file\n', encoding="utf-8"
    )
    config = {"mcpServers": {"s": {"command": "x", "envFile": ".env", "env": {"SHARED": "entry"}}}}
    [spec] = McpServer.from_config(_write(tmp_path / "conf", config))
    assert dict(spec.env) == {"API_KEY": "from-file", "QUOTED": "a b # c", "PLAIN": "x", "SHARED": "entry"}


def test_a_missing_env_file_names_it(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcpServers": {"s": {"command": "x", "envFile": "nope.env"}}})
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config(path)
    assert str(info.value) == (
        f"{path}: MCP server 's': key 'envFile': {tmp_path / 'nope.env'}: "
        "cannot read the env file (No such file or directory)."
    )


def test_a_bad_env_file_line_is_named_without_its_content(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"A=1\n{TOKEN}\n", encoding="utf-8")
    with pytest.raises(ServerConfigError, match=r"line 2 is not KEY=VALUE") as info:
        McpServer.from_config(_write(tmp_path, {"mcpServers": {"s": {"command": "x", "envFile": ".env"}}}))
    assert TOKEN not in str(info.value)


def test_env_file_on_an_http_server_is_refused() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'envFile': an HTTP server has no environment"):
        McpServer.from_config({"mcpServers": {"r": {"url": "https://a.example/mcp", "envFile": ".env"}}})


# -- labels --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("my server", "my_server"),
        ("github.com/org/repo", "github_com_org_repo"),
        ("é", "_"),
    ],
)
def test_config_labels_are_sanitized(label: str, expected: str) -> None:
    [spec] = McpServer.from_config({"mcpServers": {label: {"command": "x"}}})
    assert spec.label == expected


def test_a_long_label_is_shortened_with_a_hash() -> None:
    a, b = "x" * 70 + "a", "x" * 70 + "b"
    specs = McpServer.from_config({"mcpServers": {a: {"command": "x"}, b: {"command": "x"}}})
    assert [len(s.label) for s in specs] == [64, 64]
    assert specs[0].label != specs[1].label


def test_labels_sanitizing_to_one_are_a_clear_error() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config({"mcpServers": {"a.b": {"command": "x"}, "a_b": {"command": "y"}}})
    assert str(info.value) == (
        "MCP server 'a_b': the labels 'a.b' and 'a_b' both become 'a_b' in tool names. "
        "Rename one of them; a label keeps only letters, digits, '_' and '-' (others become '_')."
    )


def test_errors_of_a_sanitized_server_name_its_label_as_written() -> None:
    with pytest.raises(ServerConfigError, match=r"^MCP server 'my server': key 'url': .*plain http"):
        McpServer.from_config({"mcpServers": {"my server": {"url": "http://example.com/mcp"}}})


def test_python_labels_stay_strict() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'label'"):
        McpServer.stdio("my server", "x")


# -- hostile files -------------------------------------------------------------------------


@pytest.mark.parametrize("text", ['{"mcpServers": ' + "[" * 100_000 + "]" * 100_000 + "}", "[" * 100_000])
def test_deep_nesting_is_a_config_error(tmp_path: Path, text: str) -> None:
    with pytest.raises(ServerConfigError, match="nested too deeply"):
        McpServer.from_config(_write(tmp_path, text))


def test_deep_nesting_with_comments_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ServerConfigError, match="nested too deeply"):
        McpServer.from_config(_write(tmp_path, "// c\n" + "[" * 100_000))


def test_nesting_past_128_levels_is_refused_before_the_file_is_parsed(tmp_path: Path) -> None:
    at_limit = '{"mcpServers": {"s": {"command": "x", "args": ' + "[" * 125 + "]" * 125 + "}}}"
    over = at_limit.replace("[", "[[", 1).replace("]", "]]", 1)
    with pytest.raises(ServerConfigError, match="args"):  # read, then refused for what it holds
        McpServer.from_config(_write(tmp_path, at_limit))
    with pytest.raises(ServerConfigError, match=r"nested too deeply to read \(more than 128 levels"):
        McpServer.from_config(_write(tmp_path, over))


def test_brackets_and_quotes_in_comments_do_not_count_as_nesting(tmp_path: Path) -> None:
    text = '// a comment: "' + "[" * 1_000 + '\n{"mcpServers": {"s": {"command": "x"}}} /* ' + "{" * 1_000 + " */"
    (server,) = McpServer.from_config(_write(tmp_path, text))
    assert server.label == "s"


def test_huge_integers_are_a_config_error(tmp_path: Path) -> None:
    text = '{"mcpServers": {"s": {"command": "x", "timeout": ' + "9" * 5000 + "}}}"
    with pytest.raises(ServerConfigError, match="a number in the JSON has too many digits"):
        McpServer.from_config(_write(tmp_path, text))


def test_huge_numbers_in_a_mapping_are_a_config_error() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'timeout': must be a number of seconds, not a number too large"):
        McpServer.from_config({"mcpServers": {"s": {"command": "x", "timeout": 10**400}}})
    with pytest.raises(ServerConfigError, match=r"key 'timeout': must be a positive number of seconds, not a number"):
        McpServer.stdio("s", "x", timeout=10**400)


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"command": "np\0x"}, "command"),
        ({"command": "x", "args": ["a", "b\0c"]}, "args[1]"),
        ({"command": "x", "env": {"K": "v\0"}}, "env.K"),
        ({"command": "x", "cwd": "/tmp\0x"}, "cwd"),
    ],
)
def test_nul_characters_are_refused_at_load(entry: dict[str, Any], key: str) -> None:
    with pytest.raises(ServerConfigError, match=rf"key {re.escape(repr(key))}.*NUL character"):
        McpServer.from_config({"mcpServers": {"s": entry}})


def test_a_huge_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    with path.open("w", encoding="utf-8") as file:
        file.write('// a comment\n{"mcpServers": {}, "pad": "')
        chunk = "x" * (1024 * 1024)
        for _ in range(50):
            file.write(chunk)
        file.write('"}')
    tracemalloc.start()
    try:
        with pytest.raises(ServerConfigError) as info:
            McpServer.from_config(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(info.value) == (
        f"{path}: the MCP config file is larger than 1,048,576 bytes. Pass max_bytes= to McpServer.from_config "
        "(--max-config-bytes on the command line) to read a larger file."
    )
    assert peak < 8 * 1024 * 1024


def test_max_bytes_raises_the_cap(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcpServers": {"s": {"command": "x"}}, "pad": "x" * 2_000_000})
    with pytest.raises(ServerConfigError, match="larger than"):
        McpServer.from_config(path)
    assert [s.label for s in McpServer.from_config(path, max_bytes=4_000_000)] == ["s"]


# -- secrets in URL paths --------------------------------------------------------------------


def test_redact_url_keeps_only_the_first_path_segment() -> None:
    assert redact_url(f"https://mcp.example.com:8443/mcp/{TOKEN}/sse?k={TOKEN}") == (
        "https://mcp.example.com:8443/mcp/***?k=***"
    )
    assert redact_url("https://mcp.example.com/mcp") == "https://mcp.example.com/mcp"
    assert redact_url("https://mcp.example.com/mcp/") == "https://mcp.example.com/mcp/"


def test_a_path_token_never_appears_in_repr_str_or_errors(tmp_path: Path) -> None:
    url = f"https://actions.example.com/mcp/{TOKEN}/sse"
    spec = McpServer.http("z", url)
    assert spec.url == url
    assert TOKEN not in repr(spec) and TOKEN not in str(spec)
    assert "url='https://actions.example.com/mcp/***'" in repr(spec)
    failing: list[Any] = [
        lambda: McpServer.http("z", f"http://example.com/mcp/{TOKEN}"),
        lambda: McpServer.http("z", f"ftp://example.com/mcp/{TOKEN}"),
        lambda: McpServer.http("z", f"https://u:p@example.com/x/{TOKEN}"),
        lambda: McpServer.from_config(
            _write(tmp_path, {"mcpServers": {"z": {"url": f"http://example.com/x/{TOKEN}", "bogus": 1}}})
        ),
        lambda: McpServer.from_config({"mcpServers": {"z": {"url": f"http://example.com/x/{TOKEN}"}}}),
        lambda: check_allowed_hosts([spec], ["other.example"]),
    ]
    for make in failing:
        with pytest.raises(ServerConfigError) as info:
            make()
        assert TOKEN not in str(info.value) and TOKEN not in repr(info.value)
