"""The official MCP conformance suite judges MCP servers: the fixture every gateway test stands on.

`conformance server --url URL` connects to a server as a client and runs each active server
scenario. The suite runs once per server (Node starts once; ~10 s); each scenario is then
one test that reads that scenario's checks. tests/fixtures/conformance_server.py implements
what the scenarios ask for; judged directly here, it is the baseline for the gateway run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import mcp_types
import pytest

from _conformance import PYTEST_TIMEOUT, Verdict, run_server_suite
from _gateway import serving
from _servers import FIXTURES, http_server, stdio_params
from toolmesh import ElicitationRequest, McpServer, SamplingRequest, ToolRegistry
from toolmesh.gateway import McpGateway

pytestmark = pytest.mark.timeout(PYTEST_TIMEOUT)

CONFORMANCE_SERVER = FIXTURES / "conformance_server.py"

REQUIRED = (
    "server-initialize",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
)
"""The scenarios issue 11 names (every tools-*, resources-*, prompts-*, server-initialize, ping,
dns-rebinding-protection of the active suite)."""

ALSO_DIRECT = (
    "logging-set-level",
    "completion-complete",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "server-sse-multiple-streams",
)
"""The rest of the active suite: the fixture server passes these too, and so does the gateway."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def direct(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Verdict]]:
    """The suite's verdicts on the fixture server itself, over Streamable HTTP."""
    out: Path = tmp_path_factory.mktemp("conformance-direct")
    async with http_server(CONFORMANCE_SERVER) as url:
        yield await run_server_suite(url, out)


async def test_the_suite_ran_every_active_scenario(direct: dict[str, Verdict]) -> None:
    assert set(direct) == {*REQUIRED, *ALSO_DIRECT}


@pytest.mark.parametrize("scenario", REQUIRED + ALSO_DIRECT)
async def test_fixture_server_scenario(direct: dict[str, Verdict], scenario: str) -> None:
    verdict = direct[scenario]
    assert verdict.passed(), verdict.explain()


async def _decline(request: ElicitationRequest) -> mcp_types.ElicitResult:
    return mcp_types.ElicitResult(action="decline")


async def _no_model(request: SamplingRequest) -> mcp_types.CreateMessageResult:
    raise RuntimeError("no model behind this gateway: its clients answer sampling")


@pytest.fixture(scope="module")
async def gateway(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Verdict]]:
    """The suite's verdicts on the gateway serving the fixture server (connected over stdio, prefixes off).

    The registry's own callbacks are what declares elicitation and sampling to the fixture
    server; the gateway answers each call's questions with the suite's client that made it.
    """
    out: Path = tmp_path_factory.mktemp("conformance-gateway")
    command, args, env = stdio_params(CONFORMANCE_SERVER)
    upstream = McpServer.stdio("conformance", command, args, env=env, prefix=False)
    async with ToolRegistry(elicitation=_decline, sampling=_no_model) as registry:
        await registry.connect(upstream)
        async with serving(McpGateway(registry)) as base:
            yield await run_server_suite(f"{base}/mcp", out)


async def test_the_suite_ran_every_scenario_through_the_gateway(gateway: dict[str, Verdict]) -> None:
    assert set(gateway) == {*REQUIRED, *ALSO_DIRECT}


@pytest.mark.parametrize("scenario", REQUIRED + ALSO_DIRECT)
async def test_gateway_scenario(gateway: dict[str, Verdict], scenario: str) -> None:
    verdict = gateway[scenario]
    assert verdict.passed(), verdict.explain()
