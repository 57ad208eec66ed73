"""ToolCall: one tool call the model asked for, in provider-neutral form."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import arguments as _arguments

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
        """Build a call from JSON text, a mapping or None; bad arguments become ``problem``, never an exception.

        Text that is not JSON, nests too deeply, holds NaN or an integer of thousands of
        digits, and values JSON cannot carry all give a call whose ``problem`` says so.
        """
        if arguments is None or (isinstance(arguments, str) and arguments.strip() in ("", "null")):
            return cls(id, name, "{}")
        if isinstance(arguments, str):
            try:
                value = _arguments.decode_json(arguments)
            except ValueError as exc:
                return cls(id, name, arguments, str(exc))
        else:
            value = arguments
        try:
            text = _arguments.encode_json(value)
        except ValueError as exc:
            return cls(id, name, repr(type(arguments)), str(exc))
        if not isinstance(value, Mapping):
            return cls(id, name, text, "arguments must be a JSON object of named parameters")
        return cls(id, name, text)
