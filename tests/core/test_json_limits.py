"""The nesting scan measures JSON text as the parser would nest it, before anything is built."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolmesh._core.arguments import decode_json
from toolmesh._core.calls import ToolCall
from toolmesh._core.json_limits import DEFAULT_MAX_DEPTH, JsonTooDeep, nesting_exceeds, parse_json

TRICKY = st.text(st.sampled_from('[]{}"\\/ab\n\x00é\U0001f600'), max_size=12)
"""Strings full of what the scan looks for: brackets, quotes and backslashes (escaped in the JSON text)."""

VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), TRICKY),
    lambda children: st.one_of(st.lists(children, max_size=3), st.dictionaries(TRICKY, children, max_size=3)),
    max_leaves=30,
)


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


def _nest(value: Any, levels: int) -> Any:
    for index in range(levels):
        value = [value] if index % 2 else {"k": value}
    return value


@settings(max_examples=300, deadline=None, database=None)
@given(value=VALUES, extra=st.integers(0, 140), pad=st.integers(0, 70_000), ascii_only=st.booleans())
def test_the_scan_gives_the_depth_the_value_has(value: Any, extra: int, pad: int, ascii_only: bool) -> None:
    nested = _nest(value, extra)
    # a long string first moves every bracket across the scan's 64 KiB pieces
    text = json.dumps(["[" * pad + '"\\', nested], ensure_ascii=ascii_only)
    depth = 1 + _depth(nested)
    for limit in (depth - 1, depth):
        assert nesting_exceeds(text, limit) is (depth > limit)
        assert nesting_exceeds(text.encode("utf-8"), limit) is (depth > limit)
    assert parse_json(text, max_depth=depth) == ["[" * pad + '"\\', nested]


def test_nesting_far_past_the_recursion_limit_is_refused_unparsed() -> None:
    for text in ("[" * 1_000_000, _deep_object(100_000), '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}"):
        with pytest.raises(JsonTooDeep) as caught:
            parse_json(text)
        assert caught.value.limit == DEFAULT_MAX_DEPTH
        assert str(caught.value) == "the JSON is nested too deeply (more than 128 levels of arrays and objects)"


def _deep_object(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


def test_what_the_parser_never_nests_into_does_not_count() -> None:
    assert parse_json('["' + "[" * 10_000 + '"]') == ["[" * 10_000]  # a string
    assert parse_json('["\\"' + "{" * 10_000 + '"]') == ['"' + "{" * 10_000]  # after an escaped quote
    with pytest.raises(json.JSONDecodeError):  # an unterminated string: the parser stops at it
        parse_json('"abc' + "[" * 10_000)
    with pytest.raises(ValueError):  # invalid before it nests: refused one way or the other, never recursed into
        parse_json("[]]" + "[" * 10_000)


def test_bytes_are_utf8() -> None:
    assert parse_json('{"é": "😀"}'.encode()) == {"é": "😀"}
    with pytest.raises(UnicodeDecodeError):
        parse_json('["x"]'.encode("utf-16"))


def test_tool_call_arguments_deeper_than_any_row_reads_are_refused_before_parsing() -> None:
    deep = '{"x": ' + "[" * 200 + "]" * 200 + "}"
    assert decode_json(deep.replace("[", "", 1).replace("]", "", 1)) is not None  # 200 levels: read
    with pytest.raises(ValueError, match=r"nested too deeply to parse \(more than 200 levels\)"):
        decode_json(deep)
    call = ToolCall.from_arguments("c1", "tool", deep)
    assert call.problem is not None and "nested too deeply" in call.problem and call.arguments == deep
