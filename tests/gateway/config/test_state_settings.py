"""serve.state, serve.statePrefix and serve.workers: in-process by default, Redis by URL, checked before serving."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolmesh import ServerConfigError
from toolmesh.gateway import GatewayConfig, MemoryState, RedisState, StateConfigError


def _load(folder: Path, document: dict[str, Any]) -> GatewayConfig:
    path = folder / "toolmesh.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return GatewayConfig.load(path)


def test_the_default_state_is_this_process_with_a_prefix_derived_from_the_config(tmp_path: Path) -> None:
    config = _load(tmp_path, {"native": []})
    assert config.serve.state is None and config.serve.workers == 1
    assert isinstance(config.serve.state_backend(), MemoryState)
    same = _load(tmp_path / ".." / tmp_path.name, {"native": [], "serve": {"port": 9000}})
    other = _load(tmp_path, {"native": [], "names": {"dedupe": True}})
    assert config.serve.state_prefix.startswith("toolmesh:") and config.serve.state_prefix.endswith(":")
    assert same.serve.state_prefix == config.serve.state_prefix  # serve settings differ per replica
    assert other.serve.state_prefix != config.serve.state_prefix
    assert config.serve.state_prefix_derived  # toolmesh serve warns that another config shares nothing


def test_a_redis_url_and_a_prefix_make_a_redis_backend(tmp_path: Path) -> None:
    config = _load(
        tmp_path, {"serve": {"state": "redis://127.0.0.1:6390/2", "statePrefix": "toolmesh:prod:", "workers": 2}}
    )
    backend = config.serve.state_backend()
    assert isinstance(backend, RedisState)
    assert backend.prefix == "toolmesh:prod:" and backend.url == "redis://127.0.0.1:6390/2"
    assert not config.serve.state_prefix_derived
    assert config.serve.workers == 2


@pytest.mark.parametrize(
    ("serve", "expected"),
    [
        ({"state": "pg://db/1"}, "key 'serve.state': the state 'pg://db/1' is neither 'memory' nor a Redis URL"),
        ({"state": "redis://:hunter2@h:6379/0"}, "key 'serve.state': the URL 'redis://***@h:6379/0' holds a password"),
        ({"workers": 2, "transport": "stdio"}, "key 'serve.workers': stdio serves one client on one process"),
        ({"statePrefix": "has space"}, "key 'serve.statePrefix': is not a key prefix"),
        ({"workers": 0}, "key 'serve.workers'"),
    ],
)
def test_state_mistakes_name_the_key_and_never_the_password(
    tmp_path: Path, serve: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ServerConfigError) as raised:
        _load(tmp_path, {"serve": serve})
    assert expected in str(raised.value)
    assert "hunter2" not in str(raised.value)


def test_workers_without_a_shared_state_are_refused_once_the_command_line_had_its_say(tmp_path: Path) -> None:
    import dataclasses

    settings = _load(tmp_path, {"serve": {"workers": 3}}).serve  # --state or $TOOLMESH_STATE may still come
    with pytest.raises(StateConfigError, match="3 workers need a shared state backend"):
        settings.check_workers()
    dataclasses.replace(settings, state="redis://127.0.0.1/0").check_workers()
    with pytest.raises(StateConfigError, match="workers apply to HTTP only"):
        dataclasses.replace(settings, state="redis://127.0.0.1/0", transport="stdio")


def test_rate_and_concurrency_limits_come_from_the_policy(tmp_path: Path) -> None:
    from toolmesh.policy import ConcurrencyLimit, RateLimit

    policy = {"rateLimits": [{"calls": 10, "per": 60, "tools": ["notes__*"]}], "concurrencyLimits": [{"limit": 2}]}
    config = _load(tmp_path, {"policy": policy})
    [rate, slots] = config.hooks
    assert isinstance(rate, RateLimit) and (rate.calls, rate.per) == (10, 60)
    assert isinstance(slots, ConcurrencyLimit) and slots.limit == 2
    with pytest.raises(ServerConfigError, match=r"key 'policy.rateLimits\[0\].calls'"):
        _load(tmp_path, {"policy": {"rateLimits": [{"calls": 0}]}})


def test_a_limit_pattern_that_matches_no_tool_is_warned_about(tmp_path: Path) -> None:
    from toolmesh.gateway._config.unmatched import unmatched_patterns

    policy = {"rateLimits": [{"calls": 1, "tools": ["look"]}, {"calls": 2, "tools": ["notes__serch"]}]}
    config = _load(tmp_path, {"policy": {**policy, "concurrencyLimits": [{"limit": 1, "tools": ["wpie"]}]}})
    warnings = unmatched_patterns(config, ["look", "wipe", "notes__search"])
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "key 'policy.rateLimits[1].tools[0]': 'notes__serch' matches no tool. Did you mean 'notes__search'?",
        "key 'policy.concurrencyLimits[0].tools[0]': 'wpie' matches no tool. Did you mean 'wipe'?",
    ]
