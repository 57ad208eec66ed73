"""Connecting MCP servers: discovery, names, collisions, connect failures, catalog order, lifecycle.

The logic (names, collisions, discovery, refresh, reconciliation) runs against fixture servers
served in-process (`demo_in_process`, `lowlevel_in_process`: the registry's `mcp.Client` speaks
JSON-RPC to a fresh server object over memory streams). Tests about a transport, an HTTP front
or a child process start the real program, only the one they need.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from pathlib import Path

import anyio
import pytest

from _mcp import (
    DEMO,
    LOWLEVEL,
    child_pids,
    demo_http,
    demo_in_process,
    demo_stdio,
    lowlevel_in_process,
    lowlevel_stdio,
    wait_until,
)
from _servers import fixture_server, free_port, http_server
from toolmesh import (
    ConfigurationError,
    ErrorKind,
    McpEntry,
    NameCollisionError,
    NamePolicy,
    NativeEntry,
    ServerConnectionError,
    ToolContext,
    ToolExecutionError,
    ToolRegistry,
    tool,
)
from toolmesh.mcp import MCP_SERVER_LABEL, McpServer
from toolmesh.providers.openai_responses import mcp_call_item

SPECIAL = {
    "FIXTURE_WEIRD_NAMES": "1",
    "FIXTURE_EXTRA_TOOLS": "docs_search",
    "FIXTURE_MANY_TOOLS": "250",
    "FIXTURE_PAGE_SIZE": "40",
    "FIXTURE_UNKNOWN": "error",
}
"""The low-level fixture with odd names (and the name one sanitizes to), 250 more tools in pages
of 40, and unknown tools answered as JSON-RPC errors."""
HANG = {"FIXTURE_LIST_HANG": "1"}
"""The low-level fixture whose tools/list never answers."""


@tool
async def echo(text: str) -> str:
    """A native echo."""
    return f"native {text}"


def snapshot_of(registry: ToolRegistry) -> tuple[list[str], list[str]]:
    return registry.names(), [c.label for c in registry.connections()]


# -- names --------------------------------------------------------------------------


async def test_same_raw_name_on_two_servers_gives_two_rows() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process("demo"))
        await registry.connect(lowlevel_in_process("low"))
        assert "demo__echo" in registry and "low__echo" in registry
        for label in ("demo", "low"):
            row = registry[f"{label}__echo"]
            assert isinstance(row, McpEntry) and row.wire_name == "echo" and row.server == label
            result = await registry.dispatch(f"{label}__echo", {"text": "hi"})
            assert result.ok and result.metadata[MCP_SERVER_LABEL] == label
            # Each server answers its own way, so each call reached its own server.
            failed = await registry.dispatch(f"{label}__protocol_error", {"code": -32603, "message": "m"})
            assert failed.error is not None and failed.error.__cause__ is not None
            assert getattr(failed.error.__cause__, "data", None) == {
                "fixture": "demo" if label == "demo" else "lowlevel"
            }


async def test_same_raw_name_without_prefixes_is_a_collision() -> None:
    async with ToolRegistry() as registry:
        both = ["echo", "protocol_error"]
        await registry.connect(demo_in_process("demo", prefix=False, include=both))
        before = snapshot_of(registry)
        with pytest.raises(NameCollisionError) as info:
            await registry.connect(lowlevel_in_process("low", prefix=False, include=both))
        message = str(info.value)
        assert "'protocol_error'" in message and "server 'demo'" in message and "server 'low'" in message
        assert "aliases=" in message  # the fix
        assert snapshot_of(registry) == before
        assert registry["protocol_error"].server == "demo"  # type: ignore[union-attr]
        # An alias resolves it.
        await registry.connect(
            lowlevel_in_process(
                "low", prefix=False, include=both, aliases={"echo": "low_echo", "protocol_error": "low_error"}
            )
        )
        assert registry["low_echo"].wire_name == "echo"  # type: ignore[union-attr]


async def test_an_aliased_tool_is_suggested_for_its_own_name() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process("demo", aliases={"echo": "say"}))
        for asked in ("demo__echo", "echo", "other__echo"):
            result = await registry.dispatch(asked, {"text": "hi"})
            assert result.error is not None and result.error.kind is ErrorKind.NOT_FOUND
            assert "Did you mean 'say'" in result.presentation.as_text(), asked
        assert registry.snapshot()._missing("demo__echo").suggestions[0] == "say"


async def test_an_mcp_name_equal_to_a_native_name_is_a_collision() -> None:
    async with ToolRegistry() as registry:
        registry.register(echo)
        before = snapshot_of(registry)
        with pytest.raises(NameCollisionError) as info:
            await registry.connect(demo_in_process("demo", prefix=False))
        assert "native tool 'echo'" in str(info.value) and "server 'demo'" in str(info.value)
        assert snapshot_of(registry) == before
        assert isinstance(registry["echo"], NativeEntry)
        # ... and a native tool cannot take an MCP row's name either, not even with replace=True.
        await registry.connect(demo_in_process("demo"))
        with pytest.raises(NameCollisionError, match="server 'demo'"):
            registry.register(echo, name="demo__echo", replace=True)


async def test_names_that_sanitize_to_one_collide() -> None:
    @tool
    async def docs_search(q: str) -> str:
        """Native search."""
        return q

    async with ToolRegistry(names=NamePolicy(provider="openai")) as registry:
        # One server lists "docs.search" and "docs_search": for OpenAI both become low__docs_search.
        with pytest.raises(NameCollisionError) as info:
            await registry.connect(lowlevel_in_process("low", SPECIAL))
        message = str(info.value)
        assert "'low__docs_search'" in message and "'docs.search'" in message and "'docs_search'" in message
        assert "server 'low'" in message and "aliases=" in message
        assert registry.connections() == [] and len(registry) == 0
        # A native row and a sanitized MCP name: the same collision, both owners named.
        registry.register(docs_search)
        with pytest.raises(NameCollisionError) as info:
            await registry.connect(lowlevel_in_process("low", SPECIAL, prefix=False, exclude=["docs_search"]))
        assert "native tool 'docs_search'" in str(info.value) and "'docs.search'" in str(info.value)
        assert registry.names() == ["docs_search"] and registry.connections() == []
        # Prefixed and without the clashing tool, names are unique; calls still send the wire name.
        await registry.connect(lowlevel_in_process("low", SPECIAL, exclude=["docs_search"]))
        row = registry["low__docs_search"]
        assert isinstance(row, McpEntry) and row.wire_name == "docs.search"
        assert registry["low__fs_read"].wire_name == "fs/read"  # type: ignore[union-attr]
        result = await registry.dispatch("low__docs_search", {"q": "x"})
        assert result.ok and result.output.as_text() == "docs.search q=x"


async def test_http_headers_reach_the_server_and_stay_secret() -> None:
    headers = {"Authorization": "Bearer s3cr3t-token", "X-Tenant": "t1"}
    async with http_server(DEMO) as url, ToolRegistry() as registry:
        connection = await registry.connect(demo_http(url, "demo", headers=headers, include=["headers"]))
        result = await registry.dispatch("demo__headers")
        seen = json.loads(result.output.as_text())
        # the server saw the configured value: echoed back, it is starred out (issue 8)
        assert seen["authorization"] == "***" and seen["x-tenant"] == "t1"
        assert "s3cr3t" not in repr(connection) + repr(connection.spec) + repr(registry["demo__headers"])


async def test_the_policy_checks_native_names() -> None:
    registry = ToolRegistry(names=NamePolicy(provider="openai"))
    with pytest.raises(ConfigurationError, match="openai"):
        registry.register(echo, name="bad.name")
    registry.register(echo, name="good_name")


async def test_include_and_exclude() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(lowlevel_in_process("low", include=["*_output", "echo"], exclude=["missing_*"]))
        assert registry.names() == ["low__bad_output", "low__echo"]


# -- discovery -----------------------------------------------------------------------


async def test_every_page_is_listed() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(lowlevel_in_process("low", SPECIAL))
        assert len(registry) == 258  # 5 fixed tools, 3 odd names, 250 generated ones: 7 pages
        assert registry.names()[8:10] == ["low__item_0000", "low__item_0001"]
        assert registry.names()[-1] == "low__item_0249"
    async with ToolRegistry() as registry:
        with pytest.raises(ServerConnectionError, match=r"'low'.*more than 3 pages.*max_pages"):
            await registry.connect(lowlevel_in_process("low", SPECIAL, max_pages=3))
        assert len(registry) == 0 and registry.connections() == []


async def test_a_repeated_cursor_is_a_discovery_error() -> None:
    repeat = {"FIXTURE_PAGE_SIZE": "2", "FIXTURE_PAGING": "repeat"}  # paging never ends
    async with ToolRegistry() as registry:
        with anyio.fail_after(10):
            with pytest.raises(ServerConnectionError, match=r"'low'.*cursor 'p2' a second time"):
                await registry.connect(lowlevel_in_process("low", repeat))
        assert len(registry) == 0 and registry.connections() == []


async def test_a_hanging_tools_list_times_out_at_connect() -> None:
    async with ToolRegistry() as registry:
        registry.register(echo)
        start = time.perf_counter()
        with pytest.raises(ServerConnectionError) as info:
            await registry.connect(lowlevel_in_process("low", HANG, timeout=1))
        assert time.perf_counter() - start < 5
        assert isinstance(info.value, ConfigurationError)
        assert "'low'" in str(info.value) and "tools/list" in str(info.value) and "timeout=" in str(info.value)
        assert registry.names() == ["echo"] and registry.connections() == []


async def test_an_unreachable_http_server_is_a_connection_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    async with ToolRegistry() as registry:
        with pytest.raises(ServerConnectionError, match=r"'gone'.*check that the URL is right"):
            await registry.connect(McpServer.http("gone", url, timeout=5))
        assert registry.connections() == []


async def test_a_command_that_cannot_start_is_a_connection_error() -> None:
    async with ToolRegistry() as registry:
        with pytest.raises(ServerConnectionError, match=r"'nope'.*could not start 'toolmesh-no-such-command'"):
            await registry.connect(McpServer.stdio("nope", "toolmesh-no-such-command", [], timeout=5))
        assert registry.connections() == []


async def test_a_server_that_exits_at_start_is_a_connection_error() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        start = time.perf_counter()
        with pytest.raises(ServerConnectionError, match=r"'bad'.*closed while connecting.*run the command by hand"):
            await registry.connect(McpServer.stdio("bad", sys.executable, ["-c", "raise SystemExit(3)"], timeout=10))
        assert time.perf_counter() - start < 5  # found out at once, not at the timeout
        assert registry.connections() == []
    assert child_pids() - before == set()


async def test_a_server_with_no_tools_is_connected_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    async with ToolRegistry() as registry:
        with caplog.at_level(logging.WARNING, logger="toolmesh"):
            connection = await registry.connect(demo_in_process("empty", {"FIXTURE_TOOLS_EMPTY": "1"}))
        assert connection.state == "connected" and len(registry) == 0
        assert any("'empty'" in r.getMessage() and "no tools" in r.getMessage() for r in caplog.records)


async def test_a_tool_that_disappears_after_discovery_is_not_found() -> None:
    async with ToolRegistry() as registry:
        # "search" is gone after the first tools/list
        await registry.connect(demo_in_process("demo", {"FIXTURE_FORGET": "search"}))
        assert "demo__search" in registry
        result = await registry.dispatch("demo__search", {"query": "q"})
        assert result.error is not None and result.error.kind is ErrorKind.NOT_FOUND
        assert "no longer offered" in result.error.model_feedback
        assert "'demo'" in result.error.message and "'search'" in result.error.message
        # The registry refreshes the server by itself: the row is retired.
        await wait_until(lambda: "demo__search" not in registry)
        # An explicit refresh agrees; snapshots taken before keep their rows.
        snapshot = registry.snapshot()
        rows = await registry.refresh("demo")
        assert "demo__search" not in registry and "demo__echo" in snapshot
        assert [row.name for row in rows] == [n for n in registry.names() if n.startswith("demo__")]


async def test_unknown_tool_as_a_json_rpc_error_is_not_found() -> None:
    async with ToolRegistry() as registry:
        await registry.connect(lowlevel_in_process("low", SPECIAL, include=["echo"]))
        row = registry["low__echo"]
        assert isinstance(row, McpEntry)
        # A row whose wire name the server does not know (as after a server-side removal).
        ghost = McpEntry("ghost", row.definition, row.capabilities, "low", "ghost", row.tool, row.caller)
        with pytest.raises(ToolExecutionError) as info:
            await ghost.invoke({}, ToolContext())
        assert info.value.kind is ErrorKind.NOT_FOUND and info.value.code == -32602
        assert "no longer offers" in info.value.message


# -- order and lifecycle --------------------------------------------------------------


async def test_catalog_order_is_stable() -> None:
    async with ToolRegistry() as registry:
        registry.register(echo, name="first")
        await registry.connect(lowlevel_in_process("low", include=["echo", "mutate"]))
        registry.register(echo, name="second")  # natives stay before every server's rows
        await registry.connect(demo_in_process("demo", include=["echo", "add"]))
        assert registry.names() == ["first", "second", "low__mutate", "low__echo", "demo__echo", "demo__add"]
        await registry.disconnect("low")
        assert registry.names() == ["first", "second", "demo__echo", "demo__add"]
        await registry.connect(lowlevel_in_process("low", include=["echo"]))
        assert registry.names() == ["first", "second", "demo__echo", "demo__add", "low__echo"]
        registry.unregister("demo__add")
        assert registry.names() == ["first", "second", "demo__echo", "low__echo"]


async def test_connect_all_is_parallel_and_ordered() -> None:
    async with ToolRegistry() as registry:
        connections = await registry.connect_all(
            [lowlevel_in_process("low", include=["echo"]), demo_in_process("demo", include=["echo"])]
        )
        assert [c.label for c in connections] == ["low", "demo"]
        assert registry.names() == ["low__echo", "demo__echo"]


async def test_connect_all_from_an_mcp_servers_file(tmp_path: Path) -> None:
    async with http_server(DEMO) as demo_url, http_server(LOWLEVEL) as low_url:
        config = {
            "mcpServers": {
                "local": {"command": sys.executable, "args": [str(DEMO), "stdio"], "include": ["echo"]},
                "docs": {"url": demo_url, "include": ["add"], "callTimeout": 5},
                "low": {"type": "http", "url": low_url, "prefix": False, "aliases": {"echo": "low_echo"}},
                "off": {"command": "never-started", "disabled": True},
            }
        }
        path = tmp_path / "mcp.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        async with ToolRegistry() as registry:
            connections = await registry.connect_all(McpServer.from_config(path))
            assert [c.label for c in connections] == ["local", "docs", "low"]
            names = registry.names()
            assert names[:2] == ["local__echo", "docs__add"] and "low_echo" in names and "mutate" in names
            assert registry["docs__add"].timeout == 5
            assert (await registry.dispatch("local__echo", {"text": "a"})).output.as_text() == "a"
            assert (await registry.dispatch("low_echo", {"text": "b"})).output.as_text() == "b"


async def test_connect_all_is_all_or_nothing() -> None:
    async with ToolRegistry() as registry:
        start = time.perf_counter()
        with pytest.raises(ServerConnectionError, match="'hang'"):
            await registry.connect_all([demo_in_process("demo"), lowlevel_in_process("hang", HANG, timeout=1)])
        assert registry.names() == [] and registry.connections() == []
        # With skip_failures the good server stays, and the slow one did not delay it.
        connections = await registry.connect_all(
            [lowlevel_in_process("hang", HANG, timeout=1), demo_in_process("demo", include=["echo"])],
            skip_failures=True,
        )
        assert [c.label for c in connections] == ["demo"] and registry.names() == ["demo__echo"]
        assert time.perf_counter() - start < 6


async def test_connect_all_collisions_between_new_servers() -> None:
    async with ToolRegistry() as registry:
        with pytest.raises(NameCollisionError, match=r"'echo'.*server 'demo'.*server 'low'"):
            await registry.connect_all(
                [
                    demo_in_process("demo", prefix=False, include=["echo"]),
                    lowlevel_in_process("low", prefix=False, include=["echo"]),
                ]
            )
        assert registry.names() == [] and registry.connections() == []
        connections = await registry.connect_all(
            [
                demo_in_process("demo", prefix=False, include=["echo"]),
                lowlevel_in_process("low", prefix=False, include=["echo"]),
            ],
            skip_failures=True,
        )
        assert [c.label for c in connections] == ["demo"] and registry.names() == ["echo"]
        with pytest.raises(ConfigurationError, match="given twice"):
            await registry.connect_all([demo_in_process("x"), lowlevel_in_process("x")])


async def test_connect_needs_async_with() -> None:
    registry = ToolRegistry()
    with pytest.raises(ConfigurationError, match="async with ToolRegistry"):
        await registry.connect(demo_in_process("demo"))
    async with ToolRegistry() as registry:
        await registry.connect(demo_in_process("demo", include=["echo"]))
        with pytest.raises(ConfigurationError, match="already connected"):
            await registry.connect(demo_in_process("demo"))
        with pytest.raises(ConfigurationError, match="no MCP server 'nope'"):
            await registry.disconnect("nope")
    with pytest.raises(ConfigurationError, match="closed"):
        await registry.connect(demo_in_process("demo"))
    with pytest.raises(RuntimeError, match="entered once"):
        async with registry:
            pass


async def test_aclose_is_idempotent_and_connection_states() -> None:
    registry = ToolRegistry()
    await registry.aclose()  # never entered: nothing to close
    await registry.aclose()
    async with ToolRegistry() as registry:
        connection = await registry.connect(demo_in_process("demo", include=["echo"]))
        assert connection.state == "connected" and "connected" in repr(connection)
    assert connection.state == "closed"
    await registry.aclose()  # already closed by the block


async def test_leaving_the_registry_ends_every_child_process() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        await registry.connect_all([demo_stdio("a", include=["echo"]), lowlevel_stdio("b", include=["echo"])])
        children = child_pids() - before
        assert len(children) == 2
        assert (await registry.dispatch("a__echo", {"text": "x"})).ok
        await registry.disconnect("b")
        assert len(child_pids() - before) == 1
        assert registry.names() == ["a__echo"]
    assert child_pids() - before == set()
    result = await registry.dispatch("a__echo", {"text": "x"})  # rows are gone with the registry
    assert result.error is not None and result.error.kind is ErrorKind.NOT_FOUND


async def test_refresh_adds_new_tools_and_never_takes_a_name() -> None:
    @tool
    async def low__clash() -> str:
        """A native row that owns the name the server's new tool would get."""
        return "native"

    async with ToolRegistry() as registry:
        # The server changes its tool list without announcing it: only a refresh finds out.
        silent = {"FIXTURE_MUTATE_SILENT": "1"}
        await registry.connect(lowlevel_in_process("low", silent, exclude=["bad_output", "missing_output"]))
        registry.register(low__clash)
        assert registry.names() == ["low__clash", "low__protocol_error", "low__mutate", "low__echo"]
        assert (await registry.dispatch("low__mutate", {"name": "fresh"})).ok
        assert (await registry.dispatch("low__mutate", {"name": "clash"})).ok
        assert "low__fresh" not in registry  # nothing changes until a refresh
        rows = await registry.refresh("low")
        assert [row.wire_name for row in rows] == ["protocol_error", "mutate", "echo", "fresh"]
        assert registry.names() == ["low__clash", "low__protocol_error", "low__mutate", "low__echo", "low__fresh"]
        assert isinstance(registry["low__clash"], NativeEntry)  # the server's "clash" was left out
        result = await registry.dispatch("low__fresh", {"text": "hi"})
        assert result.ok and result.output.as_text() == "fresh text=hi"
        with pytest.raises(ConfigurationError, match="no MCP server 'nope'"):
            await registry.refresh("nope")


async def test_a_cancelled_connect_leaves_nothing_running() -> None:
    before = child_pids()
    async with ToolRegistry() as registry:
        with anyio.move_on_after(2.5) as scope:
            await registry.connect_all(
                [
                    lowlevel_stdio("hang", {"FIXTURE_LIST_HANG": "1"}, timeout=30),
                    demo_stdio("demo", include=["echo"], timeout=30),
                ]
            )
        assert scope.cancelled_caught
        assert registry.connections() == [] and registry.names() == []
        await wait_until(lambda: child_pids() - before == set())


async def test_a_failing_tools_list() -> None:
    # One server object for both registries: its first tools/list answers, later ones are JSON-RPC errors.
    server = fixture_server(LOWLEVEL, {"FIXTURE_LIST_ERROR_AFTER": "1"})
    async with ToolRegistry() as registry:
        await registry.connect(McpServer.in_process("low", server, include=["echo"]))
        before = registry.names()
        with pytest.raises(ServerConnectionError, match=r"'low'.*-32603: tools/list is broken.*reported"):
            await registry.refresh("low")
        assert registry.names() == before == ["low__echo"]  # a failed refresh changes nothing
        assert (await registry.dispatch("low__echo", {"text": "x"})).ok
    async with ToolRegistry() as registry:
        with pytest.raises(ServerConnectionError, match=r"'low'.*tools/list is broken"):
            await registry.connect(McpServer.in_process("low", server))
        assert registry.connections() == [] and len(registry) == 0


@pytest.mark.parametrize("transport", ["in_process", "http", "stdio"])
async def test_the_registry_refreshes_a_server_whose_tools_change(transport: str) -> None:
    include = ["grow", "fresh*"]
    async with contextlib.AsyncExitStack() as stack:
        if transport == "http":
            spec = demo_http(await stack.enter_async_context(http_server(DEMO)), "demo", include=include)
        elif transport == "stdio":
            spec = demo_stdio(include=include)
        else:
            spec = demo_in_process(include=include)
        registry = await stack.enter_async_context(ToolRegistry())
        connection = await registry.connect(spec)
        assert registry.names() == ["demo__grow"]
        name = f"fresh_{transport}"
        result = await registry.dispatch("demo__grow", {"name": name})
        assert result.ok, result.error
        # The server announces the change (a subscriptions/listen event on 2026-07-28,
        # notifications/tools/list_changed before): the registry refreshes by itself.
        await wait_until(lambda: f"demo__{name}" in registry, 60)
        assert connection.protocol_version is not None
        added = await registry.dispatch(f"demo__{name}", {"text": "hi"})
        assert added.output.as_text() == f"{name} text=hi"


async def test_http_error_statuses_are_named() -> None:
    # Behind an HTTP front: 401 without the bearer token, 429 for tools/call of "throttled".
    guarded = {"FIXTURE_HTTP_TOKEN": "letmein", "FIXTURE_HTTP_THROTTLE": "1"}
    async with http_server(DEMO, guarded) as url, ToolRegistry() as registry:
        with pytest.raises(ServerConnectionError, match=r"'guarded'.*HTTP 401.*refused the credentials.*Authorization"):
            await registry.connect(McpServer.http("guarded", url, headers={"Authorization": "Bearer wrong"}))
        assert registry.connections() == []
        await registry.connect(
            McpServer.http("guarded", url, headers={"Authorization": "Bearer letmein"}, include=["echo", "throttled"])
        )
        throttled = await registry.dispatch("guarded__throttled")
        assert throttled.error is not None and throttled.error.kind is ErrorKind.RATE_LIMITED
        assert throttled.error.http_status == 429 and throttled.error.retryable
        item = mcp_call_item(throttled)
        assert item["error"]["type"] == "http_error" and item["error"]["code"] == 429
        assert (await registry.dispatch("guarded__echo", {"text": "ok"})).ok  # the session is fine


async def test_an_http_500_fails_its_call_and_keeps_the_session() -> None:
    failing = {"FIXTURE_HTTP_THROTTLE": "1", "FIXTURE_HTTP_THROTTLE_STATUS": "500"}
    async with http_server(DEMO, failing) as url, ToolRegistry() as registry:
        connection = await registry.connect(McpServer.http("web", url, include=["echo", "throttled"]))
        failed = await registry.dispatch("web__throttled")
        assert failed.error is not None and failed.error.kind is ErrorKind.UNAVAILABLE
        assert failed.error.http_status == 500 and failed.error.retryable
        assert connection.state == "connected"
        assert (await registry.dispatch("web__echo", {"text": "ok"})).ok
        assert connection.reconnects == 0  # the same session served the next call


async def test_a_wrong_http_path_is_named() -> None:
    async with http_server(DEMO) as url, ToolRegistry() as registry:
        with pytest.raises(ServerConnectionError, match=r"HTTP 404.*check the URL's path"):
            await registry.connect(McpServer.http("wrong_path", url.removesuffix("/mcp") + "/nope", timeout=5))
