"""The shared state of ``toolmesh serve`` and ``check``: opened and proved to answer before serving; its health."""

from __future__ import annotations

import time

from toolmesh._state.backend import StateBackend
from toolmesh._state.errors import StateUnavailableError
from toolmesh._state.opening import open_state
from toolmesh.gateway._config.config import ServeSettings

__all__ = ["open_shared_state", "state_health"]


async def open_shared_state(settings: ServeSettings) -> StateBackend:
    """The settings' backend, after one round trip.

    Raises:
        StateUnavailableError: naming the URL (password redacted) when it does not answer.
    """
    return await open_state(settings.state, prefix=settings.state_prefix)


async def state_health(settings: ServeSettings) -> tuple[float, str, str | None]:
    """``toolmesh check``'s line about the state: seconds taken, what answered (or was asked), and the error."""
    started = time.perf_counter()
    backend = settings.state_backend()
    about = f"{backend.url} (prefix {backend.prefix})"
    try:
        async with backend:
            await backend.ping()
    except StateUnavailableError as exc:
        return time.perf_counter() - started, about, f"{exc.detail}"
    return time.perf_counter() - started, about, None
