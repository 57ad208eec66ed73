"""``toolmesh serve --workers N``: N processes serving one port, so a machine's cores all serve.

This process serves as the first worker. Once it listens, it starts N-1 more ``toolmesh
serve`` processes with the same config on the same port; every worker binds its own
socket with ``SO_REUSEPORT`` and the kernel spreads new connections across them. Each
worker builds its own registry and connects its own upstream servers; what must hold
across them (limits, approvals, pins, catalog changes) lives in the shared state, which
is why more than one worker needs one. The shared state's URL reaches the workers in
their environment (``$TOOLMESH_STATE``), never on a command line others can read.

A worker that exits is started again (waiting longer after each quick exit); stopping
this process stops them all (SIGTERM, then SIGKILL after a grace period). A worker whose
parent is gone sees its stdin end and stops too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import anyio
from anyio.abc import Process

from toolmesh.gateway._config.config import ServeSettings
from toolmesh.gateway._config.state_settings import STATE_ENV

from .app import note

__all__ = ["WORKER_ENV", "Workers", "serve_with_workers", "worker_processes"]

WORKER_ENV = "TOOLMESH_WORKER_OF"
"""Set (to the first worker's pid) in the environment of the other workers: they share its port."""

_GRACE = 10.0
"""Seconds a stopped worker gets to close its sessions and servers before it is killed."""
_RESTART_FIRST, _RESTART_MOST = 1.0, 30.0
_HEALTHY = 60.0
"""A worker that ran this long before exiting is started again at once (the delay starts over)."""


class Workers:
    """The other workers of this ``toolmesh serve``: started once it listens, kept running, stopped with it."""

    def __init__(self, count: int, argv: Callable[[int], Sequence[str]], env: Mapping[str, str]) -> None:
        """Args:
        count: Workers in all, this process included.
        argv: The command of a worker serving the given port.
        env: Variables added to this process's environment for the workers.
        """
        self.count = count
        self._argv = argv
        self._env = {**os.environ, **env}
        self._port: int | None = None
        self._listening = anyio.Event()
        self.pids: dict[int, int] = {}
        """Worker number (1..count-1) -> the pid of its current process."""

    def listening(self, base_url: str) -> None:
        """This process listens at ``base_url``: the others may start on its port."""
        self._port = urlsplit(base_url).port
        self._listening.set()

    async def run(self) -> None:
        """Start the workers once this process listens and keep them running until cancelled."""
        await self._listening.wait()
        assert self._port is not None
        note(
            f"workers: {self.count} processes share port {self._port} (this one and {self.count - 1} more); "
            "each builds its own catalog"
        )
        async with anyio.create_task_group() as group:
            for number in range(1, self.count):
                group.start_soon(self._keep, number, self._port)

    async def _keep(self, number: int, port: int) -> None:
        delay = _RESTART_FIRST
        while True:
            started = time.monotonic()
            process = await anyio.open_process(
                list(self._argv(port)),
                env=self._env,
                stdin=subprocess.PIPE,  # its end tells the worker this process is gone
                stdout=subprocess.DEVNULL,  # one banner: this process's
                stderr=None,
                start_new_session=True,  # a terminal's Ctrl-C reaches this process only; it stops the workers
            )
            self.pids[number] = process.pid
            try:
                code = await process.wait()
            finally:
                if process.returncode is None:
                    with anyio.CancelScope(shield=True):
                        await _stop(process)
            if time.monotonic() - started >= _HEALTHY:
                delay = _RESTART_FIRST
            note(f"worker {number} (pid {process.pid}) exited with code {code}; starting it again in {delay:g} s")
            await anyio.sleep(delay)
            delay = min(delay * 2, _RESTART_MOST)


def worker_processes(
    config: Path, settings: ServeSettings, flags: Mapping[str, bool], options: Mapping[str, str | None]
) -> Workers:
    """The other ``settings.workers - 1`` workers of this ``toolmesh serve``: the same config and options."""

    def argv(port: int) -> list[str]:
        command = [sys.executable, "-m", "toolmesh", "serve", "--config", os.fspath(config.resolve())]
        command += ["--transport", "http", "--host", settings.host, "--port", str(port), "--workers", "1"]
        command.append("--stateless" if settings.stateless else "--stateful")
        command += [flag for flag, given in flags.items() if given]
        for option, value in options.items():
            if value is not None:
                command += [option, value]
        return command

    return Workers(settings.workers, argv, {STATE_ENV: settings.state or "memory", WORKER_ENV: str(os.getpid())})


async def _stop(process: Process) -> None:
    if process.stdin is not None:
        await process.stdin.aclose()
    process.terminate()
    with anyio.move_on_after(_GRACE):
        await process.wait()
        return
    process.kill()
    await process.wait()


async def serve_with_workers(
    serve: Callable[[Callable[[str], None] | None], Awaitable[None]], helpers: Workers | None, *, worker: bool
) -> None:
    """``serve(listening)`` with the other workers started once it listens (``helpers``); as a worker
    (``worker``), until the parent closes stdin or is gone."""
    if helpers is None and not worker:
        await serve(None)
        return
    try:
        async with anyio.create_task_group() as group:
            if helpers is not None:
                group.start_soon(helpers.run)
            if worker:
                group.start_soon(_until_parent_gone, group.cancel_scope)
            await serve(helpers.listening if helpers is not None else None)
            group.cancel_scope.cancel()
    except BaseExceptionGroup as failed:
        single: BaseException = failed
        while isinstance(single, BaseExceptionGroup) and len(single.exceptions) == 1:
            single = single.exceptions[0]
        if single is failed:
            raise
        raise single from None  # the command reports its own errors (a port in use) as they are


async def _until_parent_gone(scope: anyio.CancelScope) -> None:
    """Cancel ``scope`` when stdin ends: this worker's parent closed it, or is gone."""
    await anyio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)
    note("worker: stopped by its parent (or the parent is gone)")
    scope.cancel()
