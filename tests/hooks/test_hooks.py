"""Hooks: each action of each event, chaining, terminal actions, rewrite isolation, repair, misbehaving hooks."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from _calls import call
from _docs import DOCS, page_blocks
from toolmesh import (
    ConfigurationError,
    Disposition,
    Entry,
    ErrorKind,
    Json,
    Text,
    ToolCall,
    ToolContext,
    ToolExecutionError,
    ToolOutput,
    ToolRegistry,
    ToolResult,
    run_tool_calls,
)
from toolmesh.hooks import (
    Defer,
    Fail,
    Hook,
    HookStack,
    InvalidCall,
    InvalidCallKind,
    InvalidToolCallAction,
    Keep,
    Proceed,
    Refuse,
    Repair,
    RewriteArguments,
    RewritePresentation,
    SkipWith,
    StopTurn,
    ToolCallAction,
    ToolResultAction,
)
from toolmesh.policy import DenyTools


class Calls:
    """Counts how often each tool ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []


@pytest.fixture
def ran() -> Calls:
    return Calls()


@pytest.fixture
def registry(ran: Calls) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool
    async def add(x: int, y: int) -> int:
        """Add two integers."""
        ran.ran.append("add")
        return x + y

    @registry.tool
    async def lookup(key: str, ctx: ToolContext) -> dict[str, Any]:
        """Look a key up; notes the lookup in the call's metadata."""
        ran.ran.append("lookup")
        ctx.metadata["looked_up"] = key
        return {"key": key, "value": key.upper()}

    @registry.tool
    async def picky(date: str) -> str:
        """Accepts only ISO dates; says so when the date is wrong."""
        ran.ran.append("picky")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
            raise ToolExecutionError("date must look like 2026-11-30", kind=ErrorKind.INVALID_ARGUMENTS)
        return date

    async def echo(arguments: dict[str, Any]) -> dict[str, Any]:
        ran.ran.append("echo")
        return arguments

    registry.register_dynamic(
        "echo", {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, echo
    )
    return registry


class Recorder(Hook):
    """Records what it saw; answers with fixed actions."""

    def __init__(
        self,
        log: list[str],
        label: str,
        on_call: ToolCallAction | None = None,
        on_result: ToolResultAction | None = None,
        on_invalid: InvalidToolCallAction | None = None,
    ) -> None:
        self.log = log
        self.label = label
        self.on_call = on_call or Proceed()
        self.on_result = on_result or Keep()
        self.on_invalid = on_invalid or Defer()
        self.calls: list[ToolCall] = []
        self.results: list[ToolResult] = []
        self.problems: list[InvalidCall] = []

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        self.log.append(f"{self.label}.call")
        self.calls.append(call)
        return self.on_call

    async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
        self.log.append(f"{self.label}.result")
        self.results.append(result)
        return self.on_result

    async def on_invalid_tool_call(
        self, call: ToolCall, problem: InvalidCall, ctx: ToolContext[Any]
    ) -> InvalidToolCallAction:
        self.log.append(f"{self.label}.invalid")
        self.problems.append(problem)
        return self.on_invalid


# -- on_tool_call ---------------------------------------------------------------


async def test_hooks_run_in_order_and_rewrites_feed_the_next_hook(registry: ToolRegistry) -> None:
    log: list[str] = []
    first = Recorder(log, "first", on_call=RewriteArguments({"x": 10, "y": 2}))
    second = Recorder(log, "second", on_call=RewriteArguments('{"y": 5, "x": 10}'))
    third = Recorder(log, "third")

    [result] = await run_tool_calls(registry, [call("1", "add", x=1, y=2)], hooks=[first, second, third])

    assert log == ["first.call", "second.call", "third.call", "first.result", "second.result", "third.result"]
    assert second.calls[0].arguments == '{"x":10,"y":2}'
    assert third.calls[0].arguments == '{"x":10,"y":5}'  # canonical JSON
    assert result.ok and result.output.structured == 15
    assert first.results[0] is result


async def test_skip_with_output_answers_without_running_the_tool(registry: ToolRegistry, ran: Calls) -> None:
    log: list[str] = []
    after = Recorder(log, "after")
    hooks = [Recorder(log, "cache", on_call=SkipWith("cached: 3")), after]

    [result] = await run_tool_calls(registry, [call("1", "add", x=1, y=2)], hooks=hooks)

    assert ran.ran == []
    assert result.disposition is Disposition.SKIPPED and result.kind == "native"
    assert result.output.as_text() == result.presentation.as_text() == "cached: 3"
    assert after.calls == []  # a terminal action ends the chain
    assert log == ["cache.call", "cache.result", "after.result"]  # result hooks see every result


async def test_skip_with_a_result_returns_it_under_the_calls_id(registry: ToolRegistry) -> None:
    earlier = ToolResult("old-id", "add", "native", Disposition.SUCCEEDED, ToolOutput([Json(3)]), ToolOutput([Json(3)]))
    [result] = await run_tool_calls(
        registry, [call("new-id", "add", x=1, y=2)], hooks=[Recorder([], "cache", on_call=SkipWith(result=earlier))]
    )
    assert result.call_id == "new-id" and result.disposition is Disposition.SUCCEEDED
    assert result.output.structured == 3


def test_skip_with_needs_exactly_one_answer() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        SkipWith()
    with pytest.raises(ValueError, match="exactly one"):
        SkipWith("x", result=ToolResult("1", "a", "native", Disposition.SKIPPED, ToolOutput(), ToolOutput()))


async def test_refuse_gives_a_refused_result_with_the_reason_for_the_model(registry: ToolRegistry, ran: Calls) -> None:
    log: list[str] = []
    later = Recorder(log, "later")
    [result] = await run_tool_calls(
        registry,
        [call("1", "add", x=1, y=2)],
        hooks=[Recorder(log, "guard", on_call=Refuse("Adding is disabled today.")), later],
    )
    assert ran.ran == [] and later.calls == []
    assert result.disposition is Disposition.REFUSED and not result.ok
    assert result.presentation.as_text() == "Adding is disabled today."
    assert result.error is not None and result.error.kind is ErrorKind.REFUSED
    assert result.error.model_feedback == "Adding is disabled today."
    assert "Recorder refused the call of 'add'" in result.error.message
    with pytest.raises(ToolExecutionError):
        result.raise_for_error()


async def test_stop_turn_from_on_tool_call_skips_this_call_and_the_rest(registry: ToolRegistry, ran: Calls) -> None:
    class StopOnLookup(Hook):
        async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
            return StopTurn("the user pressed stop") if call.name == "lookup" else Proceed()

    calls = [call("1", "add", x=1, y=1), call("2", "lookup", key="k"), call("3", "add", x=2, y=2)]
    results = await run_tool_calls(registry, calls, hooks=[StopOnLookup()], max_concurrency=1)

    assert results.stopped and results.stop_reason == "the user pressed stop"
    assert ran.ran == ["add"]
    assert [r.disposition for r in results] == [Disposition.SUCCEEDED, Disposition.SKIPPED, Disposition.SKIPPED]
    assert (
        results[1].presentation.as_text() == "This call was not run because the turn was stopped: the user pressed stop"
    )
    assert results[2].name == "add" and results[2].call_id == "3"


# -- on_tool_result -------------------------------------------------------------


async def test_rewrite_presentation_leaves_raw_output_and_metadata_untouched(registry: ToolRegistry) -> None:
    class Redact(Hook):
        async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
            return RewritePresentation(f"[redacted {len(result.presentation)} block]")

    class Shout(Hook):
        async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
            return RewritePresentation(ToolOutput([Text(result.presentation.as_text().upper())]))

    log: list[str] = []
    last = Recorder(log, "last")
    [result] = await run_tool_calls(registry, [call("1", "lookup", key="k")], hooks=[Redact(), Shout(), last])

    assert result.presentation.as_text() == "[REDACTED 1 BLOCK]"
    assert result.output.structured == {"key": "k", "value": "K"}  # raw output as the tool returned it
    assert result.metadata == {"looked_up": "k"}
    assert last.results[0].presentation.as_text() == "[REDACTED 1 BLOCK]"  # rewrites feed the next hook
    assert result.ok


async def test_stop_turn_from_on_tool_result_keeps_the_result_and_ends_the_chain(registry: ToolRegistry) -> None:
    log: list[str] = []
    rewrite = Recorder(log, "rewrite", on_result=RewritePresentation("shown"))
    stop = Recorder(log, "stop", on_result=StopTurn("budget spent"))
    never = Recorder(log, "never")
    results = await run_tool_calls(registry, [call("1", "lookup", key="k")], hooks=[rewrite, stop, never])

    assert results.stop_reason == "budget spent"
    assert results[0].ok and results[0].presentation.as_text() == "shown" and results[0].metadata == {"looked_up": "k"}
    assert never.results == []


# -- on_invalid_tool_call --------------------------------------------------------


async def test_the_problem_says_what_is_wrong(registry: ToolRegistry) -> None:
    log: list[str] = []
    seen = Recorder(log, "seen")
    calls = [
        call("1", "ad", x=1, y=2),
        ToolCall.from_arguments("2", "add", "{oops"),
        ToolCall.from_arguments("3", "add", "[1, 2]"),
        call("4", "add", x=1),
        call("5", "echo", text=3),
    ]
    results = await run_tool_calls(registry, calls, hooks=[seen], max_concurrency=1)

    kinds = [p.kind for p in seen.problems]
    assert kinds == [
        InvalidCallKind.UNKNOWN_NAME,
        InvalidCallKind.INVALID_JSON,
        InvalidCallKind.INVALID_ARGUMENTS,
        InvalidCallKind.INVALID_ARGUMENTS,
        InvalidCallKind.INVALID_ARGUMENTS,
    ]
    unknown, bad_json, not_object, missing, wrong_type = seen.problems
    assert unknown.suggestions == ("add",) and unknown.entry is None
    assert unknown.error.kind is ErrorKind.NOT_FOUND and "Did you mean 'add'?" in unknown.message
    assert bad_json.entry is registry["add"] and "not valid JSON" in bad_json.message
    assert "must be a JSON object" in not_object.message
    assert "y: missing required field" in missing.message
    assert "text: 3 is not of type 'string'" in wrong_type.message
    assert seen.calls == []  # on_tool_call sees only valid calls
    assert all(r.disposition is Disposition.FAILED for r in results)  # every hook deferred: the call fails
    assert [r.error.kind for r in results if r.error] == [ErrorKind.NOT_FOUND] + [ErrorKind.INVALID_ARGUMENTS] * 4


async def test_repair_the_name_and_the_repaired_call_runs_through_call_hooks(
    registry: ToolRegistry, ran: Calls
) -> None:
    class FixTypos(Hook):
        async def on_invalid_tool_call(
            self, call: ToolCall, problem: InvalidCall, ctx: ToolContext[Any]
        ) -> InvalidToolCallAction:
            if problem.kind is InvalidCallKind.UNKNOWN_NAME and problem.suggestions:
                return Repair(name=problem.suggestions[0])
            return Defer()

    log: list[str] = []
    watcher = Recorder(log, "watch")
    results = await run_tool_calls(
        registry,
        [call("1", "ad", x=1, y=2), call("2", "lookp", key="k")],
        hooks=[FixTypos(), DenyTools("lookup"), watcher],
    )
    assert results[0].ok and results[0].name == "add" and results[0].call_id == "1"
    assert results[1].disposition is Disposition.REFUSED  # policy applies to the repaired name
    assert ran.ran == ["add"]
    assert [c.name for c in watcher.calls] == ["add"]


async def test_repair_the_arguments_and_repair_happens_at_most_once(registry: ToolRegistry, ran: Calls) -> None:
    log: list[str] = []
    fixer = Recorder(log, "fix", on_invalid=Repair(arguments={"x": "still wrong"}))
    [still_wrong] = await run_tool_calls(registry, [call("1", "add", x=1)], hooks=[fixer])
    assert len(fixer.problems) == 1  # not asked again about the repaired call
    assert still_wrong.error is not None and still_wrong.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert "x: Input should be a valid integer" in still_wrong.error.message

    good = Recorder([], "fix", on_invalid=Repair(arguments='{"x": 1, "y": 41}'))
    [fixed] = await run_tool_calls(registry, [ToolCall.from_arguments("2", "add", "{x: 1, y: 41}")], hooks=[good])
    assert fixed.ok and fixed.output.structured == 42


async def test_a_tools_own_invalid_arguments_error_goes_through_the_invalid_call_path(
    registry: ToolRegistry, ran: Calls
) -> None:
    fixer = Recorder([], "fix", on_invalid=Repair(arguments={"date": "2026-11-30"}))
    [result] = await run_tool_calls(registry, [call("1", "picky", date="tomorrow")], hooks=[fixer])
    assert result.ok and result.output.as_text() == "2026-11-30"
    assert ran.ran == ["picky", "picky"]
    assert fixer.problems[0].kind is InvalidCallKind.INVALID_ARGUMENTS
    assert fixer.problems[0].message == "date must look like 2026-11-30"


async def test_fail_with_feedback_replaces_what_the_model_is_shown(registry: ToolRegistry) -> None:
    [result] = await run_tool_calls(
        registry, [call("1", "nope")], hooks=[Recorder([], "h", on_invalid=Fail("Use add or lookup."))]
    )
    assert result.disposition is Disposition.FAILED and result.kind == "unknown"
    assert result.presentation.as_text() == "Use add or lookup."
    assert result.error is not None and result.error.model_feedback == "Use add or lookup."
    assert result.error.kind is ErrorKind.NOT_FOUND and "Unknown tool 'nope'" in result.error.message


async def test_skip_and_defer_on_invalid_calls(registry: ToolRegistry) -> None:
    log: list[str] = []
    hooks = [Recorder(log, "a"), Recorder(log, "b", on_invalid=SkipWith("ignored")), Recorder(log, "c")]
    [result] = await run_tool_calls(registry, [call("1", "nope")], hooks=hooks)
    assert result.disposition is Disposition.SKIPPED and result.presentation.as_text() == "ignored"
    assert log == ["a.invalid", "b.invalid", "a.result", "b.result", "c.result"]


def test_repair_needs_a_change() -> None:
    with pytest.raises(ValueError, match=r"name=\.\.\. and/or arguments"):
        Repair()


# -- misbehaving hooks -------------------------------------------------------------


async def test_an_action_of_another_event_is_refused_at_run_time_naming_hook_event_and_action(
    registry: ToolRegistry, ran: Calls
) -> None:
    class Confused(Hook):
        async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
            if call.id == "1":
                return Keep()  # type: ignore[return-value]
            if call.id == "2":
                return None  # type: ignore[return-value]
            return Proceed()

    results = await run_tool_calls(
        registry, [call(str(n), "add", x=n, y=n) for n in (1, 2, 3)], hooks=[Confused()], max_concurrency=1
    )
    first, second, third = results
    assert first.error is not None and first.error.kind is ErrorKind.INTERNAL
    assert first.error.message == (
        "hook test_an_action_of_another_event_is_refused_at_run_time_naming_hook_event_and_action.<locals>."
        "Confused.on_tool_call: returned Keep; on_tool_call must return one of Proceed, RewriteArguments, "
        "SkipWith, Refuse, StopTurn; Keep is an action of on_tool_result"
    )
    assert first.presentation.as_text() == ErrorKind.INTERNAL.default_feedback
    assert second.error is not None and "returned None (a missing return?)" in second.error.message
    assert third.ok and ran.ran == ["add"]  # the turn goes on


async def test_a_hook_that_raises_fails_only_its_call(registry: ToolRegistry) -> None:
    class Flaky(Hook):
        async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
            if call.id == "bad":
                raise KeyError("session token")
            return Proceed()

    results = await run_tool_calls(
        registry, [call("bad", "add", x=1, y=1), call("ok", "add", x=2, y=2)], hooks=[Flaky()]
    )
    bad, ok = results
    assert bad.disposition is Disposition.FAILED and bad.error is not None and bad.error.kind is ErrorKind.INTERNAL
    assert "raised KeyError" in bad.error.message and "session token" not in bad.presentation.as_text()
    assert isinstance(bad.error.__cause__, Exception) and isinstance(bad.error.__cause__.__cause__, KeyError)
    assert ok.ok and ok.output.structured == 4


async def test_a_result_hook_that_raises_keeps_the_raw_output_and_metadata(registry: ToolRegistry) -> None:
    class Broken(Hook):
        async def on_tool_result(self, call: ToolCall, result: ToolResult, ctx: ToolContext[Any]) -> ToolResultAction:
            raise RuntimeError("formatter bug")

    [result] = await run_tool_calls(registry, [call("1", "lookup", key="k")], hooks=[Broken()])
    assert result.disposition is Disposition.FAILED and result.error is not None
    assert result.error.kind is ErrorKind.INTERNAL and "formatter bug" in result.error.message
    assert result.output.structured == {"key": "k", "value": "K"} and result.metadata == {"looked_up": "k"}


async def test_a_rewrite_to_arguments_that_are_not_an_object_fails_the_call(registry: ToolRegistry) -> None:
    [result] = await run_tool_calls(
        registry, [call("1", "add", x=1, y=2)], hooks=[Recorder([], "h", on_call=RewriteArguments("[1, 2]"))]
    )
    assert result.error is not None and result.error.kind is ErrorKind.INTERNAL
    assert "gave arguments for 'add' that cannot be used" in result.error.message


async def test_a_hook_context_that_cannot_be_entered_fails_only_its_call(registry: ToolRegistry, ran: Calls) -> None:
    class NoSlots(Hook):
        def around_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> Any:
            if call.id == "1":
                raise OSError("lock server down")
            return None

    results = await run_tool_calls(
        registry, [call("1", "add", x=1, y=1), call("2", "add", x=2, y=2)], hooks=[NoSlots()]
    )
    assert results[0].error is not None and results[0].error.kind is ErrorKind.INTERNAL
    assert "NoSlots.around_tool_call: raised OSError: lock server down" in results[0].error.message
    assert results[1].ok and ran.ran == ["add"]


# -- stacks ------------------------------------------------------------------------


def test_a_stack_refuses_objects_that_are_not_hooks() -> None:
    with pytest.raises(ConfigurationError, match="is not a hook"):
        HookStack([DenyTools])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="is not a hook"):
        HookStack([Hook()])


async def test_stacks_flatten_and_can_be_used_directly(registry: ToolRegistry) -> None:
    log: list[str] = []
    inner = HookStack([Recorder(log, "a"), Recorder(log, "b", on_call=RewriteArguments({"x": 2, "y": 2}))])
    stack = HookStack([inner, Recorder(log, "c", on_call=Refuse("no"))])
    assert len(stack) == 3 and repr(stack) == "HookStack([Recorder, Recorder, Recorder])"
    assert stack.handles_calls and stack.handles_results and stack.handles_invalid and not stack.holds_calls

    decision = await stack.on_tool_call(call("1", "add", x=1, y=1), registry["add"], ToolContext(call_id="1"))
    assert decision.call.arguments == '{"x":2,"y":2}'
    assert decision.action == Refuse("no") and decision.hook is stack.hooks[2]
    assert log == ["a.call", "b.call", "c.call"]

    results = await run_tool_calls(registry, [call("1", "add", x=1, y=1)], hooks=stack)
    assert results[0].disposition is Disposition.REFUSED


async def test_hooks_see_the_context_the_factory_built(registry: ToolRegistry) -> None:
    seen: list[Any] = []

    class Peek(Hook):
        async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
            seen.append((ctx.call_id, ctx.deps, entry.name))
            return Proceed()

    await run_tool_calls(
        registry,
        [call("c1", "add", x=1, y=1)],
        hooks=[Peek()],
        ctx_factory=lambda c: ToolContext(call_id=c.id, deps="me"),
    )
    assert seen == [("c1", "me", "add")]


# -- the docs ------------------------------------------------------------------------


def test_the_examples_of_the_hooks_guide_run() -> None:
    page = DOCS / "guides" / "hooks-and-policy.md"
    blocks = page_blocks(page)
    assert len(blocks) >= 3
    for block in blocks:
        exec(compile(block.source, str(page), "exec"), {"__name__": "docs_example"})  # each block is a program


def test_invalid_call_kinds_are_strings() -> None:
    assert json.dumps([k.value for k in InvalidCallKind]) == '["unknown_name", "invalid_json", "invalid_arguments"]'
