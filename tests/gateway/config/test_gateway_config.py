"""toolmesh.json: every section loads, and every mistake names the file, the key and the fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from toolmesh import ServerConfigError, ToolAnnotations, ToolCapabilities, ToolRegistry
from toolmesh.gateway import GatewayConfig, Profile
from toolmesh.gateway._shared.catalog_view import row_rules
from toolmesh.mcp import McpServer
from toolmesh.policy import AllowServers, DenyAnnotated, DenyServers, DenyTools

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
TOKEN = "s3cret-token-0123456789-abcdef"


def _write(folder: Path, content: Any, name: str = "toolmesh.json") -> Path:
    path = folder / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def test_the_bundled_example_loads_with_paths_from_its_folder() -> None:
    config = GatewayConfig.load(EXAMPLES / "toolmesh.json")
    [notes] = config.servers
    assert notes.label == "notes" and notes.command == sys.executable  # "python" is this Python
    assert notes.cwd == str(EXAMPLES) and notes.args == ("notes_server.py",)
    assert config.native == [f"{EXAMPLES / 'tools.py'}:registry"]
    assert sorted(config.profiles) == ["notes", "reader"]
    assert config.serve.transport == "http" and config.serve.host == "127.0.0.1"


def test_comments_and_trailing_commas_are_allowed_and_syntax_errors_name_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, '{\n  // the tools\n  "native": [],\n  "serve": {"port": 9000,},\n}\n')
    assert GatewayConfig.load(path).serve.port == 9000
    path = _write(tmp_path, '{\n  "native": [\n}\n')
    with pytest.raises(ServerConfigError, match=r"toolmesh.json: line 3, column 1: invalid JSON"):
        GatewayConfig.load(path)


ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"mcpServer": {}}, "key 'mcpServer': unknown key. Did you mean 'mcpServers'?"),
    ({"serve": {"prot": 1}}, "key 'serve.prot': unknown key. Did you mean 'port'?"),
    ({"serve": {"max_body_bytes": 1}}, "key 'serve.max_body_bytes': unknown key. Did you mean 'maxBodyBytes'?"),
    ({"serve": {"port": 70000}}, "key 'serve.port': must be at most 65535"),
    ({"serve": {"port": "80"}}, "key 'serve.port': must be a whole number, not a string"),
    ({"serve": {"transport": "sse"}}, "key 'serve.transport': must be 'http' or 'stdio', not 'sse'"),
    ({"serve": {"path": "mcp"}}, "key 'serve.path': must start with '/'"),
    ({"serve": {"profile": "nope"}}, "key 'serve.profile': no profile 'nope'. The profiles are 'default'"),
    ({"profiles": {"ro": {"readonly": True}}}, "key 'profiles.ro.readonly': unknown key. Did you mean 'readOnly'?"),
    ({"profiles": {"ro": {"tools": "x*"}}}, "key 'profiles.ro.tools': must be an array, not a string. Use {"),
    ({"profiles": {"ro": {"servers": []}}}, "key 'profiles.ro.servers': is empty. Give glob patterns"),
    ({"profiles": {"default": {}}}, "key 'profiles.default': the profile 'default' always exists"),
    ({"profiles": {"a b": {}}}, "key 'profiles.a b': a profile's name is a URL path segment"),
    ({"mcpServers": {"a": {"comand": "x"}}}, "MCP server 'a': key 'comand': unknown key. Did you mean 'command'?"),
    ({"include": "nope.json"}, "key 'include': no file 'nope.json'"),
    ({"include": 3}, "key 'include': must be a path string or an array of them, not a number"),
    ({"native": "tools.py"}, "key 'native': must be an array, not a string. Give a list of"),
    ({"native": ["nope.py:registry"]}, "key 'native[0]': no file 'nope.py'"),
    ({"names": {"provider": "opanai"}}, "key 'names.provider': unknown provider 'opanai'. Did you mean 'openai'?"),
    ({"names": {"template": "{srv}"}}, "key 'names.template': template '{srv}' must contain '{tool}'"),
    ({"policy": {"denyTools": []}}, "key 'policy.denyTools': is empty. Give one or more glob patterns"),
    (
        {"policy": {"approval": "required"}},
        "key 'policy.approval': must be 'off', not 'required'. A gateway has no one",
    ),
    ({"policy": {"denyDestrutive": True}}, "key 'policy.denyDestrutive': unknown key. Did you mean 'denyDestructive'?"),
    ({"serve": {"auth": {"tokens": [{"env": "TOOLMESH_TEST_UNSET"}]}}}, "key 'serve.auth.tokens[0].env': the "),
    ({"serve": {"auth": {"tokens": [{}]}}}, "key 'serve.auth.tokens[0]': needs exactly one of 'env' and 'file'"),
    ({"serve": {"auth": {"tokens": [{"file": "nope"}]}}}, "key 'serve.auth.tokens[0].file': cannot read the token"),
    ({"serve": {"auth": {"tokens": [{"env": "X", "profiles": ["raeder"]}]}}, "profiles": {"reader": {}}}, ""),
]
"""Each bad file and the message it must give (after the file's name); see the test for the last one."""


@pytest.mark.parametrize(("document", "expected"), ERRORS[:-1])
def test_every_mistake_names_the_file_the_key_and_the_fix(tmp_path: Path, document: Any, expected: str) -> None:
    path = _write(tmp_path, document)
    with pytest.raises(ServerConfigError) as caught:
        GatewayConfig.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: "), message
    assert expected in message, message
    assert caught.value.key is not None and caught.value.origin == str(path)


def test_every_unknown_key_of_a_file_is_named_in_one_error(tmp_path: Path) -> None:
    path = _write(tmp_path, {"serve": {"prot": 1, "hots": "127.0.0.1"}, "profile": {}, "native": []})
    with pytest.raises(ServerConfigError) as caught:
        GatewayConfig.load(path)
    message = str(caught.value)
    first, _, also = message.partition("Also unknown: ")
    named = {key for key in ("'serve.prot'", "'serve.hots'", "'profile'") if f"key {key}: unknown key" in first}
    assert len(named) == 1, message  # one leads, with its suggestion ...
    assert {part.strip(" .") for part in also.split(",")} == {"'serve.prot'", "'serve.hots'", "'profile'"} - named
    good = _write(tmp_path, {"serve": {"port": 1, "host": "127.0.0.1"}, "profiles": {}, "native": []})
    assert GatewayConfig.load(good).serve.port == 1  # fixing them all is enough: nothing else was held back


def test_a_token_limited_to_an_unknown_profile_suggests_the_right_one(tmp_path: Path) -> None:
    path = _write(tmp_path, ERRORS[-1][0])
    with pytest.raises(ServerConfigError, match=r"key 'serve.auth.tokens\[0\].profiles\[0\]': no profile 'raeder'. "):
        GatewayConfig.load(path)
    with pytest.raises(ServerConfigError, match=r"Did you mean 'reader'\? The profiles are 'default', 'reader'"):
        GatewayConfig.load(path)


# -- servers: mcpServers and include ------------------------------------------------------------


def test_include_reads_a_claude_desktop_file_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "claude").mkdir()
    _write(
        tmp_path / "claude", {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"], "cwd": "work"}}}, "c.json"
    )
    path = _write(
        tmp_path,
        {"mcpServers": {"web": {"url": "http://127.0.0.1:9/mcp"}}, "include": "claude/c.json"},
    )
    web, fs = GatewayConfig.load(path).servers
    assert (web.label, web.transport) == ("web", "http")
    # Another host's file: its servers run as that host runs them (command and cwd as written).
    assert (fs.label, fs.command, fs.cwd) == ("fs", "npx", "work")


def test_a_server_defined_twice_is_refused(tmp_path: Path) -> None:
    _write(tmp_path, {"mcpServers": {"fs": {"command": "npx"}}}, "c.json")
    path = _write(tmp_path, {"mcpServers": {"fs": {"command": "uvx"}}, "include": ["c.json"]})
    with pytest.raises(ServerConfigError, match=r"key 'include\[0\]': the server 'fs' of c.json is also defined in"):
        GatewayConfig.load(path)


def test_an_included_files_own_error_names_that_file(tmp_path: Path) -> None:
    included = _write(tmp_path, {"mcpServers": {"fs": {"command": "npx", "timeout": "long"}}}, "c.json")
    with pytest.raises(ServerConfigError, match=rf"^{included}: MCP server 'fs': key 'timeout'"):
        GatewayConfig.load(_write(tmp_path, {"include": "c.json"}))


# -- native tools: a file or an importable module ----------------------------------------------


def test_native_tools_load_from_a_file_and_from_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "gw_native_pkg.py").write_text(
        "from toolmesh import tool\n\n@tool\ndef shout(text: str) -> str:\n    return text.upper()\n\ntools = [shout]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    tools_copy = tmp_path / "here" / "tools.py"
    tools_copy.parent.mkdir()
    tools_copy.write_text((EXAMPLES / "tools.py").read_text())
    path = _write(tmp_path, {"native": ["here/tools.py:registry", "gw_native_pkg:tools"]})
    registry = GatewayConfig.load(path).registry()
    assert [row.name for row in registry.entries()] == ["forecast", "word_count", "swatch", "shout"]


def test_a_native_attribute_typo_is_named_when_the_registry_is_built(tmp_path: Path) -> None:
    path = _write(tmp_path, {"native": [f"{EXAMPLES / 'tools.py'}:registri"]})
    config = GatewayConfig.load(path)
    with pytest.raises(
        Exception, match=r"key 'native\[0\]': .*tools.py has no attribute 'registri'; did you mean 'registry'"
    ):
        config.registry()


def test_a_missing_module_is_named_with_the_fix(tmp_path: Path) -> None:
    config = GatewayConfig.load(_write(tmp_path, {"native": ["no_such_module_here:tools"]}))
    with pytest.raises(Exception, match=r"cannot import the module 'no_such_module_here'.*install it, or give a file"):
        config.registry()


# -- names, policy and profiles -------------------------------------------------------------


def test_names_become_the_registrys_name_policy(tmp_path: Path) -> None:
    config = GatewayConfig.load(_write(tmp_path, {"names": {"provider": "openai", "template": "{server}-{tool}"}}))
    assert config.names is not None and config.names.model_name("docs", "search.v2") == "docs-search_v2"
    assert config.registry().name_policy is config.names


def test_policy_becomes_row_rules_in_a_fixed_order(tmp_path: Path) -> None:
    policy = {"allowServers": ["notes"], "denyServers": ["web*"], "denyTools": ["*forget"], "denyDestructive": True}
    hooks = GatewayConfig.load(_write(tmp_path, {"policy": policy})).hooks
    assert [type(h) for h in hooks] == [DenyServers, AllowServers, DenyTools, DenyAnnotated]
    assert repr(hooks[-1]) == "DenyAnnotated(destructive=True, mcp_defaults=True)"


async def _example_rows() -> tuple[ToolRegistry, list[Any]]:
    sys.path.insert(0, str(EXAMPLES))
    try:
        from notes_server import server
    finally:
        sys.path.remove(str(EXAMPLES))
    registry = ToolRegistry()

    @registry.tool(capabilities=ToolCapabilities(annotations=ToolAnnotations(read_only=True)))
    def peek() -> str:
        """Looks."""
        return "x"

    @registry.tool
    def plain() -> str:
        """States nothing."""
        return "y"

    await registry.__aenter__()
    await registry.connect(McpServer.in_process("notes", server))
    return registry, list(registry.entries())


async def test_profiles_select_by_names_servers_native_and_annotations(tmp_path: Path) -> None:
    registry, rows = await _example_rows()
    try:
        profiles = {
            "reader": {"readOnly": True},
            "safe": {"destructive": False},
            "notes": {"servers": ["no*"], "native": False, "excludeTools": ["*forget"]},
            "search": {"tools": ["*search", "peek"]},
        }
        config = GatewayConfig.load(_write(tmp_path, {"profiles": profiles, "policy": {"denyTools": ["notes__read"]}}))
        rules = row_rules(config.hooks)
        listed = [row for row in rows if all(rule(row) for rule in rules)]
        chosen = {name: [r.name for r in listed if p.allows(r)] for name, p in config.profiles.items()}
        assert chosen == {
            "reader": ["peek", "notes__list_notes", "notes__search"],
            # A Python row that states nothing is not known to be safe; MCP rows follow the spec's defaults.
            "safe": ["notes__list_notes", "notes__search"],
            "notes": ["notes__list_notes", "notes__search"],
            "search": ["peek", "notes__search"],
        }
        assert "notes__read" not in [r.name for r in listed]
    finally:
        await registry.__aexit__(None, None, None)


def test_a_profile_made_in_python_checks_its_name() -> None:
    with pytest.raises(Exception, match="URL path segment"):
        Profile(name="a/b")
    assert Profile(name="x", tools="a*").tools == ("a*",)


# -- serve and auth ----------------------------------------------------------------------------


def test_tokens_come_from_the_environment_and_from_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLMESH_TEST_TOKEN", TOKEN)
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "reader").write_text(TOKEN[::-1] + "\n")
    serve = {
        "transport": "http",
        "port": 0,
        "stateless": True,
        "maxBodyBytes": 1000,
        "allowedHosts": ["gw.internal:8765"],
        "allowedOrigins": ["https://app.example"],
        "auth": {
            "tokens": [{"env": "TOOLMESH_TEST_TOKEN"}, {"file": "secrets/reader", "profiles": ["reader"]}],
        },
    }
    config = GatewayConfig.load(_write(tmp_path, {"serve": serve, "profiles": {"reader": {"readOnly": True}}}))
    settings = config.serve
    assert (settings.transport, settings.port, settings.stateless, settings.max_body_bytes) == ("http", 0, True, 1000)
    assert settings.allowed_hosts == ("gw.internal:8765",) and settings.allowed_origins == ("https://app.example",)
    first, second = settings.tokens
    assert (first.token, first.source, first.profiles) == (TOKEN, "env TOOLMESH_TEST_TOKEN", None)
    assert (second.token, second.source, second.profiles) == (TOKEN[::-1], "file secrets/reader", frozenset({"reader"}))
    assert TOKEN not in repr(config) and TOKEN[::-1] not in repr(config)


@pytest.mark.parametrize(
    ("auth", "key"),
    [
        ({"tokens": [{"token": TOKEN}]}, "serve.auth.tokens[0].token"),
        ({"tokens": [TOKEN]}, "serve.auth.tokens[0]"),
        ({"token": TOKEN}, "serve.auth.token"),
    ],
)
def test_a_literal_token_is_refused_without_showing_it(tmp_path: Path, auth: Any, key: str) -> None:
    with pytest.raises(ServerConfigError) as caught:
        GatewayConfig.load(_write(tmp_path, {"serve": {"auth": auth}}))
    message = str(caught.value)
    assert f"key '{key}': a token is never written in the config file" in message
    assert '{"env": "TOOLMESH_TOKEN"}' in message and TOKEN not in message


def test_a_short_token_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLMESH_TEST_TOKEN", "abc")
    with pytest.raises(ServerConfigError, match=r"shorter than 16 characters.*secrets.token_urlsafe") as caught:
        GatewayConfig.load(_write(tmp_path, {"serve": {"auth": {"tokens": [{"env": "TOOLMESH_TEST_TOKEN"}]}}}))
    assert "abc" not in str(caught.value).replace("TOOLMESH", "")


def test_a_config_nested_too_deeply_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"profiles": {"p": {"tools": ' + "[" * 200 + "]" * 200 + "}}}")
    with pytest.raises(ServerConfigError, match=r"toolmesh\.json.*nested too deeply to read \(more than 128 levels"):
        GatewayConfig.load(path)
