"""Which request-declared server URLs the gateway reaches, and reaching exactly the address it checked.

A request names servers the gateway then connects to, so a request could aim the
gateway at the operator's own network. The policy:

- ``http`` or ``https`` only, no credentials in the URL;
- loopback hosts (``localhost``, 127.0.0.0/8, ::1) are allowed; any other host only when
  the settings' ``allowed_hosts`` list it (a name, ``*.suffix``, or an IP network);
- ``https`` unless the host is loopback;
- the host is resolved once; a private, link-local, shared, reserved or metadata address
  is refused unless an allowed network holds it (a cloud-metadata address only when listed
  by itself, never through a wider network);
- the host is checked in one canonical form (``canonical_host``: percent-decoded, IDNA
  ASCII, lower case, no trailing dot), whatever its spelling in the URL;
- the connection goes to the address that was checked, by construction: ``PinnedAddress``
  sends every request of the session to that address (keeping ``Host`` and the TLS server
  name) and refuses a request for any other host rather than letting the client resolve
  it, so DNS cannot change the answer between the check and the connection, on the first
  request, on a reconnect or on any later one; redirects are not followed (the client's
  default).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Generator
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

import anyio
import httpx2

from .request import RequestError

__all__ = ["CheckedUrl", "PinnedAddress", "PinnedHostError", "UrlPolicy", "allowed_host_problem", "canonical_host"]

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_METADATA = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("fd00:ec2::254"),
        ipaddress.ip_address("100.100.100.200"),
    }
)
_RESOLVE_TIMEOUT = 10.0
_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?")
ALLOWED_HOSTS_KEY = "responses.allowedHosts"


def allowed_host_problem(entry: str) -> str | None:
    """Why ``entry`` is no allowlist entry (None when it is a hostname, ``*.suffix``, an IP or a network).

    A catch-all network (``0.0.0.0/0``, ``::/0``) is refused: it would reopen every private
    and metadata address the policy closes.
    """
    text = entry.strip().lower()
    try:
        network = ipaddress.ip_network(text.strip("[]"), strict=False)
    except ValueError:
        network = None
    if network is not None:
        if network.prefixlen == 0:
            return f"{entry!r} allows every address; list the networks the servers are on instead"
        return None
    if "://" in text or "/" in text:
        return f"{entry!r} is a URL or path; list only its host (for 'https://mcp.example.com/mcp': 'mcp.example.com')"
    if ":" in text:
        return f"{entry!r} has a port; list the host alone (every port of an allowed host is allowed)"
    name = text.removeprefix("*.").rstrip(".")
    if not name or not all(_LABEL.fullmatch(label) for label in name.split(".")):
        return f"{entry!r} is not a hostname, '*.suffix', an IP address or a network such as '10.20.0.0/16'"
    return None


def canonical_host(host: str) -> str:
    """The one spelling of ``host`` that is checked and pinned: percent-decoded, IDNA ASCII, lower case, no
    trailing dot (an IP literal keeps its form, without brackets).

    Raises:
        ValueError: for a name that has no IDNA form.
    """
    text = unquote(host).strip().strip("[]")
    text = text[:-1] if text.endswith(".") else text  # one trailing dot: the root of the name
    if _literal(text) is not None:
        return text.lower()
    if any(not label for label in text.split(".")):
        raise ValueError(f"{host!r} has an empty label (two dots in a row)")
    try:
        return text.encode("idna").decode("ascii").lower()
    except UnicodeError as exc:
        raise ValueError(f"{host!r} is not a valid host name ({exc})") from None


class PinnedHostError(httpx2.TransportError):
    """A session pinned to one checked host was asked to reach another: refused, never resolved."""


@dataclass(frozen=True, slots=True)
class CheckedUrl:
    """A URL the policy accepted (its host in the canonical spelling), with the one address it resolved to."""

    url: str
    host: str
    address: str


class PinnedAddress(httpx2.Auth):
    """Sends every request of a session to the checked address, and only there.

    ``Host`` and the TLS server name stay the checked host. A request whose host, in its
    canonical form, is not the checked one is refused (``PinnedHostError``): the client
    never resolves a name by itself, whatever the spelling.
    """

    def __init__(self, checked: CheckedUrl) -> None:
        self._checked = checked

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        checked = self._checked
        try:
            host = canonical_host(request.url.raw_host.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            host = None
        if host != checked.host:
            raise PinnedHostError(f"this session is pinned to {checked.host!r}: a request for another host is refused")
        if request.url.scheme == "https":
            request.extensions = {**request.extensions, "sni_hostname": checked.host}
        request.headers["Host"] = checked.host if request.url.port is None else f"{checked.host}:{request.url.port}"
        request.url = request.url.copy_with(host=checked.address)
        yield request


class UrlPolicy:
    """Checks request-declared server URLs against the loopback default and the operator's allowlist."""

    def __init__(self, allowed_hosts: tuple[str, ...] = ()) -> None:
        self._names: set[str] = set()
        self._suffixes: list[str] = []
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self._exact: set[_Address] = set()
        for entry in allowed_hosts:
            entry = entry.strip().lower()
            try:
                network = ipaddress.ip_network(entry.strip("[]"), strict=False)
                self._networks.append(network)
                if network.num_addresses == 1:
                    self._exact.add(network.network_address)
                continue
            except ValueError:
                pass
            if entry.startswith("*."):
                self._suffixes.append(entry[1:])
            else:
                self._names.add(entry.rstrip("."))

    def _listed_name(self, host: str) -> bool:
        return host in self._names or any(host.endswith(suffix) for suffix in self._suffixes)

    def _listed_address(self, address: _Address) -> bool:
        if address in _METADATA:
            return address in self._exact
        return any(address in network for network in self._networks)

    async def check(self, url: str, where: str) -> CheckedUrl:
        """Accept ``url`` and resolve it once.

        Raises:
            RequestError: naming ``where`` (the request field) and the rule that refused it.
        """
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise RequestError(f"`{where}` is not a valid URL: {exc}", where) from None
        try:
            host = canonical_host(parts.hostname or "")
        except ValueError as exc:
            raise RequestError(f"`{where}`: {exc}", where) from None
        if parts.scheme not in ("http", "https") or not host:
            raise RequestError(f"`{where}` must be an http(s) URL of an MCP server's Streamable HTTP endpoint", where)
        if parts.username is not None or parts.password is not None:
            raise RequestError(
                f"`{where}` carries credentials: send them as `authorization` or in `headers`, never in the URL",
                where,
            )
        literal = _literal(host)
        loopback = host == "localhost" or (literal is not None and literal.is_loopback)
        if not loopback and not (self._listed_name(host) or (literal is not None and self._listed_address(literal))):
            raise RequestError(
                f"`{where}`: host {host!r} is not allowed; this gateway reaches loopback servers and the hosts "
                f"its operator allowlists ({ALLOWED_HOSTS_KEY} in the config)",
                where,
            )
        if not loopback and parts.scheme != "https":
            raise RequestError(f"`{where}`: use https (plain http is allowed for loopback hosts only)", where)
        address = literal if literal is not None else await _resolve(host, port or 443, where)
        if loopback and not address.is_loopback:
            raise RequestError(f"`{where}`: {host!r} does not resolve to a loopback address here", where)
        if not address.is_loopback and _internal(address) and not self._listed_address(address):
            raise RequestError(
                f"`{where}`: {host!r} resolves to {address}, a private, link-local or metadata address; "
                f"the operator must list that network in {ALLOWED_HOSTS_KEY} to reach it "
                "(a metadata address by itself)",
                where,
            )
        netloc = (f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
        return CheckedUrl(url=urlunsplit(parts._replace(netloc=netloc)), host=host, address=str(address))


def _literal(host: str) -> _Address | None:
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _internal(address: _Address) -> bool:
    return (
        address in _METADATA
        or address.is_private
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
        or (isinstance(address, ipaddress.IPv4Address) and address in ipaddress.ip_network("100.64.0.0/10"))
    )


async def _resolve(host: str, port: int, where: str) -> _Address:
    try:
        with anyio.fail_after(_RESOLVE_TIMEOUT):
            infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, TimeoutError) as exc:
        raise RequestError(f"`{where}`: cannot resolve {host!r}: {exc}", where) from None
    for info in infos:
        address = _literal(str(info[4][0]))
        if address is not None:
            return address
    raise RequestError(f"`{where}`: {host!r} resolves to no IP address", where)
