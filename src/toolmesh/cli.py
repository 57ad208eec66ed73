"""The ``toolmesh`` command: look at a catalog and call its tools from a terminal.

``toolmesh tools``   prints the catalog as a table;
``toolmesh call``    dispatches one call and prints its result;
``toolmesh export``  prints the catalog's tool declarations in a provider's format.

Rows come from a Python module (``--module path/to/tools.py:registry``, a
``ToolRegistry`` or a list of ``@tool`` functions) and, where MCP support is
installed, from an ``mcpServers`` JSON file (``--config mcp.json``).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .entries import Entry, McpEntry
from .errors import ConfigurationError, ToolmeshError
from .native import NativeTool
from .registry import ToolRegistry
from .result import ToolResult

__all__ = ["app", "catalog_table", "export_tools", "main", "result_table"]

PROVIDERS = ("openai", "openai-responses", "anthropic", "gemini")

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Look at a tool catalog and call its tools.")
console = Console()

ModuleOption = Annotated[
    list[str] | None,
    typer.Option("--module", "-m", help="path/to/file.py:NAME — a ToolRegistry, a @tool or a list of them."),
]
ConfigOption = Annotated[
    list[Path] | None,
    typer.Option("--config", "-c", help="An mcpServers JSON file (Claude Desktop / Cursor / VS Code form)."),
]


def catalog_table(entries: Iterable[Entry], title: str = "Tools") -> Table:
    """The catalog as a rich table: name, family, source, parameters, description."""
    table = Table(title=title, show_lines=False)
    for column in ("name", "kind", "source", "parameters", "description"):
        table.add_column(column, overflow="fold")
    for row in entries:
        source = f"{row.server}:{row.wire_name}" if isinstance(row, McpEntry) else "-"
        props = row.definition.parameters.get("properties") or {}
        required = set(row.definition.parameters.get("required") or ())
        params = ", ".join(f"{name}{'*' if name in required else ''}" for name in props)
        description = (row.definition.description or "").strip().splitlines()
        summary = description[0] if description else ""
        table.add_row(escape(row.name), row.kind, escape(source), escape(params or "-"), escape(summary))
    return table


def result_table(results: Iterable[tuple[str, ToolResult]]) -> Table:
    """Calls and their results: what the model is shown, and the error kind when it failed."""
    table = Table(title="Calls", show_lines=True)
    for column in ("call", "disposition", "error kind", "the model sees", "ms"):
        table.add_column(column, overflow="fold")
    for label, result in results:
        style = "green" if result.ok else "red"
        table.add_row(
            escape(label),
            f"[{style}]{result.disposition.value}[/{style}]",
            result.error.kind.value if result.error is not None else "-",
            escape(result.presentation.as_text()),
            f"{result.duration * 1000:.2f}",
        )
    return table


def _load_object(spec: str) -> Any:
    path_text, _, attribute = spec.partition(":")
    path = Path(path_text)
    if not path.is_file():
        raise ConfigurationError(f"--module {spec!r}: no file {path_text!r}; give path/to/file.py:NAME")
    module_spec = importlib.util.spec_from_file_location(path.stem, path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigurationError(f"--module {spec!r}: {path_text!r} is not a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[path.stem] = module
    module_spec.loader.exec_module(module)
    name = attribute or "registry"
    if not hasattr(module, name):
        raise ConfigurationError(f"--module {spec!r}: {path_text} has no attribute {name!r}")
    return getattr(module, name)


def _add_module(registry: ToolRegistry, spec: str) -> None:
    found = _load_object(spec)
    if isinstance(found, ToolRegistry):
        for row in found.entries():
            registry._add(row, replace=False)
        return
    tools = found if isinstance(found, list | tuple) else [found]
    for item in tools:
        if not isinstance(item, NativeTool) and not callable(item):
            raise ConfigurationError(f"--module {spec!r}: {item!r} is not a tool or a function")
        registry.register(item)


@asynccontextmanager
async def _open_registry(modules: list[str] | None, configs: list[Path] | None) -> AsyncIterator[ToolRegistry]:
    async with ToolRegistry() as registry:
        for spec in modules or ():
            _add_module(registry, spec)
        if configs:
            from .mcp import McpServer

            servers = [server for path in configs for server in McpServer.from_config(path)]
            await registry.connect_all(servers)
        yield registry


def _fail(exc: Exception) -> None:
    console.print(f"[red]error:[/red] {exc}")
    raise typer.Exit(2)


@app.command()
def tools(module: ModuleOption = None, config: ConfigOption = None) -> None:
    """Print the catalog: every row's model-visible name, family, source and parameters."""

    async def run() -> None:
        async with _open_registry(module, config) as registry:
            console.print(catalog_table(registry.entries()))

    try:
        anyio.run(run)
    except ToolmeshError as exc:
        _fail(exc)


@app.command()
def call(
    name: Annotated[str, typer.Argument(help="The model-visible tool name.")],
    arguments: Annotated[str, typer.Argument(help="Arguments as JSON text.")] = "{}",
    module: ModuleOption = None,
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Dispatch one call, as a model would, and print its result."""

    async def run() -> ToolResult:
        async with _open_registry(module, config) as registry:
            return await registry.dispatch(name, arguments)

    try:
        result = anyio.run(run)
    except ToolmeshError as exc:
        _fail(exc)
        return
    if as_json:
        print(
            json.dumps(
                {
                    "name": result.name,
                    "disposition": result.disposition.value,
                    "error_kind": result.error.kind.value if result.error else None,
                    "presentation": result.presentation.as_text(),
                }
            )
        )
    else:
        console.print(result_table([(name, result)]))
    if not result.ok:
        raise typer.Exit(1)


def export_tools(registry: ToolRegistry, provider: str, *, strict: bool = False) -> list[Any]:
    """The registry's tool declarations in ``provider``'s format, as JSON-able values.

    Raises:
        ConfigurationError: for an unknown provider (``UnsupportedToolError`` for a row
            the provider cannot declare).
    """
    snapshot = registry.snapshot()
    if provider == "openai":
        from .providers import openai

        return list(openai.tools(snapshot, strict=strict))
    if provider == "openai-responses":
        from .providers import openai_responses

        return list(openai_responses.tools(snapshot, strict=strict))
    if provider == "anthropic":
        from .providers import anthropic

        return list(anthropic.tools(snapshot))
    if provider == "gemini":
        from .providers import gemini

        return [tool.model_dump(mode="json", exclude_none=True) for tool in gemini.tools(snapshot)]  # type: ignore[union-attr]
    raise ConfigurationError(f"--provider {provider!r} is not one of {', '.join(PROVIDERS)}")


@app.command()
def export(
    provider: Annotated[str, typer.Option("--provider", "-p", help=f"One of: {', '.join(PROVIDERS)}.")] = "openai",
    strict: Annotated[bool, typer.Option("--strict", help="OpenAI strict mode where the schema allows it.")] = False,
    module: ModuleOption = None,
    config: ConfigOption = None,
) -> None:
    """Print the catalog's tool declarations as the provider's JSON (what ``tools=`` takes)."""

    async def run() -> list[Any]:
        async with _open_registry(module, config) as registry:
            return export_tools(registry, provider, strict=strict)

    try:
        declarations = anyio.run(run)
    except ToolmeshError as exc:
        _fail(exc)
        return
    print(json.dumps(declarations, indent=2, ensure_ascii=False))


def main() -> None:
    """Entry point of the ``toolmesh`` console script."""
    app()
