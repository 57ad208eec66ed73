"""One ``mcp.Client`` held open by a supervisor task: the session of one MCP server.

``mcp.Client`` cancels the task that entered it when its transport fails (a server
dying mid-call over Streamable HTTP, for instance). So a client is never entered in a
host's task: ``Session.run`` enters it in a task of the registry's task group that does
nothing else, and callers use ``Session.client`` from their own tasks. ``run`` never
raises (besides cancellation): a failure ends the session and is kept in ``error``.

Transports: stdio through ``stdio.stdio_transport`` (bounded lines, unreadable answers
fail their own request); Streamable HTTP through the SDK's client with the ``wire``
guards around its streams, and the server's ``httpx2`` client (``http_client``: an error
status noted in the caller's own ``Exchange``, answers bounded). A Streamable HTTP session
that negotiated 2026-07-28 also gets a ``LeanPost`` on the same client (``lean``): its
``tools/call`` requests go out as POSTs of toolmesh's own (``lean_post``).

While the session is up it also watches for tool-list changes:
``notifications/tools/list_changed`` on handshake-era sessions (2025-11-25), a
``subscriptions/listen`` stream on 2026-07-28 sessions whose server advertises
``tools.listChanged`` (re-opened after a drop, with a change reported, since events are
not replayed).

A session pinned to 2026-07-28 asks ``server/discover`` once it is open (``_discover``):
the SDK's pin asks nothing, and the server's info and capabilities decide the above.

The server's requests to the client (elicitation, sampling; declared only for the
registry's default callbacks) and its log messages go to the call that caused them
through the session's ``InFlight`` table (``_in_flight``).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from typing import TYPE_CHECKING, Any, Literal, TextIO

import anyio
import anyio.lowlevel
import httpx2
import mcp_types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolmesh._core.errors import ServerConnectionError
from toolmesh.mcp._spec.secrets import Secrets

from .errors import classify
from .http_client import http_client
from .in_flight import InFlight, no_current_call
from .lean_post import LeanPost
from .resource_watch import ResourceWatch
from .server_discover import discover_pinned
from .server_log import ServerLog
from .stdio import stdio_transport
from .tasks import TasksExtension
from .wire import _EXCHANGE, Exchange, GuardedReadStream, GuardedWriteStream, Inbound, exchange

if TYPE_CHECKING:
    from toolmesh._context.asking import HostCallbacks
    from toolmesh.mcp._spec.server import McpServer

__all__ = ["Exchange", "Session", "exchange"]

logger = logging.getLogger("toolmesh.mcp")

CLOSE_GRACE = 5.0
"""Seconds a graceful close may take before the session is cancelled."""
_LISTEN_RETRY = 1.0
_LISTEN_ACK_WAIT = 10.0
"""Seconds connect waits for the first subscriptions/listen acknowledgment before going on without it."""
_LISTEN_RETRY_MAX = 30.0


def _client_info() -> mcp_types.Implementation:
    try:
        version = importlib_metadata.version("toolmesh")
    except importlib_metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        version = "0"
    return mcp_types.Implementation(name="toolmesh", version=version)


CLIENT_INFO = _client_info()
_MODES: dict[str, Literal["auto", "legacy", "2026-07-28"]] = {
    "auto": "auto",
    "2025-11-25": "legacy",
    "2026-07-28": "2026-07-28",
}
"""The SDK client mode for each ``McpServer.protocol``."""


child_errlog: TextIO | None = None
"""When set (by the ``toolmesh`` command, to its log file), every stdio server's stderr goes there."""


@asynccontextmanager
async def _guarded(
    transport: Any,
) -> AsyncIterator[tuple[Any, GuardedWriteStream]]:
    """An SDK transport whose write stream refuses unencodable messages in the sender's task,
    and whose read stream ties an answer with a wrong id to the request it answered."""
    inbound = Inbound()
    async with transport as (read_stream, write_stream):
        yield GuardedReadStream(read_stream, inbound), GuardedWriteStream(write_stream, inbound)


def _child_stderr(stack: AsyncExitStack, spec: McpServer) -> TextIO:
    """Where a stdio server's stderr goes: its spec's ``stderr`` file, else ``child_errlog`` when set,
    else ours when it is a real file.

    Under pytest's capture or in a notebook ``sys.stderr`` has no file descriptor, which
    a child process needs; then the original stderr is used, or /dev/null.

    Raises:
        ServerConnectionError: when the spec's file cannot be opened for appending.
    """
    if spec.stderr is not None:
        try:
            return stack.enter_context(open(spec.stderr, "a", encoding="utf-8"))
        except OSError as exc:
            raise ServerConnectionError(
                spec.label,
                f"cannot open its stderr file {spec.stderr!r} ({exc.strerror or exc}); "
                "fix the path (stderr on the server spec), or leave it out to use the host's stderr",
            ) from None
    if child_errlog is not None:
        return child_errlog
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return stack.enter_context(open(os.devnull, "w"))


@dataclass(eq=False, slots=True)
class Session:
    """One ``mcp.Client`` and the supervisor task (``run``) that holds it open."""

    spec: McpServer
    """The server's spec."""
    generation: int
    """1 for the first session of a connection, then one more per reconnect."""
    on_tools_changed: Callable[[], None]
    """Called when the server says its tool list changed."""
    client: Client | None = None
    """The entered client while the session is up."""
    error: BaseException | None = None
    """Why the session ended, when it failed."""
    dead: bool = False
    """Set once the session can no longer serve calls."""
    served: bool = False
    """Set once the client is entered and the session can serve."""
    closing: bool = False
    """Set when the host closes the session (or gives it up before it served): it is not lost."""
    lost: bool = False
    """Set once its loss was logged (a session that is closing is never lost)."""
    ready: anyio.Event = field(default_factory=anyio.Event)
    """Set when the client is entered (or entering it failed)."""
    stopping: anyio.Event = field(default_factory=anyio.Event)
    """Set to ask the supervisor for a graceful close."""
    done: anyio.Event = field(default_factory=anyio.Event)
    """Set when the supervisor has finished (the client is closed)."""
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    """The supervisor's scope: cancelled when a graceful close is not possible."""
    fault: str | None = None
    """What the server wrote that ended the session's read side, when that happened."""
    handshake: Exchange = field(default_factory=lambda: Exchange())
    """What the HTTP layer saw of the handshake (sent from the supervisor task)."""
    server_log: ServerLog | None = None
    """Where the server's log messages go (the connection's, shared by its sessions)."""
    callbacks: HostCallbacks | None = None
    """The registry's default callbacks: each one present is declared as a client capability."""
    resources: ResourceWatch | None = None
    """The connection's resource subscriptions (shared by its sessions)."""
    lean: LeanPost | None = None
    """The lean client path of a Streamable HTTP session that negotiated 2026-07-28 (``lean_post``), else None."""
    in_flight: InFlight = field(init=False)
    """The calls in flight on this session, to which the server's requests and logs are routed."""
    turns: anyio.Semaphore | None = field(init=False)
    """The spec's ``max_concurrent_calls``: a call holds a turn while it is in flight."""

    def __post_init__(self) -> None:
        self.in_flight = InFlight(self.spec.label, Secrets.of(self.spec))
        limit = self.spec.max_concurrent_calls
        self.turns = None if limit is None else anyio.Semaphore(limit)

    @property
    def label(self) -> str:
        """The server's label."""
        return self.spec.label

    @property
    def closed(self) -> bool:
        """Whether the client's transport has already ended (the server went away while idle).

        Reads a private flag of the SDK's JSON-RPC dispatcher; when the SDK changes, this
        answers False and the next call finds out the usual way (a closed-connection error).
        """
        client = self.client
        if client is None:
            return True
        dispatcher = getattr(client.session, "_dispatcher", None)
        return bool(getattr(dispatcher, "_closed", False))

    async def run(self) -> None:
        """Hold one client open until told to stop; never raise into the registry's task group."""
        _EXCHANGE.set(self.handshake)  # this task's own context: the handshake's requests
        no_current_call()  # what arrives outside a call's own stream belongs to no call by context
        try:
            with self.scope:
                async with AsyncExitStack() as stack:
                    client = await self._enter_client(stack)
                    if self.server_log is not None:
                        await self.server_log.attach(client)
                    self.client = client
                    self.served = True
                    async with anyio.create_task_group() as watchers:
                        if self.resources is not None:
                            watchers.start_soon(self.resources.keep, client)
                        if _wants_listen(client):
                            # Events are not replayed: the session is ready once its first
                            # subscriptions/listen stream is acknowledged (or has failed), so a
                            # change announced right after connect is never lost.
                            listening = anyio.Event()
                            watchers.start_soon(self._listen, client, listening)
                            with anyio.move_on_after(_LISTEN_ACK_WAIT):
                                await listening.wait()
                        self.ready.set()
                        await self.stopping.wait()
                        watchers.cancel_scope.cancel()
        except anyio.get_cancelled_exc_class():
            raise
        except (Exception, BaseExceptionGroup) as exc:
            self.error = exc
            self._report_lost(classify(exc).detail)
        finally:
            # Calls in flight on this session have been answered by the SDK by now: its
            # dispatcher wakes every pending request with CONNECTION_CLOSED when it ends.
            self.dead = True
            if self.server_log is not None and self.client is not None:
                self.server_log.detach(self.client)
            self.client = None
            self.ready.set()
            self.done.set()

    def mark_dead(self, lost: str | None = None) -> None:
        """No more calls on this session; ask the supervisor to close it.

        ``lost`` says why, when the session was lost rather than closed on purpose (a call,
        a listing or a reconnect found it dead): the loss is then logged, once per session.
        """
        if lost is None:
            self.closing = True
        else:
            self._report_lost(lost)
        self.dead = True
        self.stopping.set()

    def _report_lost(self, why: str) -> None:
        """The one warning that a session that served is gone (the gateway prints it as a stderr line)."""
        if self.served and not self.closing and not self.lost:
            self.lost = True
            logger.warning("MCP server %r: session lost: %s", self.label, why)

    async def stop(self) -> None:
        """End the session: gracefully when it is up, by cancellation when not (or too slow)."""
        self.closing = self.dead = True
        if self.client is not None:
            self.stopping.set()
            with anyio.move_on_after(CLOSE_GRACE):
                await self.done.wait()
        self.scope.cancel()
        with anyio.CancelScope(shield=True):
            await self.done.wait()

    async def _enter_client(self, stack: AsyncExitStack) -> Client:
        spec = self.spec
        target: Any
        if spec.transport == "in_process":
            # "legacy": JSON-RPC messages and the handshake, as over a real transport (the SDK's
            # direct in-process path has no framing and drops handshake-era notifications).
            assert spec.server_object is not None  # checked when the spec was made
            mode = "2026-07-28" if spec.protocol == "2026-07-28" else "legacy"
            client = await stack.enter_async_context(Client(spec.server_object, mode=mode, **self._client_options()))
            if mode == "2026-07-28":
                await discover_pinned(client, mode)
            return client
        http: httpx2.AsyncClient | None = None
        if spec.transport == "stdio":
            params = StdioServerParameters(
                command=spec.command or "",
                args=list(spec.args or ()),
                env=dict(spec.env) if spec.env else None,
                cwd=spec.cwd,
            )
            target = stdio_transport(
                params,
                label=spec.label,
                max_message_bytes=spec.max_result_bytes,
                on_fault=self._on_fault,
                errlog=_child_stderr(stack, spec),
                redact=secrets.redact if (secrets := Secrets.of(spec)) else None,
            )
        else:
            http = await stack.enter_async_context(http_client(spec))
            # One SSE event may be as large as a whole answer; the response hook bounds the answer.
            events = spec.max_result_bytes + 1
            target = _guarded(streamable_http_client(spec.url or "", http_client=http, max_sse_event_size=events))
        mode = _MODES[spec.protocol]
        client = await stack.enter_async_context(Client(target, mode=mode, **self._client_options()))
        if mode == "2026-07-28":
            await discover_pinned(client, mode)  # the SDK's pin asks nothing: no server info, no capabilities
        if http is not None and client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            self.lean = LeanPost(client, http, spec.url or "", spec.max_result_bytes + 1, self._on_message)
        return client

    def _client_options(self) -> dict[str, Any]:
        """The ``Client`` options every transport shares: elicitation (form and URL modes, as the
        SDK declares it) and sampling are declared only for the registry's default callbacks."""
        options: dict[str, Any] = {
            "client_info": CLIENT_INFO,
            "message_handler": self._on_message,
            "extensions": [TasksExtension()],
        }
        callbacks = self.callbacks
        if callbacks is not None and callbacks.elicitation is not None:
            options["elicitation_callback"] = self.in_flight.on_elicitation
        if callbacks is not None and callbacks.sampling is not None:
            options["sampling_callback"] = self.in_flight.on_sampling
        return options

    def _on_fault(self, reason: str) -> None:
        """The server's output ended the read side: no more calls here; the next one reconnects."""
        self.fault = reason
        self.mark_dead(lost=reason)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            logger.debug("MCP server %r: transport reported %r", self.label, message)
        elif isinstance(message, mcp_types.ToolListChangedNotification):
            self.on_tools_changed()  # handshake-era sessions (2025-11-25)
        elif isinstance(message, mcp_types.ResourceUpdatedNotification):
            if self.resources is not None:
                self.resources.updated(str(message.params.uri))  # handshake-era sessions
        elif isinstance(message, mcp_types.LoggingMessageNotification):
            if self.server_log is not None:
                self.server_log.emit(message.params)
            await self.in_flight.log(message.params)
        await anyio.lowlevel.checkpoint()

    async def _listen(self, client: Client, listening: anyio.Event) -> None:
        """Forward tool-list changes of a 2026-07-28 session; re-listen (and report) after a drop.

        ``listening`` is set once the first stream is acknowledged or has failed.
        """
        _EXCHANGE.set(None)  # a listen stream is long-lived: no answer-size bound, no status slot
        delay = _LISTEN_RETRY
        resubscribing = False
        while True:
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    listening.set()
                    if resubscribing:
                        self.on_tools_changed()  # no replay: whatever changed meanwhile is fetched again
                    resubscribing, delay = True, _LISTEN_RETRY
                    async for _ in subscription:
                        self.on_tools_changed()
                return  # the server closed the stream gracefully
            except Exception as exc:  # a lost stream must not end the session
                logger.debug("MCP server %r: tools/list_changed subscription ended: %r", self.label, exc)
            finally:
                listening.set()
            await anyio.sleep(delay)
            delay = min(delay * 2, _LISTEN_RETRY_MAX)


def _wants_listen(client: Client) -> bool:
    """On 2026-07-28 change events come only on a ``subscriptions/listen`` stream."""
    tools = client.server_capabilities.tools
    return client.protocol_version in MODERN_PROTOCOL_VERSIONS and tools is not None and bool(tools.list_changed)
