"""``serve.auth.oauth`` and ``policy.callers`` of ``toolmesh.json``, made into settings and hooks.

Errors name the key as written in the file; a secret (the introspection client's) is read
from the environment variable the file names, never from the file.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from toolmesh._core.errors import ConfigurationError, ServerConfigError
from toolmesh._hooks.actions import Hook
from toolmesh._policy.callers import ForCallers
from toolmesh._policy.limits import RateLimit
from toolmesh._policy.rules import AllowServers, AllowTools, DenyServers, DenyTools

from .keys import CallerRuleKeys, OAuthKeys, PolicyKeys
from .oauth_settings import SIGNING_ALGORITHMS, AccessRule, Introspection, OAuthSettings, check_url

__all__ = ["caller_hooks", "pattern_rules", "read_oauth"]


def read_oauth(keys: OAuthKeys, folder: Path, origin: str, profiles: Iterable[str], path: str) -> OAuthSettings:
    """The ``OAuthSettings`` that ``serve.auth.oauth`` describes.

    Raises:
        ServerConfigError: naming the key: an unknown profile, an unset secret variable, an unreadable CA
            file, or a value ``OAuthSettings`` refuses.
    """
    key = "serve.auth.oauth"
    for name, url in (("issuer", keys.issuer), ("resource", keys.resource), ("jwksUri", keys.jwks_uri)):
        if url is not None and url != _checked_url(url):
            raise ServerConfigError(
                f"must be an https URL (http only on a loopback host), got {url!r}", key=f"{key}.{name}", origin=origin
            )
    if not urlsplit(keys.resource).path.rstrip("/").endswith(path.rstrip("/")):
        raise ServerConfigError(
            f"the gateway's public URL must end with its path {path!r}",
            key=f"{key}.resource",
            fix=f'Give the URL clients reach the default profile at, e.g. "https://tools.example.com{path}"',
            origin=origin,
        )
    known = set(profiles)
    for name in keys.profiles:
        if name not in known:
            raise ServerConfigError(
                f"no profile {name!r}",
                key=f"{key}.profiles.{name}",
                fix="The profiles are " + ", ".join(map(repr, sorted(known))),
                origin=origin,
            )
    introspection: Introspection | None = None
    if keys.introspection is not None:
        variable = keys.introspection.client_secret_env
        secret = os.environ.get(variable, "").strip()
        if not secret:
            raise ServerConfigError(
                f"the environment variable {variable!r} is not set (or is empty)",
                key=f"{key}.introspection.clientSecretEnv",
                fix=f"Set {variable} to the gateway's client secret at the authorization server",
                origin=origin,
            )
        try:
            introspection = Introspection(
                url=keys.introspection.url, client_id=keys.introspection.client_id, client_secret=secret
            )
        except ConfigurationError as exc:
            raise ServerConfigError(str(exc), key=f"{key}.introspection.url", origin=origin) from None
    verify: ssl.SSLContext | bool = True
    if keys.ca_file is not None:
        ca_path = folder / os.path.expanduser(keys.ca_file)
        try:
            verify = ssl.create_default_context(cafile=str(ca_path))
        except (OSError, ssl.SSLError) as exc:
            raise ServerConfigError(
                f"cannot read the CA file {str(ca_path)!r} ({type(exc).__name__})",
                key=f"{key}.caFile",
                fix="Give a PEM file of the CAs that sign the authorization server's certificate (relative path)",
                origin=origin,
            ) from None
    try:
        return OAuthSettings(
            issuer=keys.issuer,
            resource=keys.resource,
            jwks_uri=keys.jwks_uri,
            introspection=introspection,
            scopes=tuple(keys.scopes),
            profiles={
                name: AccessRule(scopes=tuple(rule.scopes), claims=_claims(rule.claims))
                for name, rule in keys.profiles.items()
            },
            claims=tuple(keys.claims),
            algorithms=tuple(keys.algorithms) if keys.algorithms is not None else SIGNING_ALGORITHMS,
            leeway=float(keys.leeway_seconds),
            verify=verify,
            fetch_timeout=float(keys.fetch_timeout_seconds),
            max_jwks_bytes=keys.max_jwks_bytes,
            refresh_interval=float(keys.refresh_interval_seconds),
            cache_seconds=float(keys.cache_seconds),
            refused_cache_seconds=float(keys.refused_cache_seconds),
            resource_name=keys.resource_name,
        )
    except ConfigurationError as exc:
        raise ServerConfigError(str(exc), key=key, origin=origin) from None


def pattern_rules(keys: PolicyKeys | CallerRuleKeys, key: str, origin: str) -> list[Hook]:
    """The allow/deny rules of ``policy`` (or of one of its ``callers``), deny rules first.

    Raises:
        ServerConfigError: an empty pattern list.
    """
    rules: list[Hook] = []
    for name, kind, patterns in (
        ("denyServers", DenyServers, keys.deny_servers),
        ("allowServers", AllowServers, keys.allow_servers),
        ("denyTools", DenyTools, keys.deny_tools),
        ("allowTools", AllowTools, keys.allow_tools),
    ):
        if patterns is None:
            continue
        if not patterns:
            raise ServerConfigError(
                "is empty", key=f"{key}.{name}", fix="Give one or more glob patterns, or remove the key", origin=origin
            )
        rules.append(kind(*patterns))
    return rules


def caller_hooks(rules: list[CallerRuleKeys], origin: str) -> list[Hook]:
    """One ``ForCallers`` hook per ``policy.callers`` entry: its allow/deny rules and its per-caller rate limit.

    Raises:
        ServerConfigError: an entry with no rule, or an empty pattern list.
    """
    hooks: list[Hook] = []
    for index, rule in enumerate(rules):
        key = f"policy.callers[{index}]"
        inner = pattern_rules(rule, key, origin)
        if rule.rate_limit is not None:
            inner.append(RateLimit(rule.rate_limit.calls, float(rule.rate_limit.per), per_caller=True))
        if not inner:
            raise ServerConfigError(
                "says whom it is for but not what applies to them",
                key=key,
                fix='Add "denyTools", "allowTools", "denyServers", "allowServers" or "rateLimit"',
                origin=origin,
            )
        hooks.append(
            ForCallers(*inner, subjects=rule.subjects, scopes=rule.scopes, claims=rule.claims, anonymous=rule.anonymous)
        )
    return hooks


def _claims(claims: dict[str, list[str] | str]) -> dict[str, tuple[str, ...]]:
    return {name: (value,) if isinstance(value, str) else tuple(value) for name, value in claims.items()}


def _checked_url(url: str) -> str | None:
    """``url`` when ``OAuthSettings`` takes it as a URL, else None (the JSON key is named by the caller)."""
    try:
        return check_url(url, "url")
    except ConfigurationError:
        return None
