"""The shape of the code: packages in one order, imports one way, no cycles, no borrowed private names.

The order is the one ``docs/architecture.md`` draws. Every import counts: at module
level, inside functions and under ``TYPE_CHECKING`` alike.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import toolmesh

SOURCE = Path(toolmesh.__file__).parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("toolmesh._core",),
    ("toolmesh._state",),
    ("toolmesh._context",),
    ("toolmesh._rows",),
    ("toolmesh.mcp._spec",),
    ("toolmesh.mcp._client",),
    ("toolmesh._hooks", "toolmesh._search"),
    ("toolmesh._dispatch",),
    ("toolmesh._policy", "toolmesh.providers"),
    ("toolmesh.bridges",),
    ("toolmesh.gateway._config",),
    ("toolmesh.gateway._shared",),
    ("toolmesh.gateway._mcp_face", "toolmesh.gateway._responses"),
    ("toolmesh._cli",),
)
"""The concept packages, lowest first. A package imports only from packages of lower rows;
packages of one row (siblings) never import each other."""

FACADES = frozenset(
    {"toolmesh", "toolmesh.__main__", "toolmesh.hooks", "toolmesh.policy", "toolmesh.mcp", "toolmesh.gateway"}
)
"""The public modules that re-export the concept packages' names: they may import any of them,
and no concept package imports them."""

NO_SDK = ("toolmesh._core",)
"""Packages that know nothing of MCP: they import neither the ``mcp`` SDK nor ``mcp_types``."""

MAX_LINES = 450


@dataclass(frozen=True)
class Import:
    importer: str
    target: str
    """The toolmesh module imported (for ``from package import module``, the module)."""
    names: tuple[str, ...]
    line: int


def _modules() -> dict[str, Path]:
    found = {}
    for path in SOURCE.rglob("*.py"):
        parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(module: str) -> Iterator[Import]:
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "toolmesh":
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if submodule in MODULES:
                    yield Import(module, submodule, (), node.lineno)
                else:
                    yield Import(module, target, (alias.name,), node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "toolmesh":
                    yield Import(module, alias.name, (), node.lineno)


def _third_party(module: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
    return found


def package_of(module: str) -> str | None:
    """The concept package ``module`` belongs to (None for a facade)."""
    if module in FACADES:
        return None
    for row in LAYERS:
        for package in row:
            if module == package or module.startswith(package + "."):
                return package
    raise AssertionError(f"{module} belongs to no package of LAYERS: give it one, or add the package to the order")


def rank(package: str) -> int:
    return next(index for index, row in enumerate(LAYERS) if package in row)


ALL_IMPORTS = [found for module in sorted(MODULES) for found in _imports(module)]


def test_every_module_belongs_to_one_package_of_the_order() -> None:
    for module in MODULES:
        package_of(module)


def _direction_problem(found: Import) -> str | None:
    importer, target = package_of(found.importer), package_of(found.target)
    where = f"{found.importer} line {found.line} imports {found.target}"
    if importer is None:
        return None  # a facade re-exports from anywhere
    if target is None:
        return f"{where}: a public facade; import from the package that owns the name"
    if importer != target and rank(target) >= rank(importer):
        return f"{where}: {target} is not below {importer} in LAYERS"
    return None


def _private_problem(found: Import) -> str | None:
    importer, target = package_of(found.importer), package_of(found.target)
    if importer == target and importer is not None:
        return None
    inner = found.target.removeprefix(target or found.target).lstrip(".").split(".")
    private = [part for part in (*inner, *found.names) if part.startswith("_") and not part.startswith("__")]
    if private:
        return f"{found.importer} line {found.line} imports {private} of {found.target}: name it publicly"
    return None


def test_imports_point_down_the_order() -> None:
    problems = [problem for found in ALL_IMPORTS if (problem := _direction_problem(found))]
    assert not problems, "\n".join(problems)


def test_no_import_of_another_packages_private_name() -> None:
    problems = [problem for found in ALL_IMPORTS if (problem := _private_problem(found))]
    assert not problems, "\n".join(problems)


def test_the_rules_catch_what_they_are_for() -> None:
    upward = Import("toolmesh._core.errors", "toolmesh._dispatch.registry", ("ToolRegistry",), 1)
    sideways = Import("toolmesh.gateway._responses.app", "toolmesh.gateway._mcp_face.gateway", ("McpGateway",), 1)
    facade = Import("toolmesh._cli.serve", "toolmesh.mcp", ("McpServer",), 1)
    borrowed = Import("toolmesh.gateway._mcp_face.face", "toolmesh.mcp._client.session", ("_CLIENT_INFO",), 1)
    assert _direction_problem(upward) and _direction_problem(sideways) and _direction_problem(facade)
    assert _private_problem(borrowed)
    assert not _direction_problem(Import("toolmesh._dispatch.registry", "toolmesh._core.errors", ("X",), 1))


def test_there_are_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for found in ALL_IMPORTS:
        if found.target in MODULES and found.target != found.importer:
            graph[found.importer].add(found.target)
    cycles = _strongly_connected(graph)
    assert not cycles, f"import cycles: {cycles}"


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _strongly_connected({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", NO_SDK)
def test_the_core_knows_no_mcp(package: str) -> None:
    for module in MODULES:
        if package_of(module) == package:
            wrong = _third_party(module) & {"mcp", "mcp_types"}
            assert not wrong, f"{module} imports {sorted(wrong)}"


def test_the_core_builds_no_provider_items() -> None:
    text = (SOURCE / "_core" / "result.py").read_text(encoding="utf-8")
    assert '"mcp_call"' not in text and "MCP_SERVER_LABEL" not in text


def test_no_module_is_longer_than_the_limit() -> None:
    lengths = {
        str(path.relative_to(SOURCE)): len(path.read_text(encoding="utf-8").splitlines())
        for path in SOURCE.rglob("*.py")
    }
    too_long = {name: lines for name, lines in lengths.items() if lines > MAX_LINES}
    assert not too_long, f"split these by responsibility: {too_long}"
