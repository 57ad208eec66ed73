"""Shared helpers for the MCP tests: server specs for the fixtures, child-process checks.

`demo_in_process` / `lowlevel_in_process` serve a fresh fixture server object in the test's
own process (the registry's `mcp.Client` speaks JSON-RPC to it over memory streams): use
them for logic (names, collisions, discovery, refresh, policy). `demo_stdio`, `demo_http`,
`lowlevel_stdio` and `everything_stdio` reach real programs: use them where the transport,
a fault or a process is what the test is about.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from _servers import DEMO, LOWLEVEL, everything_stdio_params, fixture_server, stdio_params
from toolmesh.mcp import McpServer

__all__ = [
    "DEMO",
    "LOWLEVEL",
    "child_pids",
    "count_in",
    "wait_until",
    "demo_http",
    "demo_in_process",
    "demo_stdio",
    "everything_stdio",
    "lowlevel_in_process",
    "lowlevel_stdio",
]


def demo_in_process(label: str = "demo", env: Mapping[str, str] | None = None, **options: Any) -> McpServer:
    """A fresh demo fixture server served in-process (`env`: its FIXTURE_* switches)."""
    return McpServer.in_process(label, fixture_server(DEMO, env), **options)


def lowlevel_in_process(label: str = "low", env: Mapping[str, str] | None = None, **options: Any) -> McpServer:
    """A fresh low-level fixture server served in-process (`env`: its FIXTURE_* switches)."""
    return McpServer.in_process(label, fixture_server(LOWLEVEL, env), **options)


def demo_stdio(label: str = "demo", env: Mapping[str, str] | None = None, **options: Any) -> McpServer:
    """The demo fixture server over stdio."""
    command, args, child_env = stdio_params(DEMO, env)
    return McpServer.stdio(label, command, args, env=child_env, **options)


def lowlevel_stdio(label: str = "low", env: Mapping[str, str] | None = None, **options: Any) -> McpServer:
    """The low-level fixture server over stdio."""
    command, args, child_env = stdio_params(LOWLEVEL, env)
    return McpServer.stdio(label, command, args, env=child_env, **options)


def demo_http(url: str, label: str = "web", **options: Any) -> McpServer:
    """A fixture server over Streamable HTTP."""
    return McpServer.http(label, url, **options)


def everything_stdio(label: str = "everything", env: Mapping[str, str] | None = None, **options: Any) -> McpServer:
    """@modelcontextprotocol/server-everything over stdio."""
    command, args, child_env = everything_stdio_params()
    return McpServer.stdio(label, command, args, env={**child_env, **(env or {})}, **options)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def child_pids(parent: int | None = None) -> set[int]:
    """Pids of the live (not zombie) child processes of ``parent`` (this process by default)."""
    parent = os.getpid() if parent is None else parent
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may contain spaces: split after the last ')'.
        fields = stat.rsplit(")", 1)[1].split()
        state, ppid = fields[0], int(fields[1])
        if ppid == parent and state != "Z":
            found.add(int(entry.name))
    return found


def count_in(path: Path, text: str) -> int:
    """How often ``text`` occurs in the file at ``path`` (0 when it does not exist)."""
    return path.read_text(encoding="utf-8").count(text) if path.exists() else 0


async def wait_until(predicate: Callable[[], bool], seconds: float = 5.0) -> None:
    """Poll ``predicate`` (state another process changes) until it holds, at most ``seconds``."""
    with anyio.fail_after(seconds):
        while not predicate():  # noqa: ASYNC110 - the state lives in another process
            await anyio.sleep(0.02)
