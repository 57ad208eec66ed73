"""The public API is exactly what toolmesh.__all__ names, and every name in it exists."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import toolmesh
import toolmesh.bridges
import toolmesh.providers


def test_all_names_exist_and_nothing_private_is_exported() -> None:
    for name in toolmesh.__all__:
        assert hasattr(toolmesh, name), name
        assert not name.startswith("_"), name
    assert len(set(toolmesh.__all__)) == len(toolmesh.__all__)


def test_the_design_contract_names_are_public() -> None:
    contract = {
        "ToolRegistry",
        "tool",
        "ToolContext",
        "ToolResult",
        "ToolOutput",
        "ToolExecutionError",
        "ErrorKind",
        "ToolCapabilities",
        "McpServer",
        "NamePolicy",
        "NativeEntry",
        "McpEntry",
        "DynamicEntry",
        "HostedEntry",
        "Text",
        "Json",
        "Image",
        "Audio",
        "ResourceLink",
        "EmbeddedResource",
        "Disposition",
    }
    assert contract <= set(toolmesh.__all__)


PUBLIC_MODULES = (
    "toolmesh",
    "toolmesh.hooks",
    "toolmesh.policy",
    "toolmesh.mcp",
    "toolmesh.gateway",
    "toolmesh.providers",
    *(
        f"toolmesh.providers.{info.name}"
        for info in pkgutil.iter_modules(toolmesh.providers.__path__)
        if not info.name.startswith("_")
    ),
    "toolmesh.bridges",
    *(
        f"toolmesh.bridges.{info.name}"
        for info in pkgutil.iter_modules(toolmesh.bridges.__path__)
        if not info.name.startswith("_")
    ),
)
"""The public modules: the package, hooks, policy, mcp, gateway, every provider format and every bridge."""

NAMESPACES = ("toolmesh.providers.", "toolmesh.bridges.")
"""Modules that share verbs (``tools``, ``parse_tool_calls``, ...): their members are compared within the module."""


def _walk() -> list[str]:
    return [toolmesh.__name__] + [
        info.name for info in pkgutil.walk_packages(toolmesh.__path__, prefix=f"{toolmesh.__name__}.")
    ]


def _public(module: str) -> bool:
    return not any(part.startswith("_") for part in module.split("."))


def test_every_module_outside_the_public_ones_is_private() -> None:
    public = {name for name in _walk() if _public(name)}
    assert public == set(PUBLIC_MODULES)


def test_every_public_module_exports_what_it_defines_and_nothing_missing() -> None:
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        exported = getattr(module, "__all__", None)
        assert exported is not None, f"{name} has no __all__"
        assert len(set(exported)) == len(exported), name
        for member in exported:
            assert hasattr(module, member), f"{name}.{member} is exported but missing"
        for member, value in vars(module).items():
            defined_here = (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__ == name
            if defined_here and not member.startswith("_"):
                assert member in exported, f"{name}.{member} is public but not in __all__"


def test_no_name_has_two_homes() -> None:
    """A name means one object everywhere; beside the package root, an object has one public home.

    The provider formats and the framework bridges are namespaces sharing verbs (``tools``,
    ``parse_tool_calls``, ``tool_results``), so their members are compared within their module only.
    """
    by_name: dict[str, object] = {}
    homes: dict[int, list[str]] = {}
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for member in module.__all__:
            value = getattr(module, member)
            key = member if not name.startswith(NAMESPACES) else f"{name}.{member}"
            assert by_name.setdefault(key, value) is value, f"{name}.{member} is another object of that name"
            if name != toolmesh.__name__ and not isinstance(value, (str, int)):
                homes.setdefault(id(value), []).append(f"{name}.{member}")
    for places in homes.values():
        assert len(places) == 1, f"one object, two public homes: {places}"


def test_the_root_re_exports_only_names_it_does_not_rename() -> None:
    for member in toolmesh.__all__:
        value = getattr(toolmesh, member)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__name__ == member, member
