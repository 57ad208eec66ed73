"""An example MCP server, "asking": tools that ask the client for something while they run.

It is written with the official `mcp` SDK's `MCPServer`. Its tools ask the client for user input
(elicitation: a form, or a URL to open), ask the client's model for a completion (sampling), or
send log messages during the call. The guide "Elicitation, sampling and per-call logs" connects it.

Each tool asks the way the negotiated protocol wants: on 2025-11-25 a server-to-client request
mid-call (on the call's own stream, `related_request_id`); on 2026-07-28 an `InputRequiredResult`
the client answers and retries with. The tools never check the client's capabilities, so they
ask even a client that declared none.

The tests run this file too (`tests/fixtures/asking_server.py` loads it).

Run it from the repository root:
    python examples/asking_server.py stdio            # over stdin/stdout, as an MCP host starts it
    python examples/asking_server.py http 8931        # Streamable HTTP at http://127.0.0.1:8931/mcp

From Python, a registry starts it itself:
    McpServer.stdio("ask", sys.executable, ["examples/asking_server.py", "stdio"])

Tools (the server's own names; every answer is JSON text):
    ask_form(message="Your name?")  -> form elicitation (schema {"name": string});
                                       {"action": ..., "content": ...}
    ask_url(url="https://example.com/login")
                                    -> URL elicitation (id "e1"); {"action": ...}
    ask_sample(prompt="Say hi")     -> sampling (max_tokens 50, system prompt "Be brief.");
                                       {"model": ..., "text": ...}
    ask_pair(tag)                   -> waits (up to 30 s) until two ask_pair calls are in the server
                                       at once, then a form elicitation with message "pair <tag>"
    ask_forever()                   -> 2026-07-28: asks again in every round (the client's cap ends it)
    chatty(tag="t")                 -> logs "<level> <tag>" at debug, info, warning and error, then
                                       {"tag": tag} at info (logger "chatty"); answers "logged"
    chatty_pair(tag)                -> waits as ask_pair does, then logs "pair <tag>" at info
    sleepy_ask(seconds=30)          -> form elicitation after which the server sleeps `seconds`
    ask_classic()                   -> `ctx.elicit("Your name?", Name)` on every protocol (the way SDK examples ask):
                                       on 2026-07-28 the SDK fails it (no back-channel); {"action", "name"}
    mismatch()                      -> adds the tool `fresh()` (answers "fresh"), then rejects the call with
                                       JSON-RPC error HEADER_MISMATCH, as a 2026-07-28 server whose tool changed
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

_NAME_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


class _Name(BaseModel):
    name: str


def _modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _answer(ctx: Context, key: str) -> Any:
    responses = ctx.input_responses or {}
    return responses.get(key)


def _form(message: str) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(message=message, requested_schema=_NAME_SCHEMA))


def _elicit_text(result: Any) -> str:
    return json.dumps({"action": result.action, "content": getattr(result, "content", None)})


async def _ask(ctx: Context, key: str, request: types.ElicitRequest | types.CreateMessageRequest) -> Any:
    """Legacy: ask now and return the answer. Modern: the answer of an earlier round, or None."""
    if _modern(ctx):
        return _answer(ctx, key)
    session = ctx.session
    params = request.params
    if isinstance(params, types.ElicitRequestFormParams):
        return await session.elicit_form(params.message, params.requested_schema, related_request_id=ctx.request_id)
    if isinstance(params, types.ElicitRequestURLParams):
        return await session.elicit_url(
            params.message, params.url, params.elicitation_id, related_request_id=ctx.request_id
        )
    assert isinstance(params, types.CreateMessageRequestParams)
    with warnings.catch_warnings():  # deprecated in 2026-07-28 (SEP-2577); the 2025-11-25 way
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        return await session.create_message(
            params.messages,
            max_tokens=params.max_tokens,
            system_prompt=params.system_prompt,
            related_request_id=ctx.request_id,
        )


async def _log(ctx: Context, level: str, data: Any) -> None:
    with warnings.catch_warnings():  # deprecated in 2026-07-28 (SEP-2577), still served
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await ctx.log(level, data, logger_name="chatty")  # type: ignore[arg-type]


def _input_required(key: str, request: Any) -> types.InputRequiredResult:
    return types.InputRequiredResult(input_requests={key: request})


class _Pair:
    """Two calls meet here before asking: both are in flight when either asks."""

    def __init__(self) -> None:
        self.arrived = 0
        self.met = anyio.Event()

    async def meet(self) -> None:
        self.arrived += 1
        if self.arrived % 2 == 0:
            self.met.set()
        with anyio.fail_after(30):
            await self.met.wait()


def build_server(env: Mapping[str, str] | None = None) -> MCPServer:
    """The asking server (no FIXTURE_* switches yet; `env` is accepted like the other fixtures)."""
    del env
    server = MCPServer("asking", title="Asking fixture", version="1.0.0", log_level="CRITICAL")
    pair = _Pair()
    log_pair = _Pair()

    @server.tool()
    async def ask_form(ctx: Context, message: str = "Your name?") -> str | types.InputRequiredResult:
        """Ask the user a form question."""
        request = _form(message)
        answer = await _ask(ctx, "form", request)
        if answer is None:
            return _input_required("form", request)
        return _elicit_text(answer)

    @server.tool()
    async def ask_url(ctx: Context, url: str = "https://example.com/login") -> str | types.InputRequiredResult:
        """Send the user to a URL."""
        request = types.ElicitRequest(
            params=types.ElicitRequestURLParams(message="Please sign in", url=url, elicitation_id="e1")
        )
        answer = await _ask(ctx, "url", request)
        if answer is None:
            return _input_required("url", request)
        return _elicit_text(answer)

    @server.tool()
    async def ask_sample(ctx: Context, prompt: str = "Say hi") -> str | types.InputRequiredResult:
        """Ask the client's model for a completion."""
        message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(messages=[message], max_tokens=50, system_prompt="Be brief.")
        )
        answer = await _ask(ctx, "sample", request)
        if answer is None:
            return _input_required("sample", request)
        content = answer.content
        text = content.text if isinstance(content, types.TextContent) else str(content)
        return json.dumps({"model": answer.model, "text": text})

    @server.tool()
    async def ask_pair(ctx: Context, tag: str) -> str | types.InputRequiredResult:
        """Wait for a second ask_pair call, then ask a form question naming `tag`."""
        request = _form(f"pair {tag}")
        if not (_modern(ctx) and ctx.input_responses):
            await pair.meet()
        answer = await _ask(ctx, "form", request)
        if answer is None:
            return _input_required("form", request)
        return _elicit_text(answer)

    @server.tool()
    async def ask_forever(ctx: Context) -> str | types.InputRequiredResult:
        """Ask in every round (2026-07-28): only the client's round cap ends the call."""
        request = _form("again?")
        answer = await _ask(ctx, "form", request)
        if _modern(ctx):
            return _input_required("form", request)
        return _elicit_text(answer)

    @server.tool()
    async def chatty(ctx: Context, tag: str = "t") -> str:
        """Log at several levels, then answer."""
        for level in ("debug", "info", "warning", "error"):
            await _log(ctx, level, f"{level} {tag}")
        await _log(ctx, "info", {"tag": tag})
        return "logged"

    @server.tool()
    async def chatty_pair(ctx: Context, tag: str) -> str:
        """Wait for a second chatty_pair call, then log naming `tag`."""
        await log_pair.meet()
        await _log(ctx, "info", f"pair {tag}")
        return "logged"

    @server.tool()
    async def sleepy_ask(ctx: Context, seconds: float = 30) -> str | types.InputRequiredResult:
        """Ask a form question, then sleep."""
        request = _form("Still there?")
        answer = await _ask(ctx, "form", request)
        if answer is None:
            return _input_required("form", request)
        await anyio.sleep(seconds)
        return _elicit_text(answer)

    @server.tool()
    async def ask_classic(ctx: Context) -> str:
        """Ask with ctx.elicit whatever the protocol."""
        answer = await ctx.elicit("Your name?", _Name)
        return json.dumps({"action": answer.action, "name": getattr(getattr(answer, "data", None), "name", None)})

    @server.tool()
    async def mismatch() -> str:
        """Add the tool `fresh`, then reject this call as HEADER_MISMATCH."""

        def fresh() -> str:
            """A tool added by `mismatch`."""
            return "fresh"

        server.add_tool(fresh, name="fresh")
        raise MCPError(code=types.HEADER_MISMATCH, message="the tool's headers do not match its schema")

    return server


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in ("stdio", "http"):
        raise SystemExit("usage: asking_server.py stdio | http PORT")
    server = build_server(os.environ)
    if argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[2]))


if __name__ == "__main__":
    main(sys.argv)
