"""The speed measures of the dispatch hot path, and why each exists.

``dispatch`` runs once per model tool call and agent loops call it in bursts, so its
fixed cost matters. DESIGN.md "The hot path" has the measurements: validating the JSON
and awaiting the function take 0.78 µs a call, 1.36 µs with a frozen result dataclass
built as well; a no-op span or a timeout scope around it costs more than the call.
Each measure below builds the same objects, or gives the same answer, as the plain
code it replaces; ``bench/native_dispatch.py`` measures them.

* **Preallocated results** (``slot_constructor``): a frozen slotted dataclass's
  ``__init__`` sets each field through ``object.__setattr__`` by name. Allocating a
  plain twin class with the same slots, storing each field with an ordinary attribute
  store and then giving the object its real class (``__class__`` assignment, allowed
  between classes of the same slot layout) builds the same ``ToolResult`` in a quarter
  of the time (0.5 µs against 1.8; writing each slot through its descriptor, the
  previous measure, takes 0.85); it is made once per dispatched call. Discovery
  builds each MCP row (``McpEntry``) the same way: thousands of rows per server.
* **Rows completed at first read** (``derive_on_first_read``): a discovered MCP row's
  ``definition`` and ``capabilities`` are made from its listed tool when first read,
  not at discovery. A catalog of thousands of tools is mostly never shown whole (hosts
  pick the rows of a turn), and making both for every row was a third of toolmesh's
  own cost of a listing; the two objects per row also made a 5,000-tool connect run
  one more full garbage collection than the raw listing (about 0.1 s). Once made, the
  value is stored in the row's slot: every later read is a plain slot read, and the
  row is the same frozen value it always was.
* **One-block outputs** (``one_block_constructor``): most tools return one str or one
  JSON scalar. ``ToolOutput([Json(value)])`` runs two ``__init__`` (a frozen dataclass's
  sets its field through ``object.__setattr__``; ``ToolOutput``'s copies the blocks and
  checks each one's type); the value is stored through the block's slot descriptor and
  the fresh list given to the output instead (0.30 µs against 0.49 with a twin block).
* **The tracer slot** (``global_tracer_provider``): ``trace.get_tracer_provider()``
  probes ``os.environ`` on every call while no provider is installed (a raised and
  caught ``KeyError``, about 1 µs, the largest single cost of an untraced dispatch).
  The global provider can be set only once, so reading the API's module slot gives
  the same answer. The meter slot (``global_meter_provider``) is the same measure for
  metrics: a call observed by ``CallMetrics`` with no meter provider installed costs
  one slot read.

Where the code itself is the measure, it stays where it runs: ``Catalog.dispatch``
runs a plain async native tool (``NativeEntry.plain_tool``: no context, no timeout of
its own) itself when the registry sets no timeout or tracer of its own
(``DispatchSettings.plain``) and no global tracer provider is installed: one
coroutine layer, no context copy. Other calls go through ``_execution.execute``, which
returns the call's coroutine and inlines ``guarded()`` for untimed calls, opens a span
only when a real tracer provider is installed and a timeout scope only when a timeout
is set; ``DispatchSettings`` makes a provider's tracer once. A native tool's arguments
are validated by its model's fields alone (``_function_schema.fields_validator``: the
same checks and errors, no model instance, 0.3 µs less), built once at decoration.

This module imports nothing from toolmesh, so the core types can use it.
"""

from __future__ import annotations

import dataclasses
import os
import types
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from opentelemetry import metrics, trace
from opentelemetry.environment_variables import OTEL_PYTHON_METER_PROVIDER, OTEL_PYTHON_TRACER_PROVIDER
from opentelemetry.metrics import _internal as _metrics_internal

__all__ = [
    "DERIVED",
    "derive_on_first_read",
    "global_meter_provider",
    "global_tracer_provider",
    "one_block_constructor",
    "slot_constructor",
]

_T = TypeVar("_T")
_new = object.__new__


def slot_constructor(cls: type[_T]) -> Callable[..., _T]:
    """``cls(*values)`` for a frozen slotted dataclass, every init field given by position: the same object, faster.

    The function is generated once (as ``dataclasses`` generates ``__init__``), so each
    call is one allocation of a twin with the same slots, one attribute store per field
    and one ``__class__`` assignment. Fields left out of ``__init__`` (``init=False``) get
    their default, or a fresh value of their default factory; it runs no
    ``__post_init__`` and fills no other defaults.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    names = [field.name for field in fields if field.init]
    slots = getattr(cls, "__slots__", None)
    if slots is None or not names or any(name.startswith("_") for name in names) or cls.__bases__ != (object,):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass with public fields")
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": tuple(slots)})
    namespace: dict[str, Any] = {"_new": _new, "_cls": cls, "_twin": twin}
    body = "".join(f"    _made.{name} = {name}\n" for name in names)
    for field in fields:
        if field.init:
            continue
        if field.default is not dataclasses.MISSING:
            namespace[f"_default{field.name}"] = field.default
            body += f"    _made.{field.name} = _default{field.name}\n"
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory{field.name}"] = field.default_factory
            body += f"    _made.{field.name} = _factory{field.name}()\n"
        else:
            raise TypeError(f"{cls.__name__}.{field.name} is left out of __init__ without a default")
    # built from the dataclass's own field names, as dataclasses builds __init__
    source = (
        f"def new_{cls.__name__}({', '.join(names)}):\n    _made = _new(_twin)\n{body}"
        "    _made.__class__ = _cls\n    return _made\n"
    )
    exec(source, namespace)
    made: Callable[..., _T] = namespace[f"new_{cls.__name__}"]
    return made


DERIVED: Any = type("_Derived", (), {"__repr__": lambda self: "DERIVED", "__slots__": ()})()
"""Stored in a slot that ``derive_on_first_read`` fills when it is first read."""


class _DerivedSlot:
    """A slot's descriptor that replaces a stored ``DERIVED`` with ``derive(obj)`` when read."""

    __slots__ = ("_derive", "_slot")

    def __init__(self, slot: Any, derive: Callable[[Any], Any]) -> None:
        self._slot = slot
        self._derive = derive

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = self._slot.__get__(obj, owner)
        if value is DERIVED:
            value = self._derive(obj)
            self._slot.__set__(obj, value)
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        self._slot.__set__(obj, value)

    def __delete__(self, obj: Any) -> None:
        self._slot.__delete__(obj)


def derive_on_first_read(cls: type, name: str, derive: Callable[[Any], Any]) -> None:
    """Let ``cls``'s slot ``name`` hold ``DERIVED`` until first read, then ``derive(obj)``, kept.

    Constructors may store ``DERIVED`` (``slot_constructor`` by position, or the
    dataclass's own ``__init__``); every reader, ``dataclasses.replace``, ``==`` and
    ``repr`` included, sees the derived value. ``derive`` must depend only on fields
    that do not change (a frozen dataclass's).
    """
    slot = cls.__dict__.get(name)
    if not isinstance(slot, types.MemberDescriptorType):
        raise TypeError(f"{cls.__name__}.{name} is not a slot")
    setattr(cls, name, _DerivedSlot(slot, derive))


class _Blocks(Protocol):
    blocks: list[Any]


_O = TypeVar("_O", bound=_Blocks)


def one_block_constructor(output_cls: type[_O], block_cls: type[Any]) -> Callable[[Any], _O]:
    """``output_cls([block_cls(value)])`` for a block of one field: no copy, no type check, no ``__init__``.

    The block's one field is stored through its slot descriptor (one store beats a twin
    and a ``__class__`` assignment for a single field).
    """
    fields = [field for field in dataclasses.fields(block_cls) if field.init]
    if len(fields) != 1 or not hasattr(block_cls, "__slots__"):
        raise TypeError(f"{block_cls.__name__} is not a slotted dataclass of one field")
    set_value = getattr(block_cls, fields[0].name).__set__

    def one_block(value: Any) -> _O:
        block = _new(block_cls)
        set_value(block, value)
        output = _new(output_cls)
        output.blocks = [block]
        return output

    return one_block


_PROVIDER_SLOT = hasattr(trace, "_TRACER_PROVIDER")
_PROVIDER_FROM_ENV = OTEL_PYTHON_TRACER_PROVIDER in os.environ


def global_tracer_provider() -> trace.TracerProvider | None:
    """The installed global tracer provider, or None while there is none.

    Same answer as ``trace.get_tracer_provider()`` without its per-call ``os.environ``
    probe (see the module docstring). A provider named by ``OTEL_PYTHON_TRACER_PROVIDER``
    (looked up when toolmesh is imported) is still loaded through
    ``get_tracer_provider()`` on first use.
    """
    if not _PROVIDER_SLOT:  # an opentelemetry-api without the slot: the public, slower way
        return trace.get_tracer_provider()
    provider: trace.TracerProvider | None = trace._TRACER_PROVIDER
    if provider is None and _PROVIDER_FROM_ENV:
        provider = trace.get_tracer_provider()
    return provider


_METER_SLOT = hasattr(_metrics_internal, "_METER_PROVIDER")
_METER_FROM_ENV = OTEL_PYTHON_METER_PROVIDER in os.environ


def global_meter_provider() -> metrics.MeterProvider | None:
    """The installed global meter provider, or None while there is none.

    Same answer as ``metrics.get_meter_provider()`` (None for its proxy) without its
    per-call ``os.environ`` probe, as ``global_tracer_provider``.
    """
    if not _METER_SLOT:  # an opentelemetry-api without the slot: the public, slower way
        found = metrics.get_meter_provider()
        return (
            None
            if isinstance(found, metrics.NoOpMeterProvider) or type(found).__name__ == "_ProxyMeterProvider"
            else found
        )
    provider: metrics.MeterProvider | None = _metrics_internal._METER_PROVIDER
    if provider is None and _METER_FROM_ENV:
        provider = metrics.get_meter_provider()
    return provider
