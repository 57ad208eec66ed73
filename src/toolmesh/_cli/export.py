"""``toolmesh export``: the catalog's declarations in a provider's format."""

from __future__ import annotations

from typing import Any

from toolmesh._core.errors import ConfigurationError
from toolmesh._dispatch.registry import ToolRegistry

__all__ = ["PROVIDERS", "export_tools"]

PROVIDERS = ("openai", "openai-responses", "anthropic", "gemini")
_NAME_RULES = {"openai": "openai", "openai-responses": "openai", "anthropic": "anthropic", "gemini": "gemini"}
"""The ``NamePolicy`` provider whose name rule an export applies."""
_PROVIDER_PACKAGES = {"gemini": ("google.genai.types", "google-genai")}
"""A provider's optional dependency: the module its export imports, and the package to install."""


def export_tools(registry: ToolRegistry, provider: str, *, strict: bool = False) -> list[Any]:
    """The registry's tool declarations in ``provider``'s format, as JSON-able values.

    Raises:
        ConfigurationError: for an unknown provider (``UnsupportedToolError`` for a row
            the provider cannot declare).
    """
    snapshot = registry.snapshot()
    if provider == "openai":
        from toolmesh.providers import openai

        return list(openai.tools(snapshot, strict=strict))
    if provider == "openai-responses":
        from toolmesh.providers import openai_responses

        return list(openai_responses.tools(snapshot, strict=strict))
    if provider == "anthropic":
        from toolmesh.providers import anthropic

        return list(anthropic.tools(snapshot))
    if provider == "gemini":
        from toolmesh.providers import gemini

        return [tool.model_dump(mode="json", exclude_none=True) for tool in gemini.tools(snapshot)]  # type: ignore[union-attr]
    raise ConfigurationError(f"--provider {provider!r} is not one of {', '.join(PROVIDERS)}")
