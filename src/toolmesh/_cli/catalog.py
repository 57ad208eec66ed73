"""The catalog commands: look at a catalog and call its tools from a terminal.

``toolmesh tools``   prints the catalog as a table (``--json``, ``--names``);
``toolmesh call``    dispatches one call and prints its result;
``toolmesh export``  prints the catalog's tool declarations in a provider's format.

Rows come from a Python module (``--module path/to/tools.py:registry``, a
``ToolRegistry`` or a list of ``@tool`` functions) and from ``mcpServers`` JSON files
(``--config mcp.json``). Every option and file is checked before any server starts.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolmesh._core.names import NamePolicy
from toolmesh._core.result import ToolResult
from toolmesh._dispatch.registry import ToolRegistry
from toolmesh._rows.rows import Entry, McpEntry
from toolmesh.mcp._spec.defaults import DEFAULT_MAX_CONFIG_BYTES

from .app import (
    INTERRUPTED,
    ConfigOption,
    MaxBytesOption,
    ModuleOption,
    SkipOption,
    Sources,
    StderrOption,
    add_module,
    app,
    connect,
    console,
    fail,
    note,
    run_guarded,
    sources,
)
from .export import _NAME_RULES, _PROVIDER_PACKAGES, PROVIDERS, export_tools
from .render import catalog_table, result_json, result_table, row_json

_T = TypeVar("_T")


def _run(sources: Sources, work: Callable[[ToolRegistry], Awaitable[_T]], names: NamePolicy | None = None) -> _T:
    """Open a registry with ``sources``, run ``work`` on it, close everything; Ctrl-C exits with code 130."""

    async def with_registry(log_path: str | None) -> _T:
        async with ToolRegistry(names=names) as registry:
            for spec in sources.modules:
                add_module(registry, spec)
            if sources.servers:
                await connect(registry, sources, log_path)
            return await work(registry)

    outcome = run_guarded(sources, with_registry)
    if outcome is None:
        fail("interrupted", INTERRUPTED)
    return outcome


# -- the commands ---------------------------------------------------------------------------


@app.command(short_help="Print the catalog: names, families, sources, parameters.")
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
        fail("--json and --names exclude each other; give one")
    given = sources(
        module, config, skip_failures=skip_failures, server_stderr=server_stderr, max_config_bytes=max_config_bytes
    )

    async def run(registry: ToolRegistry) -> list[Entry]:
        return list(registry.entries())

    rows = _run(given, run)
    if as_json:
        print(json.dumps([row_json(row) for row in rows], indent=2, ensure_ascii=False))
    elif names_only:
        for row in rows:
            print(row.name)
    elif not rows:
        note("the catalog is empty: the modules define no tools and the servers offer none (or all are disabled)")
    else:
        _print_catalog(rows)


_PIPE_WIDTH_CAP = 400
"""The widest a table is printed into a pipe: its cells unfolded, up to this many columns."""


def _print_table(table: Table) -> None:
    """A table on the terminal, or into a pipe as wide as its cells need (a pipe has no width: not 80 columns)."""
    if console.is_terminal:
        console.print(table)
        return
    wanted = console.measure(table, options=console.options.update_width(_PIPE_WIDTH_CAP)).maximum
    Console(width=max(console.width, min(wanted, _PIPE_WIDTH_CAP)), highlight=False).print(table)


def _print_catalog(rows: list[Entry]) -> None:
    """The table, or on a terminal too narrow for its names, one block per row; never a name cut in two."""
    table = catalog_table(rows)
    needed = sum(column.min_width or 6 for column in table.columns) + 3 * len(table.columns) + 24
    if not console.is_terminal or needed <= console.width:
        _print_table(table)
    else:
        for row in rows:
            description = (row.definition.description or "").strip().splitlines()
            console.print(Text(row.name, style="bold"), soft_wrap=True)
            source = f"{row.server}:{row.wire_name}" if isinstance(row, McpEntry) else "native"
            console.print(Text(f"  {source}" + (f" — {description[0]}" if description else "")))


@app.command(short_help="Dispatch one call and print its result.")
def call(
    name: Annotated[str, typer.Argument(help="The model-visible tool name.")],
    arguments: Annotated[str, typer.Argument(help="Arguments as JSON text.")] = "{}",
    module: ModuleOption = None,
    config: ConfigOption = None,
    server: Annotated[
        list[str] | None,
        typer.Option(
            "--server", "-s", metavar="LABEL", help="Start only this server of the config files (repeatable)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON.")] = False,
    skip_failures: SkipOption = False,
    server_stderr: StderrOption = False,
    max_config_bytes: MaxBytesOption = DEFAULT_MAX_CONFIG_BYTES,
) -> None:
    """Dispatch one call, as a model would, and print its result."""
    given = sources(
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
            hint.extend(_unknown_tool_hint(registry, given))
        return await registry.dispatch(name, arguments)

    result = _run(given, run)
    for line in hint:
        note(line)
    if as_json:
        print(json.dumps(result_json(result), indent=2, ensure_ascii=False))
    else:
        _print_table(result_table([(name, result)]))
    if not result.ok:
        raise typer.Exit(1)


def _unknown_tool_hint(registry: ToolRegistry, sources: Sources) -> list[str]:
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


@app.command(short_help="Print the tool declarations in a provider's format.")
def export(
    provider: Annotated[
        str, typer.Option("--provider", "-p", metavar="NAME", help=f"One of: {', '.join(PROVIDERS)}.")
    ] = "openai",
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
        fail(f"--provider {provider!r} is not one of {', '.join(PROVIDERS)}")
    if strict and _NAME_RULES[provider] != "openai":
        fail(f"--strict is OpenAI's strict mode (--provider openai or openai-responses); {provider} has none")
    given = sources(
        module, config, skip_failures=skip_failures, server_stderr=server_stderr, max_config_bytes=max_config_bytes
    )
    _require_provider_package(provider)

    async def run(registry: ToolRegistry) -> list[Any]:
        return export_tools(registry, provider, strict=strict)

    declarations = _run(given, run, names=NamePolicy(provider=_NAME_RULES[provider]))
    print(json.dumps(declarations, indent=2, ensure_ascii=False))


def _require_provider_package(provider: str) -> None:
    """Exit with code 2, before any server starts, when ``provider``'s optional package is missing."""
    if provider not in _PROVIDER_PACKAGES:
        return
    module, package = _PROVIDER_PACKAGES[provider]
    try:
        importlib.import_module(module)
    except ImportError as exc:
        fail(f"--provider {provider} needs the {package} package ({exc}); install it: pip install {package}")
