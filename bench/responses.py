"""What the Responses endpoint adds to a turn: through ``toolmesh serve`` vs. the same work done by hand.

Run:  .venv/bin/python bench/responses.py [--turns 200]

One turn is: the model asks for one MCP tool call, the tool runs, the model answers.
Both sides talk to the same two servers, each its own process on loopback:

- a scripted Chat Completions server (``tests/fixtures/scripted_upstream.py``: a tool call
  after a user message, a text answer after a tool message), standing in for vLLM;
- the demo MCP server (``tests/fixtures/demo_server.py``) over Streamable HTTP.

**Gateway**: ``toolmesh serve --responses-upstream`` (a third process); the bench's
``AsyncOpenAI.responses.create`` declares the MCP server in each request (its
connection is pooled across requests, as in production).
**Plain script**: the same two ``chat.completions.create`` calls and one ``call_tool``
on an ``mcp.Client`` session opened once, made by this process.

Printed: turns per second, mean and p50/p99 latency of a turn for each, and the
gateway's added share of a turn (target: under 10%).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import mcp
from _loopback import free_port
from openai import AsyncOpenAI

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
ARGUMENTS = '{"a": 1, "b": 2}'
MCP_TOOL = {
    "type": "function",
    "function": {
        "name": "demo__add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a"],
        },
    },
}


def _wait_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{process.args} did not listen on {port}")


def _start(args: list[str], port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen([sys.executable, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _wait_port(port, process)
    return process


def _start_gateway(upstream: str, folder: Path) -> tuple[subprocess.Popen[str], str]:
    config = folder / "toolmesh.json"
    config.write_text(json.dumps({"serve": {"port": 0}}))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "200"}
    process = subprocess.Popen(
        [sys.executable, "-m", "toolmesh", "serve", "--config", str(config), "--responses-upstream", upstream],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=folder,
    )
    assert process.stdout is not None
    for line in process.stdout:
        found = re.search(r"responses: (http://127\.0\.0\.1:\d+)/v1/responses", line)
        if found:
            return process, found.group(1) + "/v1"
    raise RuntimeError("toolmesh serve ended before announcing /v1/responses")


async def _time(turn: Callable[[], Awaitable[None]], turns: int) -> list[float]:
    for _ in range(10):
        await turn()
    seconds = []
    for _ in range(turns):
        started = time.perf_counter()
        await turn()
        seconds.append(time.perf_counter() - started)
    return seconds


async def _measure(turns: int, model_url: str, mcp_url: str, gateway_url: str) -> dict[str, list[float]]:
    async with (
        AsyncOpenAI(base_url=model_url, api_key="x", max_retries=0) as model,
        AsyncOpenAI(base_url=gateway_url, api_key="x", max_retries=0) as gateway,
        mcp.Client(mcp_url) as session,
    ):

        async def plain() -> None:
            messages: list[dict[str, object]] = [{"role": "user", "content": "add 1 and 2"}]
            first = await model.chat.completions.create(model="m", messages=messages, tools=[MCP_TOOL])  # type: ignore[arg-type, list-item]
            call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
            result = await session.call_tool("add", json.loads(call.function.arguments))  # type: ignore[union-attr]
            text = result.content[0].text  # type: ignore[union-attr]
            messages += [
                first.choices[0].message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": call.id, "content": text},
            ]
            second = await model.chat.completions.create(model="m", messages=messages, tools=[MCP_TOOL])  # type: ignore[arg-type]
            assert second.choices[0].message.content

        tool = {
            "type": "mcp",
            "server_label": "demo",
            "server_url": mcp_url,
            "require_approval": "never",
            "allowed_tools": ["add"],
        }

        async def through_gateway() -> None:
            response = await gateway.responses.create(model="m", input="add 1 and 2", tools=[tool])  # type: ignore[list-item]
            assert response.output_text and response.output[1].type == "mcp_call"

        results = {}
        for name, turn in (
            ("plain script", plain),
            ("gateway", through_gateway),
            ("plain script ", plain),
            ("gateway ", through_gateway),
        ):
            results.setdefault(name.strip(), []).extend(await _time(turn, turns // 2))
        return results


def _row(name: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p50, p99 = ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    mean = statistics.fmean(seconds)
    figures = f"mean {mean * 1000:7.2f} ms   p50 {p50 * 1000:7.2f} ms   p99 {p99 * 1000:7.2f} ms"
    return f"{name:<14} {1 / mean:8.1f} turns/s   {figures}"


def _scenario(turns: int, model_ms: float, mcp_url: str, folder: Path) -> dict[str, list[float]]:
    """Time ``turns`` turns each way against a scripted model answering in ``model_ms``."""
    model_port = free_port()
    processes: list[subprocess.Popen[bytes] | subprocess.Popen[str]] = []
    try:
        script = [str(FIXTURES / "scripted_upstream.py"), str(model_port), "demo__add", ARGUMENTS, str(model_ms)]
        processes.append(_start(script, model_port))
        gateway, gateway_url = _start_gateway(f"http://127.0.0.1:{model_port}/v1", folder)
        processes.append(gateway)
        return anyio.run(_measure, turns, f"http://127.0.0.1:{model_port}/v1", mcp_url, gateway_url)
    finally:
        _stop(processes)


def _stop(processes: list[subprocess.Popen[bytes] | subprocess.Popen[str]]) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _p50(seconds: list[float]) -> float:
    return sorted(seconds)[len(seconds) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200, help="turns each way with the instant model")
    parser.add_argument("--model-ms", type=float, default=100.0, help="the thinking model's time per call")
    args = parser.parse_args()
    mcp_port = free_port()
    server = _start([str(FIXTURES / "demo_server.py"), "http", str(mcp_port)], mcp_port)
    mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
    scenarios = [
        ("an instant model", 0.0, args.turns),
        (f"a model taking {args.model_ms:g} ms a call", args.model_ms, max(20, args.turns // 5)),
    ]
    try:
        with tempfile.TemporaryDirectory() as folder:
            for title, model_ms, turns in scenarios:
                results = _scenario(turns, model_ms, mcp_url, Path(folder))
                print(
                    f"{title}: one turn = 2 upstream calls + 1 MCP tool call; {turns} turns each (interleaved halves)"
                )
                for name, seconds in results.items():
                    print("  " + _row(name, seconds))
                plain, through = _p50(results["plain script"]), _p50(results["gateway"])
                print(
                    f"  the gateway adds {(through - plain) * 1000:.2f} ms, {(through - plain) / plain * 100:+.1f}% "
                    "to a turn (p50; target: under 10%)"
                )
    finally:
        _stop([server])


if __name__ == "__main__":
    main()
