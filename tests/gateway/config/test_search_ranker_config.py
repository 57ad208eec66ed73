"""toolmesh.json's search.ranker: a host ranker loaded from a file or module into the gateway's registry."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from _gateway import client, serving
from toolmesh import ConfigurationError
from toolmesh.gateway import GatewayConfig, McpGateway
from toolmesh.mcp import ServerConfigError

TOOLS = '''
from toolmesh import tool


@tool
async def get_weather_forecast(city: str) -> str:
    """Forecast the weather of a city."""
    return f"sunny in {city}"


@tool
async def send_email(to: str, body: str) -> str:
    """Send an email message."""
    return f"sent to {to}"


tools = [get_weather_forecast, send_email]
'''

RANKER = '''
async def ranker(query, rows):
    """Umbrellas mean weather: what a real embedding ranker would know."""
    return {"get_weather_forecast": 1.0} if "umbrella" in query else {}


not_a_ranker = 42


def wrong_arity(query):
    return {}
'''


def _config(tmp_path: Path, ranker: str | None) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    (tmp_path / "rank.py").write_text(RANKER, encoding="utf-8")
    document: dict[str, object] = {"native": ["tools.py:tools"], "profiles": {"lean": {"search": True}}}
    if ranker is not None:
        document["search"] = {"ranker": ranker}
    path = tmp_path / "toolmesh.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


async def test_a_search_profile_ranks_with_the_configured_ranker(tmp_path: Path) -> None:
    config = GatewayConfig.load(_config(tmp_path, "rank.py:ranker"))
    registry = config.registry()
    assert await registry.asearch("do I need an umbrella") != []
    assert await GatewayConfig.load(_config(tmp_path, None)).registry().asearch("do I need an umbrella") == []
    with anyio.fail_after(60):
        async with registry:
            gateway = McpGateway(registry, profiles={"lean": lambda row: True}, search=["lean"])
            async with serving(gateway) as base, client(f"{base}/lean/mcp") as session:
                found = await session.call_tool("search_tools", {"query": "do I need an umbrella"})
                assert not found.is_error
                assert [t["name"] for t in found.structured_content["tools"]] == ["get_weather_forecast"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("rank.py:not_a_ranker", "rank.py:not_a_ranker is int, not a ranker"),
        ("rank.py:wrong_arity", "is function, not a ranker"),
        ("rank.py:rankr", "did you mean 'ranker'?"),
    ],
)
def test_a_ranker_that_does_not_load_is_a_configuration_error(tmp_path: Path, spec: str, words: str) -> None:
    config = GatewayConfig.load(_config(tmp_path, spec))
    with pytest.raises(ConfigurationError, match=r"key 'search\.ranker'") as caught:
        config.registry()
    assert words in str(caught.value)


def test_a_missing_ranker_file_and_unknown_search_keys_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ServerConfigError, match=r"search\.ranker") as caught:
        GatewayConfig.load(_config(tmp_path, "missing.py:ranker"))
    assert "no file 'missing.py'" in str(caught.value)
    path = _config(tmp_path, "rank.py:ranker")
    document = json.loads(path.read_text(encoding="utf-8"))
    document["search"]["model"] = "minilm"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ServerConfigError, match=r"search\.model"):
        GatewayConfig.load(path)
