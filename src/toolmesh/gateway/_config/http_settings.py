"""Where and how the gateway serves Streamable HTTP, and the bearer tokens it accepts."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from toolmesh._core.errors import ConfigurationError

__all__ = ["BearerToken", "HttpSettings", "is_loopback"]


@dataclass(frozen=True)
class BearerToken:
    """A secret a client sends as ``Authorization: Bearer <token>``, maybe limited to some profiles."""

    token: str = field(repr=False)
    """The secret itself: never shown in a repr, a log or a span."""
    profiles: frozenset[str] | None = None
    """The profiles it opens (None: every profile)."""

    def __post_init__(self) -> None:
        if not isinstance(self.token, str) or not self.token.strip():
            raise ConfigurationError("a BearerToken needs a non-empty token string")
        if self.profiles is not None and not isinstance(self.profiles, frozenset):
            object.__setattr__(self, "profiles", frozenset(self.profiles))

    def opens(self, profile: str) -> bool:
        """Whether this token may reach ``profile``."""
        return self.profiles is None or profile in self.profiles


@dataclass(frozen=True)
class HttpSettings:
    """Where and how the gateway serves Streamable HTTP."""

    host: str = "127.0.0.1"
    """The interface to bind: loopback unless you mean to expose the gateway."""
    port: int = 8765
    """The TCP port (0: any free port; ``serve_http``'s ``on_ready`` says which)."""
    path: str = "/mcp"
    """The default profile's path; profile ``p`` is served at ``/p{path}`` and at ``{path}/p``."""
    tokens: tuple[BearerToken, ...] = ()
    """Accepted bearer tokens; empty means no authentication, allowed on a loopback host only."""
    allowed_hosts: tuple[str, ...] = ()
    """``Host`` header values accepted besides loopback and the bound host (``name:*`` for any port)."""
    allowed_origins: tuple[str, ...] = ()
    """``Origin`` header values accepted besides loopback ones (``scheme://name:*`` for any port)."""
    max_body_bytes: int = 4 * 1024 * 1024
    """Largest request body accepted (larger: 413)."""
    stateless: bool = False
    """Keep no per-client state between requests (handshake-era clients then get no
    server-to-client requests or notifications; 2026-07-28 clients lose nothing but
    ``subscriptions/listen`` streams being tied to one replica)."""
    reuse_port: bool = False
    """Share the port with other processes that set it too (``SO_REUSEPORT``): the kernel spreads
    new connections across them. ``toolmesh serve --workers N`` sets it in every worker."""

    def __post_init__(self) -> None:
        if not self.path.startswith("/") or (self.path.endswith("/") and self.path != "/"):
            raise ConfigurationError(f"HttpSettings.path must start with '/' and not end with one, got {self.path!r}")
        if self.max_body_bytes <= 0:
            raise ConfigurationError(f"HttpSettings.max_body_bytes must be positive, got {self.max_body_bytes!r}")
        if not 0 <= self.port <= 65535:
            raise ConfigurationError(f"HttpSettings.port must be 0..65535, got {self.port!r}")
        if not self.tokens and not is_loopback(self.host):
            raise ConfigurationError(
                f"HttpSettings: serving on {self.host!r} without tokens would let anyone on the network call "
                "every tool; give tokens=(BearerToken(...),) or bind a loopback host such as '127.0.0.1'"
            )

    def __repr__(self) -> str:
        return (
            f"HttpSettings(host={self.host!r}, port={self.port!r}, path={self.path!r}, tokens={len(self.tokens)}, "
            f"allowed_hosts={self.allowed_hosts!r}, allowed_origins={self.allowed_origins!r}, "
            f"max_body_bytes={self.max_body_bytes!r}, stateless={self.stateless!r}, reuse_port={self.reuse_port!r})"
        )


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
