"""Provider boundaries: each module turns a catalog into one provider's tool format and back.

Every module has the same three verbs::

    tools(catalog)               -> the provider's tool declarations (a row whose name the
                                    provider rejects is left out, with a warning)
    parse_tool_calls(response)   -> list[ToolCall]
    tool_results(results)        -> the message(s) or parts that carry results back

Modules: ``openai`` (Chat Completions), ``openai_responses`` (Responses API),
``anthropic`` (Messages), ``gemini`` (google-genai). Import the one you use,
``from toolmesh.providers import anthropic as claude``. All but ``gemini`` work without
the SDK installed and never import it (they produce and read plain dicts of the SDK's
shapes); ``gemini`` builds google-genai objects and imports the SDK when it is imported
itself, so that no export pays for it on an event loop.
"""

from __future__ import annotations

from ._common import InvalidNames, ToolSource, UnsupportedContentError, UnsupportedToolError, rejected_names

__all__ = ["InvalidNames", "ToolSource", "UnsupportedContentError", "UnsupportedToolError", "rejected_names"]
