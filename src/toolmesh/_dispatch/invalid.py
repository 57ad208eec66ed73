"""Finding what is wrong with a call before it runs: unknown name, bad JSON, invalid arguments.

Arguments are checked ahead of dispatch with the row's own validator (native, dynamic
and MCP rows: an MCP row checks its discovered ``inputSchema`` locally), so the check
can never reject a call that dispatch would accept. What only the server can reject
(its ``invalid_arguments`` answer) reaches the invalid-call path after dispatch.
"""

from __future__ import annotations

from toolmesh._core import arguments as _arguments
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ErrorKind, ToolExecutionError
from toolmesh._hooks.actions import InvalidCall, InvalidCallKind
from toolmesh._rows.rows import DynamicEntry, Entry, McpEntry, NativeEntry

from .snapshot import ToolSnapshot


async def unknown_name(snapshot: ToolSnapshot, call: ToolCall) -> InvalidCall:
    """The problem of a call whose name no row of ``snapshot`` has."""
    missing = await snapshot._missing_off_loop(call.name)
    error = ToolExecutionError(str(missing), kind=ErrorKind.NOT_FOUND)
    return InvalidCall(InvalidCallKind.UNKNOWN_NAME, error, None, missing.suggestions)


def unparsed_arguments(entry: Entry, call: ToolCall, problem: str) -> InvalidCall:
    """The problem of a call whose provider arguments did not parse into an object."""
    try:
        _arguments.decode_json(call.arguments)
    except ValueError:
        kind = InvalidCallKind.INVALID_JSON
    else:
        kind = InvalidCallKind.INVALID_ARGUMENTS
    error = _arguments.invalid_arguments(entry.name, problem.rstrip(".") + ".", entry.definition.parameters)
    return InvalidCall(kind, error, entry)


def invalid_arguments(entry: Entry, error: ToolExecutionError) -> InvalidCall:
    """The problem of arguments the row rejected (ahead of dispatch or in it)."""
    return InvalidCall(InvalidCallKind.INVALID_ARGUMENTS, error, entry)


def argument_error(entry: Entry, arguments: str) -> ToolExecutionError | None:
    """The row's own validation error for ``arguments``, or None (also for rows validated remotely)."""
    try:
        match entry:
            case NativeEntry():
                entry.tool.validate(arguments)
            case DynamicEntry() | McpEntry():
                entry.validate(arguments)
    except ToolExecutionError as error:
        return error if error.kind is ErrorKind.INVALID_ARGUMENTS else None
    return None
