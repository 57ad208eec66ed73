"""A gateway served on stdin/stdout, for tests/test_gateway_stdio.py: ``python gateway_stdio_main.py [PROFILE]``.

It serves a native tool ``shout`` and the demo fixture server (in-process, as ``demo``),
with a profile ``shouting`` of the native tool alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).parent))

from _mcp import demo_in_process
from toolmesh import Entry, ToolRegistry, tool
from toolmesh.gateway import McpGateway


@tool
async def shout(text: str) -> str:
    """Upper-case the text."""
    return text.upper()


def _native(entry: Entry) -> bool:
    return entry.kind == "native"


async def main(profile: str) -> None:
    async with ToolRegistry() as registry:
        registry.register(shout)
        await registry.connect(demo_in_process())
        await McpGateway(registry, profiles={"shouting": _native}).run_stdio(profile)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "default")
