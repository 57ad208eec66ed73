"""``SharedSessions``: the state backend and replica name that a replica's session managers share."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import TransportSecuritySettings

from toolmesh._state.backend import StateBackend

from .manager import SharedSessionManager
from .store import SessionStore

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server
    from redis.asyncio import Redis

__all__ = ["SharedSessions", "new_replica_name"]


def new_replica_name() -> str:
    """A name for this replica, unique in its deployment (it routes answers and retries back to it)."""
    return secrets.token_hex(6)


@dataclass(frozen=True)
class SharedSessions:
    """2025-11-25 sessions kept in a shared state backend's Redis, so that any replica of a deployment serves them."""

    state: StateBackend
    """The deployment's shared state (a ``RedisState``): its pub/sub carries answers between replicas."""
    redis: Redis
    """Its ``redis.asyncio`` client, for the session records and the SSE events (Redis streams)."""
    replica: str = field(default_factory=new_replica_name)
    """This replica's name."""

    def __repr__(self) -> str:
        return f"SharedSessions(state={self.state!r}, replica={self.replica!r})"

    @classmethod
    def of(cls, state: StateBackend, replica: str) -> SharedSessions | None:
        """The sessions kept in ``state``'s Redis (None when the state is this process's own)."""
        client = getattr(state, "client", None)
        if not state.shared or client is None:
            return None
        return cls(state, client, replica)

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
            SessionStore(self.state, self.redis, profile),
            self.replica,
            security_settings=security_settings,
            max_request_body_size=max_request_body_size,
        )
