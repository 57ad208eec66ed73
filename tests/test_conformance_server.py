"""The official MCP conformance suite judges MCP servers: the fixture every gateway test stands on.

`conformance server --url URL` connects to a server as a client and runs each active server
scenario. The suite runs once per server (Node starts once; ~10 s); each scenario is then
one test that reads that scenario's checks. tests/fixtures/conformance_server.py implements
what the scenarios ask for; judged directly here, it is the baseline for the gateway run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from _conformance import PYTEST_TIMEOUT, Verdict, run_server_suite
from _servers import FIXTURES, http_server

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
"""The rest of the active suite: the fixture server passes these too."""


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
