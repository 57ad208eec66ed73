"""The issuer's metadata, read once at start: how it spells its issuer, and where its signing keys are.

RFC 8414, else OpenID Connect discovery. For an issuer ``https://login.example.com/tenant``,
the metadata is looked for at
``https://login.example.com/.well-known/oauth-authorization-server/tenant`` (RFC 8414
§3.1), then ``.../.well-known/openid-configuration/tenant`` and
``https://login.example.com/tenant/.well-known/openid-configuration``. A document counts when
it names this issuer (RFC 8414 §3.3; a trailing slash aside, as URL libraries add one to a
bare origin); the first one gives the issuer's spelling, the first with a ``jwks_uri`` the keys'
URL. Each URL is fetched at most once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import httpx2

from toolmesh._core.errors import ConfigurationError
from toolmesh.gateway._config.oauth_settings import OAuthSettings, check_url

from .fetch import FetchFailed, fetch_bounded

__all__ = ["IssuerMetadata", "discover", "metadata_urls"]

_MAX_METADATA_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class IssuerMetadata:
    """What the gateway reads of the issuer's metadata."""

    issuer: str | None
    """The issuer as its metadata spells it (None: no document named it)."""
    jwks_uri: str | None
    """Where its signing keys are (None: not asked for)."""


def metadata_urls(issuer: str) -> list[str]:
    """Where the metadata of ``issuer`` may be, in the order they are tried."""
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    urls = [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
    ]
    if path:
        urls.append(f"{origin}{path}/.well-known/openid-configuration")
    return urls


async def discover(settings: OAuthSettings, *, jwks: bool) -> IssuerMetadata:
    """The issuer's spelling in its metadata and, when ``jwks``, the ``jwks_uri`` it names.

    Without ``jwks`` this is best effort: it stops at the first document naming the issuer, and
    finding none is no error.

    Raises:
        FetchFailed: ``jwks`` was asked for and no document names this issuer and a usable ``jwks_uri``.
    """
    problems = []
    spelt: str | None = None
    for url in metadata_urls(settings.issuer):
        try:
            document = await fetch_bounded(
                partial(_get, url=url),
                verify=settings.verify,
                seconds=settings.fetch_timeout,
                max_bytes=_MAX_METADATA_BYTES,
                what=f"the metadata at {url}",
            )
        except FetchFailed as exc:
            problems.append(str(exc))
            continue
        named = document.get("issuer") if isinstance(document, dict) else None
        if not isinstance(named, str) or named.rstrip("/") != settings.issuer.rstrip("/"):
            problems.append(f"the metadata at {url} is another issuer's")
            continue
        spelt = spelt or named
        if not jwks:
            break
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            problems.append(f"the metadata at {url} names no jwks_uri")
            continue
        try:
            return IssuerMetadata(spelt, check_url(jwks_uri, "jwks_uri (from the issuer's metadata)"))
        except ConfigurationError as exc:
            problems.append(str(exc))
    if jwks:
        raise FetchFailed("no jwks_uri found for the issuer: " + "; ".join(problems))
    return IssuerMetadata(spelt, None)


def _get(client: httpx2.AsyncClient, url: str) -> Any:
    return client.stream("GET", url, headers={"Accept": "application/json"})
