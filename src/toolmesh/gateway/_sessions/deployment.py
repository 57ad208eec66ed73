"""``SharedSessions``: the Redis client, key prefix and replica name that a replica's session managers share."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import TransportSecuritySettings

from .manager import SharedSessionManager
from .store import SessionStore

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server
    from redis.asyncio import Redis

__all__ = ["SharedSessions"]


@dataclass(frozen=True)
class SharedSessions:
    """2025-11-25 sessions kept in Redis, so that any replica of a deployment serves them."""

    redis: Redis
    """The deployment's Redis client (``redis.asyncio``)."""
    prefix: str
    """The deployment's key prefix: replicas with the same prefix share their sessions."""
    replica: str = field(default_factory=lambda: secrets.token_hex(6))
    """This replica's name, unique in the deployment (it routes answers to the replica that asked)."""

    def __repr__(self) -> str:
        return f"SharedSessions(prefix={self.prefix!r}, replica={self.replica!r})"

    def manager(
        self,
        profile: str,
        server: Server[Any],
        *,
        security_settings: TransportSecuritySettings | None,
        max_request_body_size: int,
    ) -> SharedSessionManager:
        """The session manager of one profile's MCP server."""
        return SharedSessionManager(
            server,
            SessionStore(self.redis, self.prefix, profile),
            self.replica,
            security_settings=security_settings,
            max_request_body_size=max_request_body_size,
        )
