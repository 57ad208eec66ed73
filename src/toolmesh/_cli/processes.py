"""The ``toolmesh`` command and Ctrl-C: the first stops servers in order, a second kills their groups.

The SDK starts every stdio server in a new session (``start_new_session=True``), so a
terminal's Ctrl-C never reaches it and only the registry's orderly close stops it. When
the user insists (a second Ctrl-C), the command kills those groups at once instead of
giving up on them: a server that ignores SIGTERM and stdin's end is not left behind.

A stdio server is found as a child of this process that leads its own process group; its
group holds whatever it started (``npx`` and its ``node``). Linux reads ``/proc``; other
POSIX systems ask ``ps``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio

from toolmesh._core.errors import ToolmeshError

__all__ = [
    "Interrupted",
    "interrupts",
    "kill_server_groups",
    "run_interruptible",
    "server_groups",
    "watch_interrupts",
]

_T = TypeVar("_T")

_FIRST = "interrupted: stopping the servers… (press Ctrl-C again to kill them now)"


def server_groups() -> set[int]:
    """The process groups led by children of this process (its stdio servers)."""
    me = os.getpid()
    return {pid for pid, ppid, pgid in _processes() if ppid == me and pgid == pid}


def kill_server_groups() -> int:
    """SIGKILL every group ``server_groups`` finds; returns how many were signalled."""
    killed = 0
    for pgid in server_groups():
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        killed += 1
    return killed


def _processes() -> list[tuple[int, int, int]]:
    """``(pid, ppid, pgid)`` of every visible process."""
    proc = Path("/proc")
    if (proc / "self" / "stat").exists():
        found = []
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
            fields = stat[stat.rfind(")") + 2 :].split()
            if len(fields) >= 3 and fields[0] != "Z":
                found.append((int(entry.name), int(fields[1]), int(fields[2])))
        return found
    try:
        listing = subprocess.run(
            ["ps", "-A", "-o", "pid=,ppid=,pgid="], capture_output=True, text=True, check=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    rows = (line.split() for line in listing.splitlines())
    return [(int(r[0]), int(r[1]), int(r[2])) for r in rows if len(r) == 3 and all(x.isdigit() for x in r)]


@contextmanager
def interrupts(*signums: signal.Signals) -> Iterator[Any]:
    """SIGINT (or ``signums``) as a stream (POSIX main thread only), so Ctrl-C never interrupts a cleanup midway."""
    if sys.platform == "win32":
        yield None
        return
    try:
        receiver = anyio.open_signal_receiver(*(signums or (signal.SIGINT,)))
        signals = receiver.__enter__()
    except (RuntimeError, ValueError, NotImplementedError):  # not the main thread
        yield None
        return
    try:
        yield signals
    finally:
        receiver.__exit__(None, None, None)


async def watch_interrupts(
    signals: Any,
    work_scope: anyio.CancelScope,
    note: Callable[[str], None],
    first: str = _FIRST,
) -> None:
    """The first signal cancels ``work_scope`` (an orderly stop; it says ``first``), each later one kills the groups."""
    count = 0
    async for _ in signals:
        count += 1
        if count == 1:
            note(first)
            work_scope.cancel()
        else:
            killed = kill_server_groups()
            note(f"killed {killed} server process group{'s' * (killed != 1)}")


class Interrupted:
    """What ``run_interruptible`` returns when a signal stopped the work."""


async def run_interruptible(
    work: Callable[[], Awaitable[_T]],
    note: Callable[[str], None],
    *signums: signal.Signals,
    first: str = _FIRST,
) -> _T | type[Interrupted]:
    """Run ``work`` so the first signal (``signums``; SIGINT by default) stops it in order.

    Later signals kill the servers' process groups (``watch_interrupts``). A
    ``ToolmeshError`` of the work is raised as itself, not inside an exception group.
    """
    work_scope = anyio.CancelScope()
    result: list[_T] = []
    errors: list[ToolmeshError] = []
    async with anyio.create_task_group() as watcher:
        with interrupts(*signums) as signals:
            if signals is not None:
                watcher.start_soon(watch_interrupts, signals, work_scope, note, first)
            try:
                with work_scope:
                    result.append(await work())
            except ToolmeshError as exc:
                errors.append(exc)
            finally:
                watcher.cancel_scope.cancel()
    if errors:
        raise errors[0]
    return result[0] if result else Interrupted
