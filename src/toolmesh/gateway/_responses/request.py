"""The ``POST /v1/responses`` request: checked into typed fields, or refused as a 400 naming the field.

Only what this endpoint can honour is accepted. Stateful features (``previous_response_id``,
``conversation``, ``store: true``, ``background``) and OpenAI-hosted connectors
(``connector_id``, ``tunnel_id``) are refused with a message saying what to send instead:
the endpoint is stateless, so a client sends the whole input every time. Fields that only
tune OpenAI's own service (``include``, ``truncation``, ``prompt_cache_key``, ...) are
accepted and ignored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolmesh._core.json_limits import DEFAULT_MAX_DEPTH, JsonTooDeep, parse_json
from toolmesh._core.keys import KeyProblem, validate_keys

__all__ = [
    "ApprovalFilter",
    "FunctionToolSpec",
    "McpToolSpec",
    "RequestError",
    "ResponsesRequest",
    "ToolFilter",
    "parse_request",
]


class RequestError(Exception):
    """A request this endpoint refuses: the HTTP status, the message and the offending field."""

    def __init__(self, message: str, param: str | None = None, *, status: int = 400, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.status = status
        self.code = code

    def body(self) -> dict[str, Any]:
        """The Responses API error shape: ``{"error": {"message", "type", "param", "code"}}``."""
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Closed(_Model):
    """A part of a request whose unknown keys are refused: a misspelt filter must not select every tool."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolFilter(_Closed):
    """``allowed_tools`` (object form) and each side of ``require_approval``: tool names and/or read-only."""

    tool_names: list[str] | None = None
    read_only: bool | None = None

    def matches(self, name: str, read_only: bool) -> bool:
        """Whether a tool of that name and read-only hint is selected (every given condition must hold)."""
        if self.tool_names is not None and name not in self.tool_names:
            return False
        return self.read_only is None or self.read_only == read_only


class ApprovalFilter(_Closed):
    """``require_approval: {always: FILTER, never: FILTER}``."""

    always: ToolFilter | None = None
    never: ToolFilter | None = None


class McpToolSpec(_Closed):
    """A request-declared remote MCP server (``{"type": "mcp", ...}``); an unknown key is a 400 (a misspelt
    ``allowed_tools`` must not offer every tool)."""

    type: Literal["mcp"]
    server_label: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    server_url: str | None = None
    connector_id: str | None = None
    tunnel_id: str | None = None
    headers: dict[str, str] | None = None
    authorization: str | None = None
    server_description: str | None = None
    allowed_tools: list[str] | ToolFilter | None = None
    require_approval: Literal["always", "never"] | ApprovalFilter | None = None
    defer_loading: bool | None = None
    allowed_callers: list[str] | None = None

    def allows(self, name: str, read_only: bool) -> bool:
        """Whether ``allowed_tools`` lets the tool through (no ``allowed_tools``: every tool)."""
        match self.allowed_tools:
            case None:
                return True
            case list() as names:
                return name in names
            case ToolFilter() as selected:
                return selected.matches(name, read_only)

    def needs_approval(self, name: str, read_only: bool) -> bool:
        """Whether a call of that tool waits for the client's approval (OpenAI's default: always)."""
        match self.require_approval:
            case None | "always":
                return True
            case "never":
                return False
            case ApprovalFilter(always=always, never=never):
                if always is not None and always.matches(name, read_only):
                    return True
                return not (never is not None and never.matches(name, read_only))
        return True  # pragma: no cover - exhaustive above

    def public(self) -> dict[str, Any]:
        """The tool as echoed in the response's ``tools``: credentials left out."""
        return self.model_dump(mode="json", exclude_none=True, exclude={"headers", "authorization"})


class FunctionToolSpec(_Model):
    """A client-side ``function`` tool: its calls end the turn as ``function_call`` items."""

    type: Literal["function"]
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None

    def public(self) -> dict[str, Any]:
        """The tool as echoed in the response's ``tools``."""
        data = self.model_dump(mode="json", exclude_none=True)
        data.setdefault("parameters", None)
        data.setdefault("strict", None)
        return data


class ResponsesRequest(_Model):
    """The fields of a Responses API request this endpoint reads."""

    model: str = Field(min_length=1)
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    tools: list[Annotated[McpToolSpec | FunctionToolSpec, Field(discriminator="type")]] = Field(default_factory=list)
    tool_choice: Literal["auto", "none", "required"] | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    max_tool_calls: int | None = Field(default=None, ge=1)
    temperature: float | None = None
    top_p: float | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    metadata: dict[str, str] | None = None
    stream: bool | None = None
    store: bool | None = None
    user: str | None = None
    text: dict[str, Any] | None = None

    @property
    def mcp_tools(self) -> list[McpToolSpec]:
        """The declared servers, in request order."""
        return [tool for tool in self.tools if isinstance(tool, McpToolSpec)]

    @property
    def function_tools(self) -> list[FunctionToolSpec]:
        """The client's function tools, in request order."""
        return [tool for tool in self.tools if isinstance(tool, FunctionToolSpec)]


_STATELESS = "this endpoint keeps no responses (it is stateless): send the whole conversation in `input` instead"
_REFUSED_TOP = {
    "previous_response_id": _STATELESS,
    "conversation": _STATELESS,
    "background": "background responses need stored state, which this endpoint does not keep; leave it out",
    "prompt": "stored prompts are OpenAI's; send `instructions` and `input` instead",
}
_TOOL_TYPES = ("mcp", "function")


def parse_request(body: bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> ResponsesRequest:
    """The checked request of a ``POST /v1/responses`` body (UTF-8 JSON nested at most ``max_depth`` levels).

    Raises:
        RequestError: naming the field and what to send instead.
    """
    try:
        data = parse_json(body, max_depth=max_depth)
    except JsonTooDeep:
        raise RequestError(
            f"the body is nested too deeply: this endpoint reads at most {max_depth} levels of arrays and objects"
        ) from None
    except UnicodeDecodeError:
        raise RequestError("the body is not UTF-8 text (JSON is sent as UTF-8)") from None
    except ValueError as exc:
        raise RequestError(f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RequestError("the body must be a JSON object (a Responses API request)")
    for key, why in _REFUSED_TOP.items():
        if data.get(key) not in (None, False):
            raise RequestError(f"`{key}` is not supported: {why}", key)
    if data.get("store") is True:
        raise RequestError(
            "`store: true` is not supported: this endpoint keeps no responses to retrieve later; "
            "send `store: false` (or leave it out) and keep the output items yourself",
            "store",
        )
    tools = data.get("tools")
    if isinstance(tools, list):
        for index, tool in enumerate(tools):
            _check_tool(tool, index)
    request = validate_keys(ResponsesRequest, data, _refuse)
    _check_tool_choice(request)
    return request


def _refuse(problem: KeyProblem) -> RequestError:
    """A request's first problem as a 400 naming the field; for an unknown key, what the object takes."""
    param = problem.key or "body"
    if not problem.unknown:
        return RequestError(f"`{param}`: {problem.error['msg']}", param)
    hint = f"did you mean `{problem.close}`? " if problem.close else ""
    takes = ", ".join(f"`{key}`" for key in problem.known)
    return RequestError(f"`{param}` is not a known key here: {hint}this object takes {takes}", param)


def _check_tool_choice(request: ResponsesRequest) -> None:
    choice = request.tool_choice
    if not isinstance(choice, dict):
        return
    kind = choice.get("type")
    if kind == "function":
        if choice.get("name") not in {tool.name for tool in request.function_tools}:
            raise RequestError(
                f"`tool_choice.name` {choice.get('name')!r} is not one of the request's function tools",
                "tool_choice.name",
            )
    elif kind == "mcp":
        if choice.get("server_label") not in {tool.server_label for tool in request.mcp_tools}:
            raise RequestError(
                f"`tool_choice.server_label` {choice.get('server_label')!r} is not the label of a declared mcp tool",
                "tool_choice.server_label",
            )
    else:
        raise RequestError(
            f"`tool_choice.type` {kind!r} is not supported here: use auto, none, required, "
            '{"type": "function", "name": ...} or {"type": "mcp", "server_label": ..., "name": ...}',
            "tool_choice.type",
        )


def _check_tool(tool: Any, index: int) -> None:
    where = f"tools[{index}]"
    if not isinstance(tool, dict):
        raise RequestError(f"`{where}` must be an object", where)
    kind = tool.get("type")
    if kind not in _TOOL_TYPES:
        raise RequestError(
            f"`{where}.type` {kind!r} is not supported here: this endpoint runs `mcp` tools (remote MCP "
            "servers it reaches itself) and passes `function` tools to the client",
            f"{where}.type",
        )
    if kind != "mcp":
        return
    for key in ("connector_id", "tunnel_id"):
        if tool.get(key) is not None:
            raise RequestError(
                f"`{where}.{key}` is not supported: connectors and tunnels are OpenAI's; give the MCP "
                "server's `server_url` instead",
                f"{where}.{key}",
            )
    if not tool.get("server_url"):
        raise RequestError(f"`{where}.server_url` is required: the MCP server's Streamable HTTP URL", where)
