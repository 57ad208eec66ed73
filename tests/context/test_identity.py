"""Identity: a frozen value of who called, carried by every copy of a call's context."""

from __future__ import annotations

import dataclasses

import pytest

from toolmesh import Identity, ToolContext


def test_an_identity_is_frozen_and_its_claims_read_only() -> None:
    who = Identity(subject="alice", client_id="cli", scopes={"a", "b"}, claims={"team": "ops"}, issuer="https://as")  # type: ignore[arg-type]
    assert who.scopes == frozenset({"a", "b"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        who.subject = "mallory"  # type: ignore[misc]
    with pytest.raises(TypeError):
        who.claims["team"] = "root"  # type: ignore[index]
    assert who.has_scopes("a", "b") and not who.has_scopes("a", "c")
    assert who.missing(["c", "a", "d"]) == ["c", "d"]


def test_the_key_tells_issuers_apart_and_static_tokens_from_oauth() -> None:
    one = Identity(subject="alice", issuer="https://one")
    two = Identity(subject="alice", issuer="https://two")
    static = Identity(subject="alice", method="token")
    assert len({one.key, two.key, static.key}) == 3
    assert hash(one) == hash(Identity(subject="alice", issuer="https://one"))


def test_a_forked_context_keeps_the_identity_and_a_new_one_has_none() -> None:
    who = Identity(subject="alice", method="token")
    ctx: ToolContext[None] = ToolContext(identity=who)
    assert ctx.fork("look").identity is who
    assert ToolContext.for_call(ctx, "look").identity is who
    assert ToolContext.for_call(None, "look").identity is None
