"""What the provider modules share: reading a catalog, checking rows, flattening results.

Nothing here imports a provider SDK. Responses are read by attribute *or* by key
(``get``), so the SDK's own objects and plain dicts of the same shape both work.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

from toolmesh._core.calls import ToolCall
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.errors import UnsupportedContentError, UnsupportedToolError
from toolmesh._core.names import PROVIDER_RULES
from toolmesh._core.output import Audio, ContentBlock, EmbeddedResource, Image, Json, ToolOutput
from toolmesh._core.problems import json_type
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._rows.rows import DynamicEntry, Entry, HostedEntry, McpEntry, NativeEntry

__all__ = [
    "MediaPart",
    "Part",
    "TextPart",
    "ToolSource",
    "UnsupportedContentError",
    "UnsupportedToolError",
    "InvalidNames",
    "check_hosted",
    "collect",
    "declares",
    "entries",
    "generated_id",
    "get",
    "is_record",
    "is_error",
    "is_generated_id",
    "make_call",
    "malformed_call",
    "name_problem",
    "plain",
    "rejected_names",
    "render",
    "result_text",
    "schemas_of",
    "sole_json",
]

ToolSource: TypeAlias = Iterable[ToolDefinition | Entry]
"""What ``tools()`` accepts: a ``ToolRegistry``, a ``ToolSnapshot`` (both iterate over
their rows), or any iterable of rows or ``ToolDefinition``s."""

logger = logging.getLogger("toolmesh.providers")

_ROW_TYPES = (NativeEntry, McpEntry, DynamicEntry, HostedEntry)


def get(obj: object, key: str, default: Any = None) -> Any:
    """``obj[key]`` for mappings, ``obj.key`` for SDK objects; ``default`` when absent or None."""
    value = obj.get(key, default) if isinstance(obj, Mapping) else getattr(obj, key, default)
    return default if value is None else value


# -- declarations -------------------------------------------------------------------


def collect(source: ToolSource) -> list[ToolDefinition | HostedEntry]:
    """The definitions to declare, in catalog order; hosted rows stay rows (they are emitted as-is).

    Raises:
        TypeError: for items that are neither rows nor definitions.
        UnsupportedToolError: when two items share a name (providers reject duplicates).
    """
    items: list[ToolDefinition | HostedEntry] = []
    seen: set[str] = set()
    for item in source:
        if isinstance(item, HostedEntry):
            declared: ToolDefinition | HostedEntry = item
        elif isinstance(item, _ROW_TYPES):
            declared = item.definition
        elif isinstance(item, ToolDefinition):
            declared = item
        else:
            raise TypeError(
                f"tools() takes a ToolRegistry, a ToolSnapshot or an iterable of rows or ToolDefinitions; "
                f"got an item of type {type(item).__name__}"
            )
        if declared.name in seen:
            raise UnsupportedToolError(
                f"tool name {declared.name!r} is declared twice; a provider needs each tool name once"
            )
        seen.add(declared.name)
        items.append(declared)
    return items


InvalidNames: TypeAlias = Literal["skip", "raise"]
"""What ``tools()`` does with a row whose name the provider rejects: leave it out with a
warning (``"skip"``, the default), or raise ``UnsupportedToolError`` (``"raise"``)."""

_WARNED_LIMIT = 4096
_warned: set[tuple[str, str]] = set()
"""(API, name) pairs already warned about: a catalog declared every turn warns once per process."""


def name_problem(name: str, provider: str, api: str) -> str | None:
    """Why the provider's rule rejects ``name`` and how to fix it, or None when it accepts it."""
    rule = PROVIDER_RULES[provider]
    if rule.matches(name):
        return None
    return (
        f"tool name {name!r} is not valid for {api}: it must match {rule.pattern}. Build the registry with "
        f"ToolRegistry(names=NamePolicy(provider={provider!r})) so model-visible names are made valid when rows "
        f"are added (this one would become {rule.sanitize(name)!r}), or give the tool a shorter name or alias; "
        "toolmesh does not rename tools here, because dispatch looks calls up by the registry's names"
    )


def declares(definition: ToolDefinition, provider: str, api: str, invalid_names: InvalidNames) -> bool:
    """Whether ``definition`` goes into the declarations: its name is valid for the provider.

    A rejected name leaves only that row out, with one warning on the
    ``toolmesh.providers`` logger naming it and the fix, or raises with ``"raise"``.

    Raises:
        UnsupportedToolError: for a rejected name when ``invalid_names="raise"``.
    """
    problem = name_problem(definition.name, provider, api)
    if problem is None:
        return True
    if invalid_names == "raise":
        raise UnsupportedToolError(problem)
    warned = (api, definition.name)
    if warned not in _warned:
        if len(_warned) >= _WARNED_LIMIT:
            _warned.clear()
        _warned.add(warned)
        logger.warning("%s. The tool is left out of the declarations.", problem[0].upper() + problem[1:])
    return False


def rejected_names(catalog: ToolSource, provider: str) -> dict[str, str]:
    """The rows ``tools()`` leaves out for ``provider`` because its name rule rejects them.

    Args:
        catalog: What you would pass to ``tools()``.
        provider: ``"openai"`` (Chat Completions and Responses), ``"anthropic"`` or ``"gemini"``.

    Returns:
        Each rejected name -> why, and how to make it valid; empty when every name is valid.
    """
    if provider not in PROVIDER_RULES:
        raise ValueError(f"unknown provider {provider!r}; use one of {', '.join(sorted(PROVIDER_RULES))}")
    problems: dict[str, str] = {}
    for item in collect(catalog):
        if isinstance(item, ToolDefinition):
            problem = name_problem(item.name, provider, provider)
            if problem is not None:
                problems[item.name] = problem
    return problems


def check_hosted(row: HostedEntry, providers: Sequence[str], api: str) -> Mapping[str, Any]:
    """The hosted row's own declaration when it belongs to one of ``providers`` (or to any provider).

    Raises:
        UnsupportedToolError: for another provider's hosted tool.
    """
    if row.provider is None or row.provider in providers:
        return row.provider_tool
    raise UnsupportedToolError(
        f"hosted tool {row.name!r} is run by provider {row.provider!r} and cannot be declared to {api}. "
        "Leave it out of this turn with registry.snapshot(active=[...])"
    )


def plain(value: Any) -> Any:
    """A deep copy of JSON-like data as plain dicts and lists (mapping proxies and tuples included)."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


# -- calls ---------------------------------------------------------------------------

_GENERATED_PREFIX = "toolmesh-"


_NOT_RECORDS = (str, bytes, bytearray, int, float, list, tuple, type(None))


def is_record(value: object) -> bool:
    """Whether ``value`` can be read as one provider object: a mapping or an SDK object, not a JSON scalar or array."""
    return not isinstance(value, _NOT_RECORDS)


def entries(container: object, field: str, *, api: str) -> Sequence[object]:
    """The list in ``container``'s ``field``: empty when absent, and when it is not a list.

    A field that is there but is not a list is malformed: reading it as it is would
    invent calls (one per character of a string) or raise, so it gives no entries and
    a warning on the ``toolmesh.providers`` logger saying what was found.
    """
    value = get(container, field)
    if value is None or isinstance(value, list | tuple):
        return value or ()
    logger.warning(
        "A response from %s is malformed: its %r field is not a list (got %s); no tool calls were read from it",
        api,
        field,
        json_type(value),
    )
    return ()


def malformed_call(entry: object, *, provider: str, index: int) -> ToolCall:
    """The invalid call for a tool call entry that is not an object, with a deterministic id.

    The entry claims to be a call (it is in a list of calls), so it is answered
    through the invalid-call path rather than dropped; its name is ``""``.
    """
    problem = (
        f"tool call {index} is not an object (got {json_type(entry)}); "
        "a tool call is an object with an id, a name and arguments"
    )
    return ToolCall(generated_id(provider, index, "", ""), "", "", problem)


def generated_id(provider: str, index: int, name: str, arguments: str) -> str:
    """A deterministic id for a call the provider sent without one: same response, same ids.

    ``arguments`` is the call's arguments text (``ToolCall.arguments``), so any
    arguments, even ones that are not JSON, give an id.
    """
    seed = json.dumps([name, arguments])
    digest = hashlib.sha256(seed.encode("ascii")).hexdigest()[:8]
    return f"{_GENERATED_PREFIX}{provider}-{index}-{digest}"


def is_generated_id(call_id: str, provider: str) -> bool:
    """Whether ``call_id`` was made by ``generated_id`` for ``provider`` (not the provider's own)."""
    return call_id.startswith(f"{_GENERATED_PREFIX}{provider}-")


def make_call(call_id: object, name: object, arguments: object, *, provider: str, index: int) -> ToolCall:
    """One ``ToolCall`` from a provider's id, name and arguments (JSON text or a mapping).

    Arguments that are not JSON, or JSON that cannot be used, become an invalid call
    (``problem`` set), never an error. A missing id is replaced by a deterministic one
    (``generated_id``).
    """
    tool_name = name if isinstance(name, str) else ""
    if isinstance(call_id, str) and call_id:
        return ToolCall.from_arguments(call_id, tool_name, arguments)
    call = ToolCall.from_arguments("", tool_name, arguments)
    return replace(call, id=generated_id(provider, index, tool_name, call.arguments))


def schemas_of(source: ToolSource | None) -> dict[str, Mapping[str, Any]] | None:
    """Parameters schema by name for the function tools of ``source`` (None stays None)."""
    if source is None:
        return None
    return {item.name: item.parameters for item in collect(source) if isinstance(item, ToolDefinition)}


# -- results -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextPart:
    """Text the model is shown (consecutive text-like blocks merged with newlines)."""

    text: str


@dataclass(frozen=True, slots=True)
class MediaPart:
    """Binary content the provider's result format carries natively."""

    data: bytes
    """The raw bytes."""
    mime_type: str
    """Their MIME type, one the provider accepts."""
    uri: str | None = None
    """The resource URI, when the bytes came from an embedded resource."""


Part: TypeAlias = TextPart | MediaPart


def is_error(result: ToolResult) -> bool:
    """Whether the model should be told the call failed (failed or refused)."""
    return result.disposition in (Disposition.FAILED, Disposition.REFUSED)


def _media(block: ContentBlock) -> tuple[bytes, str] | None:
    match block:
        case Image(data=data, mime_type=mime) | Audio(data=data, mime_type=mime):
            return data, mime
        case EmbeddedResource(blob=bytes() as blob, mime_type=mime):
            return blob, mime or "application/octet-stream"
    return None


def render(
    result: ToolResult,
    *,
    api: str,
    media_types: frozenset[str],
    describe_unsupported: bool,
    hint: str,
) -> list[Part]:
    """The result's presentation as text and media parts the provider accepts.

    Text, JSON (compact JSON text), resource links and text resources become text;
    images and binary resources whose MIME type is in ``media_types`` become media
    parts. Anything else is refused, or with ``describe_unsupported`` replaced by a
    short note such as ``[image: image/png]``.

    Raises:
        UnsupportedContentError: for content the provider cannot carry.
    """
    parts: list[Part] = []
    pending: list[str] = []
    for block in result.presentation:
        media = _media(block)
        if media is not None and media[1] in media_types:
            if pending:
                parts.append(TextPart("\n".join(pending)))
                pending = []
            uri = block.uri if isinstance(block, EmbeddedResource) else None
            parts.append(MediaPart(media[0], media[1], uri))
            continue
        if media is not None and not describe_unsupported:
            raise UnsupportedContentError(
                f"the result of call {result.call_id!r} (tool {result.name!r}) holds {block.type} content "
                f"({media[1]}), which {api} cannot carry. {hint}Rewrite the presentation with an on_tool_result "
                "hook, or pass describe_unsupported=True to send a short text note in its place.",
                call_id=result.call_id,
                tool_name=result.name,
                block_type=block.type,
                mime_type=media[1],
            )
        pending.append(ToolOutput([block]).as_text())
    if pending or not parts:
        parts.append(TextPart("\n".join(pending)))
    return parts


def result_text(result: ToolResult, *, api: str, describe_unsupported: bool, hint: str) -> str:
    """The presentation as one text, for formats that carry text only."""
    parts = render(result, api=api, media_types=frozenset(), describe_unsupported=describe_unsupported, hint=hint)
    return "\n".join(part.text for part in parts if isinstance(part, TextPart))


def sole_json(output: ToolOutput) -> tuple[bool, Any]:
    """``(True, value)`` when the output is exactly one JSON block."""
    if len(output) == 1 and isinstance(output[0], Json):
        return True, output[0].value
    return False, None
