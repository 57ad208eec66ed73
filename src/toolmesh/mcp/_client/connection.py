"""One MCP server's connection: connect, list, call, read, reconnect, close.

A connection owns a succession of sessions (``_session.Session``, one ``mcp.Client``
each, held open by a supervisor task in the registry's task group) and serves calls
from the callers' own tasks. A caller only ever gets a result or a ``ToolExecutionError``:

* the session dies mid-call (the process exits, the endpoint goes away): in-flight calls
  end at once as ``unavailable`` (the SDK answers every pending request when its
  transport ends), and the session is marked dead (a lean POST's failure, ``lean_post``, is
  only its call's, unless the server could not be reached at all);
* the next call reconnects (stdio: a new process; HTTP: a new session) in the
  registry's task group, shared by every caller waiting for it; consecutive failed
  attempts back off (0.5 s doubling to 30 s), during which calls fail fast;
* ``aclose()`` ends the session, closing the client and the stdio child (its process tree);
* tool-list changes the session hears of, reconnects, and a server answering that it
  does not know a tool call ``on_tools_changed``, which the registry uses to refresh
  the server's rows.

Timeouts of calls are the row's (``call_timeout``), applied by dispatch: the SDK
sends ``notifications/cancelled`` (or aborts the HTTP request) when a call's task is
cancelled, so a hanging tool is cancelled on the wire.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc
import mcp_types

from toolmesh._context.context import ToolContext
from toolmesh._core.errors import ErrorKind, ServerConnectionError, ToolExecutionError
from toolmesh._core.metadata import MCP_ARGUMENTS, MCP_META, MCP_RESULT
from toolmesh._core.output import ToolOutput, truncate_text
from toolmesh._rows import mcp_convert as _convert

from . import errors as _errors
from .connect_errors import connect_error
from .connection_secrets import ConnectionSecrets
from .input_rounds import send_call
from .resource_watch import ResourceWatch
from .server_log import ServerLog
from .session import Exchange, Session, exchange
from .tool_listing import discover_tools

if TYPE_CHECKING:
    from toolmesh._context.asking import HostCallbacks
    from toolmesh._rows.rows import McpEntry
    from toolmesh.mcp._spec.secrets import Secrets
    from toolmesh.mcp._spec.server import McpServer

__all__ = ["ConnectionState", "McpConnection"]

logger = logging.getLogger("toolmesh.mcp")

ConnectionState = Literal["idle", "connected", "down", "closed"]
"""``idle`` before ``open()``; ``connected``; ``down`` between a lost session and the
next successful reconnect; ``closed`` after ``aclose()``."""

_BACKOFF_START = 0.5
_BACKOFF_MAX = 30.0
_UNAVAILABLE = "The tool is unavailable right now (its server could not be reached). You may try again later."


class McpConnection:
    """The live session of one MCP server, shared by all its rows (an ``McpCaller``).

    Made and owned by ``ToolRegistry.connect``; hosts read its facts: ``label``, ``spec``, ``state``,
    ``protocol_version``, ``server_info``, ``capabilities``, ``instructions``.
    """

    def __init__(
        self, spec: McpServer, task_group: anyio.abc.TaskGroup, callbacks: HostCallbacks | None = None
    ) -> None:
        """Args:
        spec: The server's spec.
        task_group: Where supervisor and reconnect tasks run (the registry's).
        callbacks: The registry's default callbacks, declared as capabilities.
        """
        self.spec = spec
        self._callbacks = callbacks
        self.label: str = spec.label
        self._task_group = task_group
        self._session: Session | None = None
        self._generation = 0
        self._closed = False
        self._reviving: anyio.Event | None = None
        self._failures = 0
        self._next_attempt = 0.0
        self._last_error: str | None = None
        self._guarded = ConnectionSecrets(spec)  # with the credentials its auth sends
        self.server_log = ServerLog(spec.label, self._guarded.redact if self._guarded else None)
        self.resources = ResourceWatch(spec.label)  # the resources subscribed to, across sessions
        self.reconnects = 0
        """How many times a lost session was replaced by a new one."""
        self.lean = True
        """Whether a 2026-07-28 ``tools/call`` over HTTP is one POST of toolmesh's own (lean client path)."""
        self.protocol_version: str | None = None
        """The negotiated protocol version (``2026-07-28`` or a handshake-era one)."""
        self.server_info: mcp_types.Implementation | None = None
        """The server's name and version, when it identified itself."""
        self.capabilities: mcp_types.ServerCapabilities | None = None
        """What the server said it supports."""
        self.instructions: str | None = None
        """The server's instructions for the model, if any."""
        self.on_tools_changed: Callable[[McpConnection], None] | None = None
        """Called when the tool list may have changed: the server announced it (``notifications/tools/list_changed``,
        or an event on a 2026-07-28 ``subscriptions/listen`` stream), or a lost session was replaced."""

    @property
    def _secrets(self) -> Secrets:
        return self._guarded.secrets

    def __repr__(self) -> str:
        return f"McpConnection(label={self.label!r}, state={self.state!r}, protocol={self.protocol_version!r})"

    @property
    def state(self) -> ConnectionState:
        """Where the connection is in its life."""
        if self._closed:
            return "closed"
        if self._session is not None and not self._session.dead:
            return "connected"
        return "down" if self._generation else "idle"

    # -- sessions --------------------------------------------------------------------

    def _tools_changed(self) -> None:
        if self.on_tools_changed is not None and not self._closed:
            self.on_tools_changed(self)

    def _start(self) -> Session:
        self._generation += 1
        spec, log, asks = self._guarded.spec, self.server_log, self._callbacks
        session = Session(spec, self._generation, self._tools_changed, server_log=log, callbacks=asks)
        session.resources = self.resources
        self._task_group.start_soon(self._run_session, session, name=f"toolmesh MCP session {self.label!r}")
        return session

    async def _run_session(self, session: Session) -> None:
        """Run ``session`` with the secrets kept out of every log record and SDK span meanwhile."""
        with self._guarded.held():
            await session.run()

    def _adopt(self, session: Session) -> None:
        """Make ``session`` the live one and record what the server said about itself."""
        client = session.client
        assert client is not None
        self._session = session
        self.protocol_version = client.protocol_version
        self.server_info = client.server_info
        self.capabilities = client.server_capabilities
        self.instructions = None if client.instructions is None else self._secrets.redact(client.instructions)

    def _mark_dead(self, session: Session, lost: str) -> None:
        """No more calls on ``session``, found dead (``lost``, or its fault, says why; logged once per session)."""
        session.mark_dead(lost=self._secrets.redact(session.fault or lost))
        if self._session is session:
            self._session = None

    # -- connect, reconnect, close -------------------------------------------------

    async def open(self) -> list[mcp_types.Tool]:
        """Connect (handshake) and list every tool, within the spec's ``timeout``.

        Returns:
            The tools, in the server's order.

        Raises:
            ServerConnectionError: when the server cannot be started or reached, the
                handshake or listing fails, or it all takes longer than ``timeout``.
        """
        timeout: float | None = self.spec.timeout
        session = self._start()
        stage = "connecting"
        listing = Exchange()
        try:
            with anyio.fail_after(timeout):
                await session.ready.wait()
                if session.client is None:
                    raise self._connect_error(
                        session.error, http_status=session.handshake.http_status, fault=session.fault
                    )
                self._adopt(session)
                stage = "listing tools (tools/list)"
                with exchange() as listing:
                    tools = await discover_tools(session.client, self.spec, listing)
                    return self._secrets.redact_tools(tools, self.label)
        except TimeoutError:
            self._abandon(session)
            raise ServerConnectionError(
                self.label,
                f"no answer within {timeout:g}s while {stage}; check that the server runs and answers, or "
                "raise timeout= on the server spec",
            ) from None
        except ServerConnectionError as exc:
            self._abandon(session)
            self._secrets.redact_exception(exc)
            raise
        except Exception as exc:
            self._abandon(session)
            status = listing.http_status or session.handshake.http_status
            raise self._connect_error(exc, stage, status, session.fault) from exc
        except BaseException:  # the connect was cancelled: leave nothing running
            with anyio.CancelScope(shield=True):
                await session.stop()
            self._session = None
            raise

    def _abandon(self, session: Session) -> None:
        """Stop a session that failed to connect in the background: the error is due now. The stop (the
        client, the stdio child's grace, terminate, kill) runs in the registry's task group, which ``aclose()``
        waits for, so no process outlives it."""
        session.mark_dead()
        if self._session is session:
            self._session = None
        self._task_group.start_soon(session.stop, name=f"toolmesh MCP stop {self.label!r}")

    def _connect_error(
        self,
        exc: BaseException | None,
        stage: str = "connecting",
        http_status: int | None = None,
        fault: str | None = None,
    ) -> ServerConnectionError:
        return self._secrets.redact_exception(connect_error(self.spec, exc, stage, http_status, fault))

    async def _revive(self) -> Session:
        """A live session: the current one, or a new one made by a (shared) reconnect."""
        if self._closed:
            raise ToolExecutionError(
                f"MCP server {self.label!r} is disconnected", kind=ErrorKind.UNAVAILABLE, retryable=False
            )
        if self._reviving is None:
            wait = self._next_attempt - anyio.current_time()
            if wait > 0:
                raise ToolExecutionError(
                    f"MCP server {self.label!r} is unreachable (last attempt: {self._last_error}); "
                    f"the next reconnect is in {wait:.1f}s",
                    kind=ErrorKind.UNAVAILABLE,
                    model_feedback=_UNAVAILABLE,
                )
            self._reviving = anyio.Event()
            self._task_group.start_soon(self._reconnect, self._reviving, name=f"toolmesh MCP reconnect {self.label!r}")
        await self._reviving.wait()
        session = self._session
        if session is None or session.dead or session.client is None:
            raise ToolExecutionError(
                f"MCP server {self.label!r}: reconnecting failed ({self._last_error})",
                kind=ErrorKind.UNAVAILABLE,
                model_feedback=_UNAVAILABLE,
            )
        return session

    async def _reconnect(self, done: anyio.Event) -> None:
        try:
            old = self._session
            if old is not None:
                self._mark_dead(old, "the connection to the server closed")
            session = self._start()
            with anyio.move_on_after(self.spec.timeout):
                await session.ready.wait()
            if session.client is not None and not self._closed:
                self._adopt(session)
                self._failures = 0
                self._next_attempt = 0.0
                self.reconnects += 1
                logger.info("MCP server %r: reconnected (session %d)", self.label, session.generation)
                self._tools_changed()  # the list may have changed while the server was away
                return
            self._last_error = self._secrets.redact(
                _errors.classify(session.error).detail if session.error is not None else "no answer in time"
            )
            self._failures += 1
            backoff = min(_BACKOFF_START * 2 ** (self._failures - 1), _BACKOFF_MAX)
            self._next_attempt = anyio.current_time() + backoff
            logger.warning(
                "MCP server %r: reconnect failed (%s); next try in %gs", self.label, self._last_error, backoff
            )
            self._abandon(session)  # the waiting callers get their answer now, not after the child's grace
        except Exception:  # pragma: no cover - a bug here must not take the registry down
            logger.exception("MCP server %r: reconnect crashed", self.label)
        finally:
            if self._reviving is done:
                self._reviving = None
            done.set()

    async def _live(self) -> Session:
        session = self._session
        if session is None or session.dead or session.closed:
            return await self._revive()
        return session

    async def aclose(self) -> None:
        """End the session and its stdio child process; calls after this fail as ``unavailable``."""
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.stop()

    # -- calls ---------------------------------------------------------------------

    async def call_tool(self, entry: McpEntry, arguments: dict[str, Any] | None, ctx: ToolContext[Any]) -> ToolOutput:
        """Send ``tools/call`` with the row's wire name; the raw result goes on ``ctx.metadata``.

        Through the SDK session's ``send_request`` (``_input_rounds.send_call``, which answers
        input rounds and runs a task to its result), not ``Client.call_tool``, which checks
        ``structuredContent`` with backtracking ``re`` and may first send its own ``tools/list``:
        the row checks it (``check_output``, RE2). Or, 2026-07-28 over HTTP, as POSTs of toolmesh's own
        (``lean_post``), a failed one failing only this call. Failures name the row the model called.

        Raises:
            ToolExecutionError: ``upstream_error`` for an ``isError`` result (the server's
                text as model feedback), an outputSchema mismatch or a task that ended
                ``failed`` or ``cancelled``, ``not_found`` when
                the server no longer offers the tool, ``unavailable`` when the session is
                lost, and the mapped kind of any other failure.
        """
        metadata = ctx.metadata  # the row already recorded the server label and wire name
        metadata[MCP_ARGUMENTS] = arguments
        try:
            session = await self._live()
        except ToolExecutionError as exc:
            if self._closed:  # disconnected by the host: the tool is gone, not briefly out of reach
                feedback = f"The tool {entry.name!r} is no longer available."
            else:
                later = " You may try again later." if exc.retryable else ""
                feedback = f"The tool {entry.name!r} is unavailable right now (its server could not be reached).{later}"
            raise exc.with_model_feedback(feedback) from exc.__cause__
        with exchange() as sent:
            try:
                raw = await send_call(session, entry, arguments, ctx, self.lean)  # rounds and tasks: to the result
            except ToolExecutionError as exc:  # a task that ended badly, input that could not be given
                raise self._secrets.redact_exception(exc) from None
            except Exception as exc:
                raise self._call_error(exc, session, sent, entry.name) from exc
        raw = self._redact_result(entry, raw)
        metadata[MCP_RESULT] = raw
        if raw.meta:
            metadata[MCP_META] = raw.meta
        if raw.is_error:
            raise self._tool_error(entry, raw)
        entry.check_output(raw)
        try:
            return _convert.call_result_to_output(raw)
        except ValueError as exc:
            raise _errors.unreadable_result(self.label, entry, exc) from exc

    def _redact_result(self, entry: McpEntry, raw: mcp_types.CallToolResult) -> mcp_types.CallToolResult:
        """The result with the spec's secrets starred out: it becomes output, feedback and messages."""
        try:
            return self._secrets.redact_model(raw)
        except ValueError as exc:
            raise _errors.unreadable_result(self.label, entry, exc) from exc

    def _call_error(
        self, exc: Exception, session: Session, sent: Exchange, tool: str, operation: str = "tools/call"
    ) -> ToolExecutionError:
        """The error for a failed request; a lost session is marked dead, a stale catalog refreshed."""
        mapped = _errors.classify(exc, sent.http_status)
        if sent.too_large is None and mapped.session_fatal and not sent.own_post:
            self._mark_dead(session, mapped.detail)
        elif mapped.unknown_tool and operation == "tools/call":
            self._tools_changed()  # the catalog is stale: refresh the server's rows
        error = _errors.map_error(
            exc,
            server=self.label,
            tool=tool,
            operation=operation,
            http_status=sent.http_status,
            fault=None if sent.own_post else session.fault,
            too_large=sent.too_large,
        )
        return self._secrets.redact_exception(error)

    def _tool_error(self, entry: McpEntry, raw: mcp_types.CallToolResult) -> ToolExecutionError:
        text = _convert.error_text(raw)
        tool = entry.wire_name
        if _errors.unknown_tool_text(text, tool):
            self._tools_changed()  # the catalog is stale: refresh the server's rows
            return ToolExecutionError(
                f"MCP server {self.label!r} no longer offers the tool {tool!r} (it answered: {text}); "
                "its rows are being refreshed",
                kind=ErrorKind.NOT_FOUND,
                model_feedback=f"The tool {entry.name!r} is no longer offered by its server.",
            )
        limit = entry.max_presentation_chars
        return ToolExecutionError(
            f"MCP server {self.label!r}, tool {tool!r} reported an error: {text}",
            kind=ErrorKind.UPSTREAM_ERROR,
            model_feedback=text if limit is None else truncate_text(text, limit),
        )

    async def list_tools(self) -> list[mcp_types.Tool]:
        """Every tool the server lists now that the spec's ``include``/``exclude`` keep (all pages, bounded),
        within the spec's ``timeout``.

        Raises:
            ServerConnectionError: when listing fails or takes too long.
        """
        listing = Exchange()
        try:
            with anyio.fail_after(self.spec.timeout):
                session = await self._live()
                assert session.client is not None
                with exchange() as listing:
                    tools = await discover_tools(session.client, self.spec, listing)
                    return self._secrets.redact_tools(tools, self.label)
        except TimeoutError:
            raise ServerConnectionError(
                self.label, f"tools/list did not answer within {self.spec.timeout:g}s"
            ) from None
        except ServerConnectionError as exc:
            self._secrets.redact_exception(exc)
            raise
        except ToolExecutionError as exc:  # no live session, and none could be made
            raise ServerConnectionError(self.label, exc.message) from exc
        except Exception as exc:
            current, status = self._session, listing.http_status
            mapped = _errors.classify(exc, status)
            if current is not None and mapped.session_fatal:
                self._mark_dead(current, mapped.detail)
            fault = current.fault if current is not None else None
            raise self._connect_error(exc, "listing tools (tools/list)", status, fault) from exc

    async def read_resource(self, uri: str) -> ToolOutput:
        """``resources/read`` passed through: the contents as embedded-resource blocks.

        Raises:
            ToolExecutionError: ``not_found`` for an unknown URI, ``unavailable`` when the
                server cannot be reached, ``timeout`` after the spec's ``call_timeout``.
        """
        timeout = self.spec.call_timeout
        session = await self._live()
        assert session.client is not None
        with exchange() as sent:
            try:
                with anyio.fail_after(timeout):
                    result = await session.client.read_resource(uri)
            except Exception as exc:
                raise self._call_error(exc, session, sent, uri, "resources/read") from exc
        try:
            return _convert.resource_contents_to_blocks(self._secrets.redact_model(result).contents)
        except ValueError as exc:
            raise ToolExecutionError(
                f"MCP server {self.label!r}, resources/read {uri!r}: {exc}", kind=ErrorKind.UPSTREAM_ERROR, cause=exc
            ) from exc
