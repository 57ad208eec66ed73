"""The ``toolmesh`` command: look at a catalog and call its tools from a terminal.

``toolmesh tools``   prints the catalog as a table (``--json``, ``--names``);
``toolmesh call``    dispatches one call and prints its result;
``toolmesh export``  prints the catalog's tool declarations in a provider's format.

Rows come from a Python module (``--module path/to/tools.py:registry``, a
``ToolRegistry`` or a list of ``@tool`` functions) and from ``mcpServers`` JSON files
(``--config mcp.json``). Every option and file is checked before any server starts.
Results go to stdout; status, errors and (by default, into a log file) the servers'
own stderr stay out of it. Errors and server text are printed literally.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, TextIO, TypeVar, cast

import anyio
import typer
from rich.console import Console
from rich.text import Text

from . import _cli_processes
from ._cli_export import _NAME_RULES, _PROVIDER_PACKAGES, PROVIDERS, export_tools
from ._cli_render import catalog_table, result_json, result_table, row_json
from ._cli_status import ConnectStatus
from ._entries import Entry, McpEntry
from ._errors import ToolmeshError
from ._names import NamePolicy
from ._native_loading import add_native
from ._registry import ToolRegistry
from ._result import ToolResult
from .mcp import McpServer
from .mcp import _session as mcp_session
from .mcp._config import DEFAULT_MAX_CONFIG_BYTES
from .mcp._config_files import read_json

__all__ = ["app", "catalog_table", "export_tools", "main", "result_table"]

_INTERRUPTED = 130
_T = TypeVar("_T")

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Look at a tool catalog and call its tools.")
console = Console()
err_console = Console(stderr=True, highlight=False)

ModuleOption = Annotated[
    list[str] | None,
    typer.Option(
        "--module",
        "-m",
        help="path/to/file.py:NAME or package.module:NAME — a ToolRegistry, a @tool or a list of them.",
    ),
]
ConfigOption = Annotated[
    list[Path] | None,
    typer.Option("--config", "-c", help="An mcpServers JSON file (Claude Desktop / Cursor / VS Code form)."),
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
    typer.Option("--max-config-bytes", min=1, help="The largest config (or envFile) file read."),
]


@dataclasses.dataclass(frozen=True)
class _Sources:
    """Where rows come from, and how servers are started; checked before anything starts."""

    modules: list[str]
    servers: list[McpServer]
    skip_failures: bool
    server_stderr: bool
    not_started: tuple[str, ...] = ()
    """Servers of the config files left out by ``--server``."""


_GATEWAY_KEYS = ("native", "policy", "profiles", "serve")
"""Top-level keys only a gateway config (toolmesh.json) has."""


def _refuse_gateway_config(path: Path, max_bytes: int) -> None:
    """Exit 2 for a gateway config: read as an mcpServers file, its natives, names and policy would be ignored."""
    try:
        document = read_json(str(path), max_bytes, "config file")
    except ToolmeshError:
        return  # reading it as an mcpServers file reports the problem
    found = [key for key in _GATEWAY_KEYS if isinstance(document, dict) and key in document]
    if found:
        _fail(
            f"{path} is a gateway config (it has {', '.join(map(repr, found))}): here --config takes an mcpServers "
            f"file, which would ignore its native tools, names and policy. Use `toolmesh check -c {path}` "
            f"to connect and count its tools, or `toolmesh serve -c {path}` and a client to list and call them"
        )


def _sources(
    modules: list[str] | None,
    configs: list[Path] | None,
    *,
    skip_failures: bool,
    server_stderr: bool,
    max_config_bytes: int,
    only: list[str] | None = None,
) -> _Sources:
    """Read every config file (and check ``--server``) up front; a problem exits with code 2."""
    if not modules and not configs:
        _fail(
            "nothing to show: give a Python module of tools (--module path/to/tools.py:registry) "
            "and/or an mcpServers JSON file (--config mcp.json, e.g. Claude Desktop's "
            "claude_desktop_config.json or VS Code's .vscode/mcp.json)"
        )
    for path in configs or ():
        _refuse_gateway_config(path, max_config_bytes)
    try:
        servers = [s for path in configs or () for s in McpServer.from_config(path, max_bytes=max_config_bytes)]
    except ToolmeshError as exc:
        _fail(str(exc))
    if only:
        labels = [s.label for s in servers]
        unknown = [label for label in only if label not in labels]
        if unknown:
            known = ", ".join(labels) or "none (give --config)"
            _fail(f"--server {unknown[0]!r} is not a server of the config files (servers: {known})")
        left_out = tuple(s.label for s in servers if s.label not in only)
        servers = [s for s in servers if s.label in only]
        return _Sources(list(modules or ()), servers, skip_failures, server_stderr, left_out)
    return _Sources(list(modules or ()), servers, skip_failures, server_stderr)


def _fail(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` literally on stderr and exit."""
    err_console.print(Text.assemble(("error: ", "red"), message), soft_wrap=True)
    raise typer.Exit(code)


def _note(message: str) -> None:
    err_console.print(Text(message), soft_wrap=True)


def _add_module(registry: ToolRegistry, spec: str) -> None:
    add_native(registry, spec, where=f"--module {spec!r}")


# -- running a command against a registry ---------------------------------------------------


def _run(sources: _Sources, work: Callable[[ToolRegistry], Awaitable[_T]], names: NamePolicy | None = None) -> _T:
    """Open a registry with ``sources``, run ``work`` on it, close everything; exit on errors.

    Ctrl-C stops the servers in order (and says so); a second Ctrl-C kills their process
    groups at once, so no server outlives the command.
    """
    with _server_stderr(sources) as log_path:
        try:
            outcome = anyio.run(_guarded, sources, work, names, log_path)
        except ToolmeshError as exc:
            _fail(str(exc))
        if outcome is _cli_processes.Interrupted:
            _fail("interrupted", _INTERRUPTED)
        return outcome  # type: ignore[return-value]


async def _guarded(
    sources: _Sources, work: Callable[[ToolRegistry], Awaitable[_T]], names: NamePolicy | None, log_path: str | None
) -> _T | type[_cli_processes.Interrupted]:
    async def with_registry() -> _T:
        async with ToolRegistry(names=names) as registry:
            for spec in sources.modules:
                _add_module(registry, spec)
            if sources.servers:
                await _connect(registry, sources, log_path)
            return await work(registry)

    return await _cli_processes.run_interruptible(with_registry, _note)


class _SkippedServerFilter(logging.Filter):
    """Drops ``connect_all``'s "skipped a server" warning: the status line already says it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("connect_all: skipped a server")


async def _connect(registry: ToolRegistry, sources: _Sources, log_path: str | None) -> None:
    interrupted = False
    skipped_filter = _SkippedServerFilter()
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
            _note(f"server stderr: {log_path}")


@contextmanager
def _server_stderr(sources: _Sources) -> Iterator[str | None]:
    """Send stdio servers' stderr to a log file (its path yielded) unless ``--server-stderr``.

    The file is kept when a server wrote to it, and removed at exit when it stayed empty.
    """
    if sources.server_stderr or not any(s.transport == "stdio" for s in sources.servers):
        yield None
        return
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115  # closed below, kept for reading
        "w", prefix="toolmesh-servers-", suffix=".log", delete=False, encoding="utf-8"
    )
    previous, mcp_session.child_errlog = mcp_session.child_errlog, cast(TextIO, log)
    try:
        yield log.name
    finally:
        mcp_session.child_errlog = previous
        log.close()
        path = Path(log.name)
        if path.stat().st_size == 0:  # nothing to read: leave no empty file behind
            path.unlink()


# -- the commands ---------------------------------------------------------------------------


@app.command()
def tools(
    module: ModuleOption = None,
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    names_only: Annotated[bool, typer.Option("--names", help="Print only the names, one a line.")] = False,
    skip_failures: SkipOption = False,
    server_stderr: StderrOption = False,
    max_config_bytes: MaxBytesOption = DEFAULT_MAX_CONFIG_BYTES,
) -> None:
    """Print the catalog: every row's model-visible name, family, source and parameters."""
    if as_json and names_only:
        _fail("--json and --names exclude each other; give one")
    sources = _sources(
        module, config, skip_failures=skip_failures, server_stderr=server_stderr, max_config_bytes=max_config_bytes
    )

    async def run(registry: ToolRegistry) -> list[Entry]:
        return list(registry.entries())

    rows = _run(sources, run)
    if as_json:
        print(json.dumps([row_json(row) for row in rows], indent=2, ensure_ascii=False))
    elif names_only:
        for row in rows:
            print(row.name)
    elif not rows:
        _note("the catalog is empty: the modules define no tools and the servers offer none (or all are disabled)")
    else:
        _print_catalog(rows)


def _print_catalog(rows: list[Entry]) -> None:
    """The table, or on a terminal too narrow for its names, one block per row; never a name cut in two."""
    table = catalog_table(rows)
    needed = sum(column.min_width or 6 for column in table.columns) + 3 * len(table.columns) + 24
    if not console.is_terminal:
        # A pipe has no width of its own: give the table what it needs rather than 80 columns.
        Console(width=max(console.width, needed + 40), highlight=False).print(table)
    elif needed <= console.width:
        console.print(table)
    else:
        for row in rows:
            description = (row.definition.description or "").strip().splitlines()
            console.print(Text(row.name, style="bold"), soft_wrap=True)
            source = f"{row.server}:{row.wire_name}" if isinstance(row, McpEntry) else "native"
            console.print(Text(f"  {source}" + (f" — {description[0]}" if description else "")))


@app.command()
def call(
    name: Annotated[str, typer.Argument(help="The model-visible tool name.")],
    arguments: Annotated[str, typer.Argument(help="Arguments as JSON text.")] = "{}",
    module: ModuleOption = None,
    config: ConfigOption = None,
    server: Annotated[
        list[str] | None,
        typer.Option("--server", "-s", help="Start only this server of the config files (repeatable)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON.")] = False,
    skip_failures: SkipOption = False,
    server_stderr: StderrOption = False,
    max_config_bytes: MaxBytesOption = DEFAULT_MAX_CONFIG_BYTES,
) -> None:
    """Dispatch one call, as a model would, and print its result."""
    sources = _sources(
        module,
        config,
        skip_failures=skip_failures,
        server_stderr=server_stderr,
        max_config_bytes=max_config_bytes,
        only=server,
    )

    hint: list[str] = []

    async def run(registry: ToolRegistry) -> ToolResult:
        if name not in registry:
            hint.extend(_unknown_tool_hint(registry, sources))
        return await registry.dispatch(name, arguments)

    result = _run(sources, run)
    for line in hint:
        _note(line)
    if as_json:
        print(json.dumps(result_json(result), indent=2, ensure_ascii=False))
    else:
        console.print(result_table([(name, result)]))
    if not result.ok:
        raise typer.Exit(1)


def _unknown_tool_hint(registry: ToolRegistry, sources: _Sources) -> list[str]:
    """Why a name may be missing: servers left out by ``--server``, or failed under ``--skip-failures``."""
    connected = {c.label for c in registry.connections()}
    failed = [s.label for s in sources.servers if s.label not in connected]
    lines = []
    if sources.not_started:
        started = ", ".join(s.label for s in sources.servers)
        lines.append(
            f"note: only the servers given with --server were started ({started}); "
            f"not started: {', '.join(sources.not_started)}"
        )
    if failed:
        lines.append(
            f"note: these servers failed to connect and were skipped, so their tools are missing: {', '.join(failed)}"
        )
    return lines


@app.command()
def export(
    provider: Annotated[str, typer.Option("--provider", "-p", help=f"One of: {', '.join(PROVIDERS)}.")] = "openai",
    strict: Annotated[bool, typer.Option("--strict", help="OpenAI strict mode where the schema allows it.")] = False,
    module: ModuleOption = None,
    config: ConfigOption = None,
    skip_failures: SkipOption = False,
    server_stderr: StderrOption = False,
    max_config_bytes: MaxBytesOption = DEFAULT_MAX_CONFIG_BYTES,
) -> None:
    """Print the catalog's tool declarations as the provider's JSON (what tools= takes).

    MCP tools are named under the provider's name rule (a name too long for it is
    shortened with a hash, as NamePolicy(provider=...) does).
    """
    if provider not in PROVIDERS:
        _fail(f"--provider {provider!r} is not one of {', '.join(PROVIDERS)}")
    if strict and _NAME_RULES[provider] != "openai":
        _fail(f"--strict is OpenAI's strict mode (--provider openai or openai-responses); {provider} has none")
    sources = _sources(
        module, config, skip_failures=skip_failures, server_stderr=server_stderr, max_config_bytes=max_config_bytes
    )
    _require_provider_package(provider)

    async def run(registry: ToolRegistry) -> list[Any]:
        return export_tools(registry, provider, strict=strict)

    declarations = _run(sources, run, names=NamePolicy(provider=_NAME_RULES[provider]))
    print(json.dumps(declarations, indent=2, ensure_ascii=False))


def _require_provider_package(provider: str) -> None:
    """Exit with code 2, before any server starts, when ``provider``'s optional package is missing."""
    if provider not in _PROVIDER_PACKAGES:
        return
    module, package = _PROVIDER_PACKAGES[provider]
    try:
        importlib.import_module(module)
    except ImportError as exc:
        _fail(f"--provider {provider} needs the {package} package ({exc}); install it: pip install {package}")


def main() -> None:
    """Entry point of the ``toolmesh`` console script."""
    app()


from . import _cli_serve  # noqa: E402, F401  # registers `check` and `serve` on `app`
