"""MCP server specs: constructors, validation, secrets, and the mcpServers JSON."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from toolmesh import ConfigurationError
from toolmesh.mcp import McpServer, ServerConfigError, check_allowed_hosts, redact_url

SECRET = "sk-very-secret-value"


def _error(excinfo: pytest.ExceptionInfo[ServerConfigError]) -> str:
    text = str(excinfo.value)
    assert SECRET not in text
    assert SECRET not in repr(excinfo.value)
    return text


# -- stdio -------------------------------------------------------------------------------


def test_stdio_spec_with_defaults() -> None:
    spec = McpServer.stdio("fs", "npx", ["-y", "@modelcontextprotocol/server-filesystem", "."])
    assert spec.label == "fs"
    assert spec.transport == "stdio"
    assert spec.command == "npx"
    assert spec.args == ("-y", "@modelcontextprotocol/server-filesystem", ".")
    assert dict(spec.env) == {}
    assert spec.cwd is None
    assert spec.url is None and dict(spec.headers) == {} and spec.auth is None
    assert spec.timeout == 30.0
    assert spec.call_timeout == 60.0
    assert spec.prefix is True
    assert dict(spec.aliases) == {}
    assert spec.include is None and spec.exclude == ()
    assert spec.max_pages == 100
    assert spec.allow_insecure_http is False


def test_stdio_options() -> None:
    spec = McpServer.stdio(
        "fs",
        "python",
        ("server.py",),
        env={"TOKEN": SECRET},
        cwd=Path("/tmp"),
        timeout=5,
        call_timeout=None,
        prefix=False,
        aliases={"read_file": "read"},
        include=["read_*"],
        exclude="read_secret",
        max_pages=3,
    )
    assert spec.cwd == "/tmp"
    assert spec.timeout == 5.0 and isinstance(spec.timeout, float)
    assert spec.call_timeout is None
    assert spec.prefix is False
    assert dict(spec.aliases) == {"read_file": "read"}
    assert spec.include == ("read_*",)
    assert spec.exclude == ("read_secret",)
    assert spec.max_pages == 3


def test_collections_are_copied_and_immutable() -> None:
    env = {"A": "1"}
    args = ["x"]
    spec = McpServer.stdio("fs", "cmd", args, env=env)
    env["A"] = "2"
    args.append("y")
    assert dict(spec.env) == {"A": "1"}
    assert spec.args == ("x",)
    with pytest.raises(TypeError):
        spec.env["A"] = "3"  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.label = "other"  # type: ignore[misc]


def test_stdio_needs_a_command() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.stdio("fs", "  ")
    assert (
        _error(info)
        == "MCP server 'fs': key 'command': a stdio server needs a command. Pass the executable, e.g. 'npx'."
    )
    assert info.value.server == "fs" and info.value.key == "command"
    assert isinstance(info.value, ConfigurationError)


def test_stdio_args_must_be_strings() -> None:
    with pytest.raises(ServerConfigError, match=r"MCP server 'fs': key 'args\[1\]': must be a string, not int"):
        McpServer.stdio("fs", "cmd", ["a", 1])  # type: ignore[list-item]
    with pytest.raises(ServerConfigError, match=r"key 'args': args must be a list of strings"):
        McpServer.stdio("fs", "cmd", "a b")


def test_stdio_env_values_must_be_strings_and_are_not_shown() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.stdio("fs", "cmd", env={"PORT": 8080})  # type: ignore[dict-item]
    text = _error(info)
    assert text == "MCP server 'fs': key 'env.PORT': the value must be a string, not int."
    assert "8080" not in text


def test_stdio_env_names_are_checked() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'env.A=B': is not a valid environment variable name"):
        McpServer.stdio("fs", "cmd", env={"A=B": SECRET})


def test_stdio_refuses_http_keys() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer(label="fs", transport="stdio", command="cmd", url="https://example.com/mcp")
    assert _error(info) == (
        "MCP server 'fs': key 'url': 'url' does not apply to a stdio server. "
        "Use McpServer.http(...) for an HTTP server."
    )


# -- labels ------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["fs", "brave-search", "My_Server2", "x" * 64])
def test_good_labels(label: str) -> None:
    assert McpServer.stdio(label, "cmd").label == label


def test_empty_label_is_refused() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.stdio("", "cmd")
    assert _error(info) == (
        "key 'label': the label '' cannot be used in tool names; use 1-64 letters, digits, '_' or '-'. "
        "Rename it, e.g. 'docs'."
    )


@pytest.mark.parametrize(("label", "suggestion"), [("my server", "my_server"), ("a.b", "a_b"), ("x" * 65, "x" * 64)])
def test_labels_that_cannot_be_in_names_are_refused(label: str, suggestion: str) -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.stdio(label, "cmd")
    assert info.value.key == "label"
    assert f"Rename it, e.g. {suggestion!r}." in str(info.value)


def test_unknown_transport() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'transport': unknown transport 'sse'"):
        McpServer(label="x", transport="sse")  # type: ignore[arg-type]


# -- http --------------------------------------------------------------------------------


def test_http_spec() -> None:
    spec = McpServer.http("docs", "https://example.com/mcp", headers={"Authorization": f"Bearer {SECRET}"})
    assert spec.transport == "http"
    assert spec.url == "https://example.com/mcp"
    assert dict(spec.headers) == {"Authorization": f"Bearer {SECRET}"}
    assert spec.host == "example.com"
    assert spec.command is None and spec.args == ()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/mcp",
        "http://127.5.6.7/mcp",
        "http://localhost:3000/mcp",
        "http://LOCALHOST/mcp",
        "http://[::1]:8000/mcp",
        "http://[::ffff:127.0.0.1]/mcp",
        "https://example.com/mcp",
        "HTTPS://Example.COM:8443/mcp",
    ],
)
def test_http_urls_allowed_without_opt_in(url: str) -> None:
    assert McpServer.http("docs", url).url == url


@pytest.mark.parametrize(
    "url", ["http://example.com/mcp", "http://10.0.0.5:8000/mcp", "http://0.0.0.0/mcp", "http://localhost.evil.com/"]
)
def test_plain_http_to_other_hosts_is_refused(url: str) -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.http("docs", url)
    text = _error(info)
    assert text.startswith(f"MCP server 'docs': key 'url': {url!r} is plain http to a host that is not loopback")
    assert "Use https://, or pass allow_insecure_http=True (allowInsecureHttp in JSON)" in text


def test_plain_http_with_opt_in() -> None:
    spec = McpServer.http("docs", "http://10.0.0.5:8000/mcp", allow_insecure_http=True)
    assert spec.allow_insecure_http is True


@pytest.mark.parametrize("url", ["ftp://example.com/mcp", "ws://example.com/mcp", "example.com/mcp", "/mcp"])
def test_non_http_urls_are_refused(url: str) -> None:
    with pytest.raises(ServerConfigError, match=r"key 'url': .* is not an http\(s\) URL\. Use the server's"):
        McpServer.http("docs", url)


def test_url_without_host_is_refused() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'url': 'https:///mcp' has no host\. Use a full URL"):
        McpServer.http("docs", "https:///mcp")


def test_url_with_bad_port_is_refused() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'url': .* is not a valid URL"):
        McpServer.http("docs", "https://example.com:99999/mcp")


def test_empty_url_is_refused() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'url': an HTTP server needs a url"):
        McpServer.http("docs", "")


@pytest.mark.parametrize(
    "url", [f"https://user:{SECRET}@example.com/mcp", f"https://{SECRET}@example.com/mcp", "https://user:@example.com/"]
)
def test_credentials_in_urls_are_refused_without_showing_them(url: str) -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.http("docs", url)
    text = _error(info)
    assert "has credentials in it (user:password@)" in text
    assert "put them in headers, e.g. headers={'Authorization': 'Bearer <token>'}" in text
    assert "user" not in text.split("has credentials")[0]


def test_header_values_must_be_strings_and_are_not_shown() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.http("docs", "https://example.com/mcp", headers={"X-Key": 12345})  # type: ignore[dict-item]
    text = _error(info)
    assert text == "MCP server 'docs': key 'headers.X-Key': the value must be a string, not int."


def test_header_names_and_values_are_checked() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'headers.Bad Name': is not a valid HTTP header name"):
        McpServer.http("docs", "https://example.com/mcp", headers={"Bad Name": SECRET})
    with pytest.raises(ServerConfigError) as info:
        McpServer.http("docs", "https://example.com/mcp", headers={"X-Key": SECRET + "\r\nX-Evil: 1"})
    assert _error(info) == "MCP server 'docs': key 'headers.X-Key': the value contains a line break or NUL character."


def test_auth_must_be_an_httpx2_auth() -> None:
    spec = McpServer.http("docs", "https://example.com/mcp", auth=httpx2.BasicAuth("user", SECRET))
    assert isinstance(spec.auth, httpx2.Auth)
    assert SECRET not in repr(spec)
    with pytest.raises(ServerConfigError, match=r"key 'auth': must be an httpx2.Auth, not str"):
        McpServer.http("docs", "https://example.com/mcp", auth=SECRET)  # type: ignore[arg-type]


def test_http_refuses_stdio_keys() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'command': 'command' does not apply to a HTTP server"):
        McpServer(label="docs", transport="http", url="https://example.com/mcp", command="npx")
    with pytest.raises(ServerConfigError, match=r"key 'env': 'env' does not apply"):
        McpServer(label="docs", transport="http", url="https://example.com/mcp", env={"A": SECRET})


# -- options -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, -1, float("inf"), float("nan"), True, "30"])
def test_timeouts_must_be_positive_numbers(value: Any) -> None:
    with pytest.raises(
        ServerConfigError, match=r"MCP server 'fs': key 'timeout': must be a positive number of seconds"
    ):
        McpServer.stdio("fs", "cmd", timeout=value)
    with pytest.raises(ServerConfigError, match=r"key 'call_timeout': must be a positive number of seconds"):
        McpServer.stdio("fs", "cmd", call_timeout=value)


@pytest.mark.parametrize("value", [0, -5, True, 2.5])
def test_max_pages_must_be_a_positive_integer(value: Any) -> None:
    with pytest.raises(ServerConfigError, match=r"key 'max_pages': must be a whole number of at least 1"):
        McpServer.stdio("fs", "cmd", max_pages=value)


@pytest.mark.parametrize("value", [0, -5, True, 2.5, "1000"])
def test_max_page_bytes_is_a_positive_integer_or_none_and_read_from_a_file(value: Any) -> None:
    with pytest.raises(ServerConfigError, match=r"key 'max_page_bytes': must be a whole number of at least 1 or None"):
        McpServer.stdio("fs", "cmd", max_page_bytes=value)
    assert McpServer.stdio("fs", "cmd", max_page_bytes=None).max_page_bytes is None
    (spec,) = McpServer.from_config({"mcpServers": {"fs": {"command": "cmd", "maxPageBytes": 65536}}})
    assert spec.max_page_bytes == 65536 and "max_page_bytes=65536" in repr(spec)


def test_prefix_must_be_a_bool() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'prefix': must be true or false"):
        McpServer.stdio("fs", "cmd", prefix="yes")  # type: ignore[arg-type]


def test_aliases_are_checked() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'aliases.read': the value must be a string, not int \(3\)"):
        McpServer.stdio("fs", "cmd", aliases={"read": 3})  # type: ignore[dict-item]
    with pytest.raises(ServerConfigError, match=r"key 'aliases.read': the alias is empty"):
        McpServer.stdio("fs", "cmd", aliases={"read": ""})


def test_include_and_exclude_are_globs() -> None:
    spec = McpServer.stdio("fs", "cmd", include=["read_*", "list_?"], exclude=["*_secret"])
    assert spec.allows("read_file")
    assert spec.allows("list_a")
    assert not spec.allows("list_ab")
    assert not spec.allows("read_secret")
    assert not spec.allows("write_file")
    assert not spec.allows("READ_file")  # case-sensitive, like tool names


def test_no_include_keeps_everything_but_excluded() -> None:
    spec = McpServer.stdio("fs", "cmd", exclude=["delete_*"])
    assert spec.allows("anything")
    assert not spec.allows("delete_all")


def test_empty_include_is_refused() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.stdio("fs", "cmd", include=[])
    assert str(info.value) == (
        "MCP server 'fs': key 'include': is empty, so no tool would be kept. Leave it out to keep every tool."
    )


def test_bad_patterns_are_refused() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'exclude\[0\]': must be a non-empty glob pattern string"):
        McpServer.stdio("fs", "cmd", exclude=[""])
    with pytest.raises(ServerConfigError, match=r"key 'include': must be a list of glob patterns, not int"):
        McpServer.stdio("fs", "cmd", include=3)  # type: ignore[arg-type]


def test_replace_rechecks() -> None:
    spec = McpServer.http("docs", "https://example.com/mcp")
    assert dataclasses.replace(spec, timeout=3).timeout == 3.0
    with pytest.raises(ServerConfigError, match="plain http"):
        dataclasses.replace(spec, url="http://example.com/mcp")


# -- secrets -----------------------------------------------------------------------------


def test_repr_of_stdio_shows_keys_only() -> None:
    spec = McpServer.stdio("fs", "npx", ["--token", SECRET], env={"API_KEY": SECRET, "DEBUG": "1"}, cwd="/srv")
    text = repr(spec)
    assert SECRET not in text and SECRET not in str(spec)
    assert text == "McpServer.stdio('fs', command='npx', args=<2 args>, env_keys=['API_KEY', 'DEBUG'], cwd='/srv')"


def test_repr_of_http_shows_keys_only_and_redacts_the_url() -> None:
    spec = McpServer.http(
        "docs",
        f"https://example.com:8443/mcp?api_key={SECRET}&v=2#frag",
        headers={"Authorization": f"Bearer {SECRET}"},
        timeout=5,
        prefix=False,
        include=["search*"],
    )
    text = repr(spec)
    assert SECRET not in text and SECRET not in str(spec)
    assert text == (
        "McpServer.http('docs', url='https://example.com:8443/mcp?api_key=***&v=***', "
        "header_keys=['Authorization'], timeout=5.0, prefix=False, include=('search*',))"
    )


def test_redact_url() -> None:
    assert redact_url("https://u:p@h.example/mcp?k=v#f") == "https://h.example/mcp?k=***"
    assert redact_url("http://[::1]:8000/mcp") == "http://[::1]:8000/mcp"
    assert redact_url("https://example.com:bad/") == "<invalid url>"


def test_url_errors_do_not_show_query_secrets() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.http("docs", f"http://example.com/mcp?token={SECRET}")
    assert "?token=***" in _error(info)


# -- allowed hosts -----------------------------------------------------------------------


def test_check_allowed_hosts() -> None:
    servers = [
        McpServer.http("a", "https://api.example.com/mcp"),
        McpServer.http("b", "https://EXAMPLE.org./mcp"),
        McpServer.http("c", "http://[::1]:9000/mcp"),
        McpServer.stdio("d", "cmd"),
    ]
    assert check_allowed_hosts(servers, ["*.example.com", "example.org", "[::1]"]) == servers


def test_a_host_outside_the_allowlist_is_refused() -> None:
    servers = [McpServer.http("a", "https://api.example.com/mcp"), McpServer.http("b", "https://evil.net/mcp")]
    with pytest.raises(ServerConfigError) as info:
        check_allowed_hosts(servers, ["api.example.com"])
    assert str(info.value) == (
        "MCP server 'b': key 'url': host 'evil.net' is not an allowed host (allowed: 'api.example.com'). "
        "Add the host to allowed_hosts, or remove the server."
    )


def test_wildcards_match_subdomains_only() -> None:
    with pytest.raises(ServerConfigError, match=r"host 'example\.com' is not an allowed host"):
        check_allowed_hosts([McpServer.http("a", "https://example.com/mcp")], ["*.example.com"])
    with pytest.raises(ServerConfigError, match=r"host 'badexample\.com' is not an allowed host"):
        check_allowed_hosts([McpServer.http("a", "https://badexample.com/mcp")], ["*.example.com"])
    deep = McpServer.http("a", "https://a.b.example.com/mcp")
    assert check_allowed_hosts([deep], ["*.example.com"]) == [deep]


def test_an_empty_allowlist_refuses_every_http_server() -> None:
    with pytest.raises(ServerConfigError, match=r"allowed: none"):
        check_allowed_hosts([McpServer.http("a", "https://example.com/mcp")], [])
    assert check_allowed_hosts([McpServer.stdio("s", "cmd")], []) != []


def test_allowed_hosts_must_be_a_list() -> None:
    with pytest.raises(ServerConfigError, match=r"allowed_hosts must be a list of host names, not a string"):
        check_allowed_hosts([], "example.com")


# -- the mcpServers JSON -----------------------------------------------------------------


def _write(tmp_path: Path, content: Any, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


CLAUDE_DESKTOP = {
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
        },
        "github": {
            "command": "docker",
            "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": SECRET},
        },
        "docs": {"url": "https://docs.example.com/mcp", "headers": {"Authorization": f"Bearer {SECRET}"}},
    },
}


def test_claude_desktop_file(tmp_path: Path) -> None:
    servers = McpServer.from_config(_write(tmp_path, CLAUDE_DESKTOP))
    assert [s.label for s in servers] == ["filesystem", "github", "docs"]
    fs, gh, docs = servers
    assert fs.transport == "stdio" and fs.command == "npx" and fs.args[-1] == "/Users/me/Desktop"
    assert gh.env["GITHUB_PERSONAL_ACCESS_TOKEN"] == SECRET
    assert docs.transport == "http" and docs.headers["Authorization"] == f"Bearer {SECRET}"
    assert all(SECRET not in repr(s) for s in servers)


def test_path_as_string_and_mapping(tmp_path: Path) -> None:
    path = _write(tmp_path, CLAUDE_DESKTOP)
    assert McpServer.from_config(str(path)) == McpServer.from_config(CLAUDE_DESKTOP)


def test_vscode_file_with_types_comments_and_trailing_commas(tmp_path: Path) -> None:
    text = """{
  // VS Code's .vscode/mcp.json
  "inputs": [],
  "servers": {
    "memory": {
      "type": "stdio",
      "command": "npx",  /* the package runner */
      "args": ["-y", "@modelcontextprotocol/server-memory",],
    },
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"X-Url": "http://a//b"}},
  },
}
"""
    servers = McpServer.from_config(_write(tmp_path, text))
    assert [(s.label, s.transport) for s in servers] == [("memory", "stdio"), ("remote", "http")]
    assert servers[0].args == ("-y", "@modelcontextprotocol/server-memory")
    assert servers[1].headers["X-Url"] == "http://a//b"


@pytest.mark.parametrize("kind", ["streamable-http", "streamableHttp", "streamable_http"])
def test_streamable_http_type_spellings(kind: str) -> None:
    [spec] = McpServer.from_config({"servers": {"r": {"type": kind, "url": "https://x.example/mcp"}}})
    assert spec.transport == "http"


def test_our_optional_keys() -> None:
    [spec] = McpServer.from_config(
        {
            "mcpServers": {
                "docs": {
                    "url": "http://10.1.2.3:8000/mcp",
                    "timeout": 10,
                    "callTimeout": 2.5,
                    "prefix": False,
                    "aliases": {"search": "find_docs"},
                    "include": ["search*", "read"],
                    "exclude": "search_admin",
                    "maxPages": 7,
                    "allowInsecureHttp": True,
                    "autoApprove": ["search"],
                }
            }
        }
    )
    assert spec.timeout == 10.0 and spec.call_timeout == 2.5 and spec.prefix is False
    assert dict(spec.aliases) == {"search": "find_docs"}
    assert spec.include == ("search*", "read") and spec.exclude == ("search_admin",)
    assert spec.max_pages == 7 and spec.allow_insecure_http is True


def test_snake_case_keys_and_null_call_timeout() -> None:
    [spec] = McpServer.from_config(
        {"mcpServers": {"s": {"command": "x", "call_timeout": None, "max_pages": 2, "allow_insecure_http": False}}}
    )
    assert spec.call_timeout is None and spec.max_pages == 2


def test_both_spellings_of_a_key_are_refused() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config({"mcpServers": {"s": {"command": "x", "callTimeout": 1, "call_timeout": 2}}})
    assert str(info.value) == (
        "MCP server 's': key 'call_timeout': is given twice (as 'callTimeout' and 'call_timeout'). Keep one of them."
    )


def test_disabled_servers_are_skipped() -> None:
    servers = McpServer.from_config(
        {"mcpServers": {"a": {"command": "x", "disabled": True}, "b": {"command": "y", "disabled": False}}}
    )
    assert [s.label for s in servers] == ["b"]


def test_a_disabled_server_is_not_validated() -> None:
    assert McpServer.from_config({"mcpServers": {"a": {"url": "http://example.com/", "disabled": True}}}) == []


def test_disabled_must_be_a_bool() -> None:
    with pytest.raises(ServerConfigError, match=r"MCP server 'a': key 'disabled': must be true or false, not a string"):
        McpServer.from_config({"mcpServers": {"a": {"command": "x", "disabled": "yes"}}})


def test_unknown_key_names_the_server_and_the_key(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcpServers": {"fs": {"command": "x", "comand": "y"}}})
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config(path)
    text = str(info.value)
    assert text.startswith(
        f"{path}: MCP server 'fs': key 'comand': unknown key. "
        "Did you mean 'command'? Otherwise remove it; known keys here are "
    )
    assert "'command'" in text and "'callTimeout'" in text
    assert info.value.origin == str(path)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": 3}, "MCP server 's': key 'command': must be a string, not a number."),
        ({"command": "x", "args": "a b"}, "MCP server 's': key 'args': must be an array of strings, not a string."),
        ({"command": "x", "args": ["a", None]}, "MCP server 's': key 'args[1]': must be a string, not null."),
        ({"command": "x", "env": ["A=1"]}, "MCP server 's': key 'env': must be an object of strings, not an array."),
        (
            {"command": "x", "env": {"A": True}},
            "MCP server 's': key 'env.A': must be a string or a number, not a boolean.",
        ),
        ({"command": "x", "cwd": 1}, "MCP server 's': key 'cwd': must be a string, not a number."),
        ({"url": ["https://x"]}, "MCP server 's': key 'url': must be a string, not an array."),
        (
            {"url": "https://x.example", "headers": "Bearer t"},
            "MCP server 's': key 'headers': must be an object of strings, not a string.",
        ),
        (
            {"command": "x", "timeout": "30"},
            "MCP server 's': key 'timeout': must be a number of seconds, not a string.",
        ),
        (
            {"command": "x", "timeout": True},
            "MCP server 's': key 'timeout': must be a number of seconds, not a boolean.",
        ),
        ({"command": "x", "prefix": 1}, "MCP server 's': key 'prefix': must be true or false, not a number."),
        ({"command": "x", "maxPages": 1.5}, "MCP server 's': key 'maxPages': must be a whole number, not a number."),
        (
            {"command": "x", "include": {}},
            "MCP server 's': key 'include': must be an array of glob patterns, not an object.",
        ),
        ({"command": "x", "aliases": []}, "MCP server 's': key 'aliases': must be an object of strings, not an array."),
        (
            {"url": "https://x.example", "allowInsecureHttp": "yes"},
            "MCP server 's': key 'allowInsecureHttp': must be true or false, not a string.",
        ),
    ],
)
def test_wrong_types_name_the_server_and_key(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config({"mcpServers": {"s": entry}})
    assert str(info.value) == message


def test_both_command_and_url() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config({"mcpServers": {"s": {"command": "x", "url": "https://x.example"}}})
    assert str(info.value) == (
        "MCP server 's': key 'url': has both 'command' and 'url'. "
        "Keep 'command' for a local (stdio) server or 'url' for an HTTP server, not both."
    )


def test_neither_command_nor_url() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config({"mcpServers": {"s": {"args": ["x"]}}})
    assert str(info.value) == (
        "MCP server 's': has neither 'command' nor 'url'. "
        'Add "command" (and "args") for a local server, or "url" for an HTTP server.'
    )


def test_type_conflicts() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'url': a \"stdio\" server has no url"):
        McpServer.from_config({"servers": {"s": {"type": "stdio", "command": "x", "url": "https://x.example"}}})
    with pytest.raises(ServerConfigError, match=r"key 'command': an \"http\" server has no command"):
        McpServer.from_config({"servers": {"s": {"type": "http", "command": "x"}}})
    with pytest.raises(ServerConfigError, match=r"key 'type': unknown type 'websocket'. Use \"stdio\" or \"http\""):
        McpServer.from_config({"servers": {"s": {"type": "websocket", "url": "https://x.example"}}})
    with pytest.raises(ServerConfigError, match=r"key 'url': an HTTP server needs a url"):
        McpServer.from_config({"servers": {"s": {"type": "http"}}})


def test_sse_is_refused_with_a_fix() -> None:
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config({"servers": {"s": {"type": "sse", "url": "https://x.example/sse"}}})
    assert str(info.value).startswith(
        "MCP server 's': key 'type': the legacy SSE transport is not supported. "
        'Use the server\'s Streamable HTTP endpoint with "type": "http"'
    )


def test_spec_checks_apply_to_config_entries(tmp_path: Path) -> None:
    path = _write(tmp_path, {"mcpServers": {"docs": {"url": f"https://me:{SECRET}@x.example/mcp"}}})
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config(path)
    text = _error(info)
    assert text.startswith(f"{path}: MCP server 'docs': key 'url': 'https://x.example/mcp' has credentials in it")


def test_entry_must_be_an_object() -> None:
    with pytest.raises(ServerConfigError, match=r"MCP server 's': must be an object, not a string"):
        McpServer.from_config({"mcpServers": {"s": "npx server"}})


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "the config must be a JSON object, not an array."),
        ({"servers": []}, "key 'servers': must be an object of servers by label, not an array."),
        ({"mcp": {}}, "found neither 'mcpServers' (Claude Desktop, Cursor) nor 'servers' (VS Code)."),
        ({"mcpServers": {}, "servers": {}}, "key 'servers': has both 'mcpServers' and 'servers'."),
    ],
)
def test_bad_documents(tmp_path: Path, document: Any, message: str) -> None:
    path = _write(tmp_path, document)
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_an_empty_server_list() -> None:
    assert McpServer.from_config({"mcpServers": {}}) == []


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, '{\n  "mcpServers": {\n    "a": {"command": "x" "args": []}\n  }\n}\n')
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config(path)
    assert str(info.value) == (
        f"{path}: line 3, column 26: invalid JSON (Expecting ',' delimiter). Fix the JSON syntax at that position."
    )


def test_malformed_json_does_not_echo_content(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"mcpServers": {"a": {"env": {"K": "' + SECRET + '"}')
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config(path)
    assert "invalid JSON" in _error(info)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config(path)
    assert str(info.value) == f"{path}: cannot read the MCP config file (No such file or directory)."


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"mcpServers": {"\xff": {}}}')
    with pytest.raises(ServerConfigError, match="is not UTF-8 text"):
        McpServer.from_config(path)


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"mcpServers": {"a": {"command": "x"}}}).encode())
    assert [s.label for s in McpServer.from_config(path)] == ["a"]


def test_wrong_source_type() -> None:
    with pytest.raises(ServerConfigError, match="source must be a path or a mapping, not int"):
        McpServer.from_config(3)  # type: ignore[arg-type]


def test_env_references_are_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TM_TOKEN", SECRET)
    monkeypatch.setenv("TM_HOST", "api.example.com")
    [gh, docs] = McpServer.from_config(
        {
            "mcpServers": {
                "gh": {"command": "x", "args": ["--t", "${env:TM_TOKEN}"], "env": {"TOKEN": "${env:TM_TOKEN}"}},
                "docs": {"url": "https://${env:TM_HOST}/mcp", "headers": {"Authorization": "Bearer ${env:TM_TOKEN}"}},
            }
        }
    )
    assert gh.args == ("--t", SECRET) and gh.env["TOKEN"] == SECRET
    assert docs.url == "https://api.example.com/mcp"
    assert docs.headers["Authorization"] == f"Bearer {SECRET}"


def test_missing_env_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TM_MISSING", raising=False)
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config({"mcpServers": {"gh": {"command": "x", "env": {"TOKEN": "${env:TM_MISSING}"}}}})
    assert str(info.value) == (
        "MCP server 'gh': key 'env.TOKEN': refers to the environment variable 'TM_MISSING', which is not set. "
        "Set TM_MISSING in the environment."
    )


def test_input_references_are_refused() -> None:
    with pytest.raises(ServerConfigError, match=r"key 'headers.Authorization': \$\{input:token\} needs an interactive"):
        McpServer.from_config(
            {"servers": {"r": {"url": "https://x.example/mcp", "headers": {"Authorization": "${input:token}"}}}}
        )


def test_from_config_with_allowed_hosts(tmp_path: Path) -> None:
    path = _write(tmp_path, CLAUDE_DESKTOP)
    assert len(McpServer.from_config(path, allowed_hosts=["docs.example.com"])) == 3
    with pytest.raises(ServerConfigError) as info:
        McpServer.from_config(path, allowed_hosts=["*.internal"])
    assert str(info.value) == (
        f"{path}: MCP server 'docs': key 'url': host 'docs.example.com' is not an allowed host "
        "(allowed: '*.internal'). Add the host to allowed_hosts, or remove the server."
    )


def test_config_errors_never_show_secrets(tmp_path: Path) -> None:
    cases: list[dict[str, Any]] = [
        {"command": "x", "env": {"K": SECRET, "BAD": True}},
        {"url": f"http://example.com/mcp?key={SECRET}", "headers": {"Authorization": SECRET}},
        {"url": f"https://u:{SECRET}@example.com/mcp"},
        {"url": "https://example.com/mcp", "headers": {"A": SECRET, "B": False}},
        {"command": "x", "env": {"K": SECRET}, "unknown": SECRET},
    ]
    for entry in cases:
        path = _write(tmp_path, {"mcpServers": {"s": entry}})
        with pytest.raises(ServerConfigError) as info:
            McpServer.from_config(path)
        _error(info)
