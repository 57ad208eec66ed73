"""Bodies the Responses endpoint reads are bounded before they are parsed: the client's requests
(400 when nested too deeply, 413 and the connection closed when too large) and the upstream
model's replies (an upstream failure, never a 500)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from _gateway import upload
from _responses import Reply, responses_gateway, scene, serve_asgi

GIB = 1024**3


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


async def _post(client: openai.AsyncOpenAI, content: bytes) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=60) as http:
        return await http.post(f"{client.base_url}responses", content=content)


def _api_error(response: httpx2.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"} and body["error"]["type"] == "invalid_request_error", body
    assert isinstance(body["error"]["message"], str)
    return dict(body["error"])


# -- the client's request ---------------------------------------------------------------------


async def test_a_deeply_nested_body_is_a_400_in_the_api_error_shape_and_the_endpoint_goes_on() -> None:
    async with scene([Reply(text="still here")]) as (client, upstream, _):
        body = '{"model": "m", "input": [{"role": "user", "content": "hi", "x": ' + _nested(1_000) + "}]}"
        refused = await _post(client, body.encode())
        assert refused.status_code == 400
        assert "nested too deeply" in _api_error(refused)["message"]
        assert upstream.requests == []
        response = await client.responses.create(model="m", input="hi")
    assert response.output_text == "still here"


async def test_max_json_depth_is_checked_before_anything_else() -> None:
    async with scene([], max_json_depth=8) as (client, _, _url):
        at_limit = _api_error(await _post(client, b'{"model": "m", "input": ' + _nested(7).encode() + b"}"))
        over = _api_error(await _post(client, b'{"model": "m", "input": ' + _nested(8).encode() + b"}"))
        not_utf8 = _api_error(await _post(client, b'{"model": "m", "input": "\xff"}'))
    assert "nested" not in at_limit["message"] and at_limit["param"] == "input"  # read, then refused as input
    assert over["message"].startswith("the body is nested too deeply") and "at most 8 levels" in over["message"]
    assert "not UTF-8" in not_utf8["message"]


@pytest.mark.parametrize(
    ("declared", "settings"),
    [(GIB, {}), (None, {"max_body_bytes": 1024 * 1024})],
    ids=["declared-length-default-limit", "chunked-1MiB-limit"],
)
async def test_a_body_over_max_body_bytes_is_a_413_and_the_rest_is_never_read(
    declared: int | None, settings: dict[str, Any]
) -> None:
    async with scene([Reply(text="still here")], **settings) as (client, _, _url):
        sent = await upload(f"{client.base_url}responses", declared=declared)
        assert sent.status == 413, sent.answer[:300]
        assert sent.closed, f"the endpoint read all {sent.sent:,} bytes sent"
        assert "connection: close" in sent.head
        assert b'"type":"invalid_request_error"' in sent.answer and b"maxBodyBytes" in sent.answer
        response = await client.responses.create(model="m", input="hi")
    assert response.output_text == "still here"


# -- the upstream's reply ---------------------------------------------------------------------


def _upstream(answer: Callable[[bool], Response]) -> Starlette:
    """A Chat Completions server answering every call with ``answer(streamed)``."""

    async def complete(request: Request) -> Response:
        return answer(bool((await request.json()).get("stream")))

    return Starlette(routes=[Route("/v1/chat/completions", complete, methods=["POST"])])


def _completion(message: str) -> str:
    return (
        '{"id": "c1", "object": "chat.completion", "created": 0, "model": "m", "choices": [{"index": 0, '
        '"finish_reason": "stop", "message": ' + message + "}]}"
    )


def _chunk(delta: str) -> str:
    return (
        'data: {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m", '
        '"choices": [{"index": 0, "finish_reason": null, "delta": ' + delta + "}]}\n\n"
    )


def _answer(whole: str, events: str, status: int = 200) -> Callable[[bool], Response]:
    def answer(streamed: bool) -> Response:
        if streamed:
            return Response(events + "data: [DONE]\n\n", status, media_type="text/event-stream")
        return Response(whole, status, media_type="application/json")

    return answer


async def _failure(answer: Callable[[bool], Response], stream: bool, **settings: Any) -> str:
    """The error message a client gets when the upstream answers with ``answer``."""
    async with serve_asgi(_upstream(answer)) as model, responses_gateway(model + "/v1", **settings) as (client, _):
        with anyio.fail_after(60):
            if not stream:
                with pytest.raises(openai.APIStatusError) as caught:
                    await client.responses.create(model="m", input="hi")
                assert caught.value.status_code == 502
                assert isinstance(caught.value.body, dict) and caught.value.body["type"] == "server_error"
                return str(caught.value.body["message"])
            events = [event async for event in await client.responses.create(model="m", input="hi", stream=True)]
            assert events[-1].type == "response.failed"
            error = events[-1].response.error
            assert error is not None and error.code == "server_error"
            return error.message


DEEP = _answer(
    _completion('{"role": "assistant", "content": "hi", "x": ' + _nested(1_000) + "}"),
    _chunk('{"content": "hi", "x": ' + _nested(1_000) + "}"),
)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_an_upstream_reply_nested_too_deeply_fails_the_response(stream: bool) -> None:
    message = await _failure(DEEP, stream)
    assert "sent a reply the gateway does not read" in message
    assert "nested more than 128 levels deep (responses.maxJsonDepth)" in message


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_an_upstream_reply_over_max_reply_bytes_fails_the_response(stream: bool) -> None:
    whole, piece = json.dumps("x" * 150_000), json.dumps("x" * 30_000)  # streamed: every event under the limit
    events = _chunk('{"content": ' + piece + "}") * 4
    many = _answer(_completion('{"role": "assistant", "content": ' + whole + "}"), events)
    message = await _failure(many, stream, max_reply_bytes=100_000)
    assert "the reply is larger than 100,000 bytes (responses.maxReplyBytes)" in message


async def test_an_upstream_error_body_over_max_reply_bytes_is_not_read_whole() -> None:
    huge = json.dumps({"error": {"message": "x" * 200_000, "type": "server_error"}})
    message = await _failure(_answer(huge, huge, status=500), False, max_reply_bytes=100_000)
    assert "the reply is larger than 100,000 bytes" in message


async def test_a_reply_of_unexpected_shapes_is_read_for_what_it_holds() -> None:
    odd = _answer(
        '{"choices": [{"message": {"content": ["not", "text"], "tool_calls": "none"}, "finish_reason": 5}, 7], '
        '"usage": {"prompt_tokens": "many"}}',
        'data: {"choices": [{"delta": {"content": 5, "tool_calls": [7, "x"]}}, null]}\n\n'
        'data: {"choices": "none", "usage": [1]}\n\n',
    )
    async with serve_asgi(_upstream(odd)) as model, responses_gateway(model + "/v1") as (client, _):
        with anyio.fail_after(60):
            whole = await client.responses.create(model="m", input="hi")
            events = [event async for event in await client.responses.create(model="m", input="hi", stream=True)]
    assert whole.status == "completed" and whole.output_text == ""
    assert whole.usage is not None and whole.usage.input_tokens == 0
    assert events[-1].type == "response.completed"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_reply_that_is_not_a_json_object_fails_the_response(stream: bool) -> None:
    message = await _failure(_answer("[1, 2]", "data: [1, 2]\n\n"), stream)
    assert "the reply is not a JSON object" in message
