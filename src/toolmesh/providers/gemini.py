"""Gemini (google-genai): function declarations out, function calls in, function responses back.

Example:
    >>> from google.genai import types
    >>> from toolmesh.providers import gemini
    >>> config = types.GenerateContentConfig(tools=gemini.tools(snapshot))
    >>> response = client.models.generate_content(model=..., contents=contents, config=config)
    >>> contents.append(response.candidates[0].content)
    >>> results = await run_tool_calls(snapshot, gemini.parse_tool_calls(response))
    >>> contents.append(gemini.tool_results(results))

Parameters are declared as JSON Schema (``parameters_json_schema``), which Gemini
accepts as it is. Function calls may come without an id: such calls get a
deterministic id (``toolmesh-gemini-<n>-<hash>``) and their responses are matched by
name and order, as Gemini expects; a provider id is kept and sent back. Function
responses carry ``{"output": ...}`` (a lone JSON block as its value, else text) or
``{"error": feedback}``, and images (PNG, JPEG, WebP) and PDFs as inline data parts.

Unlike the other provider modules, this one returns the SDK's own objects
(``types.Tool``, ``types.Content``), so it needs ``google-genai`` installed. It imports
``google.genai.types`` when it is imported itself, not at the first export: that import
takes about 0.4 s, which would otherwise stall the event loop of an async host at its
first turn. Import this module at start-up (a module-level import), as you do
``google.genai``. Without google-genai installed the import still succeeds, and each
function raises ``ImportError`` saying what to install.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from toolmesh._core.calls import ToolCall
from toolmesh._core.definition import ToolDefinition
from toolmesh._core.result import ToolResult
from toolmesh._rows.rows import HostedEntry

from ._common import (
    InvalidNames,
    MediaPart,
    TextPart,
    ToolSource,
    UnsupportedToolError,
    check_hosted,
    entries,
    get,
    is_error,
    is_generated_id,
    is_record,
    make_call,
    malformed_call,
    plain,
    render,
    sole_json,
)
from ._declarations import declarations, freeze
from ._deferred import offered

if TYPE_CHECKING:
    from google.genai import types

with suppress(ImportError):  # now, at start-up: the first export must not pay it (see above)
    import google.genai.types  # noqa: F401

__all__ = ["parse_tool_calls", "tool_results", "tools"]

_API = "Gemini"
_PROVIDER = "gemini"
_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "application/pdf"})


def _require_sdk() -> None:
    try:
        import google.genai.types  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "toolmesh.providers.gemini builds google-genai objects; install it with `pip install google-genai`"
        ) from exc


def tools(catalog: ToolSource, *, invalid_names: InvalidNames = "skip") -> list[types.ToolUnion]:
    """The ``tools=`` of ``GenerateContentConfig``: one ``types.Tool`` holding every function
    declaration (in catalog order), then one ``types.Tool`` per hosted Gemini tool.

    A hosted row's ``provider_tool`` names a field of ``types.Tool`` in its ``type``:
    ``{"type": "google_search"}``, ``{"type": "code_execution"}``, or with settings,
    ``{"type": "google_search", "google_search": {...}}``.

    A snapshot with deferred rows declares what it offers now: its declared rows, the rows
    its searches found and its ``search_tools`` row (``ToolSnapshot.offered``).

    A row whose name the Gemini rule rejects is left out with a warning
    (``invalid_names="skip"``), so the others can still be declared; ``"raise"``
    refuses the whole catalog instead. ``rejected_names(catalog, "gemini")`` lists them.

    Each row's ``FunctionDeclaration`` is cached; every call returns fresh (shallow)
    copies, whose ``parameters_json_schema`` is shared and read-only (``FrozenDict``).

    Raises:
        UnsupportedToolError: for another provider's hosted tool, a hosted declaration
            ``types.Tool`` does not accept, or a rejected name with ``invalid_names="raise"``.
    """
    _require_sdk()
    from google.genai import types

    hosted: list[types.Tool] = []

    def keep_hosted(row: HostedEntry) -> None:
        hosted.append(_hosted(row))

    functions = declarations(
        offered(catalog),
        _API,
        _function,
        _fresh,
        keep_hosted,
        provider=_PROVIDER,
        api=_API,
        invalid_names=invalid_names,
    )
    declared: list[types.ToolUnion] = [types.Tool(function_declarations=functions)] if functions else []
    declared.extend(hosted)
    return declared


def _fresh(function: types.FunctionDeclaration) -> types.FunctionDeclaration:
    return function.model_copy()


def _function(definition: ToolDefinition) -> types.FunctionDeclaration:
    from google.genai import types

    schema = {key: value for key, value in definition.parameters.items() if key != "$schema"}
    return types.FunctionDeclaration(
        name=definition.name, description=definition.description or None, parameters_json_schema=freeze(schema)
    )


def _hosted(row: HostedEntry) -> types.Tool:
    import pydantic
    from google.genai import types

    declaration = plain(check_hosted(row, (_PROVIDER, "google"), _API))
    field = declaration.pop("type")
    settings = declaration[field] if set(declaration) == {field} else declaration
    try:
        return types.Tool.model_validate({field: settings})
    except pydantic.ValidationError as exc:
        known = ", ".join(name for name in types.Tool.model_fields if name != "function_declarations")
        raise UnsupportedToolError(
            f"hosted tool {row.name!r}: {{'type': {field!r}}} is not a Gemini tool this google-genai accepts "
            f"({exc.error_count()} problem(s): {exc.errors(include_url=False)[0]['msg']}); "
            f"its type must name a field of google.genai.types.Tool: {known}"
        ) from None


def parse_tool_calls(response: object) -> list[ToolCall]:
    """The function calls of a ``GenerateContentResponse`` (first candidate), a ``Content`` or a list of parts.

    Plain dicts of the same shapes work too. Nothing the model wrote makes it raise:
    arguments that are not a JSON object, and a ``function_call`` that is not an object,
    give an invalid ``ToolCall`` (``problem`` set); a ``candidates`` or ``parts`` that is
    not a list gives no calls and a warning. A call without an id gets a deterministic
    one (``tool_results`` does not send it back).
    """
    calls: list[ToolCall] = []
    for part in _parts(response):
        call = get(part, "function_call") or get(part, "functionCall")
        if call is None:
            continue
        if not is_record(call):
            calls.append(malformed_call(call, provider=_PROVIDER, index=len(calls)))
            continue
        calls.append(
            make_call(get(call, "id"), get(call, "name"), get(call, "args"), provider=_PROVIDER, index=len(calls))
        )
    return calls


def _parts(response: object) -> Iterable[object]:
    if isinstance(response, list | tuple):
        return response
    if get(response, "candidates") is not None:
        candidates = entries(response, "candidates", api=_API)
        if not candidates:
            return ()
        response = get(candidates[0], "content")
    return entries(response, "parts", api=_API)


def tool_results(results: Iterable[ToolResult], *, describe_unsupported: bool = False) -> types.Content:
    """The ``user`` content answering every call of the turn: one function response part per result, in order.

    Each response names its call (``name``, and ``id`` when the provider gave one).

    Args:
        results: The turn's results (``ToolResult.presentation`` is what is sent).
        describe_unsupported: Replace content Gemini cannot carry (audio, other binary
            types) by a short note instead of refusing it.

    Raises:
        UnsupportedContentError: for such content, unless ``describe_unsupported``.
    """
    _require_sdk()
    from google.genai import types

    parts: list[types.Part] = []
    for result in results:
        rendered = render(
            result,
            api="a Gemini function response",
            media_types=_MEDIA_TYPES,
            describe_unsupported=describe_unsupported,
            hint="",
        )
        text = "\n".join(part.text for part in rendered if isinstance(part, TextPart))
        media = [
            types.FunctionResponsePart(inline_data=types.FunctionResponseBlob(mime_type=part.mime_type, data=part.data))
            for part in rendered
            if isinstance(part, MediaPart)
        ]
        response: dict[str, Any]
        if is_error(result):
            response = {"error": text}
        else:
            single, value = sole_json(result.presentation)
            response = {"output": value if single else text}
        call_id = None if is_generated_id(result.call_id, _PROVIDER) else result.call_id
        function_response = types.FunctionResponse(id=call_id, name=result.name, response=response, parts=media or None)
        parts.append(types.Part(function_response=function_response))
    return types.Content(role="user", parts=parts)
