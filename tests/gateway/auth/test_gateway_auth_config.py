"""``serve.auth.oauth`` and ``policy.callers`` of toolmesh.json, and per-caller rules and rate limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolmesh import ErrorKind, Identity, ServerConfigError, ToolCall, ToolContext, ToolRegistry, run_tool_calls, tool
from toolmesh.gateway import AccessRule, GatewayConfig
from toolmesh.policy import DenyTools, ForCallers, RateLimit

OAUTH = {
    "issuer": "https://as.example.com",
    "resource": "https://tools.example.com/mcp",
    "jwksUri": "https://as.example.com/jwks.json",
    "scopes": ["mcp"],
    "profiles": {"reader": {"scopes": ["tools:read"]}, "default": {"claims": {"groups": ["admins"]}}},
    "claims": ["groups"],
    "leewaySeconds": 30,
}


def _load(folder: Path, document: dict[str, Any]) -> GatewayConfig:
    path = folder / "toolmesh.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return GatewayConfig.load(path)


def test_the_oauth_section_becomes_the_http_settings(tmp_path: Path) -> None:
    config = _load(
        tmp_path, {"profiles": {"reader": {"readOnly": True}}, "serve": {"host": "0.0.0.0", "auth": {"oauth": OAUTH}}}
    )
    oauth = config.serve.http_settings().oauth
    assert oauth is not None and oauth.issuer == "https://as.example.com" and oauth.leeway == 30
    assert oauth.rule("reader") == AccessRule(scopes=("mcp", "tools:read"))
    assert oauth.rule("default").claims == {"groups": ("admins",)}
    assert oauth.claims == ("groups",)  # OAuth alone may serve a host that is not loopback


@pytest.mark.parametrize(
    ("oauth", "expected"),
    [
        ({**OAUTH, "profiles": {"nope": {}}}, "'serve.auth.oauth.profiles.nope': no profile 'nope'"),
        ({**OAUTH, "issuer": "http://as.example.com"}, "must be an https URL"),
        ({**OAUTH, "resource": "https://tools.example.com/mcp?x=1"}, "no query or fragment"),
        ({**OAUTH, "algorithms": ["HS256"]}, "not accepted"),
        ({**OAUTH, "resource": "https://tools.example.com/api"}, "must end with its path '/mcp'"),
        (
            {**OAUTH, "introspection": {"url": "https://as/i", "clientId": "gw", "clientSecretEnv": "NOPE_SECRET_X"}},
            "'NOPE_SECRET_X' is not set",
        ),
        ({**OAUTH, "clientSecret": "hunter2"}, "unknown key"),
    ],
)
def test_oauth_mistakes_name_the_key(tmp_path: Path, oauth: dict[str, Any], expected: str) -> None:
    oauth = {key: value for key, value in oauth.items() if value is not None}
    with pytest.raises(ServerConfigError) as refused:
        _load(tmp_path, {"profiles": {"reader": {}}, "serve": {"auth": {"oauth": oauth}}})
    assert expected in str(refused.value) and "serve.auth.oauth" in str(refused.value)
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize(
    ("oauth", "key"),
    [
        ({**OAUTH, "issuer": "login.example.com"}, "serve.auth.oauth.issuer"),
        ({**OAUTH, "jwksUri": "http://as.example.com/jwks.json"}, "serve.auth.oauth.jwksUri"),
    ],
)
def test_oauth_mistakes_speak_of_json_keys_not_python_fields(tmp_path: Path, oauth: dict[str, Any], key: str) -> None:
    oauth = {name: value for name, value in oauth.items() if value is not None}
    with pytest.raises(ServerConfigError) as refused:
        _load(tmp_path, {"serve": {"auth": {"oauth": oauth}}})
    said = str(refused.value)
    assert f"key '{key}'" in said and "OAuthSettings" not in said and "jwks_uri (" not in said


def test_policy_callers_become_for_callers_hooks(tmp_path: Path) -> None:
    callers = [
        {"scopes": ["tools:read"], "denyTools": ["*wipe*"]},
        {"subjects": ["ci-*"], "rateLimit": {"calls": 5, "per": 60}},
    ]
    config = _load(tmp_path, {"policy": {"denyTools": ["x"], "callers": callers}})
    deny, readers, ci = config.hooks
    assert isinstance(deny, DenyTools)
    assert isinstance(readers, ForCallers) and readers.scopes == ("tools:read",)
    assert isinstance(ci, ForCallers) and ci.subjects == ("ci-*",)
    [limit] = ci.hooks
    assert isinstance(limit, RateLimit) and limit.per_caller and limit.calls == 5
    with pytest.raises(ServerConfigError) as refused:
        _load(tmp_path, {"policy": {"callers": [{"scopes": ["a"]}]}})
    assert "policy.callers[0]" in str(refused.value)


@tool
async def wipe(path: str) -> str:
    """Delete something."""
    return f"wiped {path}"


async def test_caller_rules_refuse_and_limit_each_caller_on_its_own() -> None:
    registry = ToolRegistry()
    registry.register(wipe)
    hooks = [
        ForCallers(DenyTools("wipe"), scopes=("tools:read",)),
        ForCallers(RateLimit(2, 3600, per_caller=True), subjects=("*",)),
    ]
    reader = Identity(subject="bob", scopes=frozenset({"tools:read"}))
    alice, carol = Identity(subject="alice"), Identity(subject="carol")

    async def call(who: Identity | None) -> Any:
        snapshot = registry.snapshot()
        turn = await run_tool_calls(
            snapshot,
            [ToolCall.from_arguments("c", "wipe", {"path": "/"})],
            ctx_factory=lambda call: ToolContext(call_id=call.id, identity=who),
            hooks=hooks,
        )
        return turn.results[0]

    refused = await call(reader)
    assert refused.disposition == "refused" and "not allowed" in refused.presentation.as_text()
    alices = [await call(alice) for _ in range(3)]
    assert [r.disposition for r in alices] == ["succeeded", "succeeded", "refused"]
    assert alices[2].error is not None and alices[2].error.kind is ErrorKind.RATE_LIMITED
    assert (await call(carol)).disposition == "succeeded"  # carol has her own bucket
    assert (await call(None)).disposition == "succeeded"  # no identity: no rule for callers applies
