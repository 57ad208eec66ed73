"""An example MCP server, "demo": one tool for each kind of answer an MCP client has to handle.

It is written with the official `mcp` SDK's `MCPServer`. Its tools answer with text, structured
output, an image, an error, a JSON-RPC error, progress notifications and log messages, and one
tool (`grow`) adds a tool to the server's list. The MCP guides of the docs connect it.

The tests run this file too (`tests/fixtures/demo_server.py` loads it); the `FIXTURE_*`
environment variables below are their switches.

Run it from the repository root:
    python examples/demo_server.py stdio            # over stdin/stdout, as an MCP host starts it
    python examples/demo_server.py http 8931        # Streamable HTTP at http://127.0.0.1:8931/mcp

From Python, a registry starts it itself:
    McpServer.stdio("demo", sys.executable, ["examples/demo_server.py", "stdio"])

Tools (the server's own names):
    echo(text)                      -> text block
    add(a, b=0)                     -> structured {"sum": int} (declares outputSchema) + JSON text fallback
    search(query, limit=None, tags=None) -> text block
    image()                         -> [image block (1x1 PNG), text block], in that order
    fail(reason)                    -> isError result (SDK ToolError); text "Error executing tool fail: <reason>"
    crash()                         -> plain exception: isError, text "Error executing tool crash" (detail hidden)
    protocol_error(code=-32602, message="rejected")
                                    -> JSON-RPC error response (client raises MCPError(code, message),
                                       data {"fixture": "demo"})
    slow(seconds)                   -> sleeps, then "done"; on cancellation appends "slow cancelled"
                                       to the file named by FIXTURE_CANCEL_LOG (if set)
    progress(steps=3)               -> reports `steps` progress notifications, then "progressed N"
    chatty(text="hello")            -> (FIXTURE_CHATTY=1 only, listed last) logs "<level>: <text>"
                                       (logger "chatty") at debug, info, notice, warning, error,
                                       alert, then {"text": text} at info; answers "logged"
    bad_output()                    -> declares outputSchema {"sum": int} but returns {"wrong": "x"}
                                       (mcp.Client.call_tool raises RuntimeError)
    die()                           -> os._exit(1) mid-call (a crash while a request is in flight)
    ephemeral()                     -> listed, but every call answers exactly as MCPServer answers an
                                       unknown tool: isError result "Unknown tool: ephemeral"
    delete_item(item_id)            -> title "Delete an item", annotations (destructive, idempotent,
                                       not read-only, closed world), _meta {"fixture": "demo"}
    headers()                       -> JSON text of the HTTP request headers (lower-cased names);
                                       "null" over stdio
    throttled()                     -> "not throttled" (with FIXTURE_HTTP_THROTTLE=1 over HTTP, the
                                       request is answered HTTP 429 before it reaches the server)
    grow(name)                      -> adds a tool `name(text="")` answering "<name> text=<text>", then
                                       announces the change at once: an event on 2026-07-28 subscriptions/listen
                                       streams (only streams already open receive it) and
                                       notifications/tools/list_changed on 2025-11-25 sessions

In-process: `build_server(env)` returns a fresh server object configured by `env` (the FIXTURE_*
switches below); `die` then fails instead of exiting.

Resources: demo://readme (text/plain "Demo fixture README."), demo://pixel.png (image/png blob);
an unknown URI is a JSON-RPC error (-32602).

Environment switches:
    FIXTURE_TOOLS_EMPTY=1           serve zero tools
    FIXTURE_CANCEL_LOG=path         see `slow`
    FIXTURE_FORGET=name             the tool `name` is listed by the first tools/list only; after that
                                    it is removed, so later calls get "Unknown tool: name" (isError)
    FIXTURE_INSTRUCTIONS=text       server instructions (default: "Demo fixture server.")
    FIXTURE_LOG_LEVEL=LEVEL         server log level on stderr (default CRITICAL: quiet)
    FIXTURE_HTTP_TOKEN=token        HTTP only: answer 401 to requests without "Authorization: Bearer token"
    FIXTURE_HTTP_THROTTLE=1         HTTP only: answer 429 (no JSON-RPC body) to tools/call of "throttled"
    FIXTURE_HTTP_THROTTLE_STATUS=N  ... with HTTP status N instead of 429 (e.g. 500)
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations
from pydantic import BaseModel

TINY_PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
TINY_PNG = base64.b64decode(TINY_PNG_B64)


class Sum(BaseModel):
    sum: int


def _append(path: str | None, line: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()


# --- tool functions ---------------------------------------------------------------------------


def echo(text: str) -> str:
    """Echo the text back."""
    return text


def add(a: int, b: int = 0) -> Sum:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return Sum(sum=a + b)


def search(query: str, limit: int | None = None, tags: list[str] | None = None) -> str:
    """Search the fake index.

    Args:
        query: what to look for
        limit: maximum number of hits
        tags: only hits carrying all of these tags
    """
    return f"query={query} limit={limit} tags={','.join(tags) if tags else None}"


def image() -> list[ImageContent | TextContent]:
    """Return a 1x1 PNG followed by a caption."""
    return [
        ImageContent(type="image", data=TINY_PNG_B64, mime_type="image/png"),
        TextContent(type="text", text="a red pixel"),
    ]


def fail(reason: str) -> str:
    """Fail on purpose with the given reason."""
    raise ToolError(reason)


def crash() -> str:
    """Raise an unexpected exception (the SDK hides its detail from the client)."""
    raise ValueError("secret internal detail")


def _slow(cancel_log: str | None):
    async def slow(seconds: float) -> str:
        """Sleep, then say done."""
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            _append(cancel_log, "slow cancelled")  # synchronous: runs to completion even while cancelled
            raise
        return "done"

    return slow


async def progress(ctx: Context, steps: int = 3) -> str:
    """Report `steps` progress notifications, then finish."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
        await anyio.sleep(0.01)
    return f"progressed {steps}"


async def chatty(ctx: Context, text: str = "hello") -> str:
    """Log `text` at debug, info, notice, warning, error and alert, then a JSON object at info."""
    with warnings.catch_warnings():  # logging is deprecated in 2026-07-28 (SEP-2577), still served
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        for level in ("debug", "info", "notice", "warning", "error", "alert"):
            await ctx.log(level, f"{level}: {text}", logger_name="chatty")  # type: ignore[arg-type]
        await ctx.info({"text": text})
    return "logged"


_AS_PROGRAM = False
"""Whether `main` runs this server as a program (stdio or http), not served in-process."""


def die() -> str:
    """Kill the server process mid-call."""
    if not _AS_PROGRAM:  # served in-process: exiting would end the test run
        raise RuntimeError("die() only exits the fixture when it runs as a program (stdio or http)")
    sys.stdout.flush()
    os._exit(1)


def ephemeral() -> CallToolResult:
    """Listed, but the server answers as if it did not know it."""
    # Byte-identical to MCPServer's own answer for an unknown name (a ToolError raised here
    # would come back prefixed "Error executing tool ephemeral: ...").
    return CallToolResult(content=[TextContent(type="text", text="Unknown tool: ephemeral")], is_error=True)


def protocol_error(code: int = -32602, message: str = "rejected") -> str:
    """Answer tools/call with a JSON-RPC error response (not an isError result)."""
    raise MCPError(code=code, message=message, data={"fixture": "demo"})


def delete_item(item_id: str) -> str:
    """Delete an item by id."""
    return f"deleted {item_id}"


def headers(ctx: Context) -> str:
    """Return the HTTP request headers the server saw (null over stdio)."""
    hdrs = ctx.headers
    return json.dumps(None if hdrs is None else {k.lower(): v for k, v in hdrs.items()}, sort_keys=True)


def bad_output() -> CallToolResult:
    """Declare {"sum": int} as output but return something else."""
    return CallToolResult(
        content=[TextContent(type="text", text='{"wrong": "x"}')],
        structured_content={"wrong": "x"},
    )


def _bad_output_tool() -> Tool:
    # Register with a real output model so outputSchema is published, then drop the model:
    # FuncMetadata reads its fields live, and a schema without a model is advertised but
    # not validated on the server, so the mismatching structuredContent reaches the client.
    tool = Tool.from_function(bad_output, structured_output=False)
    schema = Tool.from_function(add).fn_metadata.output_schema
    tool.fn_metadata.output_schema = schema
    tool.fn_metadata.output_model = None
    return tool


def readme() -> str:
    return "Demo fixture README."


def pixel() -> bytes:
    return TINY_PNG


# --- server -----------------------------------------------------------------------------------


class DemoServer(MCPServer):
    """MCPServer whose first tools/list may be the last one to show FIXTURE_FORGET's tool."""

    forget: str | None = None

    async def list_tools(self):  # type: ignore[override]
        tools = await super().list_tools()
        if self.forget and self._tool_manager.get_tool(self.forget) is not None:
            self.remove_tool(self.forget)
        return tools


def build_tools(cancel_log: str | None = None) -> list[Tool]:
    """The demo tools, in listing order (`slow` appends to `cancel_log` when cancelled)."""
    # structured_output=False: only `add` (and `bad_output`) declare an outputSchema; MCPServer
    # would otherwise publish {"result": str} for every `-> str` tool.
    tools = [Tool.from_function(echo, structured_output=False), Tool.from_function(add)]
    plain = [search, image, fail, crash, protocol_error, _slow(cancel_log), progress, die, ephemeral, headers]
    tools += [Tool.from_function(fn, structured_output=False) for fn in plain]
    tools.append(
        Tool.from_function(
            delete_item,
            structured_output=False,
            title="Delete an item",
            annotations=ToolAnnotations(
                title="Delete an item (annotation title)",
                read_only_hint=False,
                destructive_hint=True,
                idempotent_hint=True,
                open_world_hint=False,
            ),
            meta={"fixture": "demo"},
        )
    )
    tools.append(_bad_output_tool())
    tools.append(Tool.from_function(throttled, structured_output=False))
    return tools


class ListenerBus(InMemorySubscriptionBus):
    """The server's subscriptions/listen bus, which also tells when a stream is open."""

    def __init__(self) -> None:
        super().__init__()
        self.open = 0
        self.changed = anyio.Event()

    def subscribe(self, listener: Any) -> Any:
        unsubscribe = super().subscribe(listener)
        self.open += 1
        self.changed.set()
        closed = False

        def done() -> None:
            nonlocal closed
            if not closed:
                closed = True
                self.open -= 1
            unsubscribe()

        return done


def _grower(server: MCPServer, bus: ListenerBus):
    async def grow(name: str, ctx: Context) -> str:
        """Add a tool named `name` and announce that the tool list changed."""

        def added(text: str = "") -> str:
            return f"{name} text={text}"

        server.add_tool(added, name=name, description=f"Added by grow({name}).", structured_output=False)
        # 2026-07-28 events reach only open subscriptions/listen streams (no replay): announced at
        # once, they reach a client only if its stream was open when connect returned.
        await ctx.notify_tools_changed()  # 2026-07-28: subscriptions/listen streams
        with contextlib.suppress(Exception):  # 2025-11-25: a notification on the session
            await ctx.request_context.session.send_tool_list_changed()
        return f"added {name}"

    return grow


def throttled() -> str:
    """Answered HTTP 429 by the fixture's HTTP front when FIXTURE_HTTP_THROTTLE=1."""
    return "not throttled"


def _http_front(app: Any, token: str | None, throttle: bool, throttle_status: int = 429) -> Any:
    """An ASGI wrapper that answers some requests with an HTTP error, as proxies and gateways do."""

    async def respond(send: Any, status: int) -> None:
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"refused by the fixture's HTTP front"})

    async def front(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if token is not None and dict(scope["headers"]).get(b"authorization") != f"Bearer {token}".encode():
            await respond(send, 401)
            return
        if throttle and b'"name":"throttled"' in body.replace(b" ", b""):
            await respond(send, throttle_status)
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await app(scope, replay, send)

    return front


def build_server(env: Mapping[str, str] | None = None) -> MCPServer:
    """The demo server, configured by the FIXTURE_* switches in `env` (default: the environment).

    Run it as a program (`main`), or pass the object to `mcp.Client(server)` /
    `McpServer.in_process(label, server)` to serve it in the caller's process.
    """
    env = os.environ if env is None else env
    empty = env.get("FIXTURE_TOOLS_EMPTY") == "1"
    bus = ListenerBus()
    server = DemoServer(
        "demo",
        title="Demo fixture",
        version="1.0.0",
        instructions=env.get("FIXTURE_INSTRUCTIONS", "Demo fixture server."),
        tools=[] if empty else build_tools(env.get("FIXTURE_CANCEL_LOG") or None),
        log_level=env.get("FIXTURE_LOG_LEVEL", "CRITICAL"),  # type: ignore[arg-type]
        subscriptions=bus,
    )
    server.forget = env.get("FIXTURE_FORGET") or None
    if not empty:
        server.add_tool(_grower(server, bus), name="grow", structured_output=False)
    if env.get("FIXTURE_CHATTY") == "1":
        server.add_tool(chatty, structured_output=False)
    server.resource("demo://readme", name="readme", mime_type="text/plain")(readme)
    server.resource("demo://pixel.png", name="pixel", mime_type="image/png")(pixel)
    return server


def main(argv: list[str]) -> None:
    global _AS_PROGRAM
    _AS_PROGRAM = True
    if len(argv) < 2 or argv[1] not in ("stdio", "http"):
        raise SystemExit("usage: demo_server.py stdio | http PORT")
    server = build_server()
    if argv[1] == "stdio":
        server.run("stdio")
    else:
        port = int(argv[2])
        token = os.environ.get("FIXTURE_HTTP_TOKEN") or None
        throttle = os.environ.get("FIXTURE_HTTP_THROTTLE") == "1"
        if token is None and not throttle:
            server.run("streamable-http", host="127.0.0.1", port=port)
            return
        import uvicorn

        status = int(os.environ.get("FIXTURE_HTTP_THROTTLE_STATUS", "429"))
        app = _http_front(server.streamable_http_app(host="127.0.0.1"), token, throttle, status)
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv)
