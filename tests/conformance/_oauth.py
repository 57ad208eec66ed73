"""A headless OAuth 2.1 user agent for the conformance suite's `auth/*` scenarios.

The host hands `McpServer.http(..., auth=...)` the SDK's `OAuthClientProvider`; toolmesh passes
it to the SDK's HTTP client. Where a real host opens a browser, this one fetches the
authorization URL itself: the suite's authorization server redirects at once to the
redirect URI with the code, which is read from the `Location` header.
"""

from __future__ import annotations

import json
import os
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://localhost:3000/callback"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""Where this client's metadata document would be published (SEP-991 URL-based client id): the
URL the suite's `auth/basic-cimd` expects; servers that do not support it get dynamic registration."""


class MemoryStorage:
    """Tokens and client registration for one run (the SDK's `TokenStorage` protocol)."""

    def __init__(self, client: OAuthClientInformationFull | None = None) -> None:
        self.tokens: OAuthToken | None = None
        self.client = client

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def headless_oauth(server_url: str) -> OAuthClientProvider:
    """The SDK's OAuth provider for `server_url`, authorizing without a browser.

    `MCP_CONFORMANCE_CONTEXT` (JSON, set by the suite for some scenarios) may carry a
    pre-registered `client_id` / `client_secret`.
    """
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    codes: list[AuthorizationCodeResult] = []
    preregistered = None
    if "client_id" in context:
        preregistered = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic" if context.get("client_secret") else "none",
        )

    async def open_browser(authorization_url: str) -> None:
        async with httpx2.AsyncClient() as http:
            response = await http.get(authorization_url, follow_redirects=False)
        query = parse_qs(urlparse(response.headers["location"]).query)
        codes.append(
            AuthorizationCodeResult(
                code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
            )
        )

    async def redirected() -> AuthorizationCodeResult:
        return codes.pop()

    metadata = OAuthClientMetadata(
        client_name="toolmesh conformance client",
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    return OAuthClientProvider(
        server_url=server_url,
        client_metadata=metadata,
        storage=MemoryStorage(preregistered),
        redirect_handler=open_browser,
        callback_handler=redirected,
        client_metadata_url=CLIENT_METADATA_URL,
    )
