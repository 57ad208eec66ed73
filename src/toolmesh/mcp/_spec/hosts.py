"""Host and URL safety: which hosts are loopback, which are allowed, and URLs safe to show.

A URL can carry secrets (credentials, tokens in its path or query), so anything that
shows one (``repr()``, errors, logs) shows ``redact_url(url)``. ``check_allowed_hosts``
is the allow-list a host applies to HTTP servers from config files it did not write.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Protocol, TypeVar
from urllib.parse import SplitResult, parse_qsl, urlsplit

from toolmesh._core.errors import ServerConfigError


class Labelled(Protocol):
    """A server spec as the host checks read it: its label and its URL's host (None for stdio)."""

    @property
    def label(self) -> str: ...
    @property
    def host(self) -> str | None: ...


_Server = TypeVar("_Server", bound=Labelled)

__all__ = ["check_allowed_hosts", "is_loopback", "redact_url"]


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP address) is this machine: ``localhost`` or a loopback address."""
    host = host.rstrip(".").lower()
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def redact_url(url: str) -> str:
    """``url`` reduced to what is safe for logs and errors.

    Kept: the scheme, host, port, the first path segment and the query's keys. Dropped:
    credentials, the fragment, query values (``***``) and every path segment after the
    first (``/***``), since services put tokens there (``/mcp/<token>/sse``).
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = host if parts.port is None else f"{host}:{parts.port}"
        query = "&".join(f"{k}=***" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    except ValueError:
        return "<invalid url>"
    path = parts.path
    first, _, rest = path[1:].partition("/")
    if rest:
        path = f"/{first}/***"
    return SplitResult(parts.scheme, netloc, path, query, "").geturl()


def check_allowed_hosts(servers: Iterable[_Server], hosts: Iterable[str]) -> list[_Server]:
    """Refuse HTTP servers whose host is not allowed; returns the servers as a list.

    A host entry is a host name or IP address (case-insensitive, exact), or ``*.domain``
    for any subdomain of ``domain`` (not ``domain`` itself). Ports are not considered.
    stdio servers are not affected. An empty ``hosts`` refuses every HTTP server.

    Raises:
        ServerConfigError: naming the first server whose host is not allowed.
    """
    if isinstance(hosts, str):
        raise ServerConfigError(
            "allowed_hosts must be a list of host names, not a string",
            fix=f"Pass [{hosts!r}]",
        )
    allowed = [_normal_host(h) for h in hosts]
    servers = list(servers)
    for server in servers:
        host = server.host
        if host is None:
            continue
        host = _normal_host(host)
        if not any(
            host == entry or (entry.startswith("*.") and host.endswith(entry[1:]) and len(host) > len(entry) - 1)
            for entry in allowed
        ):
            shown = ", ".join(repr(h) for h in allowed) or "none"
            raise ServerConfigError(
                f"host {host!r} is not an allowed host (allowed: {shown})",
                server=server.label,
                key="url",
                fix="Add the host to allowed_hosts, or remove the server",
            )
    return servers


def _normal_host(host: str) -> str:
    if not isinstance(host, str) or not host:
        raise ServerConfigError(f"allowed host {host!r} must be a non-empty string")
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host
