"""The ``toolmesh`` command's app and what its commands share: options, sources, the one guarded runner.

Every command module registers its commands on ``app``; ``main`` imports them all.
Results go to stdout; status, errors and (by default, into a log file) the servers'
own stderr stay out of it. Errors and server text are printed literally.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import logging
import signal
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Annotated, NoReturn, TypeVar

import anyio
import typer
from rich.console import Console
from rich.text import Text

from toolmesh._core.errors import ToolmeshError
from toolmesh._dispatch.native_loading import add_native
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._rows.rows import McpEntry
from toolmesh.mcp._spec.files import read_json
from toolmesh.mcp._spec.server import McpServer

from . import processes, server_log
from .status import ConnectStatus

INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C."""
_T = TypeVar("_T")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    # click's own help: it wraps a long option name onto its own line, where rich's panels cut it at 80 columns
    rich_markup_mode=None,
    help="Look at a tool catalog and call its tools.",
)
console = Console()
err_console = Console(stderr=True, highlight=False)

ModuleOption = Annotated[
    list[str] | None,
    typer.Option(
        "--module",
        "-m",
        metavar="FILE:NAME",
        help="path/to/file.py:NAME or package.module:NAME — a ToolRegistry, a @tool or a list of them.",
    ),
]
ConfigOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--config", "-c", metavar="FILE", help="An mcpServers JSON file (Claude Desktop / Cursor / VS Code form)."
    ),
]
SkipOption = Annotated[
    bool, typer.Option("--skip-failures", help="Report a server that fails to connect and go on without it.")
]
StderrOption = Annotated[
    bool,
    typer.Option("--server-stderr", help="Show the stdio servers' stderr here instead of writing it to a log file."),
]
MaxBytesOption = Annotated[
    int,
    typer.Option("--max-config-bytes", min=1, metavar="BYTES", help="The largest config (or envFile) file read."),
]


@dataclasses.dataclass(frozen=True)
class Sources:
    """Where rows come from, and how servers are started; checked before anything starts."""

    modules: list[str]
    servers: list[McpServer]
    skip_failures: bool
    server_stderr: bool
    not_started: tuple[str, ...] = ()
    """Servers of the config files left out by ``--server``."""


_GATEWAY_KEYS = ("native", "policy", "profiles", "serve")
"""Top-level keys only a gateway config (toolmesh.json) has."""


def refuse_gateway_config(path: Path, max_bytes: int) -> None:
    """Exit 2 for a gateway config: read as an mcpServers file, its natives, names and policy would be ignored."""
    try:
        document = read_json(str(path), max_bytes, "config file")
    except ToolmeshError:
        return  # reading it as an mcpServers file reports the problem
    found = [key for key in _GATEWAY_KEYS if isinstance(document, dict) and key in document]
    if found:
        fail(
            f"{path} is a gateway config (it has {', '.join(map(repr, found))}): here --config takes an mcpServers "
            f"file, which would ignore its native tools, names and policy. Use `toolmesh check -c {path}` "
            f"to connect and count its tools, or `toolmesh serve -c {path}` and a client to list and call them"
        )


def sources(
    modules: list[str] | None,
    configs: list[Path] | None,
    *,
    skip_failures: bool,
    server_stderr: bool,
    max_config_bytes: int,
    only: list[str] | None = None,
) -> Sources:
    """Read every config file (and check ``--server``) up front; a problem exits with code 2."""
    if not modules and not configs:
        here = (
            "; ./toolmesh.json here is a gateway config, which `toolmesh check` and `toolmesh serve` read"
            if Path("toolmesh.json").is_file()
            else ""
        )
        fail(
            "nothing to show: give a Python module of tools (--module path/to/tools.py:registry) "
            "and/or an mcpServers JSON file (--config mcp.json, e.g. Claude Desktop's "
            f"claude_desktop_config.json or VS Code's .vscode/mcp.json){here}"
        )
    for path in configs or ():
        refuse_gateway_config(path, max_config_bytes)
    try:
        servers = [s for path in configs or () for s in McpServer.from_config(path, max_bytes=max_config_bytes)]
    except ToolmeshError as exc:
        fail(str(exc))
    if only:
        labels = [s.label for s in servers]
        unknown = [label for label in only if label not in labels]
        if unknown:
            known = ", ".join(labels) or "none (give --config)"
            fail(f"--server {unknown[0]!r} is not a server of the config files (servers: {known})")
        left_out = tuple(s.label for s in servers if s.label not in only)
        servers = [s for s in servers if s.label in only]
        return Sources(list(modules or ()), servers, skip_failures, server_stderr, left_out)
    return Sources(list(modules or ()), servers, skip_failures, server_stderr)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` literally on stderr and exit."""
    err_console.print(Text.assemble(("error: ", "red"), message), soft_wrap=True)
    raise typer.Exit(code)


def note(message: str) -> None:
    err_console.print(Text(message), soft_wrap=True)


def add_module(registry: ToolRegistry, spec: str) -> None:
    add_native(registry, spec, where=f"--module {spec!r}")


class SkippedServerFilter(logging.Filter):
    """Drops ``connect_all``'s "skipped a server" warning: the status line already says it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("connect_all: skipped a server")


async def connect(registry: ToolRegistry, sources: Sources, log_path: str | None) -> None:
    interrupted = False
    skipped_filter = SkippedServerFilter()
    logger = logging.getLogger("toolmesh")
    logger.addFilter(skipped_filter)
    try:
        with ConnectStatus(err_console, sources.servers) as status:
            try:
                await registry.connect_all(
                    sources.servers, skip_failures=sources.skip_failures, on_progress=status.update
                )
            except anyio.get_cancelled_exc_class():
                interrupted = True
                raise
            finally:
                counts: dict[str, int] = {}
                for row in registry.entries():
                    if isinstance(row, McpEntry):
                        counts[row.server] = counts.get(row.server, 0) + 1
                connected = {c.label for c in registry.connections()}
                status.settle({label: counts.get(label, 0) for label in connected}, interrupted=interrupted)
    finally:
        logger.removeFilter(skipped_filter)
        if log_path is not None:
            note(f"server stderr: {log_path}")
            connected = {c.label for c in registry.connections()}
            for server in sources.servers:  # a server skipped under --skip-failures: its own last words
                if server.transport == "stdio" and server.label not in connected:
                    lines = server_log.stderr_tail(log_path, [server.label])
                    note(server_log.tail_note(lines, f"skipped MCP server {server.label!r}:").lstrip("\n"))


def fast_loop() -> dict[str, bool]:
    """anyio's backend options for a serving command: uvloop when it is installed (the ``speed`` extra).

    uvloop's event loop costs less CPU per task switch, timer and socket event than
    asyncio's own; the gateway spends about a third of its CPU per call in the loop
    (docs/benchmarks.md).
    """
    return {"use_uvloop": True} if importlib.util.find_spec("uvloop") is not None else {}


def run_guarded(
    sources: Sources,
    work: Callable[[str | None], Awaitable[_T]],
    *,
    stop_signals: tuple[signal.Signals, ...] = (signal.SIGINT,),
    first: str | None = None,
    loop_options: Mapping[str, bool] | None = None,
) -> _T | None:
    """Run ``work(server_log_path)`` for one command: the one runner of every ``toolmesh`` command.

    A stop signal cancels the work, which stops the servers in order (the result is
    None); a second one kills their process groups at once, so no server outlives the
    command. A toolmesh error exits with code 2, its message followed by the end of the
    stdio servers' stderr. Servers' stderr goes to a log file unless ``--server-stderr``
    (``connect`` prints its path). ``loop_options`` are anyio's asyncio backend options
    (``fast_loop()``: uvloop).
    """
    stdio = any(s.transport == "stdio" for s in sources.servers)
    with server_log.server_stderr(stdio and not sources.server_stderr) as log_path:
        try:
            return anyio.run(_guarded, work, log_path, stop_signals, first, backend_options=dict(loop_options or {}))
        except ToolmeshError as exc:
            fail(str(exc) + server_log.tail_note(server_log.stderr_tail(log_path)))


async def _guarded(
    work: Callable[[str | None], Awaitable[_T]],
    log_path: str | None,
    stop_signals: tuple[signal.Signals, ...],
    first: str | None,
) -> _T | None:
    wording = {} if first is None else {"first": first}
    outcome = await processes.run_interruptible(lambda: work(log_path), note, *stop_signals, **wording)
    return None if outcome is processes.Interrupted else outcome  # type: ignore[return-value]
