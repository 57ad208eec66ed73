"""Policy per caller: hooks that apply only to the calls of callers whose ``Identity`` matches.

Behind the gateway each call's ``ToolContext.identity`` says who made it (a static token's
name, an OAuth token's subject, scopes and chosen claims). ``ForCallers(DenyTools("*wipe*"),
scopes=("tools:read",))`` refuses ``*wipe*`` tools to callers holding ``tools:read``; a call
without an identity matches only ``anonymous=True``. Such rules decide calls, not listings:
what a caller is *shown* is their profile.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolmesh._context.context import ToolContext
from toolmesh._context.identity import Identity
from toolmesh._core.calls import ToolCall
from toolmesh._core.errors import ConfigurationError
from toolmesh._hooks.actions import PROCEED, Hook, Proceed, ToolCallAction
from toolmesh._rows.rows import Entry
from toolmesh._state.backend import StateBackend, share_state

from .rules import matcher

__all__ = ["ForCallers", "holds"]


def holds(identity: Identity, scopes: Iterable[str], claims: Mapping[str, Iterable[str]]) -> bool:
    """Whether ``identity`` holds every scope of ``scopes`` and, for each claim of ``claims``, one of its values.

    A claim holds a value when it is that string, a space-separated string naming it, or a list holding it.
    """
    if not identity.has_scopes(*scopes):
        return False
    for name, wanted in claims.items():
        value = identity.claims.get(name)
        accepted = {wanted} if isinstance(wanted, str) else set(wanted)
        if isinstance(value, str):
            found = value in accepted or not accepted.isdisjoint(value.split())
        elif isinstance(value, list | tuple):
            found = any(isinstance(item, str) and item in accepted for item in value)
        else:
            found = False
        if not found:
            return False
    return True


class ForCallers(Hook):
    """Run ``hooks``' ``on_tool_call`` for the calls of matching callers only; other calls proceed past them.

    A caller matches when its subject matches one of ``subjects`` (fnmatch patterns; None: any), it holds
    every scope of ``scopes`` and a listed value of each claim of ``claims``. ``anonymous=True`` matches
    calls without an identity (library use, an unauthenticated gateway) instead.

    Example:
        >>> from toolmesh.policy import DenyTools
        >>> rule = ForCallers(DenyTools("*wipe*"), scopes=("tools:read",))
        >>> rule.matches(Identity(subject="bob", scopes=frozenset({"tools:read"}))), rule.matches(None)
        (True, False)
    """

    __slots__ = ("_subjects", "anonymous", "claims", "hooks", "scopes", "subjects")

    def __init__(
        self,
        *hooks: Hook,
        subjects: Iterable[str] | None = None,
        scopes: Iterable[str] = (),
        claims: Mapping[str, Iterable[str]] | None = None,
        anonymous: bool = False,
    ) -> None:
        if not hooks:
            raise ConfigurationError("ForCallers needs one or more hooks to apply")
        self.hooks = hooks
        """The hooks run for matching callers, in order; the first that does not proceed decides."""
        self.subjects = None if subjects is None else tuple([subjects] if isinstance(subjects, str) else subjects)
        self.scopes = tuple([scopes] if isinstance(scopes, str) else scopes)
        self.claims = {name: tuple([v] if isinstance(v, str) else v) for name, v in (claims or {}).items()}
        self.anonymous = anonymous
        self._subjects = matcher(self.subjects, "ForCallers(subjects=...)") if self.subjects is not None else None

    def use_state(self, state: StateBackend) -> None:
        """Hand ``state`` to the hooks it runs that keep state: a per-caller ``RateLimit`` holds across replicas."""
        share_state(self.hooks, state)

    def matches(self, identity: Identity | None) -> bool:
        """Whether the rule applies to a call by ``identity``."""
        if identity is None:
            return self.anonymous
        if self.anonymous or (self._subjects is not None and not self._subjects(identity.subject)):
            return False
        return holds(identity, self.scopes, self.claims)

    async def on_tool_call(self, call: ToolCall, entry: Entry, ctx: ToolContext[Any]) -> ToolCallAction:
        if not self.matches(ctx.identity):
            return PROCEED
        for hook in self.hooks:
            action = await hook.on_tool_call(call, entry, ctx)
            if not isinstance(action, Proceed):
                return action
        return PROCEED

    def __repr__(self) -> str:
        parts = [repr(hook) for hook in self.hooks]
        parts += [f"{name}={getattr(self, name)!r}" for name in ("subjects", "scopes", "claims") if getattr(self, name)]
        if self.anonymous:
            parts.append("anonymous=True")
        return f"ForCallers({', '.join(parts)})"
