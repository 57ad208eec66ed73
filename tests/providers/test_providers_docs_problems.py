"""The providers guide's table of argument problems quotes what ``parse_tool_calls`` says, row by row."""

from __future__ import annotations

import re
from typing import Any

from _docs import DOCS
from toolmesh import ToolCall
from toolmesh.providers import anthropic, gemini, openai

PAGE = DOCS / "guides" / "providers.md"


def _deep_mapping(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth):
        node["x"] = {}
        node = node["x"]
    return root


def _text(arguments: str) -> ToolCall:
    message = {"tool_calls": [{"id": "c1", "function": {"name": "add", "arguments": arguments}}]}
    (call,) = openai.parse_tool_calls(message)
    return call


def _mapping(arguments: Any) -> list[ToolCall]:
    return [
        *anthropic.parse_tool_calls([{"type": "tool_use", "id": "c1", "name": "add", "input": arguments}]),
        *gemini.parse_tool_calls([{"function_call": {"id": "c1", "name": "add", "args": arguments}}]),
    ]


ROWS: dict[str, list[ToolCall]] = {
    '`{"x": 1`': [_text('{"x": 1')],
    "`[1, 2]`": [_text("[1, 2]")],
    '`{"x": NaN}`': [_text('{"x": NaN}')],
    'a mapping holding `float("nan")`': _mapping({"x": float("nan")}),
    "an integer of 5,000 digits": [_text('{"x": ' + "7" * 5_000 + "}"), *_mapping({"x": 7 * 10**5_000})],
    "100,000 nested arrays": [_text('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}")],
    "a mapping nested 100,000 levels deep": _mapping(_deep_mapping(100_000)),
    "a mapping holding a value JSON cannot carry": _mapping({"x": object()}),
}


def _table() -> dict[str, str]:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("| the model's arguments | `call.problem` |")
    rows: dict[str, str] = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        case, problem = (cell.strip() for cell in line.strip("|").split(" | "))
        (quoted,) = re.fullmatch(r"`(.*)`", problem).groups()  # type: ignore[union-attr]
        rows[case] = quoted
    return rows


def test_every_documented_problem_is_the_text_parse_tool_calls_gives() -> None:
    table = _table()
    assert len(table) == len(ROWS)
    for case, calls in ROWS.items():
        (documented,) = [problem for row, problem in table.items() if row.startswith(case)]
        for call in calls:
            assert call.problem is not None, case
            if documented.endswith("(...)"):
                assert call.problem.startswith(documented.removesuffix("(...)")), (case, call.problem)
            else:
                assert call.problem == documented, (case, call.problem)
