"""`toolmesh serve --workers 2`: two processes answer on one port, share the state, and stop together."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

from _gateway import client
from _mcp import child_pids, wait_until
from _servers import ROOT
from _services import redis_server

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
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


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


async def test_two_workers_answer_on_one_port_and_stop_together(tmp_path: Path) -> None:
    (tmp_path / "pid_tools.py").write_text(TOOLS)
    config = tmp_path / "toolmesh.json"
    policy = {"rateLimits": [{"calls": 6, "per": 3600, "tools": ["limited"]}]}
    config.write_text(json.dumps({"native": ["pid_tools.py:tools"], "policy": policy, "serve": {"port": 0}}))
    errors = bytearray()
    async with redis_server() as redis:
        command = [sys.executable, "-m", "toolmesh", "serve", "-c", str(config), "--workers", "2"]
        process = await anyio.open_process(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**ENV, "TOOLMESH_STATE": redis.url}
        )
        workers: set[int] = set()
        try:
            assert process.stdout is not None and process.stderr is not None
            lines = BufferedByteReceiveStream(process.stdout)
            async with anyio.create_task_group() as group:

                async def drain(stream: anyio.abc.ByteReceiveStream) -> None:
                    async for chunk in stream:
                        errors.extend(chunk)

                group.start_soon(drain, process.stderr)
                with anyio.fail_after(120):
                    while b"listening on" not in (line := await lines.receive_until(b"\n", 65536)):
                        pass
                    url = line.decode().split("listening on ", 1)[1].strip()
                    while b"shared state: " not in (line := await lines.receive_until(b"\n", 65536)):
                        pass
                    shown = rf"shared state: {re.escape(redis.url)} \(prefix toolmesh:[0-9a-f]{{12}}:\)"
                    assert re.fullmatch(shown, line.decode().strip()), line
                    derived = await lines.receive_until(b"\n", 65536)  # no serve.statePrefix: the banner says so
                    assert b"set serve.statePrefix" in derived and b"share nothing" in derived, derived
                    answered: list[int] = []
                    while len(set(answered)) < 2:  # the second worker answers once it has started
                        async with client(url, "2026-07-28") as session:  # a new connection each time
                            result = await session.call_tool("pid", {})
                        answered.append(int(result.content[0].text))  # type: ignore[union-attr]
                    workers = child_pids(process.pid)
                    limited = []
                    for _ in range(10):
                        async with client(url, "2026-07-28") as session:
                            result = await session.call_tool("limited", {})
                        limited.append(None if result.is_error else int(result.content[0].text))  # type: ignore[union-attr]
                    process.send_signal(signal.SIGTERM)
                    code = await process.wait()
                group.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            for pid in workers:
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)
    assert set(answered) == {process.pid, *workers} and len(workers) == 1, errors.decode()
    assert b"workers: 2 processes share port" in errors
    # 6 calls an hour across both workers (each with its own RateLimit, one bucket in Redis)
    assert len([pid for pid in limited if pid is not None]) == 6 and limited[6:] == [None] * 4, limited
    assert code == 0 and not any(_alive(pid) for pid in workers), errors.decode()


async def test_a_worker_stops_when_its_parent_is_killed(tmp_path: Path) -> None:
    (tmp_path / "pid_tools.py").write_text(TOOLS)
    config = tmp_path / "toolmesh.json"
    config.write_text(json.dumps({"native": ["pid_tools.py:tools"], "serve": {"port": 0, "workers": 2}}))
    async with redis_server() as redis:
        command = [sys.executable, "-m", "toolmesh", "serve", "-c", str(config)]
        process = await anyio.open_process(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env={**ENV, "TOOLMESH_STATE": redis.url}
        )
        worker = None
        try:
            assert process.stdout is not None
            lines = BufferedByteReceiveStream(process.stdout)
            with anyio.fail_after(120):
                while b"listening on" not in (line := await lines.receive_until(b"\n", 65536)):
                    pass
                url = line.decode().split("listening on ", 1)[1].strip()
                while worker is None:  # the other worker answers once it has started
                    async with client(url, "2026-07-28") as session:
                        answered = int((await session.call_tool("pid", {})).content[0].text)  # type: ignore[union-attr]
                    worker = answered if answered != process.pid else None
                watch = os.pidfd_open(worker)
                try:
                    process.kill()  # no chance to stop its workers: they see their stdin end
                    await process.wait()
                    await anyio.wait_readable(watch)  # the worker's pidfd is readable once it has exited
                finally:
                    os.close(watch)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            if worker is not None and _alive(worker):
                os.kill(worker, signal.SIGKILL)
    assert not _alive(worker)


async def test_a_worker_stopped_alone_exits_and_is_started_again(tmp_path: Path) -> None:
    """SIGTERM to one worker (an operator, a rolling restart) ends it though its parent still holds its stdin."""
    (tmp_path / "pid_tools.py").write_text(TOOLS)
    config = tmp_path / "toolmesh.json"
    config.write_text(json.dumps({"native": ["pid_tools.py:tools"], "serve": {"port": 0}}))
    errors = bytearray()
    async with redis_server() as redis:
        command = [sys.executable, "-m", "toolmesh", "serve", "-c", str(config), "--workers", "2"]
        process = await anyio.open_process(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**ENV, "TOOLMESH_STATE": redis.url}
        )
        workers: set[int] = set()
        try:
            assert process.stdout is not None and process.stderr is not None
            lines = BufferedByteReceiveStream(process.stdout)
            async with anyio.create_task_group() as group:

                async def drain(stream: anyio.abc.ByteReceiveStream) -> None:
                    async for chunk in stream:
                        errors.extend(chunk)

                group.start_soon(drain, process.stderr)
                with anyio.fail_after(60):
                    while b"listening on" not in (line := await lines.receive_until(b"\n", 65536)):
                        pass
                    url = line.decode().split("listening on ", 1)[1].strip()
                    answered: set[int] = set()
                    while len(answered) < 2:  # the worker serves
                        async with client(url, "2026-07-28") as session:  # a new connection each time
                            result = await session.call_tool("pid", {})
                        answered.add(int(result.content[0].text))  # type: ignore[union-attr]
                    (first,) = answered - {process.pid}
                    os.kill(first, signal.SIGTERM)
                # it closes within its grace, and is started again
                await wait_until(lambda: b"exited with code" in errors, 30)
                await wait_until(lambda: bool(child_pids(process.pid) - {first}), 30)
                workers = child_pids(process.pid)
                process.send_signal(signal.SIGTERM)
                code = await process.wait()
                group.cancel_scope.cancel()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            for pid in {*workers, *child_pids(process.pid)}:
                if _alive(pid):
                    os.kill(pid, signal.SIGKILL)
    assert not _alive(first), errors.decode()
    assert code == 0, errors.decode()
