"""A Responses API ``input`` as Chat Completions messages.

- messages of every role (``developer`` becomes ``system``, which every self-hosted server
  accepts); text parts are joined, images kept as ``image_url`` parts of user messages;
- ``function_call`` / ``function_call_output``: an assistant tool call and its tool message;
- echoed ``mcp_call`` items: the call (under this request's exposed name) and its output
  or error, so the model sees what it did earlier;
- ``mcp_list_tools`` items: the label is marked as listed (no new listing is emitted);
- an ``mcp_approval_request`` answered by an ``mcp_approval_response`` (and not already
  run, i.e. no ``mcp_call`` carries its id): checked against its HMAC id, then an
  assistant tool call whose tool message the turn fills in (the call's result, or the
  denial and its reason); unanswered requests are left out;
- ``reasoning`` items are dropped (their content is the upstream's own).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .approvals import Approvals
from .request import RequestError

__all__ = ["Answered", "Translated", "translate"]

_TEXT_PARTS = frozenset({"input_text", "output_text", "text", "summary_text", "refusal"})
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}


@dataclass
class Answered:
    """An approval request the client answered in this input."""

    request: dict[str, Any]
    """The ``mcp_approval_request`` item (``id``, ``server_label``, ``name``, ``arguments``)."""
    approve: bool
    reason: str | None
    message: dict[str, Any]
    """The tool message answering it, whose ``content`` the turn fills in."""


@dataclass
class Translated:
    """What the input becomes."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    listed: set[str] = field(default_factory=set)
    """Labels whose ``mcp_list_tools`` item is already in the input."""
    answered: list[Answered] = field(default_factory=list)


def translate(
    instructions: str | None,
    given: str | list[dict[str, Any]],
    exposed: Callable[[str, str], str],
    approvals: Approvals,
) -> Translated:
    """The Chat Completions messages of a request's ``instructions`` and ``input``.

    Args:
        instructions: The request's ``instructions`` (a leading system message).
        given: The request's ``input``.
        exposed: ``(server_label, tool name) -> the name the model sees`` in this request.
        approvals: Checks the ids of answered approval requests.

    Raises:
        RequestError: naming the input item that cannot be translated.
    """
    out = Translated()
    if instructions:
        out.messages.append({"role": "system", "content": instructions})
    if isinstance(given, str):
        out.messages.append({"role": "user", "content": given})
        return out
    responses: dict[str, tuple[bool, str | None]] = {}
    done: set[str] = set()
    requests: set[str] = set()
    for index, item in enumerate(given):
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "mcp_approval_response":
            target = item.get("approval_request_id")
            if not isinstance(target, str) or not isinstance(item.get("approve"), bool):
                raise RequestError(
                    f"`input[{index}]`: an mcp_approval_response needs `approval_request_id` and `approve`",
                    f"input[{index}]",
                )
            responses[target] = (item["approve"], item.get("reason"))
        elif kind == "mcp_call" and isinstance(item.get("approval_request_id"), str):
            done.add(item["approval_request_id"])
        elif kind == "mcp_approval_request" and isinstance(item.get("id"), str):
            requests.add(item["id"])
    for target in responses:
        if target not in requests and target not in done:
            raise RequestError(
                f"`input`: the mcp_approval_response for {target!r} has no mcp_approval_request item; this "
                "endpoint is stateless: send the request item back with its response",
                "input",
            )
    for index, item in enumerate(given):
        _item(out, index, item, exposed, approvals, responses, done)
    return out


def _item(
    out: Translated,
    index: int,
    item: Any,
    exposed: Callable[[str, str], str],
    approvals: Approvals,
    responses: dict[str, tuple[bool, str | None]],
    done: set[str],
) -> None:
    where = f"input[{index}]"
    if not isinstance(item, dict):
        raise RequestError(f"`{where}` must be an object", where)
    kind: Any = item.get("type", "message" if "role" in item else None)
    match kind:
        case "message":
            out.messages.append(_message(item, where))
        case "function_call":
            _call(out, _text(item, "call_id", where), _text(item, "name", where), item.get("arguments") or "{}")
        case "function_call_output":
            out.messages.append(
                {"role": "tool", "tool_call_id": _text(item, "call_id", where), "content": _output(item.get("output"))}
            )
        case "mcp_list_tools":
            out.listed.add(_text(item, "server_label", where))
        case "mcp_call":
            name = exposed(_text(item, "server_label", where), _text(item, "name", where))
            _call(out, _text(item, "id", where), name, item.get("arguments") or "{}")
            out.messages.append({"role": "tool", "tool_call_id": item["id"], "content": _mcp_output(item)})
        case "mcp_approval_request":
            request_id = item.get("id")
            if request_id not in responses or request_id in done:
                return
            label, wire, arguments = item.get("server_label"), item.get("name"), item.get("arguments")
            if not approvals.verify(request_id, label, wire, arguments):
                raise RequestError(
                    f"`{where}`: this mcp_approval_request was not made by this gateway for this call (its id "
                    "does not match its server_label, name and arguments); send the item back unchanged, "
                    "or the gateway restarted / has another secret: set responses.secretEnv so approvals "
                    "survive restarts (an approval request is also refused once it is a day old)",
                    where,
                )
            assert isinstance(label, str) and isinstance(wire, str) and isinstance(arguments, str)
            _call(out, request_id, exposed(label, wire), arguments)
            message = {"role": "tool", "tool_call_id": request_id, "content": ""}
            out.messages.append(message)
            approve, reason = responses[request_id]
            out.answered.append(Answered(dict(item), approve, reason, message))
        case "mcp_approval_response" | "reasoning":
            return
        case _:
            raise RequestError(
                f"`{where}.type` {kind!r} is not supported here: send messages, function calls and their "
                "outputs, and the mcp items this endpoint returned",
                f"{where}.type",
            )


def _text(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise RequestError(f"`{where}.{key}` must be a non-empty string", f"{where}.{key}")
    return value


def _call(out: Translated, call_id: str, name: str, arguments: Any) -> None:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)},
    }
    last = out.messages[-1] if out.messages else None
    if last is not None and last["role"] == "assistant":
        last.setdefault("tool_calls", []).append(call)
    else:
        out.messages.append({"role": "assistant", "content": None, "tool_calls": [call]})


def _message(item: dict[str, Any], where: str) -> dict[str, Any]:
    role = _ROLES.get(item.get("role", ""))
    if role is None:
        raise RequestError(f"`{where}.role` must be user, assistant, system or developer", f"{where}.role")
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list):
        raise RequestError(f"`{where}.content` must be a string or a list of parts", f"{where}.content")
    parts: list[dict[str, Any]] = []
    for number, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _TEXT_PARTS:
            parts.append({"type": "text", "text": part.get("text") or part.get("refusal") or ""})
        elif kind == "input_image" and role == "user" and isinstance(part.get("image_url"), str):
            image = {"url": part["image_url"], "detail": part.get("detail") or "auto"}
            parts.append({"type": "image_url", "image_url": image})
        else:
            raise RequestError(
                f"`{where}.content[{number}]`: a {kind!r} part is not supported here (text parts, and images "
                "given by image_url in user messages, are)",
                f"{where}.content[{number}]",
            )
    if all(part["type"] == "text" for part in parts):
        return {"role": role, "content": "".join(part["text"] for part in parts)}
    return {"role": role, "content": parts}


def _output(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        texts = [part.get("text", "") for part in output if isinstance(part, dict) and part.get("type") == "input_text"]
        return "".join(texts)
    return json.dumps(output)


def _mcp_output(item: dict[str, Any]) -> str:
    if item.get("output") is not None:
        return str(item["output"])
    error = item.get("error")
    if isinstance(error, dict):
        if "message" in error:
            return f"Error: {error['message']}"
        return f"Error: {json.dumps(error.get('content'), ensure_ascii=False)}"
    return f"Error: {error}" if error else ""
