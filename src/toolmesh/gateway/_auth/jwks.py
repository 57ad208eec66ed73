"""The issuer's signing keys: its JWKS fetched over HTTPS, cached, and fetched again for an unknown ``kid``.

One fetch runs at a time, takes at most ``fetch_timeout`` seconds end to end (a server that
drips its answer is cut off) and reads at most ``max_jwks_bytes``. An unknown ``kid`` fetches
the set again, at most once per ``refresh_interval`` (a forged token's random ``kid`` does not
make the gateway hammer the issuer); a failed fetch keeps the keys it had.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable

import anyio
from joserfc.errors import JoseError
from joserfc.jwk import Key, KeySet

from .fetch import FetchFailed, fetch_bounded
from .refusals import InvalidToken

__all__ = ["SigningKeys"]

logger = logging.getLogger("toolmesh.gateway.auth")

_MAX_KEYS = 64


class SigningKeys:
    """The keys of one JWKS URL, fetched on first use and again when a token names a ``kid`` not among them."""

    def __init__(
        self,
        url: str,
        *,
        verify: ssl.SSLContext | str | bool = True,
        timeout: float = 10.0,
        max_bytes: int = 256 * 1024,
        refresh_interval: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self._verify = verify
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._refresh_interval = refresh_interval
        self._clock = clock
        self._keys: dict[str | None, Key] = {}
        self._fetched_at: float | None = None
        self._lock = anyio.Lock()
        self.fetches = 0
        """How many times the JWKS was fetched (successfully or not)."""

    async def load(self) -> int:
        """Fetch the JWKS now; how many signing keys it holds.

        Raises:
            FetchFailed: it could not be fetched or holds no usable key.
        """
        async with self._lock:
            await self._fetch()
        if not self._keys:
            raise FetchFailed(f"the JWKS at {self.url} holds no usable signing key")
        return len(self._keys)

    async def key(self, kid: str | None) -> Key:
        """The key a token's header names (``kid``; a set of one key serves a token naming none).

        Raises:
            InvalidToken: no such key, even after fetching the set again (when allowed).
        """
        found = self._find(kid)
        if found is not None:
            return found
        seen = self._fetched_at
        async with self._lock:
            if self._fetched_at == seen and self._may_fetch():  # nobody fetched while this call waited
                try:
                    await self._fetch()
                except FetchFailed as exc:
                    logger.warning("could not refresh the signing keys: %s", exc)
        found = self._find(kid)
        if found is None:
            named = "names no key" if kid is None else "is signed with a key the issuer does not publish"
            raise InvalidToken(f"the token {named}")
        return found

    def _find(self, kid: str | None) -> Key | None:
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    def _may_fetch(self) -> bool:
        return self._fetched_at is None or self._clock() - self._fetched_at >= self._refresh_interval

    async def _fetch(self) -> None:
        self.fetches += 1
        self._fetched_at = self._clock()
        document = await fetch_bounded(
            lambda client: client.stream("GET", self.url, headers={"Accept": "application/json"}),
            verify=self._verify,
            seconds=self._timeout,
            max_bytes=self._max_bytes,
            what=f"the JWKS at {self.url}",
        )
        entries = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(entries, list):
            raise FetchFailed(f"the JWKS at {self.url} has no 'keys' array")
        keys: dict[str | None, Key] = {}
        for entry in entries[:_MAX_KEYS]:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig" or entry.get("kty") == "oct":
                continue  # encryption keys and shared secrets never verify an access token
            try:
                key = KeySet.import_key_set({"keys": [entry]}).keys[0]
            except (JoseError, ValueError, TypeError, KeyError):
                continue  # a key this library cannot read: the others still serve
            kid = entry.get("kid")
            keys[kid if isinstance(kid, str) else None] = key
        self._keys = keys
