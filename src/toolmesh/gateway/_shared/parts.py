"""What the gateway's two faces share without importing each other: a profile served, and an extra endpoint.

The MCP face (``McpGateway``) offers each profile as a ``ServedProfile``; the Responses
endpoint builds on one (``ResponsesEndpoint.for_gateway``). The Responses endpoint is an
``AppExtension`` the MCP face's app mounts beside its profiles. Neither face names the
other's classes: each depends on these two shapes only.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.applications import Starlette

from toolmesh._core.names import NamePolicy
from toolmesh._dispatch.execution import DispatchSettings
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._hooks.stack import HookStack
from toolmesh._search.matches import AsyncRanker, Ranker
from toolmesh._state.backend import StateBackend

__all__ = ["AppExtension", "ProfileSource", "ServedProfile"]


@dataclass(frozen=True, slots=True)
class ServedProfile:
    """One profile of a served catalog, as another endpoint offers it."""

    snapshot: Callable[[], ToolSnapshot]
    """The profile's rows now (a fresh snapshot after each catalog change)."""
    hooks: HookStack
    """The gateway's hooks: its policy, applied to every call."""
    names: NamePolicy
    """The registry's name policy."""
    dispatch: DispatchSettings
    """The registry's dispatch defaults (tracing, error details)."""
    state: StateBackend | None = None
    """The gateway's state backend (shared across replicas, or this process's)."""
    ranker: Ranker | AsyncRanker | None = None
    """The registry's host ranker (None: searches are lexical)."""


class ProfileSource(Protocol):
    """Something that serves profiles of a catalog (``McpGateway`` is one)."""

    def served_profile(self, profile: str) -> ServedProfile: ...


class AppExtension(Protocol):
    """An endpoint mounted on the gateway's HTTP app beside the MCP profiles (the Responses endpoint is one)."""

    def route(self, app: Starlette) -> Starlette: ...

    def mount(self, app: Starlette) -> Starlette: ...

    def running(self) -> AbstractAsyncContextManager[Any]: ...
