"""The gateway as one OAuth 2.1 protected resource (the MCP authorization spec, 2025-11-25).

It serves its Protected Resource Metadata (RFC 9728) at
``/.well-known/oauth-protected-resource`` and at that path followed by each endpoint's
path (``/.well-known/oauth-protected-resource/reader/mcp``), answers a request without a
valid token with 401 and ``WWW-Authenticate: Bearer resource_metadata="..."``, and one
whose token lacks a profile's scope with 403 ``insufficient_scope`` naming it. A token in
the query string is refused (400). The token itself goes nowhere: upstream servers are
called with the gateway's own credentials (the spec's confused-deputy rule).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from mcp.shared.auth import ProtectedResourceMetadata
from starlette.responses import JSONResponse, Response

from toolmesh._context.identity import Identity
from toolmesh._core.errors import ConfigurationError
from toolmesh.gateway._config.oauth_settings import AccessRule, OAuthSettings

from .discovery import discover
from .fetch import FetchFailed
from .refusals import InsufficientScope, Refusal

__all__ = ["METADATA_PATH", "ResourceServer"]

METADATA_PATH = "/.well-known/oauth-protected-resource"


class ResourceServer:
    """Access tokens, metadata and challenges for a gateway served at ``path`` (its default profile's path)."""

    def __init__(self, settings: OAuthSettings, path: str) -> None:
        self.settings = settings
        try:
            from .tokens import TokenChecker  # joserfc: the ``oauth`` extra
        except ImportError:
            raise ConfigurationError(
                "OAuth access tokens need the 'oauth' extra: pip install 'toolmesh[oauth]'"
            ) from None
        self.checker = TokenChecker(settings)
        parts = urlsplit(settings.resource)
        resource_path = parts.path.rstrip("/")
        if path != "/" and not resource_path.endswith(path):
            raise ConfigurationError(
                f"OAuthSettings.resource ({settings.resource!r}) must end with the gateway's path {path!r}: "
                "it is the public URL of the default profile"
            )
        self._audiences: dict[str, tuple[str, ...]] = {}
        self._rules: dict[str, AccessRule] = {}
        """Each profile's rule, made on first use (profiles are a handful, named by the app's routes)."""
        self._primed = False
        self.issuer = settings.issuer
        """The issuer as the protected resource metadata names it: as configured, or as the authorization
        server's own metadata spells a bare-origin issuer (``prime``)."""
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._prefix = resource_path[: len(resource_path) - len(path)] if path != "/" else resource_path

    def url(self, path: str) -> str:
        """The public URL of the endpoint served at ``path`` (behind whatever prefix ``resource`` has)."""
        return self._origin + self._prefix + (path.rstrip("/") or "/")

    def metadata_url(self, path: str) -> str:
        """Where the metadata of the endpoint at ``path`` is (RFC 9728 §3.1)."""
        return self._origin + self._prefix + METADATA_PATH + (path.rstrip("/") if path != "/" else "")

    def audiences(self, path: str) -> tuple[str, ...]:
        """The audiences a token for the endpoint at ``path`` may name: the gateway's resource or the endpoint's URL."""
        found = self._audiences.get(path)
        if found is None:
            own = self.url(path)
            resource = self.settings.resource.rstrip("/") or self.settings.resource
            found = (resource,) if own == resource else (resource, own)
            if len(self._audiences) < 1024:  # the paths routed to an endpoint: a handful
                self._audiences[path] = found
        return found

    @classmethod
    async def primed(cls, settings: OAuthSettings, path: str) -> ResourceServer:
        """A resource server for ``settings`` (served at ``path``), primed: ready to check tokens.

        Raises:
            ConfigurationError: as ``prime``, or when the ``oauth`` extra is missing.
        """
        resource = cls(settings, path)
        await resource.prime()
        return resource

    async def prime(self) -> None:
        """Read what checking tokens needs, once (later calls do nothing): the issuer's metadata, when its keys'
        URL or its spelling come from there, then its keys. A gateway that could check no token does not start.

        Raises:
            ConfigurationError: naming the issuer: the JWKS (or the metadata naming it) is unreachable, slow,
                too large or holds no signing key.
        """
        if self._primed:
            return
        keys = self.checker.keys
        find_keys = keys is not None and not keys.url
        bare = urlsplit(self.settings.issuer).path in ("", "/")
        try:
            if find_keys or bare:
                found = await discover(self.settings, jwks=find_keys)
                if bare and found.issuer is not None:
                    # Clients compare the issuer of the authorization server's metadata with the one this gateway
                    # names as strings (RFC 8414 section 3.3), and ``https://as.example.com`` is often configured
                    # for an ``https://as.example.com/`` issuer, or the other way round.
                    self.issuer = found.issuer
                if keys is not None and found.jwks_uri is not None:
                    keys.url = found.jwks_uri
            if keys is not None:
                await keys.load()
        except FetchFailed as exc:
            issuer = self.settings.issuer
            metadata = issuer.rstrip("/") + "/.well-known/oauth-authorization-server"
            raise ConfigurationError(
                f"the gateway cannot check access tokens of the issuer {issuer}: {exc}. Check the issuer's URL and "
                f"the keys' URL (jwksUri; jwks_uri in Python): it is the 'jwks_uri' the issuer's metadata names "
                f"({metadata}, or /.well-known/openid-configuration); trust a private CA with caFile"
            ) from None
        self._primed = True

    async def identity(self, token: str, path: str, profile: str) -> Identity:
        """The caller of a request to the endpoint at ``path`` (of ``profile``) with ``token``.

        Raises:
            InvalidToken: the token is not valid for this resource.
            InsufficientScope: it is, but lacks what ``profile`` needs.
        """
        identity = await self.checker.identity(token, self.audiences(path))
        rule = self._rules.get(profile)
        if rule is None:
            rule = self._rules[profile] = self.settings.rule(profile)
        if not rule.admits(identity):
            missing = identity.missing(rule.scopes)
            needed = " ".join(rule.scopes) or None
            if missing:
                raise InsufficientScope(f"the token lacks the scope {' '.join(missing)!r}", scope=needed)
            raise InsufficientScope(f"the token's claims do not open the profile {profile!r}", scope=needed)
        return identity

    def challenge(self, refusal: Refusal, path: str, profile: str) -> Response:
        """The answer to a refused request to ``profile``: its status, a ``WWW-Authenticate`` challenge (with the
        scopes the profile needs, so that a client asks for them) and a JSON body."""
        params = [f'resource_metadata="{self.metadata_url(path)}"']
        if refusal.error is not None:
            params.append(f'error="{refusal.error}"')
            params.append(f'error_description="{_quoted(refusal.description)}"')
        scope = refusal.scope if refusal.scope is not None else " ".join(self.settings.rule(profile).scopes) or None
        if scope:
            params.append(f'scope="{_quoted(scope)}"')
        body = {"error": refusal.error or "invalid_token", "error_description": refusal.description}
        return JSONResponse(
            body, status_code=refusal.status, headers={"WWW-Authenticate": "Bearer " + ", ".join(params)}
        )

    def metadata(self, path: str) -> Response:
        """The Protected Resource Metadata of the endpoint at ``path`` (``""``: the gateway's resource)."""
        resource = self.url(path) if path else self.settings.resource
        # Validated from strings, so the issuer is published exactly as configured: clients compare it
        # with the issuer of the authorization server's metadata as strings (RFC 8414 section 3.3), and
        # ``AnyHttpUrl("https://as.example.com")`` would add a trailing slash that metadata may not have.
        document = ProtectedResourceMetadata.model_validate(
            {
                "resource": resource,
                "authorization_servers": [self.issuer],
                "scopes_supported": self.settings.supported_scopes() or None,
                "resource_name": self.settings.resource_name,
            }
        )
        return JSONResponse(
            document.model_dump(mode="json", exclude_none=True), headers={"Cache-Control": "public, max-age=300"}
        )


def _quoted(text: str) -> str:
    """``text`` fit for a quoted-string of a challenge (no quote, backslash or control character)."""
    return "".join(c for c in text if c.isprintable() and c not in '"\\')[:300]
