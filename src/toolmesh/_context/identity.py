"""Identity: who made a call, as the gateway authenticated them.

The gateway sets ``ToolContext.identity`` on every call it runs for an authenticated
caller: a static bearer token (its configured name is the subject) or an OAuth access
token (its ``sub``, ``client_id``, scopes and the claims the operator chose to keep).
Library use and unauthenticated gateways leave it None. An identity never holds the
token it was read from, so it is safe to log, to audit and to key limits by.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

__all__ = ["Identity"]


def _no_claims() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class Identity:
    """The authenticated caller of a call: subject, client, scopes and chosen claims (never the token).

    Example:
        >>> who = Identity(subject="alice", client_id="cli", scopes=frozenset({"tools:read"}))
        >>> who.has_scopes("tools:read"), who.key
        (True, 'oauth::alice')
    """

    subject: str
    """Who the caller is: a token's ``sub`` claim, or a static token's configured name."""
    client_id: str | None = None
    """The OAuth client that got the token (``client_id`` / ``azp``); None for static tokens."""
    scopes: frozenset[str] = frozenset()
    """The scopes the token grants (empty for static tokens)."""
    claims: Mapping[str, Any] = field(default_factory=_no_claims, hash=False)
    """The token's claims the operator chose to keep (``serve.auth.oauth.claims``), read-only."""
    issuer: str | None = None
    """The authorization server that issued the token (``iss``); None for static tokens."""
    method: Literal["token", "oauth"] = "oauth"
    """How the caller authenticated: a static bearer ``token`` of the config, or an ``oauth`` access token."""

    def __post_init__(self) -> None:
        if not isinstance(self.scopes, frozenset):
            object.__setattr__(self, "scopes", frozenset(self.scopes))
        if not isinstance(self.claims, MappingProxyType):
            object.__setattr__(self, "claims", MappingProxyType(dict(self.claims)))

    @property
    def key(self) -> str:
        """A stable string naming this caller, for limits and audit: ``<issuer or method>:<subject>``.

        Two issuers' subjects never collide (a ``sub`` is unique only per issuer).
        """
        return f"{self.issuer or self.method}::{self.subject}"

    def has_scopes(self, *scopes: str) -> bool:
        """Whether every one of ``scopes`` was granted."""
        return all(scope in self.scopes for scope in scopes)

    def missing(self, scopes: Iterable[str]) -> list[str]:
        """The scopes of ``scopes`` not granted, in order."""
        return [scope for scope in scopes if scope not in self.scopes]

    def __repr__(self) -> str:
        return (
            f"Identity(subject={self.subject!r}, client_id={self.client_id!r}, scopes={sorted(self.scopes)!r}, "
            f"issuer={self.issuer!r}, method={self.method!r}, claims={sorted(self.claims)!r})"
        )
