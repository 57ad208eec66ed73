"""The one place that maps SDK, anyio and httpx2 exceptions to ErrorKinds (toolmesh.mcp._client.errors)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import anyio
import httpx2
import mcp
import mcp_types
import pydantic
import pytest
from mcp.client._input_required import InputRequiredRoundsExceededError
from mcp.client.auth.exceptions import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.client.extension import UnexpectedClaimedResult
from mcp.client.streamable_http import ResumptionError, StreamableHTTPError
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError, NoBackChannelError, UrlElicitationRequiredError

from toolmesh import ErrorKind, ToolExecutionError
from toolmesh.mcp._client.errors import MAPPED_EXCEPTIONS, classify, map_error

_REQUEST = httpx2.Request("POST", "http://127.0.0.1:1/mcp")


def _status(code: int) -> httpx2.HTTPStatusError:
    return httpx2.HTTPStatusError("status", request=_REQUEST, response=httpx2.Response(code, request=_REQUEST))


def _validation_error() -> pydantic.ValidationError:
    try:
        mcp_types.CallToolResult.model_validate({"content": "not a list"})
    except pydantic.ValidationError as exc:
        return exc
    raise AssertionError("expected a validation error")


CASES: list[tuple[BaseException, ErrorKind]] = [
    # JSON-RPC error responses, by code
    (MCPError(mcp_types.CONNECTION_CLOSED, "Connection closed"), ErrorKind.UNAVAILABLE),
    (MCPError(mcp_types.REQUEST_TIMEOUT, "Request 'tools/call' timed out"), ErrorKind.TIMEOUT),
    (MCPError(-32002, "Resource not found"), ErrorKind.NOT_FOUND),
    (MCPError(mcp_types.INVALID_REQUEST, "Session terminated"), ErrorKind.UNAVAILABLE),
    (MCPError(mcp_types.INVALID_REQUEST, "bad request"), ErrorKind.UPSTREAM_ERROR),
    (MCPError(mcp_types.INVALID_REQUEST, "Redirect to http://10.0.0.1/mcp not followed"), ErrorKind.UPSTREAM_ERROR),
    (MCPError(mcp_types.METHOD_NOT_FOUND, "Method not found"), ErrorKind.NOT_FOUND),
    (MCPError(mcp_types.INVALID_PARAMS, "Unknown tool: x"), ErrorKind.NOT_FOUND),
    (MCPError(mcp_types.INVALID_PARAMS, "MCP error -32602: Tool x not found"), ErrorKind.NOT_FOUND),
    (MCPError(mcp_types.INVALID_PARAMS, "q must be a string"), ErrorKind.INVALID_ARGUMENTS),
    (MCPError(mcp_types.INTERNAL_ERROR, "boom"), ErrorKind.UPSTREAM_ERROR),
    (MCPError(mcp_types.PARSE_ERROR, "Failed to parse"), ErrorKind.UPSTREAM_ERROR),
    (MCPError(mcp_types.HEADER_MISMATCH, "header mismatch"), ErrorKind.UPSTREAM_ERROR),
    (MCPError(mcp_types.MISSING_REQUIRED_CLIENT_CAPABILITY, "needs sampling"), ErrorKind.UPSTREAM_ERROR),
    (MCPError(mcp_types.UNSUPPORTED_PROTOCOL_VERSION, "unsupported"), ErrorKind.UNAVAILABLE),
    (MCPError(-31999, "a server's own code"), ErrorKind.UPSTREAM_ERROR),
    (UrlElicitationRequiredError([]), ErrorKind.PERMISSION_DENIED),
    (NoBackChannelError("sampling/createMessage"), ErrorKind.UPSTREAM_ERROR),
    # timeouts
    (TimeoutError(), ErrorKind.TIMEOUT),
    (httpx2.ReadTimeout("read", request=_REQUEST), ErrorKind.TIMEOUT),
    (httpx2.ConnectTimeout("connect"), ErrorKind.TIMEOUT),
    (httpx2.PoolTimeout("pool"), ErrorKind.TIMEOUT),
    (httpx2.WriteTimeout("write"), ErrorKind.TIMEOUT),
    # the session or transport is gone
    (anyio.ClosedResourceError(), ErrorKind.UNAVAILABLE),
    (anyio.BrokenResourceError(), ErrorKind.UNAVAILABLE),
    (anyio.EndOfStream(), ErrorKind.UNAVAILABLE),
    (httpx2.ConnectError("refused"), ErrorKind.UNAVAILABLE),
    (httpx2.ReadError("reset"), ErrorKind.UNAVAILABLE),
    (httpx2.WriteError("broken"), ErrorKind.UNAVAILABLE),
    (httpx2.CloseError("close"), ErrorKind.UNAVAILABLE),
    (httpx2.RemoteProtocolError("Server disconnected without sending a response."), ErrorKind.UNAVAILABLE),
    (httpx2.LocalProtocolError("local"), ErrorKind.UNAVAILABLE),
    (httpx2.ProxyError("proxy"), ErrorKind.UNAVAILABLE),
    (httpx2.UnsupportedProtocol("ftp"), ErrorKind.UNAVAILABLE),
    (httpx2.SSEError("bad event"), ErrorKind.UNAVAILABLE),
    (httpx2.DecodingError("gzip"), ErrorKind.UNAVAILABLE),
    (httpx2.TooManyRedirects("loop"), ErrorKind.UNAVAILABLE),
    (httpx2.StreamClosed(), ErrorKind.UNAVAILABLE),
    (httpx2.StreamConsumed(), ErrorKind.UNAVAILABLE),
    (httpx2.ResponseNotRead(), ErrorKind.UNAVAILABLE),
    (httpx2.RequestNotRead(), ErrorKind.UNAVAILABLE),
    (httpx2.InvalidURL("bad url"), ErrorKind.UNAVAILABLE),
    (httpx2.CookieConflict("two cookies"), ErrorKind.UNAVAILABLE),
    (StreamableHTTPError("stream"), ErrorKind.UNAVAILABLE),
    (ResumptionError("resume"), ErrorKind.UNAVAILABLE),
    (SubscriptionLost("lost"), ErrorKind.UNAVAILABLE),
    (ConnectionResetError("reset"), ErrorKind.UNAVAILABLE),
    (BrokenPipeError("pipe"), ErrorKind.UNAVAILABLE),
    (FileNotFoundError(2, "No such file", "npx"), ErrorKind.UNAVAILABLE),
    (PermissionError(13, "Permission denied"), ErrorKind.UNAVAILABLE),
    # HTTP status answers
    (_status(401), ErrorKind.PERMISSION_DENIED),
    (_status(403), ErrorKind.PERMISSION_DENIED),
    (_status(404), ErrorKind.UNAVAILABLE),
    (_status(408), ErrorKind.TIMEOUT),
    (_status(429), ErrorKind.RATE_LIMITED),
    (_status(400), ErrorKind.UPSTREAM_ERROR),
    (_status(500), ErrorKind.UNAVAILABLE),
    (_status(503), ErrorKind.UNAVAILABLE),
    # the server's answer is wrong
    (RuntimeError("Invalid structured content returned by tool add: 'sum' is required"), ErrorKind.UPSTREAM_ERROR),
    (RuntimeError("Tool add has an output schema but did not return structured content"), ErrorKind.UPSTREAM_ERROR),
    (RuntimeError("Invalid schema for tool add: bad"), ErrorKind.UPSTREAM_ERROR),
    (_validation_error(), ErrorKind.UPSTREAM_ERROR),
    (UnexpectedClaimedResult(mcp_types.Result()), ErrorKind.UPSTREAM_ERROR),
    (InputRequiredRoundsExceededError(3), ErrorKind.UPSTREAM_ERROR),
    (ListenNotSupportedError("2025-11-25"), ErrorKind.UPSTREAM_ERROR),
    (OAuthFlowError("flow"), ErrorKind.PERMISSION_DENIED),
    (OAuthTokenError("token"), ErrorKind.PERMISSION_DENIED),
    (OAuthRegistrationError("registration"), ErrorKind.PERMISSION_DENIED),
    # groups: the first leaf decides
    (ExceptionGroup("g", [httpx2.ConnectError("refused")]), ErrorKind.UNAVAILABLE),
    (BaseExceptionGroup("g", [ExceptionGroup("h", [TimeoutError()])]), ErrorKind.TIMEOUT),
    # anything else is a bug somewhere: internal
    (RuntimeError("Client is already entered; cannot reenter"), ErrorKind.INTERNAL),
    (ValueError("odd"), ErrorKind.INTERNAL),
    (KeyError("k"), ErrorKind.INTERNAL),
]


@pytest.mark.parametrize(("exc", "kind"), CASES, ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else "")
def test_every_exception_maps_to_its_kind(exc: BaseException, kind: ErrorKind) -> None:
    assert classify(exc).kind is kind
    error = map_error(exc, server="docs", tool="search")
    assert isinstance(error, ToolExecutionError) and error.kind is kind
    assert error.__cause__ is exc
    assert "'docs'" in error.message and "'search'" in error.message
    assert error.retryable is kind.retryable


def test_codes_and_statuses_are_kept() -> None:
    error = map_error(MCPError(mcp_types.INTERNAL_ERROR, "db down", data={"x": 1}), server="s", tool="t")
    assert error.code == mcp_types.INTERNAL_ERROR and "db down" in error.model_feedback
    error = map_error(_status(429), server="s", tool="t")
    assert error.http_status == 429 and error.kind is ErrorKind.RATE_LIMITED


def test_a_refused_redirect_says_so_and_names_no_target() -> None:
    sdk_text = "Redirect to http://10.0.0.1/admin not followed; use that URL as the endpoint if it is the intended"
    mapped = classify(MCPError(mcp_types.INVALID_REQUEST, sdk_text))
    assert mapped.redirect and not mapped.session_fatal
    error = map_error(MCPError(mcp_types.INVALID_REQUEST, sdk_text), server="s", tool="t")
    for text in (mapped.detail, error.message, error.model_feedback):
        assert "10.0.0.1" not in text and "admin" not in text
    assert "toolmesh refused to follow" in error.message and "toolmesh refused to follow" in error.model_feedback


def test_unexpected_exceptions_withhold_their_detail_from_the_model() -> None:
    error = map_error(ValueError("secret path /etc/x"), server="s", tool="t")
    assert "secret" in error.message
    assert "secret" not in error.model_feedback
    transport = map_error(httpx2.ConnectError("10.0.0.7 refused"), server="s", tool="t")
    assert "10.0.0.7" not in transport.model_feedback


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, ErrorKind.PERMISSION_DENIED),
        (404, ErrorKind.UNAVAILABLE),
        (429, ErrorKind.RATE_LIMITED),
        (502, ErrorKind.UNAVAILABLE),
    ],
)
def test_the_sdks_generic_http_error_gets_its_status(status: int, kind: ErrorKind) -> None:
    generic = MCPError(mcp_types.INTERNAL_ERROR, "Server returned an error response")
    assert classify(generic).kind is ErrorKind.UPSTREAM_ERROR  # without the status: a server error
    error = map_error(generic, server="s", tool="t", http_status=status)
    assert error.kind is kind and error.http_status == status
    assert f"HTTP {status}" in error.message
    # A JSON-RPC error the server did send is not reinterpreted.
    assert classify(MCPError(mcp_types.INTERNAL_ERROR, "db down"), http_status=status).kind is ErrorKind.UPSTREAM_ERROR


def test_session_fatal_errors() -> None:
    assert classify(MCPError(mcp_types.CONNECTION_CLOSED, "Connection closed")).session_fatal
    assert classify(MCPError(mcp_types.INVALID_REQUEST, "Session terminated")).session_fatal
    assert classify(httpx2.RemoteProtocolError("gone")).session_fatal
    assert not classify(MCPError(mcp_types.REQUEST_TIMEOUT, "timed out")).session_fatal
    assert not classify(MCPError(mcp_types.INVALID_PARAMS, "bad")).session_fatal


def test_unknown_resource_on_read_is_not_found() -> None:
    exc = MCPError(mcp_types.INVALID_PARAMS, "Unknown resource: demo://x")
    assert map_error(exc, server="s", tool="demo://x", operation="resources/read").kind is ErrorKind.NOT_FOUND
    assert map_error(exc, server="s", tool="t").kind is ErrorKind.INVALID_ARGUMENTS


def _exception_classes(modules: list[object]) -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for module in modules:
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__.split(".")[0] in ("mcp", "httpx2"):
                found.add(value)
    return found


def _client_side_modules() -> list[object]:
    modules: list[object] = [httpx2]
    for package in ("mcp.client", "mcp.shared"):
        root = importlib.import_module(package)
        modules.append(root)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
            modules.append(importlib.import_module(info.name))
    return modules


# Exceptions the client side defines that can never come out of a call, with the reason.
_NOT_RAISED_BY_CALLS = {
    "InvalidScopeError": "server-side OAuth validation",
    "InvalidRedirectUriError": "server-side OAuth validation",
    "PathEscapeError": "server-side path checks for resources",
    "InvalidUriTemplate": "raised when a server defines a resource template",
    "MCPDeprecationWarning": "a warning, not an error",
}


def test_a_new_upstream_exception_fails_this_test() -> None:
    """Every exception class of mcp.client, mcp.shared and httpx2 is mapped to a kind of its own.

    When the SDK or httpx2 adds one, this fails until ``_errors`` maps it (or it is listed
    above as one a call cannot raise).
    """
    unmapped = sorted(
        cls.__qualname__
        for cls in _exception_classes(_client_side_modules())
        if not issubclass(cls, MAPPED_EXCEPTIONS) and cls.__name__ not in _NOT_RAISED_BY_CALLS
    )
    assert unmapped == []
    assert mcp.__name__ == "mcp"
