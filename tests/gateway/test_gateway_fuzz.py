"""Hostile requests, generated: the gateway's two HTTP faces answer every one well-formed, never a 500 or a hang.

One real gateway (uvicorn on 127.0.0.1) serves ``/mcp`` and ``/v1/responses`` for each test,
with the scripted upstream model behind the Responses endpoint. Hypothesis runs in a worker
thread with a blocking client, one request at a time, each bounded by a timeout, while the
event loop serves. Bodies are JSON-RPC messages, Responses requests, any JSON, deep nesting
and bytes that are not JSON; headers and paths are drawn too. Every answer must be a success
or an error in its face's shape, nothing may be logged at ERROR (a traceback), and afterwards
the gateway still answers a valid request.

Not drawn: requests that open a stream which stays open by design (``GET /mcp`` on a live
session, ``subscriptions/listen``), where "no answer yet" is the protocol, not a hang.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _gateway import look_and_wipe
from _responses import Reply, ScriptedUpstream, responses_gateway, serve_asgi, strict_event, strict_response

EXAMPLES = settings(
    max_examples=150, deadline=None, database=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
"""Bounded, so that each test runs in well under a minute; drawn afresh each run (a failure prints the example)."""
TIMEOUT = 60.0
"""Seconds one request may take before it counts as a hang (generous: the suite runs on a busy machine)."""

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12))
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=12,
)
DEEP = st.integers(min_value=100, max_value=5_000).map(lambda levels: "[" * levels + "]" * levels)
"""Nesting around and far past every limit (128 for the Responses endpoint, the SDK's parser for /mcp)."""

HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30).map(str.strip)
HEADER_NAMES = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz-0123456789"), min_size=1, max_size=16).filter(
    lambda name: name not in ("content-length", "transfer-encoding", "host", "connection") and not name.startswith("-")
)
PATHS = st.one_of(
    st.sampled_from(["/", "/mcp/", "/mcp/nope", "/x/mcp", "//mcp", "/v1/responses/", "/v1/responses/x", "/v1"]),
    st.text(st.sampled_from("abcmpv1/%._-~"), max_size=20).map(lambda path: "/" + path),
)


@dataclass
class Fuzzed:
    """One drawn request."""

    method: str
    path: str
    content: bytes
    headers: dict[str, str] = field(default_factory=dict)


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")


def _body(shaped: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """Bodies: mostly ``shaped`` (a face's own messages), else any JSON, deep nesting, text or bytes."""
    junk = st.one_of(
        JSON_VALUES.map(_dumps), DEEP.map(str.encode), st.text(max_size=40).map(str.encode), st.binary(max_size=40)
    )
    return _often(True, 4).flatmap(lambda usual: shaped.map(_dumps) if usual else junk)


def _often(usual: bool, times: int) -> st.SearchStrategy[bool]:
    """``usual`` ``times`` times as often as not (and shrinking to it)."""
    return st.sampled_from([usual] * times + [not usual])


def _mostly(usual: st.SearchStrategy[Any], other: st.SearchStrategy[Any], times: int = 4) -> st.SearchStrategy[Any]:
    """Values from ``usual`` ``times`` times as often as from ``other`` (``one_of`` draws its options alike)."""
    return _often(True, times).flatmap(lambda drawn: usual if drawn else other)


def _headers(base: dict[str, str], choices: dict[str, st.SearchStrategy[str]]) -> st.SearchStrategy[dict[str, str]]:
    """``base``, with some of it dropped or replaced and headers from ``choices`` and random ones added."""

    @st.composite
    def draw(data: st.DrawFn) -> dict[str, str]:
        headers = {name: value for name, value in base.items() if data(_often(True, 9))}
        for name, values in choices.items():
            if data(_often(False, 3)):
                headers[name] = data(values)
        headers.update(data(st.dictionaries(HEADER_NAMES, HEADER_TEXT, max_size=3)))
        if data(_often(False, 19)):
            headers["Host"] = data(st.sampled_from(["evil.example", "127.0.0.1.nip.io:80", "[::2]", ""]))
        return headers

    return draw()


def _requests(
    path: str, bodies: st.SearchStrategy[bytes], headers: st.SearchStrategy[dict[str, str]]
) -> st.SearchStrategy[Fuzzed]:
    """Mostly POSTs of ``bodies`` to ``path``; sometimes another method or another path."""
    return st.builds(
        Fuzzed,
        method=st.sampled_from(["POST"] * 16 + ["PUT", "DELETE", "PATCH", "OPTIONS"]),
        path=_often(True, 9).flatmap(lambda usual: st.just(path) if usual else PATHS),
        content=bodies,
        headers=headers,
    )


# -- the MCP face -------------------------------------------------------------------------------------


def _mcp_requests(session: str) -> st.SearchStrategy[Fuzzed]:
    names = _mostly(st.sampled_from(["look", "wipe", "nope", ""]), st.text(max_size=10))
    params = _mostly(
        _some(
            {},
            {
                "name": names,
                "arguments": _mostly(st.fixed_dictionaries({"path": st.text(max_size=8)}), JSON_VALUES),
                "cursor": st.one_of(st.text(max_size=10), JSON_VALUES),
                "uri": st.one_of(st.sampled_from(["file:///etc/passwd", "x://y", ""]), st.text(max_size=10)),
                "protocolVersion": st.sampled_from(["2025-11-25", "2026-07-28", "1999-01-01", ""]),
                "capabilities": JSON_VALUES,
                "clientInfo": st.one_of(st.fixed_dictionaries({"name": st.text(), "version": st.text()}), JSON_VALUES),
                "level": st.one_of(st.sampled_from(["debug", "error", "nope"]), JSON_VALUES),
                "_meta": st.one_of(st.fixed_dictionaries({"progressToken": SCALARS}), JSON_VALUES),
                "requestId": SCALARS,
            },
        ),
        st.one_of(st.none(), JSON_VALUES),
    )
    methods = _mostly(
        st.sampled_from(
            [
                "tools/call",
                "tools/call",
                "tools/call",
                "tools/list",
                "tools/list",
                "initialize",
                "ping",
                "resources/list",
                "resources/read",
                "resources/templates/list",
                "prompts/list",
                "prompts/get",
                "completion/complete",
                "logging/setLevel",
                "server/discover",
                "tasks/get",
                "notifications/initialized",
                "notifications/cancelled",
                "notifications/progress",
            ]
        ),
        st.text(max_size=20).filter(lambda method: method != "subscriptions/listen"),
    )
    message = st.fixed_dictionaries(
        {
            "jsonrpc": _mostly(st.just("2.0"), SCALARS, times=9),
            "method": methods,
            "id": _mostly(st.one_of(st.integers(), st.text(max_size=8)), SCALARS),
            "params": params,
        }
    ).flatmap(
        lambda message: st.sets(st.sampled_from(["id", "params", "jsonrpc"]), max_size=1).map(
            lambda left_out: {key: value for key, value in message.items() if key not in left_out}
        )
    )
    base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    choices = {
        "mcp-session-id": _mostly(st.just(session), HEADER_TEXT),
        "mcp-protocol-version": _mostly(st.sampled_from(["2025-11-25", "2026-07-28", "2024-11-05"]), HEADER_TEXT),
        "Content-Type": st.sampled_from(["text/plain", "application/json; charset=utf-8", "application/jsonx", ""]),
        "Accept": st.sampled_from(["application/json", "text/event-stream", "*/*", ""]),
        "Authorization": HEADER_TEXT,
        "Origin": st.sampled_from(["http://evil.example", "http://localhost:3000", "null", ""]),
    }
    bodies = _body(_often(True, 9).flatmap(lambda one: message if one else st.lists(message, min_size=1, max_size=3)))

    @st.composite
    def draw(data: st.DrawFn) -> Fuzzed:
        fuzzed = data(_requests("/mcp", bodies, _headers(base, choices)))
        if fuzzed.method != "POST":
            if fuzzed.headers.get("mcp-session-id") == session:
                del fuzzed.headers["mcp-session-id"]  # a DELETE would end it; a GET would open its endless stream
        elif "mcp-session-id" not in fuzzed.headers and data(_often(True, 3)):
            fuzzed.headers["mcp-session-id"] = session
        return fuzzed

    return draw()


def _check(response: httpx2.Response, fuzzed: Fuzzed) -> None:
    """The answer is in the shape of the face the path reaches."""
    assert response.status_code < 500, (response.status_code, response.text[:300])
    if fuzzed.path.rstrip("/") == "/v1/responses":
        _check_responses(response)
    else:
        _check_mcp(response)


def _check_mcp(response: httpx2.Response) -> None:
    kind = response.headers.get("content-type", "")
    if not response.content:
        return  # an accepted notification (202), or an error told by its status alone (the SDK's 405, 406)
    if kind.startswith("application/json"):
        _jsonrpc(json.loads(response.content))
    elif kind.startswith("text/event-stream"):
        for line in re.split(r"\r\n|\r|\n", response.text):  # SSE's line ends only: not str.splitlines' U+0085
            if line.startswith("data:") and line[5:].strip():
                _jsonrpc(json.loads(line[5:]))
    else:
        assert response.status_code >= 400, (response.status_code, kind)  # a plain-text refusal (Host, Origin)


def _jsonrpc(message: Any) -> None:
    for one in message if isinstance(message, list) else [message]:
        assert isinstance(one, dict) and one.get("jsonrpc") == "2.0", one
        if "error" in one:
            error = one["error"]
            assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str), one
        else:
            assert "result" in one or "method" in one, one


# -- the Responses face -------------------------------------------------------------------------------


def _some(required: dict[str, Any], optional: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects with the ``required`` keys and a few of the ``optional`` ones (often none)."""
    keys = st.sets(st.sampled_from(sorted(optional)), max_size=3)
    return st.fixed_dictionaries(required).flatmap(
        lambda drawn: keys.flatmap(
            lambda chosen: st.fixed_dictionaries({key: optional[key] for key in chosen}).map(
                lambda more: {**drawn, **more}
            )
        )
    )


def _responses_requests(mcp_url: str) -> st.SearchStrategy[Fuzzed]:
    urls = st.sampled_from(
        [
            mcp_url,
            "http://127.0.0.1:1/mcp",
            "http://localhost:1/mcp",
            "http://10.0.0.1/mcp",
            "http://169.254.169.254/",
            "ftp://127.0.0.1/",
            "not a url",
            "http://[::1]:1/mcp",
            "",
        ]
    )
    names = _mostly(st.sampled_from(["look", "wipe", "nope"]), st.text(max_size=8))
    tool_filter = st.one_of(
        st.lists(names, max_size=2),
        _some({}, {"tool_names": st.lists(names, max_size=2), "read_only": st.booleans(), "x": JSON_VALUES}),
        JSON_VALUES,
    )
    mcp_tool = _some(
        {"type": st.just("mcp"), "server_label": _mostly(st.just("gw"), st.text(max_size=6)), "server_url": urls},
        {
            "require_approval": _mostly(st.sampled_from(["never", "always"]), tool_filter),
            "allowed_tools": tool_filter,
            "headers": _mostly(st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=2), JSON_VALUES),
            "authorization": st.text(max_size=10),
            "server_url": JSON_VALUES,
            "connector_id": st.text(max_size=5),
        },
    )
    function_tool = _some(
        {"type": st.just("function"), "name": names},
        {"parameters": JSON_VALUES, "description": st.text(max_size=10), "strict": st.booleans()},
    )
    part = _some(
        {"type": st.sampled_from(["input_text", "output_text", "input_image", "refusal", "x"])},
        {"text": st.text(max_size=8), "image_url": st.text(max_size=8), "x": JSON_VALUES},
    )
    message = _some(
        {
            "role": st.sampled_from(["user", "assistant", "system", "developer", "tool", "x"]),
            "content": _mostly(st.one_of(st.text(max_size=12), st.lists(part, max_size=2)), JSON_VALUES),
        },
        {"type": st.just("message"), "id": st.text(max_size=6), "status": st.text(max_size=6)},
    )
    item_types = [
        "function_call",
        "function_call_output",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "mcp_approval_response",
        "reasoning",
        "item_reference",
        "x",
    ]
    fields = ["id", "call_id", "name", "arguments", "output", "server_label", "approval_request_id", "approve",
              "reason", "tools", "error", "status"]  # fmt: skip
    other_item = _some(
        {"type": st.sampled_from(item_types)},
        {key: st.one_of(st.text(max_size=8), st.booleans(), JSON_VALUES) for key in fields},
    )
    item = _mostly(st.one_of(message, other_item), JSON_VALUES)
    request = _some(
        {
            "model": _mostly(st.just("m"), JSON_VALUES),
            "input": st.one_of(st.text(max_size=20), st.lists(item, max_size=3)),
        },
        {
            "tools": st.lists(_mostly(st.one_of(mcp_tool, function_tool), JSON_VALUES), max_size=2),
            "stream": st.booleans(),
            "instructions": _mostly(st.text(max_size=12), JSON_VALUES),
            "tool_choice": _mostly(st.sampled_from(["auto", "none", "required"]), JSON_VALUES),
            "store": SCALARS,
            "previous_response_id": st.text(max_size=5),
            "max_output_tokens": st.one_of(st.integers(-2, 5), SCALARS),
            "max_tool_calls": st.one_of(st.integers(-2, 5), SCALARS),
            "metadata": _mostly(st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2), JSON_VALUES),
            "input": JSON_VALUES,
            "model": st.text(max_size=6),
        },
    )
    deep = DEEP.map(lambda nested: ('{"model": "m", "input": [{"role": "user", "content": ' + nested + "}]}").encode())
    bodies = _often(True, 9).flatmap(lambda usual: _body(request) if usual else deep)
    base = {"Content-Type": "application/json"}
    choices = {"Authorization": HEADER_TEXT, "Content-Type": st.sampled_from(["text/plain", ""]), "Accept": HEADER_TEXT}
    return _requests("/v1/responses", bodies, _headers(base, choices))


def _check_responses(response: httpx2.Response) -> None:
    kind = response.headers.get("content-type", "")
    if response.status_code in (403, 421):
        return  # refused by the Host/Origin check (the SDK's, plain text) before the endpoint
    if response.status_code == 200 and kind.startswith("text/event-stream"):
        events = [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:")]
        assert events and events[-1]["type"] in ("response.completed", "response.incomplete", "response.failed")
        for event in events:
            strict_event(event)
    elif response.status_code == 200:
        strict_response(response.json())
    else:
        body = response.json()
        assert set(body) == {"error"}, body
        assert isinstance(body["error"]["message"], str) and body["error"]["type"] == "invalid_request_error", body


# -- running ------------------------------------------------------------------------------------------


@asynccontextmanager
async def _gateway() -> AsyncIterator[str]:
    """Both faces on one uvicorn server (the catalog's ``look`` and ``wipe`` on ``/mcp``); yields its base URL."""
    upstream = ScriptedUpstream(default=lambda body: Reply(text="fine"), record=False)
    async with serve_asgi(upstream.app) as model, responses_gateway(model + "/v1", look_and_wipe()) as (_, v1):
        yield v1.removesuffix("/v1")


def _session(base: str) -> str:
    """A live 2025-11-25 session's id, so that drawn requests reach the session's handlers too."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    answer = httpx2.post(base + "/mcp", json=initialize, headers=headers, timeout=TIMEOUT)
    assert answer.status_code == 200, answer.text
    return answer.headers["mcp-session-id"]


def _fuzz(base: str, requests: st.SearchStrategy[Fuzzed]) -> None:
    with httpx2.Client(base_url=base, timeout=TIMEOUT) as http:

        @EXAMPLES
        @given(fuzzed=requests)
        def one(fuzzed: Fuzzed) -> None:
            response = http.request(fuzzed.method, fuzzed.path, content=fuzzed.content, headers=fuzzed.headers)
            _check(response, fuzzed)

        one()


def _no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert not errors, [f"{record.name}: {record.getMessage()}" for record in errors]


async def test_the_mcp_face_answers_every_request_well_formed(caplog: pytest.LogCaptureFixture) -> None:
    async with _gateway() as base:
        session = await anyio.to_thread.run_sync(_session, base)
        requests = _mcp_requests(session)
        await anyio.to_thread.run_sync(_fuzz, base, requests)
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:  # still serving, the session still live
            listed = await http.post(
                base + "/mcp",
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers={"Accept": "application/json, text/event-stream", "mcp-session-id": session},
            )
    assert listed.status_code == 200 and '"look"' in listed.text
    _no_tracebacks(caplog)


async def test_the_responses_face_answers_every_request_well_formed(caplog: pytest.LogCaptureFixture) -> None:
    async with _gateway() as base:
        await anyio.to_thread.run_sync(_fuzz, base, _responses_requests(base + "/mcp"))
        async with httpx2.AsyncClient(timeout=TIMEOUT) as http:  # still serving
            answer = await http.post(base + "/v1/responses", json={"model": "m", "input": "hi"})
    assert answer.status_code == 200 and strict_response(answer.json()).output_text == "fine"
    _no_tracebacks(caplog)
