"""Errors toolmesh raises or returns.

The hierarchy::

    ToolmeshError                          every error toolmesh raises
    ├── ConfigurationError                 a bad spec, found at register/connect time
    │   ├── DynamicSchemaError             a dynamic tool's schema is not a valid object schema
    │   ├── NameCollisionError             two rows want one model-visible name
    │   ├── ServerConfigError              an MCP server spec or mcpServers file is wrong
    │   ├── ServerConnectionError          an MCP server could not be connected or listed
    │   └── UnsupportedToolError           a row a provider format cannot declare
    ├── EmbeddingError (ValueError)        a host's embedding model answered no usable vectors, or too late
    ├── HookError                          a hook raised or answered with a wrong action
    ├── OutputConversionError (TypeError)  a return value with no content-block form
    ├── UnsupportedContentError (ValueError)  a result a provider format cannot carry
    ├── ToolNotFoundError (KeyError)       a name that is not in the registry
    └── ToolExecutionError                 one tool call went wrong (carried on ToolResult.error)
        └── NoCallbackError                a tool asked for user input or a completion; no callback answers

``ToolExecutionError`` is the only error a tool call produces. ``dispatch`` returns
it on a failed ``ToolResult`` instead of raising; ``raise_for_error()`` and
``dispatch_native`` raise it.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from .suggest import NameIndex

__all__ = [
    "ConfigurationError",
    "DynamicSchemaError",
    "EmbeddingError",
    "ErrorKind",
    "HookError",
    "NameCollisionError",
    "NoCallbackError",
    "OutputConversionError",
    "ServerConfigError",
    "ServerConnectionError",
    "ToolExecutionError",
    "ToolNotFoundError",
    "ToolmeshError",
    "UnsupportedContentError",
    "UnsupportedToolError",
]


class ErrorKind(StrEnum):
    """Why a tool call failed; decides retryability and the default model text."""

    INVALID_ARGUMENTS = "invalid_arguments"
    NOT_FOUND = "not_found"
    PERMISSION_DENIED = "permission_denied"
    REFUSED = "refused"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    UNAVAILABLE = "unavailable"
    UPSTREAM_ERROR = "upstream_error"
    RATE_LIMITED = "rate_limited"
    INTERNAL = "internal"

    @property
    def retryable(self) -> bool:
        """Whether a call that failed this way may succeed if tried again unchanged."""
        return self in _RETRYABLE

    @property
    def default_feedback(self) -> str:
        """What the model is shown when the detail of the failure is withheld."""
        return _DEFAULT_FEEDBACK[self]


_RETRYABLE = frozenset({ErrorKind.TIMEOUT, ErrorKind.UNAVAILABLE, ErrorKind.RATE_LIMITED})

_DEFAULT_FEEDBACK: dict[ErrorKind, str] = {
    ErrorKind.INVALID_ARGUMENTS: "The arguments were not valid for this tool.",
    ErrorKind.NOT_FOUND: "There is no tool by that name.",
    ErrorKind.PERMISSION_DENIED: "Permission to use this tool was denied.",
    ErrorKind.REFUSED: "The call was refused.",
    ErrorKind.TIMEOUT: "The tool did not finish in time. You may try again.",
    ErrorKind.CANCELLED: "The call was cancelled.",
    ErrorKind.UNAVAILABLE: "The tool is unavailable right now. You may try again later.",
    ErrorKind.UPSTREAM_ERROR: "The service behind this tool reported an error.",
    ErrorKind.RATE_LIMITED: "The tool is rate limited. Wait before trying again.",
    ErrorKind.INTERNAL: "The tool failed with an internal error.",
}


class ToolmeshError(Exception):
    """Base class of every error toolmesh raises."""


class ConfigurationError(ToolmeshError):
    """A tool, server spec or option is wrong; raised at registration or connect time."""


class DynamicSchemaError(ConfigurationError):
    """A dynamic tool's JSON Schema is not a valid object schema."""


class NameCollisionError(ConfigurationError):
    """Two rows claim the same model-visible name; the registry is left unchanged."""

    def __init__(self, name: str, existing: str, incoming: str, hint: str | None = None) -> None:
        self.name = name
        self.existing = existing
        self.incoming = incoming
        fix = hint or (
            "Register it under another name, pass replace=True to replace the existing row, "
            "or give one of them an alias."
        )
        super().__init__(f"Tool name {name!r} is already taken by {existing}; cannot add {incoming}. {fix}")


class ServerConnectionError(ConfigurationError):
    """An MCP server could not be started, connected or listed."""

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        super().__init__(f"MCP server {server!r}: {message}")


class ServerConfigError(ConfigurationError):
    """An MCP server spec or ``mcpServers`` file is wrong: names the server, the key, the fix.

    Attributes:
        server: The server's label, when the problem belongs to one server.
        key: The offending key (``"url"``, ``"env.API_KEY"``, ``"args[2]"``), when there is one.
        origin: The config file, when the spec came from one.
    """

    def __init__(
        self,
        problem: str,
        *,
        server: str | None = None,
        key: str | None = None,
        fix: str | None = None,
        origin: str | None = None,
    ) -> None:
        self.problem = problem
        self.server = server
        self.key = key
        self.fix = fix
        self.origin = origin
        parts = []
        if origin is not None:
            parts.append(f"{origin}: ")
        if server is not None:
            parts.append(f"MCP server {server!r}: ")
        if key is not None:
            parts.append(f"key {key!r}: ")
        parts.append(problem.rstrip("."))
        parts.append(".")
        if fix:
            parts.append(f" {fix.rstrip('.')}.")
        super().__init__("".join(parts))

    def with_origin(self, origin: str) -> ServerConfigError:
        """A copy that also names the file the spec came from."""
        return ServerConfigError(self.problem, server=self.server, key=self.key, fix=self.fix, origin=origin)


class UnsupportedToolError(ConfigurationError):
    """A row the provider cannot declare: a name its rule rejects, or another provider's hosted tool."""


class EmbeddingError(ToolmeshError, ValueError):
    """An embedding ranker's model answered something other than one usable vector per text, or
    did not answer in time. The search that asked logs it and answers with the lexical ranking."""


class HookError(ToolmeshError):
    """A hook raised, or returned an action its event does not accept.

    The call fails with kind ``internal`` (the detail goes to the operator, not the
    model) and the turn goes on.
    """

    def __init__(self, hook: object, event: str, message: str) -> None:
        self.hook = hook
        self.event = event
        super().__init__(f"hook {hook_label(hook)}.{event}: {message}")


def hook_label(hook: object) -> str:
    """How messages name a hook: its class."""
    return type(hook).__qualname__


class OutputConversionError(ToolmeshError, TypeError):
    """A return value that has no content-block form (bytes, or not JSON-serialisable)."""


class UnsupportedContentError(ToolmeshError, ValueError):
    """A tool result holds content the provider's result format cannot carry (e.g. an image in Chat Completions).

    Raised by ``tool_results()`` instead of dropping the content. Attributes name the
    result (``call_id``, ``tool_name``) and the block (``block_type``, ``mime_type``).
    """

    def __init__(self, message: str, *, call_id: str, tool_name: str, block_type: str, mime_type: str | None) -> None:
        super().__init__(message)
        self.call_id = call_id
        self.tool_name = tool_name
        self.block_type = block_type
        self.mime_type = mime_type


class ToolNotFoundError(ToolmeshError, KeyError):
    """A name that no row of the registry (or snapshot) has.

    ``name`` is what was asked for, as given (a call's name may be anything a model
    or a host sends, not only a string); ``suggestions`` are up to three close names.
    """

    def __init__(self, name: object, known: Iterable[str] | NameIndex = ()) -> None:
        self.name = name
        index = known if isinstance(known, NameIndex) else NameIndex(known)
        self.suggestions = index.suggest(name)
        super().__init__(_not_found_text(name, self.suggestions))

    def __str__(self) -> str:
        return str(self.args[0])


_SHOWN_NAME = 80
"""Characters of an unknown name repeated in the message; a longer name is cut."""


def _not_found_text(name: object, suggestions: tuple[str, ...]) -> str:
    if not isinstance(name, str):
        return f"Unknown tool: a tool name is a string, got {type(name).__name__} {reprlib.repr(name)}."
    if len(name) > _SHOWN_NAME:
        text = f"Unknown tool {name[:_SHOWN_NAME]!r}... (a name of {len(name)} characters)."
    else:
        text = f"Unknown tool {name!r}."
    if suggestions:
        text += " Did you mean " + " or ".join(repr(s) for s in suggestions) + "?"
    return text


_UNSET: Any = object()


class ToolExecutionError(ToolmeshError):
    """One tool call failed.

    Raise it from a tool to fail on purpose: its message is then shown to the model so
    the model can correct itself. Any other exception a tool raises is wrapped in one of
    kind ``internal`` whose ``model_feedback`` withholds the detail.

    Attributes:
        kind: Why the call failed.
        message: The text for the operator (logs, ``str(err)``).
        retryable: Whether retrying unchanged may succeed; defaults from ``kind``.
        code: An optional machine-readable code (e.g. a JSON-RPC error code).
        http_status: An optional HTTP status, when the failure came over HTTP.
        model_feedback: The text the model is shown.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind = ErrorKind.INTERNAL,
        retryable: bool | None = None,
        code: int | str | None = None,
        http_status: int | None = None,
        model_feedback: str | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = ErrorKind(kind)
        self.message = message
        self.retryable = self.kind.retryable if retryable is None else retryable
        self.code = code
        self.http_status = http_status
        self.model_feedback = message if model_feedback is None else model_feedback
        if cause is not None:
            self.__cause__ = cause

    def _copy(self, model_feedback: str) -> ToolExecutionError:
        clone = ToolExecutionError(
            self.message,
            kind=self.kind,
            retryable=self.retryable,
            code=self.code,
            http_status=self.http_status,
            model_feedback=model_feedback,
        )
        clone.__cause__ = self.__cause__
        clone.__traceback__ = self.__traceback__
        return clone

    def with_redacted_feedback(self) -> ToolExecutionError:
        """A copy whose model feedback is only the default text of its kind."""
        return self._copy(self.kind.default_feedback)

    def with_model_feedback(self, text: str) -> ToolExecutionError:
        """A copy that shows ``text`` to the model instead."""
        return self._copy(text)

    def __repr__(self) -> str:
        return (
            f"ToolExecutionError(kind={self.kind.value!r}, retryable={self.retryable!r}, "
            f"code={self.code!r}, http_status={self.http_status!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            _rebuild_error,
            (self.message, self.kind, self.retryable, self.code, self.http_status, self.model_feedback),
        )


def _rebuild_error(
    message: str,
    kind: ErrorKind,
    retryable: bool,
    code: int | str | None,
    http_status: int | None,
    model_feedback: str,
) -> ToolExecutionError:
    return ToolExecutionError(
        message,
        kind=kind,
        retryable=retryable,
        code=code,
        http_status=http_status,
        model_feedback=model_feedback,
    )


class NoCallbackError(ToolExecutionError):
    """A tool asked the host for user input (elicitation) or a completion (sampling), and no callback answers it.

    Raised by ``ctx.elicit`` / ``ctx.sample`` in a native tool when neither the call's
    context nor the registry has the callback, and it fails an MCP call whose server asked
    what the call has no callback for (on 2026-07-28, where the server cannot be told
    no). Uncaught, the call fails with kind ``unavailable`` (not retryable), and the model
    is told what the tool wanted.

    Attributes:
        request: What was asked: an ``ElicitationRequest`` or a ``SamplingRequest``.
    """

    def __init__(self, message: str, *, request: Any, model_feedback: str) -> None:
        super().__init__(message, kind=ErrorKind.UNAVAILABLE, retryable=False, model_feedback=model_feedback)
        self.request = request

    def __repr__(self) -> str:
        return f"NoCallbackError(kind={self.kind.value!r}, asked={type(self.request).__name__})"
