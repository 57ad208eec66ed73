"""Helpers for tests that talk to MCP servers (fixtures under tests/fixtures/, npm peers).

    from _servers import DEMO, LOWLEVEL, fixture_server, free_port, http_server, stdio_params

    server = fixture_server(DEMO, {"FIXTURE_FORGET": "search"})      # in-process: Client(server)
    async with http_server(DEMO, FIXTURE_PAGE_SIZE="10") as url:      # http://127.0.0.1:PORT/mcp
        ...
    command, args, env = stdio_params(DEMO, {"FIXTURE_TOOLS_EMPTY": "1"})
    StdioServerParameters(command=command, args=args, env=env)

Logic tests serve a fixture in-process (`fixture_server`); tests whose point is a transport,
a fault or a process start the real program, and only the servers they use. Every
subprocess started here is terminated (then killed) and reaped on exit.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
from anyio.abc import Process

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
DEMO = FIXTURES / "demo_server.py"
LOWLEVEL = FIXTURES / "lowlevel_server.py"
NPM_TOOLS = ROOT / ".npm-tools"
EVERYTHING_PKG = "@modelcontextprotocol/server-everything"

_STARTUP_TIMEOUT = 90.0
"""Seconds a fixture program may take to listen: generous, since a busy 2-core machine is slow to import."""
_STOP_TIMEOUT = 5.0


def fixture_module(script: str | os.PathLike[str]) -> ModuleType:
    """Import a fixture server's module (once), for its `build_server(env)`."""
    path = Path(_script_path(script))
    name = f"_fixture_{path.stem}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # before running it: pydantic resolves the models' annotations there
        spec.loader.exec_module(module)
    return module


def fixture_server(script: str | os.PathLike[str] = DEMO, env: Mapping[str, str] | None = None) -> Any:
    """A fresh SDK server object of a fixture, configured by `env` (FIXTURE_* switches only, not os.environ).

    Serve it in-process: `mcp.Client(server, mode="legacy")` or `McpServer.in_process(label, server)`.
    """
    return fixture_module(script).build_server(dict(env or {}))


def toolmesh_env(**extra: str) -> dict[str, str]:
    """This process's environment for a toolmesh subprocess: this tree's ``src`` first on PYTHONPATH, and ``extra``."""
    path = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **extra}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _script_path(script: str | os.PathLike[str]) -> str:
    path = Path(script)
    if not path.is_absolute():
        path = (ROOT / path) if (ROOT / path).exists() else (FIXTURES / path)
    if not path.exists():
        raise FileNotFoundError(f"fixture server not found: {script}")
    return str(path)


class ServerURL(str):
    """The URL of a fixture server (a plain `str` for every API), plus its `port` and `process`."""

    port: int
    process: Process


def _merge_env(extra_env: tuple[Mapping[str, str] | str, ...], kw_env: Mapping[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for item in extra_env:
        if isinstance(item, str):
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"expected KEY=VALUE, got {item!r}")
            merged[key] = value
        else:
            merged.update(item)
    merged.update(kw_env)
    return {k: str(v) for k, v in merged.items()}


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def _spawn(script: str | os.PathLike[str], port: int, env: Mapping[str, str]) -> Process:
    return await anyio.open_process(
        [sys.executable, _script_path(script), "http", str(port)],
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=None,  # inherited: pytest's fd capture shows it on failure
        cwd=str(ROOT),
    )


async def _listening(script: str | os.PathLike[str], proc: Process, port: int) -> ServerURL:
    with anyio.fail_after(_STARTUP_TIMEOUT):
        while not _port_open(port):
            if proc.returncode is not None:
                raise RuntimeError(f"fixture server {script} exited with {proc.returncode} before listening")
            await anyio.sleep(0.05)
    url = ServerURL(f"http://127.0.0.1:{port}/mcp")
    url.port = port
    url.process = proc
    return url


@asynccontextmanager
async def http_server(
    script: str | os.PathLike[str] = DEMO,
    *extra_env: Mapping[str, str] | str,
    port: int | None = None,
    **env: str,
) -> AsyncIterator[ServerURL]:
    """Run `python SCRIPT http PORT` and yield its URL, http://127.0.0.1:PORT/mcp.

    Environment for the child: this process's environment, then each `extra_env` item (a
    mapping or a "KEY=VALUE" string), then keyword arguments (`FIXTURE_PAGE_SIZE="10"`).
    Waits (at most 90 s: a loaded machine is slow) until the port accepts connections; on exit terminates the child,
    kills it after 5 s, and reaps it. The yielded URL is a `str` that also carries `.port`
    and `.process` (kill the process to simulate a server going away).
    """
    port = port if port is not None else free_port()
    proc = await _spawn(script, port, _merge_env(extra_env, env))
    try:
        yield await _listening(script, proc, port)
    finally:
        with anyio.CancelScope(shield=True):
            await stop_process(proc)


@asynccontextmanager
async def http_servers(
    servers: Mapping[str, tuple[str | os.PathLike[str], Mapping[str, str]]],
) -> AsyncIterator[dict[str, ServerURL]]:
    """Start several fixture servers at once (they import in parallel) and yield their URLs by key.

        async with http_servers({"demo": (DEMO, {}), "empty": (DEMO, {"FIXTURE_TOOLS_EMPTY": "1"})}) as urls:
            urls["empty"]  # http://127.0.0.1:PORT/mcp

    Every server is stopped (terminated, killed after 5 s, reaped) on exit.
    """
    started: dict[str, tuple[str | os.PathLike[str], Process, int]] = {}
    try:
        for key, (script, env) in servers.items():
            port = free_port()
            while any(port == other for _, _, other in started.values()):
                port = free_port()
            started[key] = (script, await _spawn(script, port, {k: str(v) for k, v in env.items()}), port)
        yield {key: await _listening(script, proc, port) for key, (script, proc, port) in started.items()}
    finally:
        with anyio.CancelScope(shield=True):
            for _, proc, _ in started.values():
                if proc.returncode is None:
                    with suppress(ProcessLookupError):
                        proc.terminate()
            for _, proc, _ in started.values():
                await stop_process(proc)


async def stop_process(proc: Process) -> None:
    """Terminate `proc`, kill it if it is still alive after 5 s, and reap it."""
    if proc.returncode is None:
        with suppress(ProcessLookupError):
            proc.terminate()
        with anyio.move_on_after(_STOP_TIMEOUT):
            await proc.wait()
        if proc.returncode is None:
            with suppress(ProcessLookupError):
                proc.kill()
    await proc.wait()
    await proc.aclose()


def stdio_params(
    script: str | os.PathLike[str] = DEMO,
    env: Mapping[str, str] | None = None,
) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) that run the fixture in stdio mode with this interpreter.

    `env` is merged over the current environment here, because the SDK's stdio client only
    passes a small default environment (HOME, PATH, ...) plus what it is given.
    """
    child_env = {**os.environ, **{k: str(v) for k, v in (env or {}).items()}}
    return sys.executable, [_script_path(script), "stdio"], child_env


def everything_server_path() -> Path:
    """Path of server-everything's dist/index.js in .npm-tools/ (scripts/install_npm_tools.sh)."""
    return NPM_TOOLS / "node_modules" / EVERYTHING_PKG / "dist" / "index.js"


def everything_available() -> bool:
    """True when node and the installed server-everything are both present."""
    return shutil.which("node") is not None and everything_server_path().exists()


def everything_stdio_params() -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) that run server-everything over stdio with the system node."""
    node = shutil.which("node")
    if node is None:
        raise FileNotFoundError("node is not on PATH")
    return node, [str(everything_server_path()), "stdio"], dict(os.environ)
