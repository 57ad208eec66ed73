"""ToolExecutionError: kinds, retryability, feedback and what the model sees."""

from __future__ import annotations

import pickle

import pytest

from toolmesh import (
    ErrorKind,
    NameCollisionError,
    ToolContext,
    ToolExecutionError,
    ToolNotFoundError,
    ToolRegistry,
    tool,
)


@pytest.mark.parametrize(
    ("kind", "retryable"),
    [
        (ErrorKind.INVALID_ARGUMENTS, False),
        (ErrorKind.NOT_FOUND, False),
        (ErrorKind.PERMISSION_DENIED, False),
        (ErrorKind.REFUSED, False),
        (ErrorKind.TIMEOUT, True),
        (ErrorKind.CANCELLED, False),
        (ErrorKind.UNAVAILABLE, True),
        (ErrorKind.UPSTREAM_ERROR, False),
        (ErrorKind.RATE_LIMITED, True),
        (ErrorKind.INTERNAL, False),
    ],
)
def test_retryable_defaults_per_kind(kind: ErrorKind, retryable: bool) -> None:
    assert ToolExecutionError("x", kind=kind).retryable is retryable
    assert ToolExecutionError("x", kind=kind, retryable=not retryable).retryable is (not retryable)


def test_kinds_are_lower_case_str_enums() -> None:
    assert ErrorKind.INVALID_ARGUMENTS == "invalid_arguments"
    assert {k.value for k in ErrorKind} == {
        "invalid_arguments",
        "not_found",
        "permission_denied",
        "refused",
        "timeout",
        "cancelled",
        "unavailable",
        "upstream_error",
        "rate_limited",
        "internal",
    }


def test_deliberate_error_shows_its_message_to_the_model() -> None:
    err = ToolExecutionError("city 'Atlantis' not found", kind=ErrorKind.NOT_FOUND, code="E404", http_status=404)
    assert err.model_feedback == "city 'Atlantis' not found"
    assert (err.code, err.http_status, err.message) == ("E404", 404, "city 'Atlantis' not found")


def test_redact_and_override_feedback_return_copies() -> None:
    cause = ValueError("secret detail")
    err = ToolExecutionError("db password rejected", kind=ErrorKind.UNAVAILABLE, cause=cause)
    redacted = err.with_redacted_feedback()
    assert redacted.model_feedback == ErrorKind.UNAVAILABLE.default_feedback
    assert redacted.message == "db password rejected"
    assert redacted.__cause__ is cause
    assert redacted.retryable is True
    assert err.model_feedback == "db password rejected"
    assert err.with_model_feedback("try later").model_feedback == "try later"


def test_repr_of_error_never_prints_message_or_feedback() -> None:
    err = ToolExecutionError("token=abc123", kind=ErrorKind.INTERNAL, model_feedback="token=abc123")
    assert "abc123" not in repr(err)
    assert repr(err) == "ToolExecutionError(kind='internal', retryable=False, code=None, http_status=None)"


def test_error_survives_pickling() -> None:
    err = ToolExecutionError("m", kind=ErrorKind.TIMEOUT, code=7, model_feedback="f")
    clone = pickle.loads(pickle.dumps(err))
    assert (clone.kind, clone.code, clone.model_feedback, clone.retryable) == (ErrorKind.TIMEOUT, 7, "f", True)


async def test_unexpected_exception_is_withheld_from_the_model_but_kept_for_the_operator() -> None:
    @tool
    async def lookup(key: str) -> str:
        raise KeyError(f"internal table users_v2 has no {key}")

    registry = ToolRegistry()
    registry.register(lookup)
    result = await registry.dispatch("lookup", {"key": "bob"})
    assert result.disposition == "failed"
    assert result.error is not None
    assert result.error.kind is ErrorKind.INTERNAL
    assert result.error.model_feedback == "The tool failed with an internal error."
    assert result.presentation.as_text() == "The tool failed with an internal error."
    assert "users_v2" in result.error.message
    assert isinstance(result.error.__cause__, KeyError)


async def test_registry_can_opt_into_showing_exception_details() -> None:
    @tool
    async def parse(text: str) -> int:
        return int(text)

    registry = ToolRegistry(show_error_details=True)
    registry.register(parse)
    result = await registry.dispatch("parse", {"text": "x"})
    assert result.presentation.as_text() == "ValueError: invalid literal for int() with base 10: 'x'"


async def test_tool_can_opt_into_showing_exception_details() -> None:
    @tool(show_error_details=True)
    async def divide(a: int, b: int) -> float:
        return a / b

    registry = ToolRegistry()
    registry.register(divide)
    result = await registry.dispatch("divide", {"a": 1, "b": 0})
    assert result.error is not None
    assert result.error.model_feedback == "ZeroDivisionError: division by zero"


async def test_refused_error_gives_refused_disposition_not_failed() -> None:
    @tool
    async def delete_all() -> str:
        raise ToolExecutionError("deleting everything is not allowed on Sundays", kind=ErrorKind.REFUSED)

    registry = ToolRegistry()
    registry.register(delete_all)
    result = await registry.dispatch("delete_all")
    assert result.disposition == "refused"
    assert result.presentation.as_text() == "deleting everything is not allowed on Sundays"
    with pytest.raises(ToolExecutionError, match="Sundays"):
        result.raise_for_error()


async def test_raise_for_error_returns_the_result_when_it_succeeded() -> None:
    @tool
    async def ping() -> str:
        return "pong"

    registry = ToolRegistry()
    registry.register(ping)
    result = await registry.dispatch("ping")
    assert result.raise_for_error() is result


async def test_reprs_of_results_and_contexts_never_print_values() -> None:
    @tool
    async def store(secret: str, ctx: ToolContext[str]) -> str:
        ctx.metadata["stored"] = "s3cr3t-meta"
        raise ToolExecutionError(f"could not store {secret}")

    registry = ToolRegistry()
    registry.register(store)
    ctx = ToolContext(call_id="c1", deps="deps-value-123")
    ctx.metadata["host"] = "host-meta-456"
    result = await registry.dispatch("store", {"secret": "hunter2"}, ctx=ctx)
    for text in (repr(result), repr(ctx), repr(result.error)):
        for value in ("hunter2", "s3cr3t-meta", "deps-value-123", "host-meta-456"):
            assert value not in text
    assert result.metadata == {"stored": "s3cr3t-meta"}


def test_not_found_and_collision_errors_say_what_to_do() -> None:
    missing = ToolNotFoundError("serch", ["search", "fetch"])
    assert str(missing) == "Unknown tool 'serch'. Did you mean 'search'?"
    assert isinstance(missing, KeyError)
    clash = NameCollisionError("x", "native tool 'x' (m.x)", "dynamic tool 'x'")
    assert "already taken by native tool 'x' (m.x); cannot add dynamic tool 'x'" in str(clash)
    assert "replace=True" in str(clash)
