"""One response: the upstream model called in rounds, gateway-owned calls run between them.

Order of a response's output: an ``mcp_list_tools`` item per declared server not listed
in the input yet; the calls the client approved or denied in this input (``mcp_call``
items); then per round the model's text (``message``) and its calls. A round's calls on
gateway-owned rows (declared servers' and the catalog's) run through the dispatch with
the gateway's hooks, at once unless ``parallel_tool_calls`` is false, and their results
go back to the model. The response ends when the model answers without calls, calls a
client ``function`` tool (``function_call`` items), calls a declared tool that needs
approval (``mcp_approval_request`` items), or a limit is reached (``incomplete``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from openai import AsyncOpenAI

from toolmesh._context.context import ToolContext
from toolmesh._context.identity import Identity
from toolmesh._core.calls import ToolCall
from toolmesh._core.result import Disposition, ToolResult
from toolmesh._dispatch.execution import DispatchSettings
from toolmesh._dispatch.snapshot import ToolSnapshot
from toolmesh._dispatch.turn import stream_tool_calls
from toolmesh._hooks.stack import HookStack
from toolmesh._rows.rows import Entry, McpEntry
from toolmesh._search.matches import AsyncRanker, Ranker
from toolmesh.providers import openai as chat

from .approvals import Approvals
from .events import Events
from .input import Translated
from .items import (
    Usage,
    approval_request_item,
    call_item,
    function_call_item,
    list_tools_item,
    message_item,
    new_id,
    response_object,
)
from .model import Completion, ReplyLimits, complete
from .params import function_tool, response_format, server_descriptions
from .request import ResponsesRequest
from .searching import deferred_search, search_items
from .servers import Declared
from .settings import ResponsesSettings

__all__ = ["Turn"]

GATEWAY_LABEL = "toolmesh"
"""The ``server_label`` of ``mcp_call`` items for the catalog's native rows."""
_PARALLEL = 8
"""Calls of one round running at once (``run_tool_calls``' default bound)."""


@dataclass
class _Pending:
    """A call the gateway runs this round: its chat call and its ``mcp_call`` item."""

    call: ToolCall
    item: dict[str, Any] | None
    index: int
    search: bool = False
    """A call of the search row: reported as ``tool_search_call`` / ``tool_search_output`` items."""


class Turn:
    """Runs one response from translated input to its final status."""

    def __init__(
        self,
        request: ResponsesRequest,
        settings: ResponsesSettings,
        client: AsyncOpenAI,
        rows: dict[str, Entry],
        dispatch: DispatchSettings,
        hooks: HookStack,
        declared: list[Declared],
        translated: Translated,
        approvals: Approvals,
        events: Events,
        identity: Identity | None = None,
        ranker: Ranker | AsyncRanker | None = None,
    ) -> None:
        self.request = request
        self.settings = settings
        self.client = client
        self.snapshot = ToolSnapshot(rows, dispatch, None, deferred_search(rows, declared, ranker))
        self.tracer = dispatch.tracer()
        self.hooks = hooks
        self.declared = {row.name: server for server in declared for row in server.rows}
        self.servers = declared
        self.translated = translated
        self.approvals = approvals
        self.events = events
        self.identity = identity
        """The caller the gateway authenticated: on each call's ``ToolContext``."""
        self.functions = {tool.name for tool in request.function_tools}
        self.output: list[dict[str, Any]] = []
        self.usage = Usage()
        self.id = new_id("resp")
        self.created_at = time.time()
        self.calls_run = 0
        self.retained = 0
        self._functions = [function_tool(tool) for tool in request.function_tools]

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The upstream's ``tools`` now: the rows offered (found deferred rows join), then client functions."""
        tools: list[dict[str, Any]] = [dict(tool) for tool in chat.tools(self.snapshot, invalid_names="skip")]
        return tools + self._functions

    def response(
        self, status: str, incomplete: str | None = None, error: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        usage = self.usage if status != "in_progress" else None
        return response_object(
            self.request,
            self.id,
            self.created_at,
            self.output,
            status=status,
            usage=usage,
            incomplete=incomplete,
            error=error,
        )

    async def _add(self, item: dict[str, Any]) -> int:
        self.output.append(item)
        index = len(self.output) - 1
        await self.events.added(index, item)
        return index

    async def run(self) -> dict[str, Any]:
        """Play the response; the final ``response`` object.

        With a tracer provider installed, the response is one ``invoke_agent`` span whose
        children are each upstream call (``chat {model}``) and each tool call (``execute_tool``).
        """
        tracer = self.tracer
        if tracer is None:
            return await self._play()
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": self.request.model}
        with tracer.start_as_current_span(f"invoke_agent {self.request.model}", attributes=attributes) as span:
            final = await self._play()
            span.set_attribute("gen_ai.response.id", self.id)
            span.set_attribute("toolmesh.responses.status", final["status"])
            span.set_attribute("gen_ai.usage.input_tokens", self.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", self.usage.output_tokens)
            return final

    async def _complete(self, params: dict[str, Any], on_text: Callable[[str], Awaitable[None]] | None) -> Completion:
        tracer = self.tracer
        limits = ReplyLimits(self.settings.max_reply_bytes, self.settings.max_json_depth)
        if tracer is None:
            return await complete(self.client, params, on_text, limits)
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": self.request.model}
        with tracer.start_as_current_span(f"chat {self.request.model}", attributes=attributes) as span:
            completion = await complete(self.client, params, on_text, limits)
            usage = completion.usage
            span.set_attribute("gen_ai.usage.input_tokens", getattr(usage, "prompt_tokens", 0) or 0)
            span.set_attribute("gen_ai.usage.output_tokens", getattr(usage, "completion_tokens", 0) or 0)
            span.set_attribute("gen_ai.response.finish_reasons", [completion.finish_reason or ""])
            return completion

    async def _play(self) -> dict[str, Any]:
        if self.events.streaming:
            await self.events.response("created", self.response("in_progress"))
            await self.events.response("in_progress", self.response("in_progress"))
        for server in self.servers:
            if server.label not in self.translated.listed:
                await self._listing(server)
        messages = self.translated.messages
        about = server_descriptions(self.servers)
        if about is not None:
            at = 1 if messages and messages[0]["role"] == "system" and self.request.instructions else 0
            messages.insert(at, about)
        if self.translated.answered:
            await self._answered()
        rounds = 0
        while True:
            completion = await self._upstream(messages, first=rounds == 0 and not self.translated.answered)
            if completion.finish_reason == "length" and not completion.tool_calls:
                return self.response("incomplete", "max_output_tokens")
            if not completion.tool_calls:
                return self.response("completed")
            if rounds >= self.settings.max_rounds:
                return self.response("incomplete", "max_messages")
            rounds += 1
            messages.append(completion.assistant_message())
            if await self._round(completion, messages):
                return self.response("completed")

    async def _listing(self, server: Declared) -> None:
        item = list_tools_item(server.label, [], None)
        index = await self._add(item)
        await self.events.phase("mcp_list_tools.in_progress", index, item["id"])
        item["tools"], item["error"] = server.listing, server.error
        await self.events.phase(
            "mcp_list_tools.failed" if server.error else "mcp_list_tools.completed", index, item["id"]
        )
        await self.events.done(index, item)

    def _params(self, messages: list[dict[str, Any]], first: bool) -> dict[str, Any]:
        request = self.request
        params: dict[str, Any] = {"model": request.model, "messages": messages}
        tools = self.tools
        choice = request.tool_choice
        if first and isinstance(choice, dict) and choice.get("type") == "mcp":
            label, name = choice.get("server_label"), choice.get("name")
            names = [row.name for row in self.snapshot if self.declared.get(row.name) is not None]
            names = [n for n in names if self.declared[n].label == label]
            row_names = [n for n in names if name is None or self.snapshot[n].wire_name == name]  # type: ignore[union-attr]
            tools = [tool for tool in tools if tool["function"]["name"] in row_names]
            params["tool_choice"] = "required"
        elif first and isinstance(choice, dict) and choice.get("type") == "function":
            params["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
        elif choice == "none" or (first and choice == "required"):
            params["tool_choice"] = choice
        if tools:
            params["tools"] = tools
            if request.parallel_tool_calls is not None:
                params["parallel_tool_calls"] = request.parallel_tool_calls
        wanted = response_format(request.text)
        if wanted is not None:
            params["response_format"] = wanted
        for key, value in (
            ("temperature", request.temperature),
            ("top_p", request.top_p),
            ("max_tokens", request.max_output_tokens),
            ("user", request.user),
        ):
            if value is not None:
                params[key] = value
        return params

    async def _upstream(self, messages: list[dict[str, Any]], first: bool) -> Completion:
        params = self._params(messages, first)
        if not self.events.streaming:
            completion = await self._complete(params, None)
            self.usage.add(completion.usage)
            if completion.text:
                await self._add(message_item(completion.text, new_id("msg")))
            return completion
        item: dict[str, Any] = {}
        index = -1

        async def on_text(delta: str) -> None:
            nonlocal item, index
            if not item:
                item = message_item("", new_id("msg"), status="in_progress")
                item["content"] = []
                index = await self._add(item)
                await self.events.text_started(index, item["id"])
            await self.events.text_delta(index, item["id"], delta)

        completion = await self._complete(params, on_text)
        self.usage.add(completion.usage)
        if item:
            await self.events.text_done(index, item["id"], completion.text)
            item.update(message_item(completion.text, item["id"]))
            await self.events.done(index, item)
        return completion

    async def _round(self, completion: Completion, messages: list[dict[str, Any]]) -> bool:
        """Handle one round's calls; whether the response ends here (client calls or approvals pending)."""
        ends = False
        pending: list[_Pending] = []
        answers: dict[str, str] = {}
        for raw in completion.tool_calls:
            call = chat.parse_tool_calls({"tool_calls": [{**_chat_call(raw)}]})[0]
            name = raw["name"]
            if name in self.functions:
                item = function_call_item(raw["id"], name, raw["arguments"] or "{}")
                index = await self._add(item)
                await self.events.arguments("function_call", index, item)
                await self.events.done(index, item)
                ends = True
                continue
            server = self.declared.get(name)
            row = self.snapshot.get(name)
            if row is not None and row is self.snapshot.search_row:
                item = search_items(self.snapshot, None, raw["id"], raw["arguments"])
                pending.append(_Pending(call, item, await self._add(item), search=True))
                continue
            if server is not None and isinstance(row, McpEntry) and server.needs_approval(row):
                arguments = raw["arguments"] or "{}"
                request_id = self.approvals.request_id(server.label, row.wire_name, arguments)
                item = approval_request_item(request_id, server.label, row.wire_name, arguments)
                index = await self._add(item)
                await self.events.done(index, item)
                ends = True
                continue
            if self.request.max_tool_calls is not None and self.calls_run >= self.request.max_tool_calls:
                answers[raw["id"]] = (
                    f"Not run: this response may make at most {self.request.max_tool_calls} tool calls."
                )
                continue
            self.calls_run += 1
            pending.append(await self._announce(call, row, raw))
        results = await self._run(pending)
        for raw in completion.tool_calls:
            if raw["id"] in results:
                answers[raw["id"]] = results[raw["id"]]
        if ends:
            return True
        for raw in completion.tool_calls:
            messages.append({"role": "tool", "tool_call_id": raw["id"], "content": answers.get(raw["id"], "")})
        return False

    async def _announce(self, call: ToolCall, row: Entry | None, raw: dict[str, str]) -> _Pending:
        """Add the ``mcp_call`` item (in progress) of a call about to run; unknown names get none."""
        if row is None:
            return _Pending(call, None, -1)
        label, name = _label_and_name(row)
        item: dict[str, Any] = {
            "type": "mcp_call",
            "id": new_id("mcp"),
            "server_label": label,
            "name": name,
            "arguments": raw["arguments"] or "{}",
            "output": None,
            "error": None,
            "status": "in_progress",
            "approval_request_id": None,
        }
        index = await self._add(item)
        await self.events.arguments("mcp_call", index, item)
        await self.events.phase("mcp_call.in_progress", index, item["id"])
        return _Pending(call, item, index)

    async def _run(self, pending: list[_Pending]) -> dict[str, str]:
        """Run the calls; each call id's tool message text."""
        if not pending:
            return {}
        concurrency = 1 if self.request.parallel_tool_calls is False else _PARALLEL
        texts: dict[str, str] = {}
        async with stream_tool_calls(
            self.snapshot,
            [p.call for p in pending],
            ctx_factory=self._context,
            hooks=self.hooks,
            max_concurrency=concurrency,
        ) as stream:
            async for done in stream:
                entry = pending[done.index]
                texts[entry.call.id] = await self._finished(entry, done.result)
        return texts

    def _context(self, call: ToolCall) -> ToolContext[Any]:
        return ToolContext(call_id=call.id, identity=self.identity)

    async def _finished(self, entry: _Pending, result: ToolResult) -> str:
        text = chat.tool_results([result], describe_unsupported=True)[0]["content"]
        assert isinstance(text, str)
        if entry.search:
            assert entry.item is not None
            await self.events.done(entry.index, entry.item)
            found = search_items(self.snapshot, result, entry.call.id, None)
            await self.events.done(await self._add(found), found)
            return text
        self.retained += len(text.encode("utf-8"))
        if self.retained > self.settings.max_result_bytes:
            text = f"Error: this response's tool results are over {self.settings.max_result_bytes} bytes; not shown."
        item = entry.item
        if item is None:
            return text
        finished = call_item(
            result,
            item["id"],
            server_label=item["server_label"],
            name=item["name"],
            arguments=item["arguments"],
            approval_request_id=item.get("approval_request_id"),
        )
        item.update(finished)
        failed = result.disposition not in (Disposition.SUCCEEDED, Disposition.SKIPPED)
        await self.events.phase("mcp_call.failed" if failed else "mcp_call.completed", entry.index, item["id"])
        await self.events.done(entry.index, item)
        return text

    async def _answered(self) -> None:
        """Run the approved calls of the input and tell the model about the denied ones."""
        pending: list[_Pending] = []
        messages: dict[str, dict[str, Any]] = {}
        for answer in self.translated.answered:
            request = answer.request
            if not answer.approve:
                reason = f" Reason: {answer.reason}" if answer.reason else ""
                answer.message["content"] = f"The user denied this call of {request['name']!r}.{reason}"
                continue
            name = next(
                (
                    row.name
                    for row in self.snapshot
                    if isinstance(row, McpEntry)
                    and row.server == request["server_label"]
                    and row.wire_name == request["name"]
                    and row.name in self.declared
                ),
                None,
            )
            call = ToolCall(
                id=request["id"],
                name=name or f"{request['server_label']}__{request['name']}",
                arguments=request["arguments"],
            )
            item: dict[str, Any] = {
                "type": "mcp_call",
                "id": new_id("mcp"),
                "server_label": request["server_label"],
                "name": request["name"],
                "arguments": request["arguments"],
                "output": None,
                "error": None,
                "status": "in_progress",
                "approval_request_id": request["id"],
            }
            index = await self._add(item)
            await self.events.arguments("mcp_call", index, item)
            await self.events.phase("mcp_call.in_progress", index, item["id"])
            pending.append(_Pending(call, item, index))
            messages[request["id"]] = answer.message
        for call_id, text in (await self._run(pending)).items():
            messages[call_id]["content"] = text


def _chat_call(raw: dict[str, str]) -> dict[str, Any]:
    return {"id": raw["id"], "type": "function", "function": {"name": raw["name"], "arguments": raw["arguments"]}}


def _label_and_name(row: Entry) -> tuple[str, str]:
    if isinstance(row, McpEntry):
        return row.server, row.wire_name
    return GATEWAY_LABEL, row.name
