"""A row's parameters schema as a LangChain tool's ``args_schema``, and what LangChain makes of its ``$ref``s.

The schema crosses as it is. LangChain reads it twice: ``BaseTool.args`` reads its
``properties``, and ``bind_tools`` (``convert_to_openai_tool``) inlines every ``$ref``
before a chat model sees it. That inlining refuses a reference outside the document or
one that does not resolve (``bind_tools`` raises), and cuts a reference cycle to ``{}``
(the model is shown a looser schema than the row's). Both are found here, at export,
without expanding anything: the references form a graph, and the graph is checked.
The schema is server-supplied, so every walk is iterative and bounded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from toolmesh._rows.rows import Entry

__all__ = ["args_schema", "schema_caveat", "schema_left_out"]

MAX_VISITS = 200_000
"""Subschemas visited to check one schema's references; past that the check gives up, and says so."""


class _TooLarge(Exception):
    pass


def args_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as a plain dict (LangChain takes a ``dict``), with ``properties`` on an object schema.

    Raises:
        ValueError: for a schema JSON cannot copy (nested too deeply, for instance).
    """
    try:
        schema: dict[str, Any] = json.loads(json.dumps(parameters))
    except RecursionError as exc:
        raise ValueError("the schema is nested too deeply to copy") from exc
    if schema.get("type") == "object":
        schema.setdefault("properties", {})  # an object schema without properties means the same
    return schema


def schema_left_out(row: Entry) -> str | None:
    """Why LangChain cannot bind the row's schema at all (None: it can)."""
    try:
        _references(args_schema(row.definition.parameters))
    except _TooLarge:
        return None  # schema_caveat says so
    except LookupError as exc:
        return f"LangChain's bind_tools cannot read its parameters schema: {exc.args[0]}"
    except (ValueError, TypeError) as exc:
        return f"its parameters schema cannot be given to LangChain: {exc}"
    return None


def schema_caveat(row: Entry) -> str | None:
    """What LangChain's ``bind_tools`` changes in the row's schema before the model sees it (None: nothing)."""
    try:
        graph = _references(args_schema(row.definition.parameters))
    except _TooLarge:
        return (
            f"its parameters schema is too large to check (over {MAX_VISITS:,} subschemas visited): "
            "LangChain's bind_tools may cut $ref cycles in it"
        )
    except (LookupError, ValueError, TypeError):
        return None  # left out: schema_left_out says why
    cycle = _cycle(graph)
    if cycle is None:
        return None
    return (
        f"its parameters schema refers to itself ({' -> '.join(cycle)}): LangChain's bind_tools inlines "
        "$refs and cuts the cycle to {}, so the model is shown a looser schema than the row's (toolmesh still "
        "checks each call against the row's own)"
    )


def _references(schema: dict[str, Any]) -> dict[str, set[str]]:
    """Each ``$ref`` reachable from the root -> the ``$ref``s in its target (not following them).

    Raises:
        LookupError: a reference outside the document, or one that does not resolve.
        _TooLarge: past ``MAX_VISITS``.
    """
    budget = [MAX_VISITS]
    graph: dict[str, set[str]] = {"#root": _refs_in(schema, budget)}
    pending = list(graph["#root"])
    while pending:
        ref = pending.pop()
        if ref in graph:
            continue
        graph[ref] = found = _refs_in(_resolve(schema, ref), budget)
        pending.extend(found - graph.keys())
    return graph


def _refs_in(node: Any, budget: list[int]) -> set[str]:
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        budget[0] -= 1
        if budget[0] < 0:
            raise _TooLarge
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                found.add(ref)
            stack.extend(value for key, value in item.items() if key != "$ref")
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _resolve(schema: dict[str, Any], ref: str) -> Any:
    if not ref.startswith("#"):
        raise LookupError(f"$ref {ref!r} points outside the schema, and LangChain resolves only '#...' references")
    node: Any = schema
    for part in ref[1:].split("/")[1:] if ref != "#" else ():
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise LookupError(f"$ref {ref!r} does not resolve within the schema")
    return node


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A reference cycle of ``graph`` (its refs in order, the first repeated at the end), or None."""
    on_path: dict[str, int] = {}
    done: set[str] = set()
    path: list[str] = []
    stack: list[tuple[str, list[str]]] = [("#root", sorted(graph["#root"]))]
    on_path["#root"] = 0
    path.append("#root")
    while stack:
        node, edges = stack[-1]
        if not edges:
            stack.pop()
            path.pop()
            del on_path[node]
            done.add(node)
            continue
        nxt = edges.pop()
        if nxt in on_path:
            return [*path[on_path[nxt] :], nxt]
        if nxt in done:
            continue
        on_path[nxt] = len(path)
        path.append(nxt)
        stack.append((nxt, sorted(graph.get(nxt, ()))))
    return None
