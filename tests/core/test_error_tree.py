"""Every exception toolmesh raises is in one tree, in one module, drawn in its docstring."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import toolmesh
from toolmesh._core import errors


def _modules() -> list[str]:
    return [toolmesh.__name__] + [
        info.name for info in pkgutil.walk_packages(toolmesh.__path__, prefix=f"{toolmesh.__name__}.")
    ]


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in _modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__.split(".")[0] == toolmesh.__name__
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def test_every_public_exception_is_a_toolmesh_error_defined_in_the_errors_module() -> None:
    for where, cls in _exception_classes().items():
        if cls.__module__ == errors.__name__:
            assert issubclass(cls, errors.ToolmeshError), where
        else:
            # Internal signals (caught and mapped before they reach a host) stay with their module.
            assert _is_private(cls.__module__) and cls.__name__ not in toolmesh.__all__, where


def test_the_docstring_draws_every_error_of_the_tree() -> None:
    doc = errors.__doc__ or ""
    for name in errors.__all__:
        cls = getattr(errors, name)
        if inspect.isclass(cls) and issubclass(cls, BaseException):
            assert f" {name}" in doc, name
            assert name in toolmesh.__all__, name
