"""Patterns of a gateway config that match nothing once everything is connected.

A typo in a deny rule is a hole: ``"denyTools": ["notes__forgt"]`` refuses nothing and
says nothing. ``unmatched_patterns`` lists each ``policy`` and profile pattern that
matches no tool name (model-visible) or no server label, with the closest name as a
"did you mean" (MCP names often differ from what one types by ``-`` against ``_``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

from toolmesh._core.suggest import closest
from toolmesh._policy.limits import ConcurrencyLimit, RateLimit
from toolmesh._policy.rules import AllowServers, AllowTools, DenyServers, DenyTools

from .config import GatewayConfig

__all__ = ["unmatched_patterns"]

_POLICY_KEYS: dict[type, tuple[str, bool]] = {
    DenyServers: ("policy.denyServers", True),
    AllowServers: ("policy.allowServers", True),
    DenyTools: ("policy.denyTools", False),
    AllowTools: ("policy.allowTools", False),
}
"""Each pattern rule's key in toolmesh.json and whether its patterns are server labels."""


def unmatched_patterns(config: GatewayConfig, tool_names: Iterable[str]) -> list[str]:
    """One warning per pattern of ``config`` that matches none of ``tool_names`` or of its servers' labels.

    Each names the file, the key and the pattern, and suggests the closest name.
    """
    tools = sorted(set(tool_names))
    servers = sorted({server.label for server in config.servers})
    found: list[tuple[str, Sequence[str], bool]] = []
    limits = {RateLimit: "policy.rateLimits", ConcurrencyLimit: "policy.concurrencyLimits"}
    counted: dict[type, int] = {}
    for hook in config.hooks:
        if isinstance(hook, DenyServers | AllowServers | DenyTools | AllowTools):
            key, of_servers = _POLICY_KEYS[type(hook)]
            found.append((key, hook.patterns, of_servers))
        elif isinstance(hook, RateLimit | ConcurrencyLimit):
            index = counted[type(hook)] = counted.get(type(hook), -1) + 1
            found.append((f"{limits[type(hook)]}[{index}].tools", hook.tools, False))
    for name, profile in config.profiles.items():
        for attribute, spelt in (("tools", "tools"), ("exclude_tools", "excludeTools"), ("servers", "servers")):
            patterns = getattr(profile, attribute)
            if patterns:
                found.append((f"profiles.{name}.{spelt}", patterns, attribute == "servers"))
    origin = f"{config.path}: " if config.path is not None else ""
    warnings = []
    for key, patterns, of_servers in found:
        names = servers if of_servers else tools
        for index, pattern in enumerate(patterns):
            if any(fnmatch.fnmatchcase(candidate, pattern) for candidate in names):
                continue
            what = "server" if of_servers else "tool"
            close = _closest(pattern, names)
            hint = f" Did you mean {close!r}?" if close else ""
            warnings.append(f"{origin}key '{key}[{index}]': {pattern!r} matches no {what}.{hint}")
    return warnings


def _closest(pattern: str, names: Sequence[str]) -> str | None:
    """The name ``pattern`` most likely means: one it matches as a glob once ``-`` and ``_`` are alike,
    else the ``closest`` name."""
    folded = pattern.replace("-", "_")
    for name in names:
        if fnmatch.fnmatchcase(name.replace("-", "_"), folded):
            return name
    return closest(pattern, names)
