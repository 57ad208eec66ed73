"""ToolCall: one tool call the model asked for, in provider-neutral form."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["ToolCall"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run one tool, parsed from any provider's response.

    ``arguments`` is canonical JSON text (compact, keys sorted) when the provider's
    arguments parsed; otherwise it is the provider's text as received and ``problem``
    says what was wrong, so the call goes through the invalid-call path instead of
    raising.
    """

    id: str
    """The provider's call id; results carry it back so each matches its call."""
    name: str
    """The model-visible tool name the model asked for."""
    arguments: str = "{}"
    """Canonical JSON text of the arguments (or the raw text when ``problem`` is set)."""
    problem: str | None = None
    """Why the call is invalid before dispatch (e.g. arguments that are not JSON)."""

    @property
    def valid(self) -> bool:
        """Whether the call parsed cleanly."""
        return self.problem is None

    @classmethod
    def from_arguments(cls, id: str, name: str, arguments: Any) -> ToolCall:
        """Build a call from JSON text, a mapping or None; bad JSON becomes ``problem``, not an exception."""
        if arguments is None or (isinstance(arguments, str) and arguments.strip() in ("", "null")):
            return cls(id, name, "{}")
        if isinstance(arguments, str):
            try:
                value = json.loads(arguments)
            except json.JSONDecodeError as exc:
                return cls(id, name, arguments, f"arguments are not valid JSON ({exc.msg} at position {exc.pos})")
        else:
            value = arguments
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        except (TypeError, ValueError) as exc:
            return cls(id, name, repr(type(arguments)), f"arguments cannot be encoded as JSON ({exc})")
        if not isinstance(value, dict):
            return cls(id, name, text, "arguments must be a JSON object of named parameters")
        return cls(id, name, text)
