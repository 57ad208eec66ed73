"""`toolmesh serve --workers 2`: two processes answer on one port, share the state, and stop together."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.buffered import BufferedByteReceiveStream

from _gateway import client
from _mcp import alive, child_pids, wait_until
from _servers import toolmesh_env
from _services import redis_server

ENV = toolmesh_env()
TOOLS = '''
import os

from toolmesh import tool


@tool
def pid() -> int:
    """The id of the process that answers."""
    return os.getpid()


@tool
def limited() -> int:
    """The id of the process that answers, 6 times an hour."""
    return os.getpid()


tools = [pid, limited]
'''


@dataclass
class _Serving:
    """A `toolmesh serve` process with its workers: its stdout lines, its stderr so far, its URL."""

    process: Process
    lines: BufferedByteReceiveStream
    errors: bytearray
    url: str = ""
    workers: set[int] = field(default_factory=set)
    """Worker pids the test saw (killed on exit if still alive: a killed parent leaves them to init)."""

    async def line(self) -> bytes:
        return await self.lines.receive_until(b"\n", 65536)

    async def pid(self) -> int:
        """The pid of the process answering a call on a new connection."""
        async with client(self.url, "2026-07-28") as session:
            result = await session.call_tool("pid", {})
        return int(result.content[0].text)  # type: ignore[union-attr]


@asynccontextmanager
async def _serve(tmp_path: Path, state: str, config: dict[str, Any], *args: str) -> AsyncIterator[_Serving]:
    """`toolmesh serve` of `TOOLS` with `config` (and `args`), state in `state`, once it says where it listens.

    Every process it starts is gone on exit (the parent killed if still there, then every worker left).
    """
    (tmp_path / "pid_tools.py").write_text(TOOLS)
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps({"native": ["pid_tools.py:tools"], **config}))
    command = [sys.executable, "-m", "toolmesh", "serve", "-c", str(path), *args]
    process = await anyio.open_process(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**ENV, "TOOLMESH_STATE": state}
    )
    assert process.stdout is not None and process.stderr is not None
    serving = _Serving(process, BufferedByteReceiveStream(process.stdout), bytearray())
    try:
        async with anyio.create_task_group() as group:

            async def drain(stream: ByteReceiveStream) -> None:
                async for chunk in stream:
                    serving.errors.extend(chunk)

            group.start_soon(drain, process.stderr)
            with anyio.fail_after(120):
                while b"listening on" not in (line := await serving.line()):
                    pass
            serving.url = line.decode().split("listening on ", 1)[1].strip()
            yield serving
            group.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        for pid in {*serving.workers, *child_pids(process.pid)}:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


async def test_two_workers_answer_on_one_port_and_stop_together(tmp_path: Path) -> None:
    policy = {"rateLimits": [{"calls": 6, "per": 3600, "tools": ["limited"]}]}
    async with (
        redis_server() as redis,
        _serve(tmp_path, redis.url, {"policy": policy, "serve": {"port": 0}}, "--workers", "2") as served,
    ):
        with anyio.fail_after(120):
            while b"shared state: " not in (line := await served.line()):
                pass
            shown = rf"shared state: {re.escape(redis.url)} \(prefix toolmesh:[0-9a-f]{{12}}:\)"
            assert re.fullmatch(shown, line.decode().strip()), line
            derived = await served.line()  # no serve.statePrefix: the banner says so
            assert b"set serve.statePrefix" in derived and b"share nothing" in derived, derived
            answered: list[int] = []
            while len(set(answered)) < 2:  # the second worker answers once it has started
                answered.append(await served.pid())
            served.workers = child_pids(served.process.pid)
            limited = []
            for _ in range(10):
                async with client(served.url, "2026-07-28") as session:
                    result = await session.call_tool("limited", {})
                limited.append(None if result.is_error else int(result.content[0].text))  # type: ignore[union-attr]
            served.process.send_signal(signal.SIGTERM)
            code = await served.process.wait()
    errors, workers = served.errors, served.workers
    assert set(answered) == {served.process.pid, *workers} and len(workers) == 1, errors.decode()
    assert b"workers: 2 processes share port" in errors
    # 6 calls an hour across both workers (each with its own RateLimit, one bucket in Redis)
    assert len([pid for pid in limited if pid is not None]) == 6 and limited[6:] == [None] * 4, limited
    assert code == 0 and not any(alive(pid) for pid in workers), errors.decode()


async def test_a_worker_stops_when_its_parent_is_killed(tmp_path: Path) -> None:
    async with redis_server() as redis, _serve(tmp_path, redis.url, {"serve": {"port": 0, "workers": 2}}) as served:
        with anyio.fail_after(120):
            worker = None
            while worker is None:  # the other worker answers once it has started
                answered = await served.pid()
                worker = answered if answered != served.process.pid else None
            served.workers = {worker}
            watch = os.pidfd_open(worker)
            try:
                served.process.kill()  # no chance to stop its workers: they see their stdin end
                await served.process.wait()
                await anyio.wait_readable(watch)  # the worker's pidfd is readable once it has exited
            finally:
                os.close(watch)
    assert not alive(worker)


async def test_a_worker_stopped_alone_exits_and_is_started_again(tmp_path: Path) -> None:
    """SIGTERM to one worker (an operator, a rolling restart) ends it though its parent still holds its stdin."""
    async with redis_server() as redis, _serve(tmp_path, redis.url, {"serve": {"port": 0}}, "--workers", "2") as served:
        with anyio.fail_after(60):
            answered: set[int] = set()
            while len(answered) < 2:  # the worker serves
                answered.add(await served.pid())
            (first,) = answered - {served.process.pid}
            os.kill(first, signal.SIGTERM)
        # it closes within its grace, and is started again
        await wait_until(lambda: b"exited with code" in served.errors, 30)
        await wait_until(lambda: bool(child_pids(served.process.pid) - {first}), 30)
        served.workers = child_pids(served.process.pid)
        served.process.send_signal(signal.SIGTERM)
        code = await served.process.wait()
    assert not alive(first), served.errors.decode()
    assert code == 0, served.errors.decode()
