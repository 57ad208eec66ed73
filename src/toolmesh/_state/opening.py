"""From a setting (``serve.state``, ``--state``) to a backend, checked before serving starts."""

from __future__ import annotations

from urllib.parse import urlsplit

from .backend import StateBackend
from .errors import StateConfigError, StateUnavailableError, redact_url
from .memory import MemoryState

__all__ = ["MEMORY", "REDIS_SCHEMES", "check_state_url", "open_state", "state_backend"]

MEMORY = "memory"
"""The setting of in-process state (the default)."""
REDIS_SCHEMES = ("redis", "rediss", "unix")


def check_state_url(url: str | None) -> None:
    """Check that ``url`` names a backend (None, ``"memory"`` or a Redis URL), without connecting.

    Raises:
        StateConfigError: for any other URL.
    """
    if url is None or url == MEMORY:
        return
    scheme = urlsplit(url).scheme if "://" in url else ""
    if scheme not in REDIS_SCHEMES:
        raise StateConfigError(
            f"the state {redact_url(url)!r} is neither 'memory' nor a Redis URL; "
            "give redis://host:port/db (rediss:// for TLS, unix:///path for a socket), or leave it out"
        )


def state_backend(url: str | None, *, prefix: str = "toolmesh:") -> StateBackend:
    """The backend a setting names: None or ``"memory"`` in-process, ``redis://…`` Redis (not yet connected).

    Raises:
        StateConfigError: for any other URL.
    """
    check_state_url(url)
    if url is None or url == MEMORY:
        return MemoryState(prefix)
    from .redis_state import RedisState

    return RedisState(url, prefix=prefix)


async def open_state(url: str | None, *, prefix: str = "toolmesh:") -> StateBackend:
    """``state_backend(url, prefix=prefix)``, with one round trip to prove it answers.

    Raises:
        StateConfigError: for a URL that names no backend.
        StateUnavailableError: when the server does not answer (the message names the URL, password redacted).
    """
    backend = state_backend(url, prefix=prefix)
    try:
        await backend.ping()
    except StateUnavailableError as exc:
        await backend.aclose()
        raise StateUnavailableError(
            exc.url, f"{exc.detail}; is Redis running there, and is the URL (host, port, db, password) right?"
        ) from exc.__cause__
    return backend
