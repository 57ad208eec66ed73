"""Where the stdio servers' stderr goes: one log per command run, in the user's state folder.

The folder is ``$TOOLMESH_STATE_DIR``, else ``$XDG_STATE_HOME/toolmesh``, else
``~/.local/state/toolmesh``; the logs are in its ``logs`` folder (made private to the
user), named ``servers-<UTC time>-<pid>-<random>.log``. Each run that starts a stdio
server:

- removes the logs of ended runs beyond the newest ``KEEP_LOGS - 1`` (a log whose process
  is still running, such as a long-lived ``toolmesh serve``, is never removed);
- writes its servers' stderr through the standard library's rotating file handler: past
  ``MAX_LOG_BYTES`` the log moves to ``<name>.1`` (replacing an older one) and a new one
  starts, so one run holds at most twice that;
- removes its log at exit when no server wrote to it.
"""

from __future__ import annotations

import io
import logging
import os
import secrets
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager, suppress
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import TextIO, cast

from toolmesh.mcp._client import session as mcp_session
from toolmesh.mcp._client.stdio import stderr_line_prefix

__all__ = [
    "KEEP_LOGS",
    "MAX_LOG_BYTES",
    "STATE_DIR_ENV",
    "ServerLog",
    "logs_dir",
    "prune_logs",
    "server_stderr",
    "state_dir",
    "stderr_tail",
    "tail_note",
]

STATE_DIR_ENV = "TOOLMESH_STATE_DIR"
"""The environment variable naming the state folder."""
KEEP_LOGS = 10
"""Server logs kept in the state folder: this run's and the newest of ended runs."""
MAX_LOG_BYTES = 5 * 1024 * 1024
"""The size at which a run's log is rotated (one older part is kept)."""
_PREFIX = "servers-"
_TAIL_LINES = 8
_TAIL_BYTES = 16_384


def state_dir() -> Path:
    """``$TOOLMESH_STATE_DIR``, else ``$XDG_STATE_HOME/toolmesh``, else ``~/.local/state/toolmesh``."""
    if explicit := os.environ.get(STATE_DIR_ENV):
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    if xdg and Path(xdg).is_absolute():  # the XDG rule: a relative value is ignored
        return Path(xdg) / "toolmesh"
    return Path.home() / ".local" / "state" / "toolmesh"


def logs_dir() -> Path:
    """The state folder's ``logs`` folder, made (private to the user) when missing.

    Raises:
        OSError: when it cannot be made.
    """
    folder = state_dir() / "logs"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


def _running(pid: int) -> bool:
    """Whether another process with this id is running (the command's own earlier runs have ended)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, owned by someone else
    return True


def _pid_of(log: Path) -> int | None:
    parts = log.name.split(".", 1)[0].split("-")
    return int(parts[2]) if len(parts) == 4 and parts[2].isdigit() else None


def prune_logs(folder: Path, keep: int = KEEP_LOGS) -> None:
    """Remove the logs of ended runs in ``folder`` beyond the newest ``keep`` (each with its rotated part)."""
    runs: list[tuple[float, Path]] = []
    for log in folder.glob(f"{_PREFIX}*.log"):
        pid = _pid_of(log)
        if pid is not None and _running(pid):
            continue
        with suppress(OSError):
            runs.append((log.stat().st_mtime, log))
    runs.sort(reverse=True)
    for _, log in runs[keep:]:
        for path in (log, log.with_name(log.name + ".1")):
            with suppress(OSError):
                path.unlink()
    for part in folder.glob(f"{_PREFIX}*.log.1"):  # a rotated part whose log is gone
        log = part.with_suffix("")
        if not log.exists() and not ((pid := _pid_of(log)) is not None and _running(pid)):
            with suppress(OSError):
                part.unlink()


class _Handler(RotatingFileHandler):
    def handleError(self, record: logging.LogRecord) -> None:
        """A line that cannot be written (disk full) is dropped: the server must not stall on its log."""


class ServerLog(io.TextIOBase):
    """A text stream onto a size-bounded log file: what is written goes through ``RotatingFileHandler``.

    It has no file descriptor, so a child process's stderr reaches it line by line
    through the stdio transport's pump.
    """

    def __init__(self, path: Path, max_bytes: int = MAX_LOG_BYTES) -> None:
        self.path = path
        """The log file (its rotated part is ``<name>.1``)."""
        self._handler = _Handler(path, maxBytes=max_bytes, backupCount=1, encoding="utf-8")
        self._handler.terminator = ""
        self._handler.setFormatter(logging.Formatter("%(message)s"))

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.closed:
            raise ValueError("write to a closed server log")
        self._handler.handle(logging.makeLogRecord({"msg": text, "levelno": logging.INFO}))
        return len(text)

    def flush(self) -> None:
        self._handler.flush()

    def close(self) -> None:
        if not self.closed:
            self._handler.close()
        super().close()


def _new_log(folder: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = folder / f"{_PREFIX}{stamp}-{os.getpid()}-{secrets.token_hex(3)}.log"
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    return path


@contextmanager
def server_stderr(enabled: bool) -> Iterator[str | None]:
    """While it runs, every stdio server's stderr goes to this run's log (its path yielded).

    With ``enabled`` false (``--server-stderr``, or no stdio server) nothing changes and
    None is yielded; so too when the state folder cannot be made, and the servers'
    stderr stays on the command's own.
    """
    if not enabled:
        yield None
        return
    try:
        folder = logs_dir()
        prune_logs(folder, KEEP_LOGS - 1)
        path = _new_log(folder)
    except OSError:
        yield None
        return
    log = ServerLog(path)
    previous, mcp_session.child_errlog = mcp_session.child_errlog, cast(TextIO, log)
    try:
        yield str(path)
    finally:
        mcp_session.child_errlog = previous
        log.close()
        with suppress(OSError):
            if path.stat().st_size == 0:  # nothing to read: leave no empty file behind
                path.unlink()


def stderr_tail(log_path: str | None, servers: Collection[str] | None = None) -> list[str]:
    """The last lines the stdio servers wrote to their shared stderr log (none without a log).

    ``servers``: only the lines of these servers' labels (each line starts with ``[label] ``).
    """
    if log_path is None or (servers is not None and not servers):
        return []
    try:
        with open(log_path, "rb") as log:
            log.seek(max(0, log.seek(0, 2) - _TAIL_BYTES))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return []
    lines = [line for line in text.splitlines() if line.strip()]
    if servers is not None:
        prefixes = tuple(stderr_line_prefix(label) for label in servers)
        lines = [line for line in lines if line.startswith(prefixes)]
    return lines[-_TAIL_LINES:]


def tail_note(lines: list[str], whose: str = "the stdio servers'") -> str:
    """``lines`` as the end of an error message, or nothing."""
    if not lines:
        return ""
    return f"\n{whose} stderr ends with:\n" + "\n".join(f"  | {line}" for line in lines)
