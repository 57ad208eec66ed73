"""A toolmesh host for the official conformance suite's client scenarios.

`conformance client --command "python tests/conformance/client.py" --scenario X` starts the
scenario's server, then runs this program with the server's URL as its last argument and
``MCP_CONFORMANCE_SCENARIO=X``. It connects a `ToolRegistry` to that URL the way a host
would (`McpServer.http`) and does what the scenario asks; the suite judges what reached
its server. Exit code 0 when the host saw what it expected, 1 (with the reason on stderr)
otherwise.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable

import anyio
import mcp_types
from _oauth import headless_oauth

from toolmesh import ElicitationRequest, McpServer, ToolRegistry, ToolResult

Scenario = Callable[[ToolRegistry], Awaitable[None]]


class ScenarioFailed(Exception):
    """What the host saw was not what the scenario's server should have answered."""


def _expect_text(result: ToolResult, expected: str) -> None:
    text = result.presentation.as_text()
    if result.disposition != "succeeded" or expected not in text:
        raise ScenarioFailed(f"expected a succeeded result containing {expected!r}, got {result.disposition}: {text}")


async def initialize(registry: ToolRegistry) -> None:
    """Connecting is the scenario: the handshake and the tool listing."""


async def tools_call(registry: ToolRegistry) -> None:
    result = await registry.dispatch("add_numbers", {"a": 5, "b": 3})
    _expect_text(result, "The sum of 5 and 3 is 8")


async def sse_retry(registry: ToolRegistry) -> None:
    result = await registry.dispatch("test_reconnection", {})
    _expect_text(result, "Reconnection test completed successfully")


async def elicitation_defaults(registry: ToolRegistry) -> None:
    """SEP-1034: the server asks for a form whose fields all have defaults; the user accepts it as shown."""
    result = await registry.dispatch("test_client_elicitation_defaults", {})
    _expect_text(result, "Elicitation completed")


async def accept_as_shown(request: ElicitationRequest) -> mcp_types.ElicitResult:
    """The user accepts the form without changing it: toolmesh fills in the fields' defaults (SEP-1034)."""
    return mcp_types.ElicitResult(action="accept", content={})


SCENARIOS: dict[str, Scenario] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "sse-retry": sse_retry,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
}


async def authorized(registry: ToolRegistry) -> None:
    """OAuth scenarios: connecting (through the authorization flow) and calling each tool is the test."""
    for name in registry.names():
        await registry.dispatch(name, {})


async def run(scenario: str, url: str) -> None:
    asks_user = scenario.startswith("elicitation")
    auth = headless_oauth(url) if scenario.startswith("auth/") else None
    server = McpServer.http("conformance", url, auth=auth, prefix=False, timeout=30, call_timeout=30)
    async with ToolRegistry(elicitation=accept_as_shown) if asks_user else ToolRegistry() as registry:
        await registry.connect(server)
        await SCENARIOS.get(scenario, authorized)(registry)


def main(argv: list[str]) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if len(argv) < 2 or not (scenario in SCENARIOS or scenario.startswith("auth/")):
        print(f"usage: MCP_CONFORMANCE_SCENARIO=<{'|'.join(SCENARIOS)}|auth/...> client.py URL", file=sys.stderr)
        return 2
    try:
        anyio.run(run, scenario, argv[-1])
    except ScenarioFailed as exc:
        print(f"{scenario}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
