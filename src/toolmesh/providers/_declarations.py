"""Provider declarations cached per definition, returned as read-only JSON.

A catalog is declared to the model on every turn, and its rows never change: a
row's declaration in one format with one set of options is computed at its first
export and reused by later turns.

Where the cache lives: in the ``ToolDefinition``'s own ``_declarations`` slot (a
``field(compare=False)`` dict). A declaration is a function of the definition and
the format options only, so the definition is the exact key; the cache dies with
it, so no dead row is kept alive, no ``id()`` can be reused for another row, and no
size bound or eviction is needed. A replaced or refreshed row carries a new
definition, hence an empty cache. A ``WeakKeyDictionary`` was rejected: it hashes
rows by value (their schemas are dicts, unhashable), and a module-level
``id()``-keyed table would keep rows alive up to its bound.

Why read-only: the cached declaration is handed out again every turn, so a caller
that edited it would corrupt later turns. A deep copy per row per turn costs more
than building the declaration by hand (``bench/provider_export.py`` measures it),
so the nested parts are deep-frozen instead: ``FrozenDict`` and ``FrozenList`` are
real ``dict`` and ``list`` subclasses (``json.dumps``, the provider SDKs and ``==``
with plain data all work) whose mutating methods raise ``TypeError``. The top level
of each declaration is a fresh plain dict per turn, so adding a key to it (such as
Anthropic's ``cache_control``) works; copy a nested part (``dict(part)``,
``list(part)``, ``copy.deepcopy``) to change it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn, TypeVar

from toolmesh._core.definition import ToolDefinition
from toolmesh._core.errors import UnsupportedToolError
from toolmesh._rows.rows import DynamicEntry, HostedEntry, McpEntry, NativeEntry

from ._common import InvalidNames, ToolSource, collect, declares, name_problem

__all__ = ["FrozenDict", "FrozenList", "copy_top", "declarations", "freeze"]

T = TypeVar("T")


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(
        f"this {type(self).__name__} is part of a cached provider declaration and is read-only; "
        "copy it first (dict(value), list(value) or copy.deepcopy(value)) to change it"
    )


class FrozenDict(dict[str, Any]):
    """A ``dict`` that refuses changes: part of a cached declaration, shared across turns."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        import copy

        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)

    def __hash__(self) -> int:  # type: ignore[override]
        raise TypeError("unhashable type: 'FrozenDict'")


class FrozenList(list[Any]):
    """A ``list`` that refuses changes: part of a cached declaration, shared across turns."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        import copy

        return [copy.deepcopy(value, memo) for value in self]

    def __reduce__(self) -> tuple[type[list[Any]], tuple[list[Any]]]:
        return list, (list(self),)


def freeze(value: Any) -> Any:
    """A read-only deep copy of JSON-like data (mappings and lists/tuples become frozen ones)."""
    if isinstance(value, Mapping):
        return FrozenDict({str(key): freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList(freeze(item) for item in value)
    return value


copy_top: Callable[[Any], Any] = dict.copy
"""A declaration's fresh top level: a plain ``dict`` over the same read-only parts."""

_ROWS = frozenset({NativeEntry, McpEntry, DynamicEntry})


def declarations(
    catalog: ToolSource,
    key: str,
    build: Callable[[ToolDefinition], T],
    fresh: Callable[[T], T],
    hosted: Callable[[HostedEntry], T | None],
    *,
    provider: str,
    api: str,
    invalid_names: InvalidNames,
) -> list[T]:
    """The catalog's declarations in order: each function row's built once per ``key``, then reused.

    ``key`` names the format and its options (a string: its hash is cached); ``build`` makes a row's read-only
    declaration at its first export, and ``fresh`` gives each turn its own top level
    of it (``dict.copy``). Hosted rows go to ``hosted`` (which may return None to
    leave them out of the list). This is ``collect`` with the cache inlined: one pass,
    one dict lookup per row, so a later turn costs about a hand-written comprehension.

    A row whose name the provider's rule rejects is left out, with one warning at its
    first export (``declares``); that answer is cached too, and with
    ``invalid_names="raise"`` every export raises.

    Raises:
        TypeError: for items that are neither rows nor definitions.
        UnsupportedToolError: for a duplicate name, or a rejected name when ``invalid_names="raise"``.
    """
    declared: list[T] = []
    append = declared.append
    seen: set[str] = set()
    see = seen.add
    for item in catalog:
        kind = type(item)
        if kind in _ROWS:
            definition = item.definition  # type: ignore[union-attr]
        elif kind is ToolDefinition:
            definition = item
        else:
            for other in collect((item,)):
                if isinstance(other, ToolDefinition):
                    definition = other
                    break
                _unique(other.name, seen)
                declaration = hosted(other)
                if declaration is not None:
                    append(declaration)
            else:
                continue
        name = definition.name
        if name in seen:
            _unique(name, seen)
        see(name)
        try:
            declaration = definition._declarations[key]
        except KeyError:
            declaration = build(definition) if declares(definition, provider, api, invalid_names) else None
            definition._declarations[key] = declaration
            if declaration is not None:
                append(fresh(declaration))
            continue
        if declaration is None and invalid_names == "raise":
            raise UnsupportedToolError(name_problem(definition.name, provider, api) or definition.name)
        if declaration is not None:
            append(fresh(declaration))
    return declared


def _unique(name: str, seen: set[str]) -> None:
    if name in seen:
        raise UnsupportedToolError(f"tool name {name!r} is declared twice; a provider needs each tool name once")
    seen.add(name)
