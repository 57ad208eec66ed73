"""One JSON document fetched from the authorization server, bounded in time and size."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from typing import Any

import anyio
import httpx2

from toolmesh._core.json_limits import parse_json

__all__ = ["FetchFailed", "fetch_bounded"]

_MAX_DEPTH = 8


class FetchFailed(Exception):
    """A JWKS or an introspection answer could not be fetched or read (the message says why; no secret in it)."""


async def fetch_bounded(
    request: Callable[[httpx2.AsyncClient], Any],
    *,
    verify: ssl.SSLContext | str | bool,
    seconds: float,
    max_bytes: int,
    what: str,
) -> Any:
    """Send ``request(client)`` (an ``httpx2`` streaming request) and read its JSON answer, bounded in time and size.

    Raises:
        FetchFailed: unreachable, slow, not 200, too large, or not JSON (``what`` names it).
    """
    try:
        with anyio.fail_after(seconds):
            async with (
                httpx2.AsyncClient(verify=verify, timeout=seconds, follow_redirects=False) as client,
                request(client) as response,
            ):
                if response.status_code != 200:
                    raise FetchFailed(f"{what} answered HTTP {response.status_code}")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > max_bytes:
                    raise FetchFailed(f"{what} is larger than {max_bytes} bytes")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        raise FetchFailed(f"{what} is larger than {max_bytes} bytes")
    except TimeoutError:
        raise FetchFailed(f"{what} took longer than {seconds:g} seconds") from None
    except httpx2.HTTPError as exc:
        raise FetchFailed(f"{what} could not be reached ({type(exc).__name__})") from None
    try:
        return parse_json(bytes(body), max_depth=_MAX_DEPTH)
    except ValueError:
        raise FetchFailed(f"{what} is not JSON") from None
