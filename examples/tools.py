"""Example native tools: what `make demo` and the README use."""

from __future__ import annotations

import enum
import struct
import zlib

import pydantic

from toolmesh import ErrorKind, Image, Text, ToolContext, ToolExecutionError, ToolRegistry, tool


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Forecast(pydantic.BaseModel):
    city: str
    temperature: float
    unit: Unit


_TEMPERATURES = {"rome": 18.5, "oslo": 2.0, "lima": 21.0}


@tool
async def forecast(city: str, unit: Unit = Unit.CELSIUS) -> Forecast:
    """Tomorrow's temperature in a city.

    Args:
        city: The city, e.g. "Rome".
        unit: Celsius or Fahrenheit.
    """
    celsius = _TEMPERATURES.get(city.lower())
    if celsius is None:
        known = ", ".join(sorted(c.title() for c in _TEMPERATURES))
        raise ToolExecutionError(f"No forecast for {city!r}. Known cities: {known}.", kind=ErrorKind.NOT_FOUND)
    value = celsius if unit is Unit.CELSIUS else celsius * 9 / 5 + 32
    return Forecast(city=city.title(), temperature=round(value, 1), unit=unit)


@tool
def word_count(text: str) -> int:
    """Count the words in a text (runs in a worker thread: it is a plain function)."""
    return len(text.split())


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@tool
async def swatch(red: int, green: int, blue: int, ctx: ToolContext[None]) -> list[Text | Image]:
    """A 4x4 PNG of one colour, with a caption."""
    for channel in (red, green, blue):
        if not 0 <= channel <= 255:
            raise ToolExecutionError("Each channel must be between 0 and 255.", kind=ErrorKind.INVALID_ARGUMENTS)
    ctx.metadata["bytes"] = 4 * 4 * 3
    return [Text(f"rgb({red}, {green}, {blue})"), Image(_png(4, 4, (red, green, blue)), "image/png")]


registry = ToolRegistry()
for example in (forecast, word_count, swatch):
    registry.register(example)
