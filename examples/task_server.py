"""An example MCP server, "tasks": tools that run as MCP tasks, on both protocol versions.

A task is a long call: the server answers at once with a task handle, the client polls the
task's status and fetches the result when it is done. The guide "MCP tasks" connects this
server. The tests run this file too (`tests/fixtures/task_server.py` loads it); the
`FIXTURE_*` environment variables below are their switches.

The SDK's servers have no task runtime, so this one builds task results by hand on the
low-level `mcp.server.Server`:

* 2025-11-25: a middleware answers a task-augmented `tools/call` (params with `"task"`) with a
  `CreateTaskResult` (`{"task": {...}}`); `tasks/get`, `tasks/result`, `tasks/cancel` are
  request handlers. A task-only tool called without `"task"` is a JSON-RPC error.
* 2026-07-28 (the `io.modelcontextprotocol/tasks` extension): the middleware answers a call of a
  task tool with `resultType: "task"` when the request's client capabilities declare the
  extension (else the task-only tools answer -32021); `tasks/get` carries the final result (or
  error) inline; `tasks/cancel` acknowledges.

A task's state follows the clock (no background work): it is `working` for `steps` steps of
FIXTURE_STEP seconds each (status message "step i of n"), then ends as its tool says.

Run it from the repository root:
    python examples/task_server.py stdio            # over stdin/stdout, as an MCP host starts it
    python examples/task_server.py http 8931        # Streamable HTTP at http://127.0.0.1:8931/mcp

From Python, a registry starts it itself:
    McpServer.stdio("lab", sys.executable, ["examples/task_server.py", "stdio"])

Tools:
    research(topic, steps=3)  taskSupport required; outputSchema {topic: string, steps: integer};
                              ends completed with "findings on <topic>"
    convert(text)             taskSupport optional; "<TEXT> (task)" as a task, "<TEXT> (direct)" not
    wait_forever()            taskSupport required; never ends (cancel it)
    doomed()                  taskSupport required; ends failed after one step ("the archive is offline")
    ask()                     taskSupport required; after one step the task needs input: a form
                              elicitation for a name (2026-07-28: `inputRequests` in tasks/get, answered
                              with tasks/update; 2025-11-25: tasks/result sends elicitation/create);
                              ends completed with "Hello, <name>"
    cancelled()               a plain tool: the ids of the tasks cancelled so far, comma-separated ("none")
    polls()                   a plain tool: how many tasks/get requests the server answered

Environment switches:
    FIXTURE_STEP=S            seconds per step (default 0.05)
    FIXTURE_POLL_MS=N         the pollInterval the server suggests, in ms (default 20)
    FIXTURE_SECRET=S          research's text and doomed's failure end with " (S)" (a secret to redact)

In-process: `build_server(env)` returns a fresh server object configured by `env`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
MODERN = "2026-07-28"
STAMP = "2026-01-01T00:00:00Z"
ASK: dict[str, Any] = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
}


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def _tool(name: str, description: str, support: str | None, schema: dict[str, Any], **extra: Any) -> types.Tool:
    execution = types.ToolExecution(task_support=support) if support else None  # type: ignore[arg-type]
    return types.Tool(name=name, description=description, input_schema=schema, execution=execution, **extra)


TOOLS = [
    _tool(
        "research",
        "Research a topic (a task).",
        "required",
        _obj({"topic": {"type": "string"}, "steps": {"type": "integer"}}, ["topic"]),
        output_schema=_obj({"topic": {"type": "string"}, "steps": {"type": "integer"}}, ["topic", "steps"]),
    ),
    _tool("convert", "Upper-case the text (optionally a task).", "optional", _obj({"text": {"type": "string"}})),
    _tool("wait_forever", "Never finishes (a task).", "required", _obj({})),
    _tool("doomed", "Fails (a task).", "required", _obj({})),
    _tool("ask", "Asks for a name (a task).", "required", _obj({})),
    _tool("cancelled", "The ids of the cancelled tasks.", None, _obj({})),
    _tool("polls", "How many tasks/get requests were answered.", None, _obj({})),
]
SUPPORT = {t.name: (t.execution.task_support if t.execution else None) or "forbidden" for t in TOOLS}


def _text(text: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False, **extra}


@dataclass
class Task:
    task_id: str
    tool: str
    arguments: dict[str, Any]
    started: float
    steps: int | None  # None: never ends
    secret: str = ""
    cancelled: bool = False
    answer: str | None = None

    def elapsed_steps(self, step: float) -> int:
        return int((anyio.current_time() - self.started) / step)

    def status(self, step: float) -> str:
        if self.cancelled:
            return "cancelled"
        if self.tool == "ask" and self.answer is None and self.elapsed_steps(step) >= 1:
            return "input_required"
        if self.tool == "ask" and self.answer is not None:
            return "completed"
        if self.steps is None or self.elapsed_steps(step) < self.steps:
            return "working"
        return "failed" if self.tool == "doomed" else "completed"

    def message(self, step: float) -> str:
        status = self.status(step)
        if status == "input_required":
            return "waiting for a name"
        if status == "working":
            total = "?" if self.steps is None else str(self.steps)
            return f"step {self.elapsed_steps(step) + 1} of {total}"
        return f"the archive is offline{self.secret}" if status == "failed" else status

    def result(self) -> dict[str, Any]:
        if self.tool == "research":
            topic = str(self.arguments.get("topic", ""))
            steps = int(self.arguments.get("steps", 3))
            return _text(f"findings on {topic}{self.secret}", structuredContent={"topic": topic, "steps": steps})
        if self.tool == "ask":
            return _text(f"Hello, {self.answer}")
        return _text(f"{str(self.arguments.get('text', '')).upper()} (task)")


class State:
    def __init__(self, env: Mapping[str, str]) -> None:
        self.step = float(env.get("FIXTURE_STEP", "0.05"))
        self.poll_ms = int(env.get("FIXTURE_POLL_MS", "20"))
        self.tasks: dict[str, Task] = {}
        self.cancelled_ids: list[str] = []
        self.polls = 0
        self.secret = f" ({env['FIXTURE_SECRET']})" if env.get("FIXTURE_SECRET") else ""

    def create(self, name: str, arguments: dict[str, Any]) -> Task:
        steps: int | None = {"wait_forever": None, "doomed": 1, "ask": None}.get(name, int(arguments.get("steps", 3)))
        task = Task(f"task-{len(self.tasks) + 1}", name, arguments, anyio.current_time(), steps, self.secret)
        self.tasks[task.task_id] = task
        return task

    def find(self, params: Mapping[str, Any] | None) -> Task:
        task_id = str((params or {}).get("taskId", ""))
        task = self.tasks.get(task_id)
        if task is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Failed to retrieve task: Task not found ({task_id!r})")
        return task

    def shape(self, task: Task, modern: bool) -> dict[str, Any]:
        ttl, poll = ("ttlMs", "pollIntervalMs") if modern else ("ttl", "pollInterval")
        return {
            "taskId": task.task_id,
            "status": task.status(self.step),
            "statusMessage": task.message(self.step),
            "createdAt": STAMP,
            "lastUpdatedAt": STAMP,
            ttl: 60_000,
            poll: self.poll_ms,
        }

    # -- tools/call ----------------------------------------------------------------

    async def middleware(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Answer a call that becomes a task; everything else goes on to the handlers."""
        if ctx.method != "tools/call" or not isinstance(ctx.params, Mapping):
            return await call_next(ctx)
        params: Mapping[str, Any] = ctx.params
        name = str(params.get("name", ""))
        support = SUPPORT.get(name, "forbidden")
        modern = ctx.protocol_version == MODERN
        if modern:
            capabilities = (params.get("_meta") or {}).get(types.CLIENT_CAPABILITIES_META_KEY) or {}
            wants_task = TASKS_EXTENSION in (capabilities.get("extensions") or {}) and support == "required"
            if support == "required" and not wants_task:
                raise MCPError(
                    code=-32021,
                    message="Missing required client capability",
                    data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
                )
        else:
            wants_task = "task" in params and support != "forbidden"
            if support == "required" and not wants_task:
                raise MCPError(code=types.METHOD_NOT_FOUND, message=f"Tool {name!r} can only run as a task")
        if not wants_task:
            return await call_next(ctx)
        task = self.create(name, dict(params.get("arguments") or {}))
        if modern:
            return {"resultType": "task", **self.shape(task, modern=True)}
        return {"task": self.shape(task, modern=False)}

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "convert":
            text = f"{str(args.get('text', '')).upper()} (direct)"
        elif params.name == "cancelled":
            text = ",".join(self.cancelled_ids) or "none"
        elif params.name == "polls":
            text = str(self.polls)
        else:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"Unknown tool: {params.name}")], is_error=True
            )
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(TOOLS))

    # -- tasks/* ---------------------------------------------------------------------

    async def tasks_get(self, ctx: ServerRequestContext[Any], params: types.RequestParams) -> dict[str, Any]:
        task = self.find(ctx.params)
        self.polls += 1
        modern = ctx.protocol_version == MODERN
        shape = self.shape(task, modern)
        if modern:
            shape["resultType"] = "complete"
            if shape["status"] == "completed":
                shape["result"] = task.result()
            elif shape["status"] == "input_required":
                shape["inputRequests"] = {f"name-{task.task_id}": ASK}
            elif shape["status"] == "failed":
                shape["error"] = {"code": types.INTERNAL_ERROR, "message": task.message(self.step)}
        return shape

    async def tasks_result(self, ctx: ServerRequestContext[Any], params: types.RequestParams) -> dict[str, Any]:
        task = self.find(ctx.params)
        if task.tool == "ask" and task.answer is None:
            with anyio.fail_after(60):
                while task.status(self.step) == "working":  # noqa: ASYNC110 (the state follows the clock)
                    await anyio.sleep(self.step)
            form = ASK["params"]
            answer = await ctx.session.elicit_form(form["message"], form["requestedSchema"], ctx.request_id)
            task.answer = str((answer.content or {}).get("name", f"({answer.action})"))
        while task.status(self.step) == "working":  # noqa: ASYNC110 (the state follows the clock)
            await anyio.sleep(self.step)
        status = task.status(self.step)
        if status != "completed":
            raise MCPError(code=types.INTERNAL_ERROR, message=f"Task {status}: {task.message(self.step)}")
        related = {"io.modelcontextprotocol/related-task": {"taskId": task.task_id}}
        return {**task.result(), "_meta": related}

    async def tasks_update(self, ctx: ServerRequestContext[Any], params: types.RequestParams) -> dict[str, Any]:
        task = self.find(ctx.params)
        for response in ((ctx.params or {}).get("inputResponses") or {}).values():
            content = response.get("content") or {}
            task.answer = str(content.get("name", f"({response.get('action')})"))
        return {}

    async def tasks_cancel(self, ctx: ServerRequestContext[Any], params: types.RequestParams) -> dict[str, Any]:
        task = self.find(ctx.params)
        task.cancelled = True
        self.cancelled_ids.append(task.task_id)
        if ctx.protocol_version == MODERN:
            return {}
        return self.shape(task, modern=False)


def build_server(env: Mapping[str, str] | None = None) -> Server[Any]:
    """The task server, configured by the FIXTURE_* switches in `env` (default: the environment)."""
    state = State(os.environ if env is None else env)
    server: Server[Any] = Server("tasks", version="1.0.0", on_list_tools=state.list_tools, on_call_tool=state.call_tool)
    server.middleware.append(state.middleware)
    server.add_request_handler("tasks/get", types.RequestParams, state.tasks_get)
    server.add_request_handler("tasks/result", types.RequestParams, state.tasks_result)
    server.add_request_handler("tasks/cancel", types.RequestParams, state.tasks_cancel)
    server.add_request_handler("tasks/update", types.RequestParams, state.tasks_update)
    return server


async def _run_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def _run_http(server: Server[Any], port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    await uvicorn.Server(config).serve()


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[1] not in ("stdio", "http"):
        raise SystemExit("usage: task_server.py stdio | http PORT")
    server = build_server()
    if argv[1] == "stdio":
        anyio.run(_run_stdio, server)
    else:
        anyio.run(_run_http, server, int(argv[2]))


if __name__ == "__main__":
    main(sys.argv)
