"""What declaring a catalog costs per turn: ``tools(snapshot)`` for every provider format.

Run:  .venv/bin/python bench/provider_export.py [--rows 10000] [--rounds 5]

A host sends the whole catalog to the model on every turn. Rows never change, so each
provider format caches a row's declaration per (row, format options): the first export
builds it, later turns reuse it. This prints, for ``--rows`` realistic rows (about
190-character descriptions and 640-byte parameter schemas, most of them
strict-compatible), per provider and strict mode:

1. the first export (every declaration built: schema copied, or rewritten for strict);
2. a later export (the cached declarations, in a fresh list with fresh top-level dicts);
3. the hand-written floor: a comprehension building the same dicts (for Gemini, the
   same ``FunctionDeclaration``s) from the rows' definitions, sharing their schemas;
4. for reference, a later export deep-copied per turn (``copy.deepcopy``), the
   alternative to read-only cached parts that was measured and rejected.

Times are the best of ``--rounds`` rounds with the garbage collector paused (as ``timeit``
does), in milliseconds per export of the whole catalog.
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import time
from collections.abc import Callable
from typing import Any

from _realistic import DESCRIPTION, schema

from toolmesh import ToolRegistry, ToolSnapshot
from toolmesh.providers import anthropic, gemini, openai, openai_responses


async def _handler(arguments: dict[str, Any]) -> str:
    return ""


def _catalog(rows: int) -> ToolSnapshot:
    registry = ToolRegistry()
    for i in range(rows):
        registry.register_dynamic(f"search_issues_{i}", schema(i), _handler, description=DESCRIPTION)
    return registry.snapshot()


def _best(run: Callable[[], object], rounds: int, before: Callable[[], None] | None = None) -> float:
    best = float("inf")
    for _ in range(rounds):
        if before is not None:
            before()
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best * 1000


def _floors(snapshot: ToolSnapshot) -> dict[str, Callable[[bool], object]]:
    from google.genai import types

    def chat(strict: bool) -> object:
        if strict:
            return [
                {
                    "type": "function",
                    "function": {
                        "name": d.name,
                        "description": d.description,
                        "parameters": d.parameters,
                        "strict": True,
                    },
                }
                for d in (row.definition for row in snapshot)
            ]
        return [
            {"type": "function", "function": {"name": d.name, "description": d.description, "parameters": d.parameters}}
            for d in (row.definition for row in snapshot)
        ]

    def responses(strict: bool) -> object:
        return [
            {
                "type": "function",
                "name": d.name,
                "description": d.description,
                "parameters": d.parameters,
                "strict": strict,
            }
            for d in (row.definition for row in snapshot)
        ]

    def claude(strict: bool) -> object:
        return [
            {"name": d.name, "description": d.description, "input_schema": d.parameters}
            for d in (row.definition for row in snapshot)
        ]

    def google(strict: bool) -> object:
        return [
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name=d.name, description=d.description, parameters_json_schema=d.parameters
                    )
                    for d in (row.definition for row in snapshot)
                ]
            )
        ]

    return {"openai chat": chat, "openai responses": responses, "anthropic": claude, "gemini": google}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="measure only the providers whose label contains this")
    args = parser.parse_args()
    run(args.rows, args.rounds, args.only)


def run(rows: int, rounds: int, only: str = "") -> None:
    """Print, per provider format and strict mode, the first, later and floor exports of ``rows`` rows."""
    snapshot = _catalog(rows)
    sample = next(iter(snapshot)).definition
    print(
        f"{rows} rows: descriptions {len(sample.description)} characters, "
        f"schemas {len(__import__('json').dumps(sample.parameters))} bytes; load average {os.getloadavg()[0]:.2f}"
    )

    def forget() -> None:
        for row in snapshot:
            row.definition._declarations.clear()

    exports: dict[str, Callable[[bool], object]] = {
        "openai chat": lambda strict: openai.tools(snapshot, strict=strict),
        "openai responses": lambda strict: openai_responses.tools(snapshot, strict=strict),
        "anthropic": lambda strict: anthropic.tools(snapshot),
        "gemini": lambda strict: gemini.tools(snapshot),
    }
    floors = _floors(snapshot)
    print(f"{'provider':<26}{'first ms':>10}{'later ms':>10}{'floor ms':>10}{'later/floor':>13}{'deepcopy ms':>13}")
    for provider, export in exports.items():
        if only not in provider:
            continue
        for strict in (False, True) if provider.startswith("openai") else (False,):
            _report(f"{provider}{' strict' if strict else ''}", export, floors[provider], strict, rounds, forget)


def _report(
    label: str,
    export: Callable[[bool], object],
    floor: Callable[[bool], object],
    strict: bool,
    rounds: int,
    forget: Callable[[], None],
) -> None:
    first = _best(lambda: export(strict), max(1, rounds // 2), before=forget)
    export(strict)
    later = _best(lambda: export(strict), rounds)
    hand = _best(lambda: floor(strict), rounds)
    copied = _best(lambda: copy.deepcopy(export(strict)), max(1, rounds // 2))
    print(f"{label:<26}{first:>10.1f}{later:>10.1f}{hand:>10.1f}{later / hand:>12.2f}x{copied:>13.1f}")


if __name__ == "__main__":
    main()
