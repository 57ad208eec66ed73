"""A deliberately broken MCP server that writes raw bytes: the hostile peer of tests/hostile.

    python raw_server.py stdio          newline-delimited JSON-RPC on stdin/stdout
    python raw_server.py http PORT      Streamable HTTP (JSON answers) on 127.0.0.1:PORT/mcp

It speaks just enough of MCP 2025-11-25 to connect (initialize, tools/list), or of 2026-07-28
with HOSTILE_MODERN=1 (server/discover, then every request on its own), and answers each tool in a
broken way of its own; see TOOLS. Environment:

    HOSTILE_LIST=deep | big_description | big_schema | hang   a broken tools/list
    HOSTILE_TOOLS=N           list N generated tools (``t00000``...) after the ones of TOOLS
    HOSTILE_PAGE_SIZE=P       list P tools a page (cursors are offsets); default: one page
    HOSTILE_REQUESTS=PATH     append each request's method to PATH, one a line (what the server was asked)
    HOSTILE_FLOOD=SECONDS     after the handshake, send notifications/tools/list_changed every SECONDS, forever
    HOSTILE_FLOOD_COUNT=N     ... or N times; then list one more tool, ``late``, announce that once more
                              and note ``flood-done`` in HOSTILE_REQUESTS
    HOSTILE_LIST_DELAY=SECONDS  stdio: answer each tools/list after the first one SECONDS late
    HOSTILE_HUGE_BYTES=N      the size of the "huge" tool's answer (default 5 MiB)
    HOSTILE_UNREADABLE_FROM=K generated tools from the K-th on have an inputSchema that is no object
    HOSTILE_ID_LAST=1         write the "huge" and tools/list answers' id last, as the TypeScript SDK does
    HOSTILE_IGNORE_TERM=1     ignore SIGTERM and stay alive after stdin closes (only SIGKILL stops it)
    HOSTILE_MODERN=1          answer server/discover (2026-07-28) instead of refusing it as an unknown method
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

TOOLS = {
    "echo": "answers {text} as text",
    "slow": "answers {text} after {seconds} (default 1 s)",
    "bad_byte": "writes a line holding one byte that is not UTF-8, and never answers",
    "bad_byte_answer": "answers with a text holding a byte that is not UTF-8",
    "not_json": "writes a line that is not JSON, and never answers",
    "array_result": "answers with an array as result",
    "no_result": "answers with neither result nor error",
    "wrong_id": "answers with an id that was never sent",
    "huge": "answers with a text of HOSTILE_HUGE_BYTES bytes",
    "throttled": "over HTTP: answers 429; over stdio: echo",
    "die": "exits at once, without answering",
    "sse_cut": "over HTTP: an SSE answer holding a log message, ended without a result",
    "sse_request": "over HTTP: an SSE answer holding a request of the server (elicitation/create), then ended",
}

_SSE_EVENTS = {
    "sse_cut": {"method": "notifications/message", "params": {"level": "info", "logger": "raw", "data": "cut next"}},
    "sse_request": {
        "id": "ask-1",
        "method": "elicitation/create",
        "params": {"mode": "form", "message": "name?", "requestedSchema": {"type": "object", "properties": {}}},
    },
}
"""The one event each SSE tool sends before it ends its answer."""

_write_lock = threading.Lock()
_late = threading.Event()
"""Set when a flood of HOSTILE_FLOOD_COUNT is over: ``late`` is listed from then on."""


def _tool(name: str) -> dict[str, Any]:
    return {"name": name, "description": TOOLS[name], "inputSchema": {"type": "object"}}


_DEEP = "@@deep schema@@"


def _nested(levels: int) -> bytes:
    """A JSON schema nested 2 * ``levels`` deep (too deep for Python's own json module to write)."""
    return b'{"type":"object","properties":{"x":' * levels + b'{"type":"object"}' + b"}}" * levels


def _generated(index: int) -> dict[str, Any]:
    schema: Any = {"type": "object", "properties": {"query": {"type": "string", "description": "what to look for"}}}
    if index >= int(os.environ.get("HOSTILE_UNREADABLE_FROM", "-1")) >= 0:
        schema = "not a schema"
    return {"name": f"t{index:05d}", "description": f"generated tool number {index}", "inputSchema": schema}


def tools_list(cursor: Any = None) -> dict[str, Any] | None:
    mode = os.environ.get("HOSTILE_LIST", "")
    tools = [_tool(name) for name in TOOLS]
    if _late.is_set():
        tools.append(
            {"name": "late", "description": "listed once the flood is over", "inputSchema": {"type": "object"}}
        )
    generated = int(os.environ.get("HOSTILE_TOOLS", "0"))
    if generated:
        page_size = int(os.environ.get("HOSTILE_PAGE_SIZE", "0")) or len(tools) + generated
        start = int(cursor or 0)
        end = min(start + page_size, len(tools) + generated)
        page = [tools[i] if i < len(tools) else _generated(i - len(tools)) for i in range(start, end)]
        return {"tools": page, **({"nextCursor": str(end)} if end < len(tools) + generated else {})}
    if mode == "hang":
        return None
    if mode == "deep":
        tools.append({"name": "deep", "inputSchema": _DEEP})
    elif mode == "big_description":
        tools.append({"name": "wordy", "description": "x" * 20_000, "inputSchema": {"type": "object"}})
    elif mode == "big_schema":
        properties = {f"p{i}": {"type": "string", "description": "y" * 100} for i in range(1500)}
        tools.append({"name": "bulky", "inputSchema": {"type": "object", "properties": properties}})
    return {"tools": tools}


def _result(request_id: Any, result: Any, id_last: bool = False) -> bytes:
    if os.environ.get("HOSTILE_MODERN") == "1" and isinstance(result, dict):
        result = {**result, "resultType": "complete"}  # required on the 2026-07-28 wire
        if "tools" in result:
            result.update(ttlMs=0, cacheScope="private")
    if id_last:  # the TypeScript SDK's order: result, jsonrpc, id
        return json.dumps({"result": result, "jsonrpc": "2.0", "id": request_id}).encode()
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


def _text(request_id: Any, text: str) -> bytes:
    return _result(request_id, {"content": [{"type": "text", "text": text}], "isError": False})


def _huge(request_id: Any) -> Iterator[bytes]:
    size = int(os.environ.get("HOSTILE_HUGE_BYTES", str(5 * 1024 * 1024)))
    id_last = os.environ.get("HOSTILE_ID_LAST") == "1"  # the TypeScript SDK's order: result, jsonrpc, id
    head = b"" if id_last else b'"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b","
    modern = b'"resultType":"complete",' if os.environ.get("HOSTILE_MODERN") == "1" else b""
    yield b"{" + head + b'"result":{' + modern + b'"content":[{"type":"text","text":"'
    chunk = b"z" * 65536
    left = size
    while left > 0:
        yield chunk[: min(left, len(chunk))]
        left -= len(chunk)
    yield b'"}]}' + (b',"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() if id_last else b"") + b"}"


def answer(message: dict[str, Any]) -> Iterator[bytes] | None:
    """The bytes that answer ``message`` (no newline), or None for no answer."""
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        return None  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": True} if os.environ.get("HOSTILE_FLOOD") else {}},
            "serverInfo": {"name": "hostile", "version": "0"},
        }
        return iter([_result(request_id, result)])
    if method == "server/discover" and os.environ.get("HOSTILE_MODERN") == "1":
        result = {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "0"}},
        }
        return iter([_result(request_id, result)])
    if method == "ping":
        return iter([_result(request_id, {})])
    if method == "tools/list":
        listed = tools_list((message.get("params") or {}).get("cursor"))
        if listed is None:
            return None
        id_last = os.environ.get("HOSTILE_ID_LAST") == "1"
        return iter([_result(request_id, listed, id_last).replace(json.dumps(_DEEP).encode(), _nested(1000))])
    if method != "tools/call":
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return iter([json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()])
    params = message.get("params") or {}
    name, args = params.get("name"), params.get("arguments") or {}
    if name in ("echo", "throttled", "late"):
        return iter([_text(request_id, str(args.get("text", "")))])
    if name == "bad_byte":
        return iter([b"\xff"])
    if name == "bad_byte_answer":
        body = _text(request_id, "caf\u00e9").replace(b"\\u00e9", b"\xe9")
        return iter([body])
    if name == "not_json":
        return iter([b"this is not JSON"])
    if name == "array_result":
        return iter([_result(request_id, [1, 2, 3])])
    if name == "no_result":
        return iter([json.dumps({"jsonrpc": "2.0", "id": request_id}).encode()])
    if name == "wrong_id":
        return iter([_text(987654321, "for somebody else")])
    if name == "huge":
        return _huge(request_id)
    if name == "die":
        os._exit(3)
    error = {"code": -32602, "message": f"Unknown tool: {name}"}
    return iter([json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()])


def _write_line(parts: Iterator[bytes]) -> None:
    out = sys.stdout.buffer
    with _write_lock:
        for part in parts:
            out.write(part)
        out.write(b"\n")
        out.flush()


def _record(message: dict[str, Any]) -> None:
    """Note a request's method in HOSTILE_REQUESTS, so a test can count what the server was asked."""
    path = os.environ.get("HOSTILE_REQUESTS")
    if path and message.get("id") is not None:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{message.get('method')}\n")


def _flood(every: float) -> None:
    """Announce a tool-list change every ``every`` seconds until the client stops reading (or HOSTILE_FLOOD_COUNT)."""
    line = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    count = int(os.environ.get("HOSTILE_FLOOD_COUNT", "0"))
    try:
        sent = 0
        while not count or sent < count:
            _write_line(iter([line]))
            sent += 1
            time.sleep(every)
        _late.set()
        _write_line(iter([line]))
        _record({"id": 0, "method": "flood-done"})
    except (OSError, ValueError):
        os._exit(0)


def serve_stdio() -> None:
    listings = 0
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        _record(message)
        flood = os.environ.get("HOSTILE_FLOOD")
        if flood and message.get("method") == "notifications/initialized":
            threading.Thread(target=_flood, args=(float(flood),), daemon=True).start()
        params = message.get("params") or {}
        if message.get("method") == "tools/call" and params.get("name") == "slow":
            args = params.get("arguments") or {}
            delayed = iter([_text(message["id"], str(args.get("text", "")))])
            threading.Timer(float(args.get("seconds", 1.0)), _write_line, (delayed,)).start()
            continue
        parts = answer(message)
        if message.get("method") == "tools/list" and parts is not None:
            listings += 1
            if listings > 1 and os.environ.get("HOSTILE_LIST_DELAY"):
                threading.Timer(float(os.environ["HOSTILE_LIST_DELAY"]), _write_line, (parts,)).start()
                continue
        if parts is not None:
            _write_line(parts)


def serve_http(port: int) -> None:
    import asyncio

    import uvicorn

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                event = (await receive())["type"]
                await send({"type": f"{event}.complete"})
                if event == "lifespan.shutdown":
                    return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        if scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 405, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        message = json.loads(body)
        _record(message)
        params = message.get("params") or {}
        if message.get("method") == "tools/call" and params.get("name") == "throttled":
            await send({"type": "http.response.start", "status": 429, "headers": [(b"retry-after", b"1")]})
            await send({"type": "http.response.body", "body": b"slow down"})
            return
        if message.get("method") == "tools/call" and params.get("name") in _SSE_EVENTS:
            event = json.dumps({"jsonrpc": "2.0", **_SSE_EVENTS[params["name"]]}).encode()
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
            )
            await send(
                {"type": "http.response.body", "body": b"event: message\ndata: " + event + b"\n\n", "more_body": True}
            )
            await send({"type": "http.response.body", "body": b""})
            return
        if message.get("method") == "tools/call" and params.get("name") == "slow":
            args = params.get("arguments") or {}
            await asyncio.sleep(float(args.get("seconds", 1.0)))
            parts: Iterator[bytes] | None = iter([_text(message["id"], str(args.get("text", "")))])
        else:
            parts = answer(message)
        if parts is None:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"hostile-session")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for part in parts:
            await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


def main() -> None:
    if os.environ.get("HOSTILE_IGNORE_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.argv[1:2] == ["http"]:
        serve_http(int(sys.argv[2]))
    else:
        serve_stdio()
    while os.environ.get("HOSTILE_IGNORE_TERM") == "1":  # stubborn: outlive stdin, ignore SIGTERM
        time.sleep(1)


if __name__ == "__main__":
    main()
