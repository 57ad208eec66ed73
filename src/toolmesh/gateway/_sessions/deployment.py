"""``SharedSessions``: the Redis client, key prefix and replica name that a replica's session managers share."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import TransportSecuritySettings

from toolmesh._state.backend import StateBackend

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
    key: Callable[[str], str]
    """The deployment's key of a name (``StateBackend.key``): replicas with the same prefix share their sessions."""
    replica: str = field(default_factory=lambda: secrets.token_hex(6))
    """This replica's name, unique in the deployment (it routes answers to the replica that asked)."""

    def __repr__(self) -> str:
        return f"SharedSessions(replica={self.replica!r})"

    @classmethod
    def of(cls, state: StateBackend) -> SharedSessions | None:
        """The sessions kept in ``state``'s Redis (None when the state is this process's own)."""
        client = getattr(state, "client", None)
        if not state.shared or client is None:
            return None
        return cls(client, state.key)

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
            SessionStore(self.redis, self.key, profile),
            self.replica,
            security_settings=security_settings,
            max_request_body_size=max_request_body_size,
        )
