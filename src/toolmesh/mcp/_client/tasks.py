"""MCP tasks: a ``tools/call`` that runs as a task, polled to its result on either protocol.

* **2025-11-25** (tasks in the core protocol): a row whose ``execution.taskSupport`` is
  ``"required"`` (or ``"optional"`` with ``ToolContext.as_task``) sends a task-augmented
  ``tools/call`` (``params.task``), gets a ``CreateTaskResult``, polls ``tasks/get``, then
  fetches the payload with ``tasks/result``. The SDK has the types but no call API, and its
  ``send_request`` checks a ``tools/call`` answer against ``CallToolResult``, which a
  ``CreateTaskResult`` is not: ``_send_unchecked`` is the one reach into SDK internals.
* **2026-07-28** (the ``io.modelcontextprotocol/tasks`` extension): the client declares the
  extension through the SDK (``Client(extensions=[TasksExtension()])``, which puts it in every
  request's client capabilities) and the *server* decides per call whether to answer with a
  task (``resultType: "task"``); ``TasksExtension``'s result claim polls ``tasks/get``, whose
  answer carries the final result or error inline, and answers the task's input requests
  through the client's callbacks (``tasks/update``). ``as_task`` has nothing to ask for here.

While a task runs, each new status (``statusMessage`` when given) reaches ``ctx.progress``.
Polls wait the server's ``pollInterval`` bounded to [``POLL_MIN``, ``POLL_MAX``]. When the
call is cancelled (the host's cancel scope, or the call's timeout, which covers the whole
task) the task is cancelled on the server with ``tasks/cancel`` before the cancellation goes
on. A task that ends ``failed`` or ``cancelled`` is an ``upstream_error`` naming the row.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import anyio
import mcp_types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import TypeAdapter

from toolmesh._context.context import ToolContext
from toolmesh._core.capabilities import TaskSupport
from toolmesh._core.errors import ErrorKind, ToolExecutionError
from toolmesh._core.metadata import MCP_TASK_ID

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.session import ClientSession
    from mcp.shared.dispatcher import ProgressFnT

    from toolmesh._rows.rows import McpEntry

__all__ = ["POLL_MAX", "POLL_MIN", "TASKS_EXTENSION_ID", "TasksExtension", "runs_as_task", "send"]

logger = logging.getLogger("toolmesh.mcp")

TASKS_EXTENSION_ID = "io.modelcontextprotocol/tasks"
POLL_MIN = 0.05
"""Seconds: the shortest wait between two polls, whatever the server suggests."""
POLL_MAX = 5.0
"""Seconds: the longest wait between two polls, so a finished task is noticed soon."""
_POLL_DEFAULT = 0.5
_CANCEL_GRACE = 5.0
"""Seconds ``tasks/cancel`` may take while the call itself is being cancelled."""
_TERMINAL = frozenset({"completed", "failed", "cancelled"})


# -- wire shapes of the 2026-07-28 extension (the SDK ships none) -------------------------


class CreatedTask(mcp_types.Result):
    """A ``tools/call`` answered with a task handle (``resultType: "task"``, 2026-07-28)."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None


class TaskState(mcp_types.Result):
    """A ``tasks/get`` answer (2026-07-28): the task, with its result or error once it ended."""

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class _TaskIdParams(mcp_types.RequestParams):
    task_id: str


class _GetTask(mcp_types.Request[_TaskIdParams, Literal["tasks/get"]]):
    name_param: ClassVar[str | None] = "taskId"  # Streamable HTTP routes tasks/* by Mcp-Name = taskId
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskIdParams


class _UpdateParams(_TaskIdParams):
    input_responses: mcp_types.InputResponses


class _UpdateTask(mcp_types.Request[_UpdateParams, Literal["tasks/update"]]):
    name_param: ClassVar[str | None] = "taskId"
    method: Literal["tasks/update"] = "tasks/update"
    params: _UpdateParams


class _CancelTask(mcp_types.Request[_TaskIdParams, Literal["tasks/cancel"]]):
    name_param: ClassVar[str | None] = "taskId"
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskIdParams


_ANY: TypeAdapter[Any] = TypeAdapter(Any)
_INPUT_REQUESTS: TypeAdapter[dict[str, mcp_types.InputRequest]] = TypeAdapter(dict[str, mcp_types.InputRequest])
_MAX_INPUTS = 10
"""How many input requests one task may make (2026-07-28), like the SDK's cap on input rounds."""


# -- one call's task run ------------------------------------------------------------------


@dataclass(slots=True)
class _Run:
    """What a task run reports to: the call's context and the row it runs for."""

    ctx: ToolContext[Any] | None
    entry: McpEntry | None
    session: ClientSession
    reported: int = 0
    last: tuple[str, str | None] | None = None

    def started(self, task_id: str) -> None:
        if self.ctx is not None:
            self.ctx.metadata[MCP_TASK_ID] = task_id

    async def status(self, status: str, message: str | None) -> None:
        """Report a new status (once per change) as progress: the count of statuses seen so far."""
        if (status, message) == self.last or self.ctx is None:
            return
        self.last = (status, message)
        self.reported += 1
        await self.ctx.report_progress(self.reported, None, f"{status}: {message}" if message else status)

    def ended(self, task_id: str, status: str, detail: str | None) -> ToolExecutionError:
        """The error for a task that ended ``failed`` or ``cancelled`` (or ``completed`` with no result)."""
        verbs = {"failed": "failed", "cancelled": "was cancelled by its server"}
        verb = verbs.get(status, f"ended {status} with no result")
        why = f": {detail}" if detail else ""
        return self._error(f"the task {task_id!r} {verb}{why}", f"{verb}{why}")

    def refused(self, task_id: str, why: str) -> ToolExecutionError:
        """The error for a task toolmesh gives up on (and cancels) because of what it asked."""
        return self._error(
            f"the task {task_id!r} was cancelled: {why}", "could not finish: it needed input that was not given."
        )

    def _error(self, detail: str, feedback: str) -> ToolExecutionError:
        entry = self.entry
        where = f"MCP server {entry.server!r}, tool {entry.wire_name!r}" if entry is not None else "MCP tool"
        row = entry.name if entry is not None else "?"
        return ToolExecutionError(
            f"{where}: {detail}", kind=ErrorKind.UPSTREAM_ERROR, model_feedback=f"The tool {row!r} {feedback}"
        )


_CURRENT: ContextVar[_Run | None] = ContextVar("toolmesh_mcp_task_run", default=None)
"""The running call's ``_Run``, for the claim resolver the SDK calls (``Client.call_tool``)."""


def _wait(milliseconds: int | None) -> float:
    if milliseconds is None:
        return _POLL_DEFAULT
    return min(max(milliseconds / 1000, POLL_MIN), POLL_MAX)


async def _cancel(session: ClientSession, request: mcp_types.Request[Any, Any]) -> None:
    """Send ``tasks/cancel`` while the call is being cancelled: shielded, bounded, best effort."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(_CANCEL_GRACE):
        try:
            await session.send_request(request, _ANY)
        except Exception:  # the call is over either way; the server may already have dropped the task
            return


# -- 2025-11-25 -----------------------------------------------------------------------------


def runs_as_task(entry: McpEntry, ctx: ToolContext[Any], client: Client) -> bool:
    """Whether this call is a task-augmented ``tools/call`` (2025-11-25 only).

    ``required`` rows always are; ``optional`` rows when ``ctx.as_task``; ``forbidden`` rows
    never (``as_task`` is a preference, ignored where the tool does not allow it). On
    2026-07-28 the server decides, so no call is sent as a task from here.
    """
    support = entry.capabilities.task_support
    if support is TaskSupport.FORBIDDEN or client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    return support is TaskSupport.REQUIRED or (support is TaskSupport.OPTIONAL and ctx.as_task)


async def _send_unchecked(
    session: ClientSession, request: mcp_types.Request[Any, Any], progress: ProgressFnT | None
) -> dict[str, Any]:
    """Send ``request`` and return its raw result, without the SDK's per-method result check.

    The one reach into SDK internals (``ClientSession._stamp``, ``._dispatcher``; mcp 2.3.0):
    ``send_request`` validates a ``tools/call`` answer as ``CallToolResult``, and a
    task-augmented call is answered with a ``CreateTaskResult``. ``test_mcp_tasks_sdk``
    fails if the SDK moves these.
    """
    data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    options: dict[str, Any] = {}
    session._stamp(data, options)  # type: ignore[arg-type]
    if progress is not None:
        options["on_progress"] = progress
    raw: dict[str, Any] = await session._dispatcher.send_raw_request(data["method"], data.get("params"), options)  # type: ignore[arg-type]
    return raw


async def _legacy(
    run: _Run, request: mcp_types.CallToolRequest, progress: ProgressFnT | None
) -> mcp_types.CallToolResult:
    """A task-augmented ``tools/call`` polled to its result (2025-11-25)."""
    session = run.session
    task_request = request.model_copy(
        update={"params": request.params.model_copy(update={"task": mcp_types.TaskMetadata()})}
    )
    raw = await _send_unchecked(session, task_request, progress)
    if "task" not in raw:  # the server ran it directly after all
        return mcp_types.CallToolResult.model_validate(raw, by_name=False)
    task = mcp_types.CreateTaskResult.model_validate(raw, by_name=False).task
    task_id = task.task_id
    run.started(task_id)
    ids = mcp_types.GetTaskRequestParams(task_id=task_id)
    try:
        status, message, interval = task.status, task.status_message, task.poll_interval
        await run.status(status, message)
        while status not in _TERMINAL and status != "input_required":
            await anyio.sleep(_wait(interval))
            state = await session.send_request(mcp_types.GetTaskRequest(params=ids), mcp_types.GetTaskResult)
            status, message, interval = state.status, state.status_message, state.poll_interval
            await run.status(status, message)
        if status in ("failed", "cancelled"):
            raise run.ended(task_id, status, message)
        # completed, or input_required: tasks/result blocks until the end, while the server's
        # own requests (elicitation, sampling) reach the client's callbacks meanwhile.
        payload = mcp_types.GetTaskPayloadRequest(params=mcp_types.GetTaskPayloadRequestParams(task_id=task_id))
        if status in _TERMINAL:
            return await session.send_request(payload, mcp_types.CallToolResult)
        async with anyio.create_task_group() as follower:  # the statuses after the input, as progress
            follower.start_soon(_follow, run, ids, interval)
            result = await session.send_request(payload, mcp_types.CallToolResult)
            follower.cancel_scope.cancel()
        if run.last is None or run.last[0] not in _TERMINAL:
            await _follow(run, ids, None, once=True)  # the final status, when the poller missed it
        return result
    except anyio.get_cancelled_exc_class():
        await _cancel(session, mcp_types.CancelTaskRequest(params=mcp_types.CancelTaskRequestParams(task_id=task_id)))
        raise


async def _follow(run: _Run, ids: mcp_types.GetTaskRequestParams, interval: int | None, *, once: bool = False) -> None:
    """Report a task's statuses while ``tasks/result`` is pending (2025-11-25); best effort:
    a failing ``tasks/get`` ends the reports, never the call."""
    try:
        while True:
            if not once:
                await anyio.sleep(_wait(interval))
            state = await run.session.send_request(mcp_types.GetTaskRequest(params=ids), mcp_types.GetTaskResult)
            await run.status(state.status, state.status_message)
            if once or state.status in _TERMINAL:
                return
            interval = state.poll_interval
    except Exception as exc:
        logger.debug("task %r: tasks/get for its status failed: %r", ids.task_id, exc)


# -- 2026-07-28 -----------------------------------------------------------------------------


async def _resolve(created: CreatedTask, claim: ClaimContext) -> mcp_types.CallToolResult:
    """Poll a task handle to its ``CallToolResult`` (the ``TasksExtension`` claim's resolver)."""
    run = _CURRENT.get() or _Run(None, None, claim.session)
    session = claim.session
    task_id = created.task_id
    run.started(task_id)
    ids = _TaskIdParams(task_id=task_id)
    state = TaskState.model_validate(created.model_dump(by_alias=True), by_name=False)
    answered: set[str] = set()
    try:
        await run.status(state.status, state.status_message)
        while state.status not in _TERMINAL:
            if state.status == "input_required" and state.input_requests:
                await _answer(run, task_id, state.input_requests, answered)
            await anyio.sleep(_wait(state.poll_interval_ms))
            state = await session.send_request(_GetTask(params=ids), TaskState)
            await run.status(state.status, state.status_message)
    except (anyio.get_cancelled_exc_class(), ToolExecutionError):
        if state.status not in _TERMINAL:
            await _cancel(session, _CancelTask(params=ids))
        raise
    if state.status == "completed" and state.result is not None:
        return mcp_types.CallToolResult.model_validate(state.result, by_name=False)
    detail = state.status_message
    if state.error is not None:
        detail = str(state.error.get("message") or detail)
    raise run.ended(task_id, state.status, detail)


async def _answer(run: _Run, task_id: str, requests: dict[str, Any], answered: set[str]) -> None:
    """Answer a task's new input requests through the client's callbacks, then ``tasks/update``.

    The callbacks are the ones the SDK uses for a server's requests and for input-required
    rounds (``ClientSession.dispatch_input_request``); a key is answered once per task.
    """
    session = run.session
    pending = _INPUT_REQUESTS.validate_python(
        {key: value for key, value in requests.items() if key not in answered}, by_name=False
    )
    if not pending:
        return
    if len(answered) + len(pending) > _MAX_INPUTS:
        raise run.refused(task_id, f"it asked for input more than {_MAX_INPUTS} times")
    responses: mcp_types.InputResponses = {}
    for key, request in pending.items():
        meta = request.params.meta if request.params is not None else None
        answer = await session.dispatch_input_request(
            ClientRequestContext(session=session, request_id=key, meta=meta), request
        )
        if isinstance(answer, mcp_types.ErrorData):
            raise run.refused(task_id, f"it asked for input ({request.method}) and got none: {answer.message}")
        responses[key] = answer
    answered.update(responses)
    update = _UpdateTask(params=_UpdateParams(task_id=task_id, input_responses=responses))
    await session.send_request(update, _ANY)


class TasksExtension(ClientExtension):
    """The ``io.modelcontextprotocol/tasks`` extension, given to every ``mcp.Client`` toolmesh opens.

    Declares the extension (so a 2026-07-28 server may answer a call with a task) and claims
    the ``resultType: "task"`` shape with a resolver that polls it to its result. The SDK runs
    the resolver itself inside ``Client.call_tool``; toolmesh's calls resolve through the same
    claim (``send``).
    """

    identifier = TASKS_EXTENSION_ID

    CLAIM: ClassVar[ResultClaim[CreatedTask]] = ResultClaim(result_type="task", model=CreatedTask, resolve=_resolve)

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (self.CLAIM,)


# -- the entry point ------------------------------------------------------------------------


async def send(
    client: Client,
    request: mcp_types.CallToolRequest,
    entry: McpEntry,
    ctx: ToolContext[Any],
    progress: ProgressFnT | None,
) -> mcp_types.CallToolResult:
    """Send a row's ``tools/call`` on a 2025-11-25 session; when it runs as a task, poll it to its result.

    Raises:
        ToolExecutionError: ``upstream_error`` when the task ends ``failed`` or ``cancelled``.
        Exception: whatever the SDK raises for the requests (the caller maps it).
    """
    session = client.session
    if runs_as_task(entry, ctx, client):
        return await _legacy(_Run(ctx, entry, session), request, progress)
    return await session.send_request(request, mcp_types.CallToolResult, progress_callback=progress)


async def resolve(
    client: Client, answer: CreatedTask, entry: McpEntry, ctx: ToolContext[Any]
) -> mcp_types.CallToolResult:
    """Poll a task a 2026-07-28 server answered a ``tools/call`` with to its result (the extension's claim).

    Raises:
        ToolExecutionError: ``upstream_error`` when the task ends ``failed`` or ``cancelled``.
        Exception: whatever the SDK raises for the requests (the caller maps it).
    """
    session = client.session
    token = _CURRENT.set(_Run(ctx, entry, session))
    try:
        claim = ClaimContext(session=session, tool_name=entry.wire_name, read_timeout_seconds=None)
        return await TasksExtension.CLAIM.resolve(answer, claim)
    finally:
        _CURRENT.reset(token)
