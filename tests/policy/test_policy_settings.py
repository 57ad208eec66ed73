"""Bad policy settings raise ConfigurationError, and the four Allow/Deny rules share one pattern rule."""

from __future__ import annotations

from typing import Any

import pytest

from toolmesh import ConfigurationError, ToolmeshError
from toolmesh.policy import (
    AllowServers,
    AllowTools,
    ArgumentSizeLimit,
    ConcurrencyLimit,
    DenyAnnotated,
    DenyServers,
    DenyTools,
    RateLimit,
)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: AllowTools(), "AllowTools needs one or more fnmatch patterns"),
        (lambda: DenyTools(3), "DenyTools needs one or more fnmatch patterns"),
        (lambda: AllowServers(), "AllowServers needs one or more fnmatch patterns"),
        (lambda: DenyServers(None), "DenyServers needs one or more fnmatch patterns"),
        (lambda: DenyAnnotated(), "at least one hint"),
        (lambda: ConcurrencyLimit(0), "ConcurrencyLimit needs a limit of at least 1"),
        (lambda: ConcurrencyLimit(2, tools=[]), r"ConcurrencyLimit\(tools=...\) needs one or more"),
        (lambda: RateLimit(0), "RateLimit needs calls >= 1"),
        (lambda: RateLimit(1, per=0), "RateLimit needs calls >= 1 and per > 0"),
        (lambda: RateLimit(1, tools=[1]), r"RateLimit\(tools=...\) needs one or more"),
        (lambda: ArgumentSizeLimit(1), "ArgumentSizeLimit needs max_bytes of at least 2"),
    ],
)
def test_bad_policy_settings_raise_configuration_error(make: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as caught:
        make()
    assert isinstance(caught.value, ToolmeshError)
    assert not isinstance(caught.value, ValueError | TypeError)


def test_allow_and_deny_rules_keep_their_patterns_and_repr() -> None:
    for rule_type in (AllowTools, DenyTools, AllowServers, DenyServers):
        rule = rule_type("fs__*", "git__*")
        assert rule.patterns == ("fs__*", "git__*")
        assert repr(rule) == f"{rule_type.__name__}('fs__*', 'git__*')"
