"""Where the issuer's signing keys are, read from its metadata: RFC 8414, else OpenID Connect discovery.

For an issuer ``https://login.example.com/tenant``, the metadata is looked for at
``https://login.example.com/.well-known/oauth-authorization-server/tenant`` (RFC 8414
§3.1), then ``.../.well-known/openid-configuration/tenant`` and
``https://login.example.com/tenant/.well-known/openid-configuration``. The first document
that names this issuer (RFC 8414 §3.3; a trailing slash aside, as URL libraries add one to a
bare origin) and a ``jwks_uri`` gives it.
"""

from __future__ import annotations

from functools import partial
from typing import Any
from urllib.parse import urlsplit

import httpx2

from toolmesh._core.errors import ConfigurationError
from toolmesh.gateway._config.oauth_settings import OAuthSettings, check_url

from .fetch import FetchFailed, fetch_bounded

__all__ = ["discover_jwks", "metadata_urls"]

_MAX_METADATA_BYTES = 64 * 1024


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


async def discover_jwks(settings: OAuthSettings) -> str:
    """The ``jwks_uri`` of ``settings.issuer``'s metadata.

    Raises:
        FetchFailed: no metadata document names this issuer and a usable ``jwks_uri``.
    """
    problems = []
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
        if not isinstance(document, dict) or str(document.get("issuer", "")).rstrip("/") != settings.issuer.rstrip("/"):
            problems.append(f"the metadata at {url} is another issuer's")
            continue
        jwks_uri = document.get("jwks_uri")
        if not isinstance(jwks_uri, str):
            problems.append(f"the metadata at {url} names no jwks_uri")
            continue
        try:
            return check_url(jwks_uri, "jwks_uri (from the issuer's metadata)")
        except ConfigurationError as exc:
            problems.append(str(exc))
    raise FetchFailed("no jwks_uri found for the issuer: " + "; ".join(problems))


def _get(client: httpx2.AsyncClient, url: str) -> Any:
    return client.stream("GET", url, headers={"Accept": "application/json"})
