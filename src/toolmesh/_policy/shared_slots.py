"""A concurrency slot held in a shared state backend: leased, renewed while the call runs, given back after.

The lease bounds what a process killed mid-call can keep: its slots are free again
when their leases end. A slot that cannot be had because the backend is unreachable
fails the call (retryable ``unavailable``): the limit is never skipped.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from toolmesh._state.backend import StateBackend
from toolmesh._state.errors import StateUnavailableError

__all__ = ["LEASE", "shared_slot"]

logger = logging.getLogger("toolmesh.policy")

LEASE = 60.0
"""Seconds a slot is held without renewal; renewed every third of it while the call runs."""
_POLL_FIRST, _POLL_MAX = 0.005, 0.25
"""Seconds between attempts at a full slot set: doubling from the first to the most."""


@asynccontextmanager
async def shared_slot(state: StateBackend, key: str, limit: int, row: str) -> AsyncIterator[None]:
    """Hold one of ``limit`` slots of ``key`` in ``state`` for the block (waiting for one as long as it takes).

    Raises:
        ToolExecutionError: ``unavailable`` (retryable) when the backend cannot be reached.
    """
    holder = uuid.uuid4().hex
    delay = _POLL_FIRST
    try:
        while not await state.acquire_slot(key, holder, limit=limit, lease=LEASE):
            await anyio.sleep(delay)
            delay = min(delay * 2, _POLL_MAX)
    except StateUnavailableError as exc:
        raise exc.as_tool_error(f"The concurrency limit of {row!r}") from exc
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_renew, state, key, holder)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await state.release_slot(key, holder)
            except StateUnavailableError as exc:  # its lease ends by itself
                logger.warning("concurrency slot of %r not given back (%s); it is free in %g s", row, exc, LEASE)


async def _renew(state: StateBackend, key: str, holder: str) -> None:
    while True:
        await anyio.sleep(LEASE / 3)
        try:
            await state.renew_slot(key, holder, lease=LEASE)
        except StateUnavailableError as exc:
            logger.warning("concurrency slot %r not renewed (%s); trying again", key, exc)
