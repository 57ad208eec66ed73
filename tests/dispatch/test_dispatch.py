"""dispatch: argument shapes, what the model is told when they are wrong, timeouts, cancellation, isolation."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from toolmesh import (
    Disposition,
    ErrorKind,
    Json,
    ToolContext,
    ToolExecutionError,
    ToolRegistry,
    tool,
)


@tool
async def add(x: int, y: int = 0) -> int:
    """Add two integers."""
    return x + y


@tool
async def nothing() -> str:
    """Take no arguments."""
    return "ok"


def make_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(add)
    registry.register(nothing)
    return registry


EXPECTED = " Expected parameters: x (integer, required), y (integer)."


@pytest.mark.parametrize("arguments", ['{"x": 2, "y": 3}', {"x": 2, "y": 3}, '{"y": 3, "x": "2"}'])
async def test_arguments_may_be_json_text_or_a_mapping(arguments: str | dict[str, int]) -> None:
    result = await make_registry().dispatch("add", arguments)
    assert result.disposition is Disposition.SUCCEEDED
    assert result.output.blocks == [Json(5)]
    assert result.ok and result.kind == "native" and result.name == "add"


@pytest.mark.parametrize("arguments", [None, "", "  ", "null", "{}"])
async def test_absent_empty_and_null_mean_no_arguments(arguments: str | None) -> None:
    result = await make_registry().dispatch("nothing", arguments)
    assert result.ok, result.presentation.as_text()


@pytest.mark.parametrize(
    ("arguments", "feedback"),
    [
        ("[1, 2]", "arguments must be a JSON object of named parameters, got an array."),
        ("42", "arguments must be a JSON object of named parameters, got a number."),
        ('"x"', "arguments must be a JSON object of named parameters, got a string."),
        ('{"x": 1', "arguments are not valid JSON (EOF while parsing an object at line 1 column 7)."),
        ('{"x": 1, "z": 2}', "z: unknown field."),
        ('{"x": "two"}', "x: Input should be a valid integer, unable to parse string as an integer."),
        ('{"y": 1}', "x: missing required field."),
        ('{"x": 1.5}', "x: Input should be a valid integer, got a number with a fractional part."),
        ('{"x": "\\ud800"}', "a string holds a lone surrogate escape (such as \\ud800), which is not valid Unicode."),
        (
            '{"x": ' + "[" * 201 + "]" * 201 + "}",
            "arguments are nested more than 200 levels deep, deeper than they can be read; send flatter arguments.",
        ),
    ],
    ids=[
        "array",
        "scalar",
        "string",
        "malformed",
        "unknown-field",
        "wrong-type",
        "missing",
        "fraction",
        "surrogate",
        "too-deep",
    ],
)
async def test_bad_arguments_fail_with_feedback_naming_the_field(arguments: str, feedback: str) -> None:
    result = await make_registry().dispatch("add", arguments)
    assert result.disposition is Disposition.FAILED
    assert result.error is not None
    assert result.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert result.error.retryable is False
    assert result.presentation.as_text() == f"Invalid arguments for tool 'add': {feedback}{EXPECTED}"
    assert result.output.blocks == []


@pytest.mark.parametrize(
    ("arguments", "feedback"),
    [
        ({"x": "\ud800"}, "x: the string is not valid Unicode (it has a lone surrogate)."),
        ({"x": 1, "y": ["ok", {"deep": "caf\u00e9 \udfff"}]}, "y[1].deep: the string is not valid Unicode"),
        ({"x": 1, "\ud800": 2}, "(arguments): a key is not valid Unicode (it has a lone surrogate)."),
    ],
    ids=["value", "nested", "key"],
)
async def test_a_lone_surrogate_in_mapping_arguments_is_refused_like_one_in_json_text(
    arguments: dict[str, object], feedback: str
) -> None:
    """``json.loads`` (a provider SDK's parse of the model's arguments) lets a ``\\ud800`` escape through."""

    seen: list[object] = []

    async def echo(x: object, y: object = None) -> str:
        seen.append(x)
        return "called"

    registry = ToolRegistry()
    registry.register(echo)
    registry.register_dynamic("dyn", {"type": "object"}, ignore_arguments)
    for name in ("echo", "dyn"):
        result = await registry.dispatch(name, arguments)
        assert result.error is not None and result.error.kind is ErrorKind.INVALID_ARGUMENTS, name
        assert feedback in result.presentation.as_text()
    assert seen == []
    assert (await registry.dispatch("echo", {"x": "caf\u00e9", "y": {"k": ["\U0001f600"]}})).ok  # valid non-ASCII


async def ignore_arguments(arguments: dict[str, object]) -> str:
    return "called"


async def test_a_list_passed_as_python_arguments_is_an_invalid_call() -> None:
    result = await make_registry().dispatch("add", [1, 2])  # type: ignore[arg-type]
    assert result.error is not None and result.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert "got an array" in result.presentation.as_text()


async def test_several_problems_are_all_reported() -> None:
    result = await make_registry().dispatch("add", '{"x": "a", "y": "b", "q": 1}')
    assert result.presentation.as_text() == (
        "Invalid arguments for tool 'add': x: Input should be a valid integer, unable to parse string as an integer; "
        "y: Input should be a valid integer, unable to parse string as an integer; q: unknown field." + EXPECTED
    )


async def test_unknown_name_is_not_found_with_suggestions() -> None:
    result = await make_registry().dispatch("ad", "{}", ctx=ToolContext(call_id="call-9"))
    assert result.disposition is Disposition.FAILED
    assert result.error is not None and result.error.kind is ErrorKind.NOT_FOUND
    assert result.presentation.as_text() == "Unknown tool 'ad'. Did you mean 'add'?"
    assert (result.call_id, result.name, result.kind) == ("call-9", "ad", "unknown")


async def test_registry_stays_usable_after_every_kind_of_bad_call() -> None:
    registry = make_registry()
    for name, arguments in [("ad", "{}"), ("add", "[]"), ("add", "{"), ("add", '{"x": "a"}')]:
        assert not (await registry.dispatch(name, arguments)).ok
    assert (await registry.dispatch("add", '{"x": 1}')).output.structured == 1


async def test_call_id_comes_from_the_context() -> None:
    result = await make_registry().dispatch("nothing", ctx=ToolContext(call_id="toolu_01"))
    assert result.call_id == "toolu_01"


async def test_nested_model_arguments_arrive_as_model_instances() -> None:
    import pydantic

    class Point(pydantic.BaseModel):
        x: int
        y: int

    @tool
    async def norm(p: Point) -> int:
        assert isinstance(p, Point)
        return abs(p.x) + abs(p.y)

    registry = ToolRegistry()
    registry.register(norm)
    assert (await registry.dispatch("norm", '{"p": {"x": -1, "y": 2}}')).output.structured == 3
    bad = await registry.dispatch("norm", '{"p": {"x": -1}}')
    assert "p.y: missing required field" in bad.presentation.as_text()


# -- timeouts and cancellation -------------------------------------------------


@tool(timeout=0.05)
async def sleepy(seconds: float = 10) -> str:
    await anyio.sleep(seconds)
    return "woke"


async def test_per_tool_timeout_gives_kind_timeout() -> None:
    registry = ToolRegistry()
    registry.register(sleepy)
    with anyio.fail_after(5):
        result = await registry.dispatch("sleepy")
    assert result.error is not None
    assert result.error.kind is ErrorKind.TIMEOUT
    assert result.error.retryable is True
    assert result.presentation.as_text() == "The tool 'sleepy' did not finish within 0.05 seconds. You may try again."


async def test_per_call_timeout_overrides_the_tools() -> None:
    registry = ToolRegistry()
    registry.register(sleepy)
    ok = await registry.dispatch("sleepy", {"seconds": 0.1}, ctx=ToolContext(timeout=5))
    assert ok.output.as_text() == "woke"
    with anyio.fail_after(5):
        late = await registry.dispatch("sleepy", {"seconds": 5}, ctx=ToolContext(timeout=0.01))
    assert late.error is not None and "within 0.01 seconds" in late.error.model_feedback


async def test_registry_default_timeout_applies_to_rows_without_one() -> None:
    @tool
    async def forever() -> None:
        await anyio.sleep(30)

    registry = ToolRegistry(default_timeout=0.05)
    registry.register(forever)
    with anyio.fail_after(5):
        result = await registry.dispatch("forever")
    assert result.error is not None and result.error.kind is ErrorKind.TIMEOUT


async def test_sync_tool_timeout_returns_promptly() -> None:
    import time

    @tool(timeout=0.05)
    def block() -> str:
        time.sleep(0.5)
        return "done"

    registry = ToolRegistry()
    registry.register(block)
    with anyio.fail_after(5):
        result = await registry.dispatch("block")
    assert result.error is not None and result.error.kind is ErrorKind.TIMEOUT


async def test_cancelling_the_awaiting_task_cancels_the_tool_and_propagates() -> None:
    started = anyio.Event()
    tool_cancelled = anyio.Event()

    @tool
    async def wait_forever() -> str:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            tool_cancelled.set()
        return "never"

    registry = ToolRegistry()
    registry.register(wait_forever)
    reached_after_dispatch = False

    async def caller() -> None:
        nonlocal reached_after_dispatch
        await registry.dispatch("wait_forever")
        reached_after_dispatch = True

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(caller)
            await started.wait()
            tg.cancel_scope.cancel()
        await tool_cancelled.wait()
    assert not reached_after_dispatch


async def test_tool_raising_timeout_error_itself_is_an_internal_failure_not_ours() -> None:
    @tool
    async def upstream() -> str:
        raise TimeoutError("socket read timed out")

    registry = ToolRegistry()
    registry.register(upstream)
    result = await registry.dispatch("upstream")
    assert result.error is not None and result.error.kind is ErrorKind.INTERNAL


# -- context isolation ---------------------------------------------------------


async def test_metadata_written_by_a_tool_appears_on_that_calls_result_only() -> None:
    @tool
    async def tag(n: int, ctx: ToolContext[None]) -> int:
        ctx.metadata["n"] = n
        await anyio.lowlevel.checkpoint()
        ctx.metadata["seen_by"] = ctx.call_id
        return n

    registry = ToolRegistry()
    registry.register(tag)
    shared = ToolContext(call_id="shared")
    results: dict[int, dict[str, object]] = {}

    async def one(n: int) -> None:
        result = await registry.dispatch("tag", {"n": n}, ctx=ToolContext(call_id=f"c{n}"))
        results[n] = dict(result.metadata)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for n in range(100):
                tg.start_soon(one, n)
    assert results == {n: {"n": n, "seen_by": f"c{n}"} for n in range(100)}
    reused = await registry.dispatch("tag", {"n": 1}, ctx=shared)
    assert reused.metadata == {"n": 1, "seen_by": "shared"}
    assert shared.metadata == {}


# -- dispatch_native -----------------------------------------------------------


async def test_dispatch_native_returns_the_functions_own_value() -> None:
    registry = make_registry()
    value: int = await registry.dispatch_native(add, 2, y=5)
    assert value == 7
    assert await registry.dispatch_native(add.fn, x=1) == 1


async def test_dispatch_native_validates_and_raises_tool_execution_error() -> None:
    registry = make_registry()
    with pytest.raises(ToolExecutionError, match="x: Input should be a valid integer") as info:
        await registry.dispatch_native(add, x="seven")
    assert info.value.kind is ErrorKind.INVALID_ARGUMENTS
    with pytest.raises(ToolExecutionError, match="x: missing required field"):
        await registry.dispatch_native(add)


async def test_dispatch_native_of_an_unregistered_function_says_how_to_fix_it() -> None:
    @tool
    async def stray() -> None:
        return None

    with pytest.raises(ToolExecutionError, match=r"is not registered in this registry; call registry.register") as info:
        await ToolRegistry().dispatch_native(stray)
    assert info.value.kind is ErrorKind.NOT_FOUND


async def test_dispatch_native_wraps_unexpected_exceptions() -> None:
    @tool
    async def boom() -> None:
        raise RuntimeError("kaput")

    registry = ToolRegistry()
    registry.register(boom)
    with pytest.raises(ToolExecutionError) as info:
        await registry.dispatch_native(boom)
    assert info.value.kind is ErrorKind.INTERNAL
    assert isinstance(info.value.__cause__, RuntimeError)
