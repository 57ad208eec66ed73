"""Why a request was refused, as RFC 6750 says to answer it: a status, an error code and a description.

The description is safe to show the caller: it never holds the token, a key or a claim's value.
"""

from __future__ import annotations

__all__ = ["InsufficientScope", "InvalidRequest", "InvalidToken", "MissingToken", "Refusal"]


class Refusal(Exception):
    """A bearer token (or its absence) refused; ``status`` and ``error`` are RFC 6750's."""

    status = 401
    error: str | None = "invalid_token"

    def __init__(self, description: str, *, scope: str | None = None) -> None:
        super().__init__(description)
        self.description = description
        """What was wrong, for the caller (no secret in it)."""
        self.scope = scope
        """The scopes the resource needs (space-separated), for the challenge's ``scope``."""


class InvalidToken(Refusal):
    """No token, or one that is forged, expired, for another audience or issuer, or of a refused algorithm: 401."""


class MissingToken(InvalidToken):
    """No bearer token at all: 401 with a challenge but no error code (RFC 6750 §3.1)."""

    error = None


class InsufficientScope(Refusal):
    """A valid token that lacks a scope (or claim) the resource needs: 403 naming the scope."""

    status = 403
    error = "insufficient_scope"


class InvalidRequest(Refusal):
    """A malformed request, such as a token in the query string: 400."""

    status = 400
    error = "invalid_request"
