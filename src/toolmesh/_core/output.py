"""Content blocks and ToolOutput, and the rule that turns return values into output.

The rule (``to_output``), in order:

* a ``ToolOutput`` is kept as it is; one content block becomes a one-block output;
* a list or tuple holding at least one content block keeps every block in order, and
  each other item is converted by this same rule;
* ``str`` is text, and is never parsed as JSON even when it looks like JSON;
* ``bytes`` are refused: bytes need a MIME type, so return ``Image``/``Audio``/
  ``EmbeddedResource`` instead;
* everything else that pydantic can serialise to JSON (dict, list, number, bool,
  None, pydantic models, dataclasses, dates, ...) is one JSON block.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

import pydantic
import pydantic_core

from .errors import OutputConversionError
from .slots import one_block_constructor

__all__ = [
    "Audio",
    "ContentBlock",
    "EmbeddedResource",
    "Image",
    "Json",
    "ResourceLink",
    "Text",
    "ToolOutput",
    "to_output",
]


@dataclass(frozen=True, slots=True)
class Text:
    """Plain text."""

    type: ClassVar[str] = "text"
    text: str


@dataclass(frozen=True, slots=True)
class Json:
    """A JSON value (structured output)."""

    type: ClassVar[str] = "json"
    value: Any


@dataclass(frozen=True, slots=True, repr=False)
class _Binary:
    """What ``Image`` and ``Audio`` share: raw bytes, their MIME type, a base64 view, a short repr."""

    type: ClassVar[str]
    data: bytes
    mime_type: str

    def __post_init__(self) -> None:
        kind = type(self).__name__
        if not isinstance(self.data, bytes | bytearray):
            raise TypeError(f"{kind}.data must be bytes, got {type(self.data).__name__}")
        if not isinstance(self.mime_type, str) or "/" not in self.mime_type:
            raise TypeError(f"{kind}.mime_type must be a MIME type such as 'image/png', got {self.mime_type!r}")

    @property
    def base64(self) -> str:
        """The data, base64-encoded (what most wire formats carry)."""
        return base64.b64encode(self.data).decode("ascii")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(mime_type={self.mime_type!r}, size={len(self.data)})"


@dataclass(frozen=True, slots=True, repr=False)
class Image(_Binary):
    """An image: raw bytes and their MIME type."""

    type: ClassVar[str] = "image"


@dataclass(frozen=True, slots=True, repr=False)
class Audio(_Binary):
    """Audio: raw bytes and their MIME type."""

    type: ClassVar[str] = "audio"


@dataclass(frozen=True, slots=True)
class ResourceLink:
    """A link to a resource the model or host may read later."""

    type: ClassVar[str] = "resource_link"
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None
    title: str | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    """A resource's contents, inline: ``text`` or ``blob`` (exactly one)."""

    type: ClassVar[str] = "resource"
    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: bytes | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise TypeError("EmbeddedResource needs exactly one of text= or blob=")

    def __repr__(self) -> str:
        body = f"text_len={len(self.text)}" if self.text is not None else f"blob_size={len(self.blob or b'')}"
        return f"EmbeddedResource(uri={self.uri!r}, mime_type={self.mime_type!r}, {body})"


ContentBlock: TypeAlias = Text | Json | Image | Audio | ResourceLink | EmbeddedResource
_BLOCK_TYPES = (Text, Json, Image, Audio, ResourceLink, EmbeddedResource)


class ToolOutput:
    """An ordered list of content blocks: what a tool returned."""

    __slots__ = ("blocks",)

    blocks: list[ContentBlock]

    def __init__(self, blocks: Iterable[ContentBlock] = ()) -> None:
        items = list(blocks)
        for index, block in enumerate(items):
            if not isinstance(block, _BLOCK_TYPES):
                raise TypeError(
                    f"ToolOutput item {index} is a {type(block).__name__}, not a content block; "
                    "use to_output(value) to convert plain values"
                )
        self.blocks = items

    @classmethod
    def text(cls, text: str) -> ToolOutput:
        """An output of one text block."""
        return cls([Text(text)])

    def __iter__(self) -> Iterator[ContentBlock]:
        return iter(self.blocks)

    def __len__(self) -> int:
        return len(self.blocks)

    def __getitem__(self, index: int) -> ContentBlock:
        return self.blocks[index]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolOutput) and other.blocks == self.blocks

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "ToolOutput([" + ", ".join(block.type for block in self.blocks) + "])"

    @property
    def structured(self) -> Any:
        """The value of the first JSON block, or ``None`` when there is none."""
        for block in self.blocks:
            if isinstance(block, Json):
                return block.value
        return None

    def as_text(self) -> str:
        """The output flattened to text, for formats that carry only text.

        Text is kept, JSON is serialised compactly, other blocks become a short
        bracketed note (``[image: image/png]``) so nothing disappears unannounced.
        """
        return "\n".join(block_text(block) for block in self.blocks)


class PresentedOutput(ToolOutput):
    """Output of which the model is shown only a part, ``presentation``; the host keeps it all.

    An MCP result: its ``structuredContent`` is for the host, its ``content`` blocks are
    for the model (they usually repeat the structured value as text already).
    """

    __slots__ = ("presentation",)

    presentation: ToolOutput

    def __init__(self, blocks: Iterable[ContentBlock], presentation: ToolOutput) -> None:
        super().__init__(blocks)
        self.presentation = presentation


def presentation_of(output: ToolOutput) -> ToolOutput:
    """What the model is shown of ``output``: its ``presentation`` part, or all of it."""
    return output.presentation if isinstance(output, PresentedOutput) else output


_compact_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` with its encoder built once, not per call."""


def block_text(block: ContentBlock) -> str:
    match block:
        case Text(text=text):
            return text
        case Json(value=value):
            return _compact_json(value)
        case Image(mime_type=mime) | Audio(mime_type=mime):
            return f"[{block.type}: {mime}]"
        case ResourceLink(uri=uri, name=name):
            return f"[resource link: {name} <{uri}>]"
        case EmbeddedResource(uri=uri, text=text):
            return text if text is not None else f"[resource: {uri}]"
    raise AssertionError(block)  # pragma: no cover


def truncate_text(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` characters plus a note the model can read, when longer.

    The note says how many characters were left out and that the host kept them all, so
    the model neither mistakes the cut for the whole answer nor asks for it verbatim.
    """
    if len(text) <= max_chars:
        return text
    cut = len(text) - max_chars
    return (
        f"{text[:max_chars]}\n[truncated: {cut:,} of {len(text):,} characters not shown; "
        "the full output was kept for the host]"
    )


def truncate_presentation(output: ToolOutput, max_chars: int) -> ToolOutput:
    """``output`` with each text block (and embedded text resource) cut by ``truncate_text``.

    Returns ``output`` itself when no block is longer than ``max_chars``: the output the
    host keeps and the presentation the model is shown are then one object.
    """
    blocks = output.blocks
    if not any(_text_length(block) > max_chars for block in blocks):
        return output
    shown: list[ContentBlock] = []
    for block in blocks:
        if isinstance(block, Text) and len(block.text) > max_chars:
            block = Text(truncate_text(block.text, max_chars))
        elif isinstance(block, EmbeddedResource) and block.text is not None and len(block.text) > max_chars:
            block = dataclasses.replace(block, text=truncate_text(block.text, max_chars))
        shown.append(block)
    return ToolOutput(shown)


def _text_length(block: ContentBlock) -> int:
    if isinstance(block, Text):
        return len(block.text)
    if isinstance(block, EmbeddedResource) and block.text is not None:
        return len(block.text)
    return 0


def to_output(value: object) -> ToolOutput:
    """Convert a tool's return value into a ``ToolOutput`` (see the module's rule).

    Raises:
        OutputConversionError: for bytes, or values pydantic cannot serialise to JSON.
    """
    kind = type(value)
    if kind is str:
        return _text_output(value)
    if kind in _JSON_SCALARS:
        return _json_output(value)
    if isinstance(value, ToolOutput):
        return value
    if isinstance(value, str):
        return ToolOutput([Text(value)])
    if isinstance(value, _BLOCK_TYPES):
        return ToolOutput([value])
    if isinstance(value, list | tuple) and any(isinstance(item, _BLOCK_TYPES) for item in value):
        blocks: list[ContentBlock] = []
        for item in value:
            blocks.extend(to_output(item).blocks)
        return ToolOutput(blocks)
    return ToolOutput([Json(to_json_value(value))])


_SCALARS = (int, float, bool, type(None))
_JSON_SCALARS = frozenset(_SCALARS)


_text_output = one_block_constructor(ToolOutput, Text)
_json_output = one_block_constructor(ToolOutput, Json)


def to_json_value(value: object) -> Any:
    """A JSON-compatible form of ``value`` (pydantic's serialiser), or an error."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        raise OutputConversionError(
            "a tool returned bytes, which have no MIME type; return "
            "Image(data, 'image/png'), Audio(data, mime_type) or "
            "EmbeddedResource(uri, mime_type=..., blob=data) instead"
        )
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return pydantic.TypeAdapter(type(value)).dump_python(value, mode="json")
    try:
        return pydantic_core.to_jsonable_python(value, bytes_mode="base64")
    except pydantic_core.PydanticSerializationError as exc:
        raise OutputConversionError(
            f"a tool returned a {type(value).__name__}, which cannot be converted to JSON; "
            "return a str, a JSON-able value, a pydantic model, a dataclass or content blocks"
        ) from exc
