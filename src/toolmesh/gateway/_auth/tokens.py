"""An access token checked: a JWT against the issuer's keys and claims, or an opaque one by introspection.

A JWT passes when its header names an accepted asymmetric algorithm (``none`` and HMAC never
are), its signature verifies with the issuer's published key, ``iss`` is the issuer, ``aud``
names this resource (RFC 8707), ``exp`` is in the future and ``nbf``/``iat`` are not (within
the leeway). An opaque token (one that is not a JWT) is sent to the RFC 7662 introspection
endpoint, when there is one, and must come back ``active`` for this resource.

What was learnt is remembered by the token's SHA-256 (never the token), in bounded maps: a
valid token until it expires (at most ``cache_seconds``), an opaque token the authorization
server refused for ``refused_cache_seconds``. Requests carrying the same opaque token at
once share one introspection.
"""

from __future__ import annotations

import base64
import hashlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
from joserfc import jwt
from joserfc.errors import BadSignatureError, ExpiredTokenError, InvalidClaimError, JoseError, MissingClaimError
from joserfc.jwt import JWTClaimsRegistry

from toolmesh._context.identity import Identity
from toolmesh._core.json_limits import parse_json
from toolmesh.gateway._config.oauth_settings import Introspection, OAuthSettings

from .fetch import FetchFailed, fetch_bounded
from .jwks import SigningKeys
from .refusals import InvalidToken
from .remembered import Remembered

__all__ = ["TokenChecker"]

_Key = tuple[bytes, tuple[str, ...]]
"""A token's SHA-256 and the audiences it was checked for."""

_MAX_HEADER_DEPTH = 4
_MAX_CACHED = 4096
"""Valid tokens remembered at most (the oldest go first)."""
_MAX_REFUSED = 4096
"""Refused opaque tokens remembered at most (the oldest go first): a flood of distinct ones grows nothing."""
_CLAIM_WORDS = {
    "iss": "was issued by another authorization server",
    "aud": "is not meant for this resource (its audience)",
    "exp": "has expired",
    "nbf": "is not valid yet",
    "iat": "was issued in the future",
    "sub": "has a malformed subject",
}


class TokenChecker:
    """Checks access tokens for one ``OAuthSettings``; ``identity(token, audiences)`` is the caller or a refusal."""

    def __init__(self, settings: OAuthSettings, *, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self._clock = clock
        self._valid: Remembered[_Key, Identity] = Remembered(_MAX_CACHED)
        """(SHA-256 of a valid token, audiences) -> its identity, until it expires (at most ``cache_seconds``)."""
        self._refused: Remembered[_Key, str] = Remembered(_MAX_REFUSED)
        """(SHA-256 of a refused opaque token, audiences) -> why, for ``refused_cache_seconds``."""
        self._flights: dict[_Key, _Flight] = {}
        """The introspections under way, by token: a request with the same token waits for its answer."""
        self.keys = (
            SigningKeys(
                settings.jwks_uri or "",  # "": found in the issuer's metadata when the gateway starts (``discover``)
                verify=settings.verify,
                timeout=settings.fetch_timeout,
                max_bytes=settings.max_jwks_bytes,
                refresh_interval=settings.refresh_interval,
            )
            if settings.jwks_uri is not None or settings.introspection is None
            else None
        )

    async def identity(self, token: str, audiences: tuple[str, ...]) -> Identity:
        """The caller ``token`` stands for, when it is valid for one of ``audiences``.

        A token found valid is remembered (by its SHA-256, never itself) until it expires, for at
        most ``cache_seconds``: a client sends the same token with every request. An opaque token
        the authorization server refused is remembered as refused for ``refused_cache_seconds``.

        Raises:
            InvalidToken: saying what is wrong with it (never echoing it).
        """
        if len(token) > self.settings.max_token_bytes or not token.isascii():
            raise InvalidToken("the token is malformed")
        now = self._clock()
        key = (hashlib.sha256(token.encode("ascii")).digest(), audiences)
        known = self._valid.get(key, now)
        if known is not None:
            return known
        refused = self._refused.get(key, now)
        if refused is not None:
            raise InvalidToken(refused)
        identity, expires = await self._check(token, audiences, remembered_as=key)
        if self.settings.cache_seconds > 0:
            self._valid.put(key, identity, min(expires, now + self.settings.cache_seconds))
        return identity

    async def _check(self, token: str, audiences: Sequence[str], *, remembered_as: _Key) -> tuple[Identity, float]:
        header = _jws_header(token)
        if header is None:
            if self.settings.introspection is None:
                raise InvalidToken("the token is not a JWT, nor a bearer token the gateway knows")
            return await self._introspect_once(self.settings.introspection, token, audiences, remembered_as)
        if self.keys is None:
            raise InvalidToken("this resource takes no JWT access tokens")
        alg = header.get("alg")
        if alg not in self.settings.algorithms:
            raise InvalidToken(f"tokens signed with {str(alg)[:20]!r} are not accepted")
        kid = header.get("kid")
        key = await self.keys.key(kid if isinstance(kid, str) else None)
        try:
            claims = jwt.decode(token, key, algorithms=[alg]).claims
        except BadSignatureError:
            raise InvalidToken("the token's signature does not verify") from None
        except (JoseError, ValueError, TypeError, KeyError):
            raise InvalidToken("the token is malformed") from None
        return self._checked(claims, audiences, require_exp=True)

    def _checked(
        self, claims: Mapping[str, Any], audiences: Sequence[str], *, require_exp: bool
    ) -> tuple[Identity, float]:
        """The identity of checked claims, and until when it holds (its ``exp``; without one, no limit here)."""
        registry = JWTClaimsRegistry(
            now=int(self._clock()),
            leeway=int(self.settings.leeway),
            iss={"essential": True, "values": _spellings(self.settings.issuer)},
            aud={"essential": True, "values": list(audiences)},
            exp={"essential": require_exp},
        )
        try:
            registry.validate(dict(claims))
        except ExpiredTokenError:
            raise InvalidToken("the token has expired") from None
        except MissingClaimError as exc:
            raise InvalidToken(f"the token lacks the claim(s) {exc.claim}") from None
        except InvalidClaimError as exc:
            raise InvalidToken(f"the token {_CLAIM_WORDS.get(exc.claim, 'has an invalid claim')}") from None
        except (JoseError, ValueError, TypeError):
            raise InvalidToken("the token has malformed claims") from None
        exp = claims.get("exp")
        return self._identity(claims), float(exp) if isinstance(exp, int | float) else math.inf

    def _identity(self, claims: Mapping[str, Any]) -> Identity:
        client = claims.get("client_id", claims.get("azp"))
        client_id = client if isinstance(client, str) else None
        subject = claims.get("sub", client_id)
        if not isinstance(subject, str) or not subject:
            raise InvalidToken("the token names no subject")
        scopes = claims.get("scope", claims.get("scp", ""))
        granted = scopes.split() if isinstance(scopes, str) else [s for s in scopes if isinstance(s, str)]
        kept = {name: claims[name] for name in self.settings.claims if name in claims}
        return Identity(
            subject=subject, client_id=client_id, scopes=frozenset(granted), claims=kept, issuer=self.settings.issuer
        )

    async def _introspect_once(
        self, endpoint: Introspection, token: str, audiences: Sequence[str], key: _Key
    ) -> tuple[Identity, float]:
        """``_introspect``, once for every request with this token at once (they share its outcome)."""
        while (flight := self._flights.get(key)) is not None:
            await flight.done.wait()
            if isinstance(flight.outcome, InvalidToken):
                raise InvalidToken(flight.outcome.description)
            if flight.outcome is not None:
                return flight.outcome
            # the request that asked was cancelled before the answer came: ask again
        flight = self._flights[key] = _Flight()
        try:
            found = await self._introspect(endpoint, token, audiences, key)
            flight.outcome = found
            return found
        except InvalidToken as refused:
            flight.outcome = refused
            raise
        finally:
            del self._flights[key]
            flight.done.set()

    async def _introspect(
        self, endpoint: Introspection, token: str, audiences: Sequence[str], key: _Key
    ) -> tuple[Identity, float]:
        """The authorization server's word on ``token``; a refusal it gave is remembered (an unreachable one's
        is not: it says nothing of the token)."""
        try:
            answer = await fetch_bounded(
                lambda client: client.stream(
                    "POST",
                    endpoint.url,
                    data={"token": token, "token_type_hint": "access_token"},
                    auth=(endpoint.client_id, endpoint.client_secret),
                    headers={"Accept": "application/json"},
                ),
                verify=self.settings.verify,
                seconds=self.settings.fetch_timeout,
                max_bytes=64 * 1024,
                what="the introspection endpoint",
            )
        except FetchFailed as exc:
            raise InvalidToken(f"the token could not be checked: {exc}") from None
        try:
            if not isinstance(answer, dict) or answer.get("active") is not True:
                raise InvalidToken("the token is not active")
            claims = {"iss": self.settings.issuer, **answer}
            aud = claims.get("aud")
            if aud is None:
                claims["aud"] = audiences[0]  # the authorization server vouched for it without naming an audience
            return self._checked(claims, audiences, require_exp=False)
        except InvalidToken as refused:
            if self.settings.refused_cache_seconds > 0:
                self._refused.put(key, refused.description, self._clock() + self.settings.refused_cache_seconds)
            raise


class _Flight:
    """One introspection under way, and its outcome once ``done`` (None: its request was cancelled first)."""

    __slots__ = ("done", "outcome")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.outcome: tuple[Identity, float] | InvalidToken | None = None


def _spellings(issuer: str) -> list[str]:
    """The issuer as configured, and with or without its trailing slash (URL libraries add one to a bare origin)."""
    bare = issuer.rstrip("/")
    return [issuer, bare, bare + "/"]


def _jws_header(token: str) -> dict[str, Any] | None:
    """A compact JWS's header (unverified), or None when ``token`` is not one (an opaque token)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        raw = base64.urlsafe_b64decode(parts[0] + "=" * (-len(parts[0]) % 4))
        header = parse_json(raw, max_depth=_MAX_HEADER_DEPTH)
    except ValueError:
        return None
    return header if isinstance(header, dict) else None
