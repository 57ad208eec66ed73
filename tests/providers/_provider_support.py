"""Shared pieces of the provider tests: a catalog with an image tool and a failing tool, SDK shape checks."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Any

import pydantic

from toolmesh import Image, Text, ToolOutput, ToolRegistry, tool


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00\xff")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


PNG = _png()
"""A valid 1x1 PNG."""


@tool
async def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


@tool
async def search(query: str, limit: int = 2) -> list[str]:
    """Search the notes.

    Args:
        query: What to look for.
        limit: How many hits to return.
    """
    return [f"{query} {n}" for n in range(1, limit + 1)]


@tool
async def screenshot(label: str) -> ToolOutput:
    """Take a screenshot."""
    return ToolOutput([Text(f"screenshot of {label}"), Image(PNG, "image/png")])


@tool
async def explode() -> str:
    """Always fails."""
    raise RuntimeError("the database password is hunter2")


def make_registry() -> ToolRegistry:
    """A registry with the four native tools above, in that order."""
    registry = ToolRegistry()
    for fn in (add, search, screenshot, explode):
        registry.register(fn)
    return registry


def materialize(value: Any) -> Any:
    """Pydantic validates ``Iterable[...]`` fields lazily; walk them so every item is validated."""
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    if isinstance(value, str | bytes):
        return value
    if isinstance(value, list | tuple | Iterator) or type(value).__name__ == "ValidatorIterator":
        return [materialize(item) for item in value]
    return value


def assert_sdk_shape(type_: Any, value: Any) -> None:
    """``value`` validates as the SDK's TypedDict ``type_`` and nothing in it is dropped as unknown."""
    adapter = pydantic.TypeAdapter(type_)  # kept alive: lazily validated iterables still use it
    validated = materialize(adapter.validate_python(value))
    assert validated == materialize(value)
