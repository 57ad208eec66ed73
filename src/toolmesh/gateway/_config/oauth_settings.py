"""The gateway as an OAuth 2.1 resource server: whose access tokens it takes, and what each scope opens.

``OAuthSettings`` names the authorization server (``issuer``), the gateway's own resource
URL (``resource``: the audience every token must carry, RFC 8707), where the issuer's
signing keys are (``jwks_uri``, else found in the issuer's metadata; or ``introspection`` for
opaque tokens, RFC 7662), the
scopes every request needs and, per profile, an ``AccessRule`` (scopes and claim values)
a caller must meet to open it.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import urlsplit

from toolmesh._context.identity import Identity
from toolmesh._core.errors import ConfigurationError
from toolmesh._policy.callers import holds

from .hosts import is_loopback

__all__ = ["AccessRule", "Introspection", "OAuthSettings", "check_url"]

SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
"""Asymmetric JWS algorithms accepted by default; ``none`` and the HMAC ones never are."""


def check_url(url: str, what: str) -> str:
    """``url`` when it is https (or http on a loopback host, for local setups).

    Raises:
        ConfigurationError: naming ``what`` otherwise.
    """
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname and is_loopback(parts.hostname):
        return url
    raise ConfigurationError(f"OAuthSettings.{what} must be an https URL (http only on a loopback host), got {url!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class AccessRule:
    """What a caller must hold: every scope of ``scopes`` and, for each claim of ``claims``, one of its values.

    Example:
        >>> rule = AccessRule(scopes=("tools:read",), claims={"groups": ("ops", "sre")})
        >>> rule.admits(Identity(subject="a", scopes=frozenset({"tools:read"}), claims={"groups": ["sre"]}))
        True
    """

    scopes: tuple[str, ...] = ()
    """Scopes the token must grant, all of them."""
    claims: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """Claim name -> accepted values: the claim (a string, or a list of strings) must hold one of them."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "scopes", (self.scopes,) if isinstance(self.scopes, str) else tuple(self.scopes))
        claims = {name: (v,) if isinstance(v, str) else tuple(v) for name, v in dict(self.claims).items()}
        object.__setattr__(self, "claims", MappingProxyType(claims))

    def admits(self, identity: Identity) -> bool:
        """Whether ``identity`` holds every scope and a wanted value of every claim."""
        return holds(identity, self.scopes, self.claims)


@dataclass(frozen=True, slots=True, kw_only=True)
class Introspection:
    """An RFC 7662 introspection endpoint, for opaque (non-JWT) access tokens."""

    url: str
    """The endpoint (https, or http on loopback)."""
    client_id: str
    """The gateway's own client id at the authorization server."""
    client_secret: str = field(repr=False)
    """Its secret (sent as HTTP Basic); never shown."""

    def __post_init__(self) -> None:
        check_url(self.url, "introspection.url")


@dataclass(frozen=True, slots=True, kw_only=True)
class OAuthSettings:
    """Access tokens of one authorization server, checked by the gateway as an OAuth 2.1 resource server."""

    issuer: str
    """The authorization server's issuer identifier: a token's ``iss`` must be exactly this."""
    resource: str
    """The gateway's own public URL of its default profile (e.g. ``https://tools.example.com/mcp``): the audience
    (``aud``) a token must carry. A profile's own URL is accepted as its audience too."""
    jwks_uri: str | None = None
    """Where the issuer publishes its signing keys (JWKS). None: with ``introspection``, JWTs are not taken;
    without it, the ``jwks_uri`` of the issuer's metadata (RFC 8414, else OpenID Connect discovery), read when
    the gateway starts."""
    introspection: Introspection | None = None
    """Checks tokens that are not JWTs (opaque ones) at the authorization server."""
    scopes: tuple[str, ...] = ()
    """Scopes every request needs, whatever the profile; listed as ``scopes_supported``."""
    profiles: Mapping[str, AccessRule] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """Profile -> what a caller must hold to open it; a profile not named here needs ``scopes`` only."""
    claims: tuple[str, ...] = ()
    """The token claims kept on the caller's ``Identity`` (``claims``), e.g. ``("email", "groups")``."""
    algorithms: tuple[str, ...] = SIGNING_ALGORITHMS
    """JWS algorithms accepted (``none`` and HMAC are always refused)."""
    leeway: float = 60.0
    """Seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat``."""
    verify: ssl.SSLContext | str | bool = True
    """How the JWKS and introspection endpoints' certificates are checked: True (the system's CAs), a CA bundle
    path, or an ``ssl.SSLContext``."""
    fetch_timeout: float = 10.0
    """Seconds one fetch of the JWKS (or one introspection) may take."""
    max_jwks_bytes: int = 256 * 1024
    """The largest JWKS document read."""
    refresh_interval: float = 30.0
    """Least seconds between two fetches of the JWKS prompted by an unknown ``kid`` (keys rotate; forged kids
    do not make the gateway hammer the issuer)."""
    cache_seconds: float = 60.0
    """How long a token found valid is remembered (never past its ``exp``; 0: check every request). A key the
    issuer stops publishing, or an introspected token revoked, is noticed within this time."""
    refused_cache_seconds: float = 30.0
    """How long an opaque token the authorization server refused (not active, expired, for another resource) is
    remembered as refused (by its hash; 0: ask again every request), so that a client or an attacker repeating
    it costs one introspection per this time. A failed introspection (unreachable, slow) is not remembered."""
    max_token_bytes: int = 16 * 1024
    """The longest access token read."""
    resource_name: str | None = None
    """A human-readable name, in the protected resource metadata."""

    def __post_init__(self) -> None:
        check_url(self.issuer, "issuer")
        parts = urlsplit(check_url(self.resource, "resource"))
        if parts.query or parts.fragment:
            raise ConfigurationError(
                f"OAuthSettings.resource has no query or fragment (RFC 8707), got {self.resource!r}"
            )
        if self.jwks_uri is not None:
            check_url(self.jwks_uri, "jwks_uri")
        refused = [a for a in self.algorithms if a not in SIGNING_ALGORITHMS]
        if refused or not self.algorithms:
            raise ConfigurationError(
                f"OAuthSettings.algorithms: {refused or 'none'} not accepted; "
                f"use asymmetric ones of {SIGNING_ALGORITHMS}"
            )
        for name in ("scopes", "claims", "algorithms"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))
        object.__setattr__(self, "profiles", MappingProxyType(dict(self.profiles)))
        if not 0 <= self.leeway <= 600:
            raise ConfigurationError(f"OAuthSettings.leeway must be 0..600 seconds, got {self.leeway!r}")
        if not 0 <= self.refused_cache_seconds <= 600:
            raise ConfigurationError(
                f"OAuthSettings.refused_cache_seconds must be 0..600 seconds, got {self.refused_cache_seconds!r}"
            )
        if self.cache_seconds < 0 or self.fetch_timeout <= 0 or self.max_jwks_bytes < 64 or self.max_token_bytes < 64:
            raise ConfigurationError(
                "OAuthSettings: fetch_timeout, max_jwks_bytes and max_token_bytes must be positive"
            )

    def rule(self, profile: str) -> AccessRule:
        """What a caller needs to open ``profile``: ``scopes`` plus the profile's own rule."""
        own = self.profiles.get(profile)
        if own is None:
            return AccessRule(scopes=self.scopes)
        return AccessRule(scopes=tuple(dict.fromkeys((*self.scopes, *own.scopes))), claims=own.claims)

    def supported_scopes(self) -> list[str]:
        """Every scope named: ``scopes`` and each profile's."""
        named = [*self.scopes, *(scope for rule in self.profiles.values() for scope in rule.scopes)]
        return list(dict.fromkeys(named))
