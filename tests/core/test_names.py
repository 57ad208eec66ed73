"""NamePolicy: provider rules, sanitization, aliases, collisions and de-duplication."""

from __future__ import annotations

import hashlib
import logging
import re

import pytest

from toolmesh import PROVIDER_RULES, ConfigurationError, NameCollisionError, NamePolicy, NameRule

# -- the rules, case by case ---------------------------------------------------------

VALID = {
    "openai": ["a", "get_weather", "get-weather", "A1", "_", "-", "9lives", "x" * 64],
    "anthropic": ["a", "get_weather", "get-weather", "9lives", "x" * 64, "x" * 128],
    "gemini": ["a", "_private", "get.weather", "ns:tool", "get-weather", "A" + "x" * 63],
    "mcp": ["a", "get.weather", "get-weather", "get_weather", "9lives", "-", "x" * 128],
}

INVALID = {
    "openai": ["", "get.weather", "a/b", "a b", "ns:tool", "café", "x" * 65, "a\n"],
    "anthropic": ["", "get.weather", "a/b", "a b", "ns:tool", "x" * 129, "a\n"],
    "gemini": ["", "9lives", "-x", ".x", "a/b", "a b", "x" * 65, "a\n"],
    "mcp": ["", "a/b", "a b", "ns:tool", "café", "x" * 129, "a\n"],
}


@pytest.mark.parametrize(("provider", "name"), [(p, n) for p, names in VALID.items() for n in names])
def test_valid_names(provider: str, name: str) -> None:
    assert NamePolicy(provider=provider).is_valid(name)
    assert PROVIDER_RULES[provider].matches(name)


@pytest.mark.parametrize(("provider", "name"), [(p, n) for p, names in INVALID.items() for n in names])
def test_invalid_names(provider: str, name: str) -> None:
    assert not NamePolicy(provider=provider).is_valid(name)


def test_rule_patterns_match_the_documented_regexes() -> None:
    assert PROVIDER_RULES["openai"].pattern == "^[a-zA-Z0-9_-]{1,64}$"
    assert PROVIDER_RULES["anthropic"].pattern == "^[a-zA-Z0-9_-]{1,128}$"
    assert PROVIDER_RULES["gemini"].pattern == "^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$"
    assert PROVIDER_RULES["mcp"].pattern == "^[A-Za-z0-9._-]{1,128}$"
    for rule in PROVIDER_RULES.values():
        assert rule.source.startswith("https://")


@pytest.mark.parametrize("provider", sorted(PROVIDER_RULES))
def test_rule_pattern_agrees_with_matches(provider: str) -> None:
    rule = PROVIDER_RULES[provider]
    for name in VALID[provider] + INVALID[provider]:
        assert rule.matches(name) == (re.fullmatch(rule.pattern.strip("^$"), name) is not None)


def test_no_provider_means_the_mcp_rule() -> None:
    policy = NamePolicy()
    assert policy.rule is PROVIDER_RULES["mcp"]
    assert policy.is_valid("docs.search")
    assert not policy.is_valid("docs/search")


def test_non_strings_are_not_valid() -> None:
    assert not NamePolicy().is_valid(None)
    assert not NamePolicy().is_valid(42)


def test_provider_rules_are_read_only() -> None:
    with pytest.raises(TypeError):
        PROVIDER_RULES["x"] = PROVIDER_RULES["mcp"]  # type: ignore[index]


def test_unknown_provider_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown provider 'opneai'; use one of 'anthropic', 'gemini'"):
        NamePolicy(provider="opneai")


def test_a_custom_rule_can_be_given() -> None:
    rule = NameRule("short", "a-z_", 16)
    policy = NamePolicy(provider=rule)
    assert policy.rule is rule
    assert policy.sanitize("Hello World") == "_ello__orld"
    assert len(policy.sanitize("a" * 40)) == 16


def test_a_rule_must_accept_underscore() -> None:
    with pytest.raises(ConfigurationError, match="'_' must be an allowed"):
        NameRule("digits", "0-9", 32)


@pytest.mark.parametrize("template", ["{server}", "{server}__{tool}__{x}", "{tool}{", "{0}{tool}"])
def test_bad_templates_are_refused(template: str) -> None:
    with pytest.raises(ConfigurationError, match="template"):
        NamePolicy(template=template)


# -- sanitization ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "name", "expected"),
    [
        ("openai", "docs.search", "docs_search"),
        ("openai", "fs/read file", "fs_read_file"),
        ("openai", "ns:tool", "ns_tool"),
        ("openai", "café", "caf_"),
        ("openai", "", "_"),
        ("anthropic", "docs.search", "docs_search"),
        ("gemini", "docs.search", "docs.search"),
        ("gemini", "ns:tool", "ns:tool"),
        ("gemini", "9lives", "_9lives"),
        ("gemini", "-x", "_-x"),
        ("gemini", "a/b", "a_b"),
        ("mcp", "ns:tool", "ns_tool"),
        ("mcp", "docs.search", "docs.search"),
    ],
)
def test_sanitize_replaces_rejected_characters(provider: str, name: str, expected: str) -> None:
    policy = NamePolicy(provider=provider)
    assert policy.sanitize(name) == expected
    assert policy.is_valid(expected)


@pytest.mark.parametrize("provider", sorted(PROVIDER_RULES))
def test_valid_names_are_unchanged(provider: str) -> None:
    policy = NamePolicy(provider=provider)
    for name in VALID[provider]:
        assert policy.sanitize(name) == name


@pytest.mark.parametrize("provider", sorted(PROVIDER_RULES))
def test_long_names_are_shortened_to_exactly_the_maximum_with_a_hash(provider: str) -> None:
    policy = NamePolicy(provider=provider)
    limit = policy.rule.max_length
    name = "a" * (limit + 30)
    short = policy.sanitize(name)
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    assert len(short) == limit
    assert short == "a" * (limit - 9) + "_" + digest
    assert policy.is_valid(short)


def test_shortening_distinguishes_names_with_a_common_prefix() -> None:
    policy = NamePolicy(provider="openai")
    one = policy.sanitize("x" * 70 + "one")
    two = policy.sanitize("x" * 70 + "two")
    assert one != two
    assert one[:55] == two[:55]


def test_shortening_hashes_the_original_name_not_the_sanitized_one() -> None:
    policy = NamePolicy(provider="openai")
    assert policy.sanitize("a.b" * 30) != policy.sanitize("a/b" * 30)


@pytest.mark.parametrize("provider", sorted(PROVIDER_RULES))
def test_sanitize_is_deterministic_idempotent_and_always_valid(provider: str) -> None:
    policy = NamePolicy(provider=provider)
    samples = ["", "1", "ü" * 200, "a b/c.d:e", "-" * 300, "😀tool", "\x00", *INVALID[provider]]
    for name in samples:
        once = policy.sanitize(name)
        assert policy.is_valid(once), (name, once)
        assert policy.sanitize(name) == once
        assert NamePolicy(provider=provider).sanitize(name) == once
        assert policy.sanitize(once) == once


def test_sanitize_is_stable_across_processes() -> None:
    # A pinned value: the suffix is sha256, not Python's per-process str hash.
    assert NamePolicy(provider="openai").sanitize("t" * 100) == "t" * 55 + "_0fe47695"


# -- model names and alias precedence --------------------------------------------------


def test_default_template_prefixes_with_the_server_label() -> None:
    assert NamePolicy().model_name("docs", "search") == "docs__search"


def test_prefix_off_uses_the_raw_name() -> None:
    assert NamePolicy().model_name("docs", "search", prefix=False) == "search"


def test_custom_template() -> None:
    assert NamePolicy(template="{tool}_at_{server}").model_name("docs", "search") == "search_at_docs"
    assert NamePolicy(template="mcp-{tool}").model_name("docs", "search") == "mcp-search"


def test_model_names_are_sanitized_for_the_provider() -> None:
    assert NamePolicy(provider="openai").model_name("docs", "search.v2") == "docs__search_v2"
    assert NamePolicy(provider="gemini").model_name("docs", "search.v2") == "docs__search.v2"
    long = NamePolicy(provider="openai").model_name("docs", "x" * 80)
    assert len(long) == 64


def test_explicit_alias_beats_alias_function_beats_template() -> None:
    policy = NamePolicy(alias=lambda server, tool: f"fn_{tool}" if tool != "plain" else None)
    aliases = {"search": "find_docs"}
    assert policy.model_name("docs", "search", aliases=aliases) == "find_docs"
    assert policy.model_name("docs", "read", aliases=aliases) == "fn_read"
    assert policy.model_name("docs", "plain", aliases=aliases) == "docs__plain"
    assert policy.model_name("docs", "plain", aliases=aliases, prefix=False) == "plain"


def test_aliases_apply_with_prefix_off_too() -> None:
    assert NamePolicy().model_name("docs", "search", prefix=False, aliases={"search": "find"}) == "find"


def test_alias_function_receives_server_and_tool() -> None:
    seen: list[tuple[str, str]] = []

    def alias(server: str, tool: str) -> str | None:
        seen.append((server, tool))
        return None

    NamePolicy(alias=alias).model_name("docs", "search")
    assert seen == [("docs", "search")]


def test_aliases_are_sanitized_too() -> None:
    assert NamePolicy(provider="openai").model_name("docs", "s", aliases={"s": "find.docs"}) == "find_docs"
    assert NamePolicy(provider="openai", alias=lambda s, t: "a/b").model_name("docs", "s") == "a_b"


# -- assign: a whole server at once ------------------------------------------------------


def test_assign_maps_wire_names_in_server_order() -> None:
    names = NamePolicy().assign("docs", ["search", "read", "list"])
    assert names == {"search": "docs__search", "read": "docs__read", "list": "docs__list"}
    assert list(names) == ["search", "read", "list"]


def test_two_servers_with_the_same_raw_name_get_two_names_with_prefixes() -> None:
    policy = NamePolicy()
    a = policy.assign("a", ["search"])
    b = policy.assign("b", ["search"], taken={name: "MCP tool 'search' of server 'a'" for name in a.values()})
    assert a == {"search": "a__search"}
    assert b == {"search": "b__search"}


def test_prefix_off_collision_with_another_server_names_both_and_the_fix() -> None:
    taken = {"search": "MCP tool 'search' of server 'a'"}
    with pytest.raises(NameCollisionError) as info:
        NamePolicy().assign("b", ["search"], prefix=False, taken=taken)
    err = info.value
    assert err.name == "search"
    assert err.existing == "MCP tool 'search' of server 'a'"
    assert err.incoming == "MCP tool 'search' of server 'b'"
    text = str(err)
    assert "Tool name 'search' is already taken by MCP tool 'search' of server 'a'" in text
    assert "cannot add MCP tool 'search' of server 'b'" in text
    assert "aliases={'search': '<new name>'} on server 'b'" in text
    assert "turn prefix on for server 'b'" in text
    assert "NamePolicy(dedupe=True)" in text


def test_collision_with_a_native_row() -> None:
    taken = {"docs__search": "native tool 'docs__search' (app.docs_search)"}
    with pytest.raises(NameCollisionError) as info:
        NamePolicy().assign("docs", ["search"], taken=taken)
    text = str(info.value)
    assert "already taken by native tool 'docs__search' (app.docs_search)" in text
    assert "MCP tool 'search' of server 'docs'" in text
    # The prefix is already on: the message does not suggest turning it on.
    assert "turn prefix on" not in text
    assert "aliases=" in text and "dedupe=True" in text


def test_two_tools_that_sanitize_to_one_name() -> None:
    with pytest.raises(NameCollisionError) as info:
        NamePolicy(provider="openai").assign("fs", ["read.file", "read_file"])
    err = info.value
    assert err.name == "fs__read_file"
    assert err.existing == "MCP tool 'read.file' of server 'fs'"
    assert err.incoming == "MCP tool 'read_file' of server 'fs'"
    text = str(err)
    assert "Tools 'read.file' and 'read_file' of server 'fs' both map to 'fs__read_file'" in text
    assert "the openai tool-name rule ^[a-zA-Z0-9_-]{1,64}$" in text
    assert "dedupe=True" in text


def test_two_aliases_to_one_name_collide() -> None:
    with pytest.raises(NameCollisionError, match="The aliases of tools 'a' and 'b' of server 'docs' are both 'find'"):
        NamePolicy().assign("docs", ["a", "b"], aliases={"a": "find", "b": "find"})


@pytest.mark.parametrize("order", [["find", "search"], ["search", "find"]])
def test_an_alias_that_is_another_tool_s_name_is_reported_as_the_alias(order: list[str]) -> None:
    with pytest.raises(NameCollisionError) as caught:
        NamePolicy().assign("docs", order, prefix=False, aliases={"search": "find"})
    text = str(caught.value)
    assert "The alias 'find' given to tool 'search' of server 'docs' is also the name tool 'find' gets" in text
    assert "tool-name rule" not in text


@pytest.mark.parametrize("order", [["find", "search"], ["search", "find"]])
def test_with_dedupe_an_explicit_alias_keeps_its_name_in_any_order(
    order: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolmesh.names"):
        names = NamePolicy(dedupe=True).assign("docs", order, prefix=False, aliases={"search": "find"})
    assert names == {"search": "find", "find": "find_2"}
    assert [record.getMessage() for record in caplog.records] == [
        "MCP tool 'find' of server 'docs' is named 'find_2': 'find' is taken by MCP tool 'search' of server 'docs' "
        "(NamePolicy(dedupe=True))"
    ]


def test_a_server_listing_a_tool_twice_is_refused() -> None:
    with pytest.raises(NameCollisionError, match=r"Server 'docs' lists tool 'a' twice.*exclude=\['a'\]"):
        NamePolicy(dedupe=True).assign("docs", ["a", "b", "a"])


def test_the_same_name_under_mcp_rule_does_not_collide() -> None:
    assert NamePolicy().assign("fs", ["read.file", "read_file"]) == {
        "read.file": "fs__read.file",
        "read_file": "fs__read_file",
    }


def test_dedupe_adds_deterministic_suffixes_in_server_order() -> None:
    policy = NamePolicy(provider="openai", dedupe=True)
    wire = ["a.b", "a/b", "a_b", "c"]
    names = policy.assign("s", wire)
    # The first tool in the server's order keeps the name; the others are numbered.
    assert names == {"a.b": "s__a_b", "a/b": "s__a_b_2", "a_b": "s__a_b_3", "c": "s__c"}
    assert policy.assign("s", wire) == names


def test_dedupe_resolves_a_taken_name() -> None:
    policy = NamePolicy(dedupe=True)
    names = policy.assign("b", ["search", "read"], prefix=False, taken={"search": "native tool 'search'"})
    assert names == {"search": "search_2", "read": "read"}


def test_dedupe_never_takes_a_name_another_tool_of_the_server_has_naturally() -> None:
    policy = NamePolicy(provider="openai", dedupe=True)
    names = policy.assign("s", ["a.b", "a_b", "a_b_2"], prefix=False)
    assert names == {"a.b": "a_b", "a_b": "a_b_3", "a_b_2": "a_b_2"}
    assert len(set(names.values())) == 3


def test_dedupe_skips_taken_suffixes() -> None:
    taken = {"x": "native tool 'x'", "x_2": "native tool 'x_2'"}
    assert NamePolicy(dedupe=True).assign("s", ["x"], prefix=False, taken=taken) == {"x": "x_3"}


def test_dedupe_keeps_suffixed_names_within_the_maximum() -> None:
    policy = NamePolicy(provider="openai", dedupe=True)
    long = "t" * 64
    names = policy.assign("s", [long], prefix=False, taken={long: "native tool 't…'"})
    assert len(names[long]) == 64
    assert names[long].endswith("_2")
    assert policy.is_valid(names[long])


def test_assign_on_collision_returns_nothing_partial() -> None:
    policy = NamePolicy()
    with pytest.raises(NameCollisionError):
        policy.assign("s", ["ok", "bad"], taken={"s__bad": "native tool 's__bad'"})


def test_assign_with_nothing() -> None:
    assert NamePolicy().assign("s", []) == {}


# -- checking names the host chose -------------------------------------------------------


def test_check_name_returns_a_valid_name() -> None:
    assert NamePolicy(provider="openai").check_name("add") == "add"


def test_check_name_names_the_rule_and_suggests_the_sanitized_name() -> None:
    policy = NamePolicy(provider="openai")
    with pytest.raises(ConfigurationError) as info:
        policy.check_name("math.add", owner="native tool 'math.add'")
    assert not isinstance(info.value, NameCollisionError)
    assert str(info.value) == (
        "native tool 'math.add': name 'math.add' does not match the openai tool-name rule "
        "^[a-zA-Z0-9_-]{1,64}$. Register it as 'math_add' instead."
    )


def test_check_name_under_the_default_mcp_rule() -> None:
    policy = NamePolicy()
    assert policy.check_name("math.add") == "math.add"
    with pytest.raises(ConfigurationError, match=r"the mcp tool-name rule .*Register it as 'a_b'"):
        policy.check_name("a/b", owner="dynamic tool 'a/b'")


def test_check_name_rejects_non_strings() -> None:
    with pytest.raises(ConfigurationError, match="name None does not match"):
        NamePolicy().check_name(None)  # type: ignore[arg-type]


def test_policy_is_frozen_and_comparable() -> None:
    policy = NamePolicy(provider="openai")
    with pytest.raises(AttributeError):
        policy.dedupe = True  # type: ignore[misc]
    assert policy == NamePolicy(provider="openai")
