"""Native tools (and a host ranker) named in text: ``path/to/file.py:NAME`` or ``package.module:NAME``.

One loader for the ``--module`` option of the command line and the ``native`` list of
``toolmesh.json``. ``NAME`` (default ``registry``) is a ``ToolRegistry``, a ``@tool``
(or plain function), or a list of them. A file path is taken relative to ``base``
(the config file's folder) when given; anything that is not a ``.py`` file or a path
is imported as a module, so an installed package's tools load the same way.
Every problem is a ``ConfigurationError`` that starts with ``where`` (the option or
the file and key) and says what to do.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from typing import Any

from toolmesh._core.errors import ConfigurationError
from toolmesh._core.suggest import closest
from toolmesh._rows.native import NativeTool
from toolmesh._search.matches import AsyncRanker, Ranker

from .registry import ToolRegistry

__all__ = ["add_native", "is_file_spec", "load_native", "load_ranker", "split_spec"]

_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
DEFAULT_ATTRIBUTE = "registry"


def split_spec(spec: str) -> tuple[str, str]:
    """``"tools.py:registry"`` -> ``("tools.py", "registry")``; the name defaults to ``registry``.

    The split is at the last colon, so a Windows drive letter stays in the path.
    """
    source, colon, attribute = spec.rpartition(":")
    if not colon or ("/" in attribute or "\\" in attribute or attribute.endswith(".py")):
        return spec, DEFAULT_ATTRIBUTE
    return source, attribute or DEFAULT_ATTRIBUTE


def is_file_spec(source: str) -> bool:
    """Whether ``source`` names a file (``x.py`` or a path) rather than an importable module."""
    return source.endswith(".py") or "/" in source or "\\" in source or not _MODULE.fullmatch(source)


def load_native(spec: str, *, where: str, base: Path | None = None) -> Any:
    """The object ``spec`` names, importing its file or module.

    Raises:
        ConfigurationError: starting with ``where``, for a missing file, a failed
            import or a missing attribute (with the closest name the module has).
    """
    source, attribute = split_spec(spec)
    if is_file_spec(source):
        module = _import_file(source, where=where, base=base)
        shown = source
    else:
        shown = source
        try:
            module = importlib.import_module(source)
        except ImportError as exc:
            raise ConfigurationError(
                f"{where}: cannot import the module {source!r} ({exc}); "
                "install it, or give a file: path/to/file.py:NAME"
            ) from exc
        except Exception as exc:  # the user's module: report it like any other bad option
            raise ConfigurationError(f"{where}: importing {source} failed: {type(exc).__name__}: {exc}") from exc
    if not hasattr(module, attribute):
        public = [name for name in vars(module) if not name.startswith("_")]
        close = closest(attribute, public)
        hint = f"; did you mean {close!r}?" if close else ""
        raise ConfigurationError(f"{where}: {shown} has no attribute {attribute!r}{hint}")
    return getattr(module, attribute)


def load_ranker(spec: str, *, where: str, base: Path | None = None) -> Ranker | AsyncRanker:
    """The host ranker ``spec`` names (an ``EmbeddingRanker``, any ``ranker(query, rows)``).

    Raises:
        ConfigurationError: starting with ``where``, when it does not load or cannot be called
            as ``ranker(query, rows)``.
    """
    ranker = load_native(spec, where=where, base=base)
    try:
        inspect.signature(ranker).bind("query", [])
    except (TypeError, ValueError):
        raise ConfigurationError(
            f"{where}: {spec} is {type(ranker).__name__}, not a ranker: give a callable "
            "ranker(query, rows) -> {name: score}, e.g. EmbeddingRanker(model.encode)"
        ) from None
    return ranker  # type: ignore[no-any-return]


def _import_file(source: str, *, where: str, base: Path | None) -> Any:
    path = Path(source)
    if base is not None and not path.is_absolute():
        path = base / path
    if not path.is_file():
        raise ConfigurationError(f"{where}: no file {source!r}; give path/to/file.py:NAME")
    module_spec = importlib.util.spec_from_file_location(path.stem, path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigurationError(f"{where}: {source!r} is not a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[path.stem] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # the user's module: report it like any other bad option
        raise ConfigurationError(f"{where}: importing {source} failed: {type(exc).__name__}: {exc}") from exc
    return module


def add_native(registry: ToolRegistry, spec: str, *, where: str, base: Path | None = None) -> int:
    """Register the tools ``spec`` names into ``registry``; returns how many rows it added.

    A ``ToolRegistry``'s rows are added as they are; a tool, a function or a list of
    them is registered.

    Raises:
        ConfigurationError: as ``load_native``, or for an item that is not a tool.
        NameCollisionError: when a name is taken already.
    """
    found = load_native(spec, where=where, base=base)
    before = len(registry)
    if isinstance(found, ToolRegistry):
        for row in found.entries():
            registry._add(row, replace=False)
        return len(registry) - before
    tools = found if isinstance(found, list | tuple) else [found]
    for item in tools:
        if not isinstance(item, NativeTool) and not callable(item):
            raise ConfigurationError(f"{where}: {item!r} is not a tool or a function")
        registry.register(item)
    return len(registry) - before
