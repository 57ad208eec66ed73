"""The one place where exceptions of the ``mcp`` SDK, anyio and httpx2 become ``ErrorKind``s.

Every failure of a call to an MCP server passes through ``map_error``, most specific
first, the way httpx maps httpcore's exceptions at one choke point. The table::

    MCPError (JSON-RPC error response)       by code:
        -32000 connection closed             unavailable  (the session is gone)
        -32001 request timeout               timeout
        -32002 resource not found            not_found
        -32600 "Session terminated" (HTTP 404 on a live session)
                                             unavailable  (the session is gone)
        -32600 the SDK's "Redirect to ... not followed"
                                             upstream_error  (toolmesh refused to follow
                                             a redirect; the target is not repeated)
        -32601 method not found              not_found
        -32602 invalid params                invalid_arguments, or not_found for
                                             "unknown tool" / "tool ... not found"
                                             (and "unknown resource" on resources/read)
        -32700 with toolmesh's "answer could not be read" text (``_wire.invalid_answer``)
               or the SDK's "Failed to parse JSON response"
                                             upstream_error  (the answer was unreadable)
        -32042 URL elicitation required      permission_denied
        -32022 unsupported protocol version  unavailable
        other codes (-32700, -32603, -32020, -32021, server codes)
                                             upstream_error
    UnsendableMessage (text not encodable)   invalid_arguments (nothing was sent)
    TimeoutError, httpx2.TimeoutException    timeout
    anyio.ClosedResourceError, BrokenResourceError, EndOfStream,
    httpx2.TransportError, OSError           unavailable
    httpx2.HTTPStatusError, and the SDK's generic error for an HTTP error answer when
    the status is known (``http_status=``)   401/403 permission_denied, 408 timeout,
                                             429 rate_limited, 404/5xx unavailable,
                                             other upstream_error
    httpx2.HTTPError, StreamableHTTPError,
    SubscriptionLost                         unavailable
    RuntimeError from an outputSchema check  upstream_error ("does not match its outputSchema")
    pydantic.ValidationError, UnexpectedClaimedResult,
    InputRequiredRoundsExceededError,
    ListenNotSupportedError                  upstream_error
    OAuthFlowError                           permission_denied
    (Base)ExceptionGroup                     its first leaf, mapped by this table
    anything else                            internal

``SESSION_FATAL`` says which of these mean the session is dead, so the connection
reconnects on the next call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
import httpx2
import mcp_types
import pydantic
from mcp.client._input_required import InputRequiredRoundsExceededError
from mcp.client.auth.exceptions import OAuthFlowError
from mcp.client.extension import UnexpectedClaimedResult
from mcp.client.streamable_http import StreamableHTTPError
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError

from toolmesh._core.errors import ErrorKind, ToolExecutionError

from .wire import INVALID_ANSWER, UnsendableMessage

if TYPE_CHECKING:
    from toolmesh._rows.rows import McpEntry

__all__ = [
    "MAPPED_EXCEPTIONS",
    "REFUSED_REDIRECT",
    "MappedError",
    "classify",
    "is_session_fatal",
    "map_error",
    "unknown_tool_text",
    "unreadable_result",
]

RESOURCE_NOT_FOUND = -32002
"""The MCP spec's error code for ``resources/read`` of an unknown URI."""

_UNKNOWN_TOOL = re.compile(r"unknown tool|tool\b.*\bnot found|no such tool|tool not found", re.IGNORECASE)
_UNKNOWN_RESOURCE = re.compile(r"unknown resource|resource\b.*\bnot found|no such resource", re.IGNORECASE)
_OUTPUT_SCHEMA = re.compile(
    r"has an output schema but did not return structured content|invalid structured content|invalid schema for tool",
    re.IGNORECASE,
)

_CODE_KINDS: dict[int, ErrorKind] = {
    mcp_types.CONNECTION_CLOSED: ErrorKind.UNAVAILABLE,
    mcp_types.REQUEST_TIMEOUT: ErrorKind.TIMEOUT,
    RESOURCE_NOT_FOUND: ErrorKind.NOT_FOUND,
    mcp_types.METHOD_NOT_FOUND: ErrorKind.NOT_FOUND,
    mcp_types.INVALID_PARAMS: ErrorKind.INVALID_ARGUMENTS,
    mcp_types.URL_ELICITATION_REQUIRED: ErrorKind.PERMISSION_DENIED,
    mcp_types.UNSUPPORTED_PROTOCOL_VERSION: ErrorKind.UNAVAILABLE,
}

_HTTP_STATUS_KINDS: dict[int, ErrorKind] = {
    401: ErrorKind.PERMISSION_DENIED,
    403: ErrorKind.PERMISSION_DENIED,
    404: ErrorKind.UNAVAILABLE,
    408: ErrorKind.TIMEOUT,
    429: ErrorKind.RATE_LIMITED,
}

MAPPED_EXCEPTIONS: tuple[type[BaseException], ...] = (
    MCPError,
    UnsendableMessage,
    TimeoutError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    httpx2.HTTPStatusError,
    httpx2.TimeoutException,
    httpx2.TransportError,
    httpx2.HTTPError,
    httpx2.StreamError,
    httpx2.InvalidURL,
    httpx2.CookieConflict,
    StreamableHTTPError,
    SubscriptionLost,
    OSError,
    pydantic.ValidationError,
    UnexpectedClaimedResult,
    InputRequiredRoundsExceededError,
    OAuthFlowError,
    ListenNotSupportedError,
    BaseExceptionGroup,
)
"""Every exception type ``classify`` maps by type (a ``RuntimeError`` only by its outputSchema
message; everything else is internal)."""


@dataclass(frozen=True, slots=True)
class MappedError:
    """What an exception means for a call."""

    kind: ErrorKind
    """The error kind."""
    detail: str
    """What went wrong, in words, for messages."""
    code: int | None = None
    """The JSON-RPC error code, when the server answered with one."""
    http_status: int | None = None
    """The HTTP status, when the failure was an HTTP response."""
    session_fatal: bool = False
    """The session is gone: the next call must reconnect."""
    output_schema: bool = False
    """The result did not match the tool's declared outputSchema."""
    unknown_tool: bool = False
    """The server says it does not know the tool."""
    invalid_answer: bool = False
    """The server's answer could not be read (not JSON-RPC, not UTF-8, too large)."""
    redirect: bool = False
    """The server answered with a redirect that was not followed."""


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


_SDK_PARSE_FAILURE = "Failed to parse JSON response: "
"""How the SDK's HTTP transport answers a request whose JSON answer it could not parse."""

_SDK_REDIRECT = "Redirect to "
"""How the SDK's HTTP transport fails a request answered by a redirect it does not follow (to
another origin, or from HTTPS to HTTP); the rest of its text names the target."""
REFUSED_REDIRECT = "the server answered with a redirect, which toolmesh refused to follow"
"""What a caller is told instead: the target may be anywhere (a request-declared server's
redirect could point into the operator's network), so it is not repeated."""

_GENERIC_HTTP_ERRORS = frozenset({"Server returned an error response", "Not Found", "Session terminated"})
"""The SDK's stand-ins for an HTTP error status it does not pass on."""


def _http_status(status: int) -> MappedError:
    kind = _HTTP_STATUS_KINDS.get(status, ErrorKind.UNAVAILABLE if status >= 500 else ErrorKind.UPSTREAM_ERROR)
    fatal = status == 404  # Streamable HTTP: the session is gone; a 5xx fails only its request
    return MappedError(kind, f"the server answered HTTP {status}", http_status=status, session_fatal=fatal)


def _mcp_error(exc: MCPError, http_status: int | None) -> MappedError:
    code = exc.code
    message = exc.message or f"error {code}"
    if http_status is not None and message in _GENERIC_HTTP_ERRORS:
        return _http_status(http_status)
    if code == mcp_types.PARSE_ERROR and message.startswith((INVALID_ANSWER, _SDK_PARSE_FAILURE)):
        reason = message.removeprefix(INVALID_ANSWER).removeprefix(_SDK_PARSE_FAILURE)
        return MappedError(
            ErrorKind.UPSTREAM_ERROR, f"the server's answer could not be read: {reason}", code, invalid_answer=True
        )
    if code == mcp_types.INVALID_REQUEST and message.startswith(_SDK_REDIRECT):
        downgrade = " (from HTTPS to plain HTTP)" if "downgrade" in message else ""
        return MappedError(ErrorKind.UPSTREAM_ERROR, REFUSED_REDIRECT + downgrade, code, redirect=True)
    if code == mcp_types.INVALID_REQUEST and "session terminated" in message.lower():
        return MappedError(ErrorKind.UNAVAILABLE, f"the server ended the session ({message})", code, session_fatal=True)
    if code in (mcp_types.INVALID_PARAMS, mcp_types.METHOD_NOT_FOUND) and _UNKNOWN_TOOL.search(message):
        return MappedError(ErrorKind.NOT_FOUND, message, code, unknown_tool=True)
    kind = _CODE_KINDS.get(code, ErrorKind.UPSTREAM_ERROR)
    if code == mcp_types.CONNECTION_CLOSED:
        return MappedError(kind, "the connection to the server closed", code, session_fatal=True)
    if code == mcp_types.REQUEST_TIMEOUT:
        return MappedError(kind, "the server did not answer in time", code)
    return MappedError(kind, f"the server answered with error {code}: {message}", code)


def classify(exc: BaseException, http_status: int | None = None) -> MappedError:
    """Map one exception (a group: its first leaf) to what it means for the call.

    ``http_status`` is the status of the HTTP error response the exception stands for,
    when known: the SDK reports any non-2xx answer without a JSON-RPC body as a generic
    error (``-32603 Server returned an error response``), which the status makes precise.
    """
    exc = _leaf(exc)
    match exc:
        case MCPError():
            return _mcp_error(exc, http_status)
        case UnsendableMessage():
            return MappedError(ErrorKind.INVALID_ARGUMENTS, str(exc))
        case httpx2.HTTPStatusError():
            return _http_status(exc.response.status_code)
        case httpx2.TimeoutException() | TimeoutError():
            return MappedError(ErrorKind.TIMEOUT, f"timed out ({type(exc).__name__})")
        case (
            httpx2.TransportError()
            | httpx2.HTTPError()
            | httpx2.StreamError()
            | anyio.ClosedResourceError()
            | anyio.BrokenResourceError()
            | anyio.EndOfStream()
            | StreamableHTTPError()
            | SubscriptionLost()
        ):
            text = str(exc) or "connection lost"
            return MappedError(
                ErrorKind.UNAVAILABLE, f"the connection failed ({type(exc).__name__}: {text})", session_fatal=True
            )
        case httpx2.InvalidURL() | httpx2.CookieConflict():
            return MappedError(
                ErrorKind.UNAVAILABLE, f"the HTTP request could not be made ({type(exc).__name__}: {exc})"
            )
        case OSError():
            return MappedError(ErrorKind.UNAVAILABLE, f"{type(exc).__name__}: {exc}", session_fatal=True)
        case OAuthFlowError():
            return MappedError(ErrorKind.PERMISSION_DENIED, f"authorization failed ({type(exc).__name__}: {exc})")
        case pydantic.ValidationError():
            return MappedError(
                ErrorKind.UPSTREAM_ERROR,
                f"the server's answer does not conform to the protocol ({exc.error_count()} validation errors)",
            )
        case UnexpectedClaimedResult() | InputRequiredRoundsExceededError() | ListenNotSupportedError():
            return MappedError(ErrorKind.UPSTREAM_ERROR, f"{type(exc).__name__}: {exc}")
        case RuntimeError() if _OUTPUT_SCHEMA.search(str(exc)):
            return MappedError(
                ErrorKind.UPSTREAM_ERROR,
                f"the result does not match the tool's declared outputSchema: {exc}",
                output_schema=True,
            )
    return MappedError(ErrorKind.INTERNAL, f"{type(exc).__name__}: {exc}")


def unknown_tool_text(text: str, tool: str) -> bool:
    """Whether an ``isError`` text is the server saying it does not know ``tool``."""
    return tool in text and _UNKNOWN_TOOL.search(text) is not None


def is_session_fatal(exc: BaseException) -> bool:
    """Whether ``exc`` means the session is gone (the next call reconnects)."""
    return classify(exc).session_fatal


_FEEDBACK: dict[ErrorKind, str] = {
    ErrorKind.UNAVAILABLE: "The {thing} {tool!r} is unavailable right now (its server could not be reached). "
    "You may try again later.",
    ErrorKind.TIMEOUT: "The {thing} {tool!r} did not answer in time. You may try again.",
    ErrorKind.RATE_LIMITED: "The {thing} {tool!r} is rate limited. Wait before trying again.",
    ErrorKind.PERMISSION_DENIED: "Permission to use the {thing} {tool!r} was denied.",
}


def _thing(operation: str) -> str:
    """What an operation's subject is, in a model text: a tool, a resource, a prompt, or (listings) a server."""
    if operation.endswith("/list"):
        return "server"
    things = {"resources": "resource", "prompts": "prompt", "completion": "prompt or resource template"}
    return things.get(operation.split("/")[0], "tool")


_SUBJECTS: dict[str, str] = {
    "resources/read": "Reading the resource {tool!r}",
    "resources/subscribe": "Subscribing to the resource {tool!r}",
    "resources/unsubscribe": "Unsubscribing from the resource {tool!r}",
    "prompts/get": "Getting the prompt {tool!r}",
    "completion/complete": "Completing an argument of {tool!r}",
}
"""What failed, by operation, in the model text of a server's error answer (else a tool call)."""


def map_error(
    exc: BaseException,
    *,
    server: str,
    tool: str,
    operation: str = "tools/call",
    http_status: int | None = None,
    fault: str | None = None,
    too_large: int | None = None,
) -> ToolExecutionError:
    """The ``ToolExecutionError`` for ``exc`` raised while ``server`` ran ``operation`` for ``tool``.

    Anticipated failures (a JSON-RPC error, an outputSchema mismatch, invalid arguments)
    show their text to the model; transport failures show a short text of their kind;
    unexpected exceptions withhold their detail. The original is the ``__cause__``.

    ``fault`` is what the server wrote that made the session end (said instead of "the
    connection closed"); ``too_large`` is the ``max_result_bytes`` an HTTP answer went
    over (the transport's own error then says little).
    """
    where = f"MCP server {server!r}, {operation} {tool!r}"
    if too_large is not None:
        return ToolExecutionError(
            f"{where}: the answer is larger than max_result_bytes ({too_large} bytes); raise max_result_bytes "
            "on the server spec if such results are expected",
            kind=ErrorKind.UPSTREAM_ERROR,
            model_feedback=f"The tool {tool!r} returned a result too large to read.",
            cause=exc,
        )
    mapped = classify(exc, http_status)
    if fault is not None and mapped.session_fatal:
        mapped = MappedError(mapped.kind, f"{fault}; the session was closed and the next call starts a new one")
    if (
        operation == "resources/read"
        and mapped.code in (mcp_types.INVALID_PARAMS, RESOURCE_NOT_FOUND)
        and _UNKNOWN_RESOURCE.search(mapped.detail)
    ):
        mapped = MappedError(ErrorKind.NOT_FOUND, mapped.detail, mapped.code)
    message = f"{where}: {mapped.detail}"
    if mapped.unknown_tool:
        feedback = f"The tool {tool!r} is no longer offered by its server."
        message = f"{where}: the server no longer offers this tool ({mapped.detail})"
    elif mapped.invalid_answer:
        feedback = f"The tool {tool!r} returned an answer that could not be read."
    elif mapped.redirect:
        subject = _SUBJECTS.get(operation, "The tool {tool!r}").format(tool=tool)
        feedback = f"{subject} failed: {mapped.detail}."
    elif mapped.kind is ErrorKind.INVALID_ARGUMENTS and isinstance(_leaf(exc), UnsendableMessage):
        feedback = f"The arguments for {tool!r} could not be sent: they hold text that is not valid Unicode."
    elif mapped.output_schema:
        feedback = f"The tool {tool!r} returned a result that does not match its declared output schema."
    elif (
        mapped.kind in (ErrorKind.INVALID_ARGUMENTS, ErrorKind.UPSTREAM_ERROR, ErrorKind.NOT_FOUND)
        and mapped.http_status is None
        and isinstance(_leaf(exc), MCPError)
    ):
        subject = _SUBJECTS.get(operation, "The tool {tool!r}").format(tool=tool)
        feedback = f"{subject} failed: {_leaf(exc)}"
    elif mapped.kind in _FEEDBACK:
        feedback = _FEEDBACK[mapped.kind].format(thing=_thing(operation), tool=tool)
    else:
        feedback = mapped.kind.default_feedback
    return ToolExecutionError(
        message,
        kind=mapped.kind,
        code=mapped.code,
        http_status=mapped.http_status,
        model_feedback=feedback,
        cause=exc,
    )


def unreadable_result(server: str, entry: McpEntry, exc: ValueError) -> ToolExecutionError:
    """A ``tools/call`` result toolmesh could not turn into output (the model is told no more)."""
    return ToolExecutionError(
        f"MCP server {server!r}, tools/call {entry.wire_name!r}: {exc}",
        kind=ErrorKind.UPSTREAM_ERROR,
        model_feedback=f"The tool {entry.name!r} returned content that could not be read.",
        cause=exc,
    )
