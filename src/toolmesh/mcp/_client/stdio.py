"""A stdio transport for ``mcp.Client`` that a hostile server cannot stall.

It replaces the SDK's ``stdio_client`` reader (and keeps the SDK's process handling:
spawn in a new process group, close stdin, terminate and kill the tree), because that
reader

* decodes the whole stream as one text: a single byte that is not UTF-8 ends the
  reader, which then waits forever for the process to close its stdout, so the
  session never sees the end and every later call times out;
* rebuilds long lines quadratically (20 MB take 11 s; 200 MB never finish);
* drops a line it cannot parse (logged), so the request it answered waits out its
  timeout.

Here stdout is split into lines as bytes, each decoded on its own, and no line is
buffered beyond ``max_message_bytes`` (or, for the answer to a guarded request such as
a ``tools/list`` page, beyond its guard's ``max_bytes``: ``Inbound.line_bound``): the
rest of an over-long line is skipped as it arrives, and it is never parsed. A line that
cannot be read answers its request at once when its id can be
found (``_wire.invalid_answer``: only that call fails); otherwise, when requests are
waiting, the stream can no longer be trusted: ``on_fault`` is told why and the read
side ends, so every waiting call fails at once as ``unavailable`` and the next call
reconnects. Outbound messages are encoded in the caller's task
(``_wire.GuardedWriteStream``), so a message that cannot be encoded fails only its call.

``test_sdk_stdio_still_needs_replacing`` (tests/hostile) fails when the SDK's own
reader stops hanging on a bad byte: then this module can go.
"""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TextIO, cast

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types
import pydantic_core
from mcp.client.stdio import (
    StdioServerParameters,
    _create_platform_compatible_process,
    _drain_stdout,
    _get_executable_command,
    _stop_server_process,
    get_default_environment,
)
from mcp.shared.message import SessionMessage

from . import wire as _wire

__all__ = ["stderr_line_prefix", "stdio_transport"]

logger = logging.getLogger("toolmesh.mcp")

_WRITER_FLUSH_TIMEOUT = 0.5


@asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters,
    *,
    label: str,
    max_message_bytes: int,
    on_fault: Callable[[str], None],
    errlog: TextIO = sys.stderr,
    redact: Callable[[str], str] | None = None,
) -> AsyncIterator[tuple[anyio.abc.ObjectReceiveStream[SessionMessage | Exception], _wire.GuardedWriteStream]]:
    """Run the server as a child process and talk to it over its stdin and stdout.

    Args:
        server: Command, args, env and cwd (encoding settings are ignored: always UTF-8).
        label: The server's label, for logs and fault texts.
        max_message_bytes: The longest line read from the server; a longer one is
            skipped as it arrives, failing the request it answered.
        on_fault: Told why, when the read side ends because of what the server wrote.
        errlog: Where the child's stderr goes: a stream with a file descriptor gets it
            directly; any other (a size-bounded log several servers share, say) line by
            line through a pipe, each line starting with ``[label] `` so the log tells
            whose it is.
        redact: When given, the child's stderr passes through it line by line (the
            spec's secrets starred out) on its way to ``errlog``; else the child writes
            to ``errlog`` directly when it can.

    Raises:
        OSError: when the process cannot be started.
    """
    command = await _get_executable_command(server.command)
    shared_log = not _has_descriptor(errlog)
    if redact is None and shared_log:
        redact = _unchanged
    process = await _create_platform_compatible_process(
        command=command,
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        # The SDK hands errlog to open_process(stderr=...), which also takes PIPE.
        errlog=errlog if redact is None else cast("TextIO", subprocess.PIPE),
        cwd=server.cwd,
    )
    assert isinstance(process, anyio.abc.Process)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    line_writer, line_reader = anyio.create_memory_object_stream[bytes](0)
    inbound = _wire.Inbound()
    writer_done = anyio.Event()

    reader = _Reader(label, max_message_bytes, inbound, read_writer, on_fault)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                await reader.run(process.stdout)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass  # shutdown closed a stream under the read
        finally:
            await _drain_stdout(process)

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with line_reader:
                async for data in line_reader:
                    await process.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the server stopped reading: the session must see the end
        finally:
            writer_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        if redact is not None and process.stderr is not None:
            tg.start_soon(_pump_stderr, process.stderr, errlog, redact, stderr_line_prefix(label) if shared_log else "")
        try:
            yield read_stream, _wire.GuardedWriteStream(inbound=inbound, lines=line_writer)
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                line_writer.close()
                with anyio.move_on_after(_WRITER_FLUSH_TIMEOUT):
                    await writer_done.wait()
                await _stop_server_process(process)
                await read_stream.aclose()
                await anyio.lowlevel.checkpoint()
            tg.cancel_scope.cancel()


def _has_descriptor(stream: TextIO) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


def _unchanged(line: str) -> str:
    return line


_STDERR_LINE = 65_536
"""Longest stderr line held back for redaction; a longer one is written out in pieces."""


def stderr_line_prefix(label: str) -> str:
    """How a server's stderr lines start in a log several servers share: ``[label] ``."""
    return f"[{label}] "


async def _pump_stderr(
    stderr: anyio.abc.ByteReceiveStream, errlog: TextIO, redact: Callable[[str], str], prefix: str
) -> None:
    """Copy the child's stderr to ``errlog`` a line at a time, with ``redact`` applied, each after ``prefix``."""
    pending = b""
    try:
        async for chunk in stderr:
            pending += chunk
            *lines, pending = pending.split(b"\n")
            if len(pending) > _STDERR_LINE:
                lines.append(pending)
                pending = b""
            for line in lines:
                errlog.write(prefix + redact(line.decode("utf-8", "replace")) + "\n")
            errlog.flush()
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError, ValueError):
        pass  # the process or the log went away
    finally:
        if pending:
            with contextlib.suppress(OSError, ValueError):
                errlog.write(prefix + redact(pending.decode("utf-8", "replace")) + "\n")
                errlog.flush()


class _Reader:
    """Splits the server's stdout into bounded lines and turns each into a message (or an answer)."""

    def __init__(
        self,
        label: str,
        limit: int,
        inbound: _wire.Inbound,
        out: anyio.abc.ObjectSendStream[SessionMessage | Exception],
        on_fault: Callable[[str], None],
    ) -> None:
        self._label = label
        self._limit = limit
        self._inbound = inbound
        self._out = out
        self._on_fault = on_fault
        self._faulted = False
        self._line_limit: int | None = None
        """The bound of the line being read, once known to differ from ``limit`` (``_bound``)."""

    def _bound(self, buffer: bytearray, piece: bytes) -> int:
        """The bound of the line being read, once it is longer than a guarded answer may be."""
        if self._line_limit is not None:
            return self._line_limit
        start = bytes(buffer[: _wire.SCAN_BYTES]) + piece[: max(0, _wire.SCAN_BYTES - len(buffer))]
        limit, known = self._inbound.line_bound(start, self._limit)
        limit = min(limit, self._limit)
        if known:
            self._line_limit = limit
        return limit

    async def run(self, stdout: anyio.abc.ByteReceiveStream) -> None:
        """Read until end of stream; after a fault keep draining so the server can exit."""
        buffer = bytearray()
        skipping = False
        pending: bytes | None = None  # the kept start of an over-long line whose id was not in it
        tail = b""
        inbound = self._inbound
        async for chunk in stdout:
            if buffer or skipping:
                # A long line arrives chunk after chunk, each at once from the pipe's buffer:
                # let other tasks run between them.
                await anyio.lowlevel.checkpoint()
            start = 0
            while start < len(chunk):
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                start = len(chunk) if end < 0 else end + 1
                if skipping:
                    skipping = end < 0
                    if pending is not None:
                        tail = (tail + piece)[-_wire.TAIL_BYTES :]
                        if not skipping:
                            await self._too_long(pending, tail)
                            pending, tail = None, b""
                    continue
                size = len(buffer) + len(piece)
                limit = self._limit
                if inbound.guarded and size > inbound.tightest:
                    limit = self._bound(buffer, piece)
                if size > limit:
                    self._line_limit = None
                    kept = limit - len(buffer)
                    buffer += piece[:kept]
                    prefix = bytes(buffer)
                    buffer.clear()
                    rest = piece[kept:][-_wire.TAIL_BYTES :]
                    skipping = end < 0
                    if skipping and _wire.top_level(prefix)[0] is None:
                        pending, tail = prefix, rest  # the id may come last: wait for the line's end
                    else:
                        await self._too_long(prefix, rest if not skipping else b"")
                    continue
                if end < 0:
                    buffer += piece
                    continue
                self._line_limit = None
                if buffer:
                    buffer += piece
                    line = bytes(buffer)
                    buffer.clear()
                else:
                    line = piece
                await self._line(line)

    async def _line(self, line: bytes) -> None:
        if self._faulted or not line.strip():
            return
        if self._inbound.guarded and len(line) > self._inbound.tightest and await self._over_guard(line):
            return
        try:
            # Parsed first, then validated: the union's own validate_json costs about 5x the memory
            # on a large message (a page of thousands of tools), whose result stays a plain dict.
            message = mcp_types.jsonrpc_message_adapter.validate_python(pydantic_core.from_json(line), by_name=False)
        except ValueError as exc:  # not JSON (from_json), or not a JSON-RPC message (pydantic.ValidationError)
            await self._unreadable(line, _wire.describe_unreadable(line, exc))
            return
        guard = None
        if isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError):
            guard = self._inbound.guard(message.id)
            known = self._inbound.answered(message.id)
            if known is False and message.id is not None:
                await self._fault(f"it answered request id {message.id!r}, which was never sent or already answered")
                return
        item = SessionMessage(message)
        if guard is not None and isinstance(message, mcp_types.JSONRPCResponse):
            item = _wire.inspected(item, guard)
        await self._out.send(item)

    async def _over_guard(self, line: bytes) -> bool:
        """Refuse, unparsed, a whole line that answers a guarded request and is over its guard's bound.

        (A line whose id came last is only known to be such an answer once it has ended.)
        """
        request_id = _wire.top_level(line)[0]
        if request_id is None:
            request_id = _wire.trailing_id(line[-_wire.TAIL_BYTES :])
        guard = self._inbound.guard(request_id)
        if guard is None or len(line) <= guard.max_bytes:
            return False
        assert isinstance(request_id, str | int)
        self._inbound.answered(request_id)
        await self._out.send(_wire.invalid_answer(request_id, guard.too_large()))
        return True

    async def _too_long(self, prefix: bytes, tail: bytes) -> None:
        request_id = _wire.top_level(prefix)[0]
        if request_id is None and tail:
            request_id = _wire.trailing_id(tail)
        guard = self._inbound.guard(request_id)
        if guard is not None:
            reason = guard.too_large()
        else:
            reason = (
                f"it is larger than max_result_bytes ({self._limit} bytes); raise max_result_bytes on the server "
                "spec if such answers are expected"
            )
        await self._unreadable(prefix, reason, tail)

    async def _unreadable(self, line: bytes, reason: str, tail: bytes = b"") -> None:
        request_id, has_method = _wire.top_level(line)
        if request_id is None and tail:
            request_id = _wire.trailing_id(tail)
        if self._inbound.method(request_id) is not None and not has_method:
            assert isinstance(request_id, str | int)
            self._inbound.answered(request_id)
            await self._out.send(_wire.invalid_answer(request_id, reason))
            return
        await self._fault(reason)

    async def _fault(self, reason: str) -> None:
        if not self._inbound.waiting:
            logger.warning("MCP server %r wrote a line on stdout that was dropped: %s", self._label, reason)
            return
        text = f"the server wrote a line on stdout that cannot be read: {reason}"
        logger.warning("MCP server %r: %s; closing the session", self._label, text)
        self._faulted = True
        self._on_fault(text)
        await self._out.aclose()
